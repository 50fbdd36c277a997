// The error hierarchy: one typed error per stage, all derived from evoxc::Error.
#pragma once

#include <stdexcept>
#include <string>

namespace evoxc {

// Base of every error evoxc throws on purpose. User mistakes get a stage-specific
// subclass; InternalError marks a broken invariant inside evoxc itself (a bug).
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

#define EVOXC_DEFINE_ERROR(Name)                            \
  class Name : public Error {                               \
   public:                                                  \
    explicit Name(const std::string& what) : Error(what) {} \
  };

EVOXC_DEFINE_ERROR(TraceError)        // misuse while tracing a function
EVOXC_DEFINE_ERROR(TransformError)    // a graph transform cannot handle an op
EVOXC_DEFINE_ERROR(BackendError)      // a backend cannot lower/compile/run something
EVOXC_DEFINE_ERROR(PersistenceError)  // a file is malformed, truncated or of another version
EVOXC_DEFINE_ERROR(DeviceError)       // data is on the wrong device
EVOXC_DEFINE_ERROR(ShapeError)        // shape inference rejects the operands
EVOXC_DEFINE_ERROR(TypeError)         // dtype inference rejects the operands
EVOXC_DEFINE_ERROR(ValidationError)   // run-boundary inputs do not match the executable
EVOXC_DEFINE_ERROR(ParseError)        // EvoXIR text does not parse
EVOXC_DEFINE_ERROR(VerifyError)       // a graph breaks an IR invariant
EVOXC_DEFINE_ERROR(RunLimitError)     // a run hit a limit of its RunOptions (deadline, loop iterations, cancel)
EVOXC_DEFINE_ERROR(TimeoutError)      // a wait ran out of time (what it waited for goes on)
EVOXC_DEFINE_ERROR(InternalError)     // an evoxc bug: please report it

#undef EVOXC_DEFINE_ERROR

}  // namespace evoxc
