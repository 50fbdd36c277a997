// The async runtime compiled programs (the mlir backend's) call to run blocks of parallel loops: MLIR's async runtime C
// ABI (mlirAsyncRuntime*) implemented on evoxc's own worker pool, whose workers spin briefly before sleeping.
#pragma once

#include <vector>

#include "backends/common/runtime_symbol.h"

namespace evoxc::async_runtime {

// MLIR's C names of the runtime entry points and their addresses here, for the JIT linker.
const std::vector<RuntimeSymbol>& symbols();

// Returns once every task that had started before the call has returned: a worker finishes a
// block by completing its token and only then returns through the block's code, so code must not
// be freed before this.
void quiesce();

// The pool's workers, the calling thread (which helps while it waits) not counted.
int worker_count();
// An opaque per-call pointer a backend sets on the calling thread for one call (the mlir backend's run
// limits): a task runs with the value of the thread that submitted it, so a call's blocks on the pool
// see it as its own thread does. nullptr outside such a call.
void*& call_context();

}  // namespace evoxc::async_runtime
