// The C ABI's executable handle seen from C++: wraps an Executable for C callers (the Python package hands one
// to extension modules in a capsule) and reads the Executable back out.
#pragma once

#include "evoxc/c_api.h"
#include "evoxc/pipeline/pipeline.h"

namespace evoxc::capi {

// A new handle with one reference (release it with evoxc_executable_release). The specs are read from the
// executable's graph here, once, so that execute only compares. ValidationError for an empty executable.
evoxc_executable* make_handle(Executable exe);

// The executable a handle holds; ValidationError for NULL.
const Executable& executable(const evoxc_executable* handle);

}  // namespace evoxc::capi
