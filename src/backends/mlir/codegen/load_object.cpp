// Object code -> callable entry in this process, through LLVM ORC's JIT linker (links, never recompiles).
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "backends/mlir/codegen/codegen.h"
#include "evoxc/core/error.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#ifndef EVOXC_MLIR_RUNTIME_LIB
#error "EVOXC_MLIR_RUNTIME_LIB (libmlir_c_runner_utils.so) must be defined by the build"
#endif
#ifndef EVOXC_SLEEF_GNUABI_LIB
#error "EVOXC_SLEEF_GNUABI_LIB (libsleefgnuabi.so) must be defined by the build"
#endif
#ifndef EVOXC_MLIR_ASYNC_RUNTIME_LIB
#error "EVOXC_MLIR_ASYNC_RUNTIME_LIB (libmlir_async_runtime.so) must be defined by the build"
#endif

namespace evoxc::mlir_codegen {
namespace {

std::string message(llvm::Error e) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << e;
  return s;
}

// MLIR's async runtime (libmlir_async_runtime.so): its thread pool runs the blocks of parallel
// loops. A worker finishes a block by emplacing its token and only then returns through the
// block's JIT-compiled code, so the caller's await can return while a worker is still inside our
// code. Before that code is freed, quiesce() occupies every worker of the pool with a task that
// waits for the others: once all have arrived, none is in JIT code any more.
class AsyncRuntime {
 public:
  static const AsyncRuntime& get() {
    static const AsyncRuntime r;
    return r;
  }
  void quiesce() const {
    struct Gate {
      std::mutex m;
      std::condition_variable cv;
      int64_t arrived = 0, departed = 0;
      bool open = false;
    } gate;
    int64_t n = workers_();
    for (int64_t i = 0; i < n; ++i)
      execute_(&gate, [](void* p) {
        auto* g = static_cast<Gate*>(p);
        std::unique_lock<std::mutex> lock(g->m);
        ++g->arrived;
        g->cv.notify_all();
        g->cv.wait(lock, [&] { return g->open; });
        ++g->departed;
        g->cv.notify_all();
      });
    std::unique_lock<std::mutex> lock(gate.m);
    gate.cv.wait(lock, [&] { return gate.arrived == n; });
    gate.open = true;
    gate.cv.notify_all();
    gate.cv.wait(lock, [&] { return gate.departed == n; });
  }

 private:
  AsyncRuntime() {
    std::string error;
    auto lib = llvm::sys::DynamicLibrary::getPermanentLibrary(EVOXC_MLIR_ASYNC_RUNTIME_LIB, &error);
    if (!lib.isValid()) throw BackendError("mlir: cannot load " EVOXC_MLIR_ASYNC_RUNTIME_LIB ": " + error);
    execute_ = reinterpret_cast<void (*)(void*, void (*)(void*))>(lib.getAddressOfSymbol("mlirAsyncRuntimeExecute"));
    workers_ = reinterpret_cast<int64_t (*)()>(lib.getAddressOfSymbol("mlirAsyncRuntimGetNumWorkerThreads"));
    if (!execute_ || !workers_) throw BackendError("mlir: the async runtime lacks its entry points");
  }
  void (*execute_)(void*, void (*)(void*)) = nullptr;
  int64_t (*workers_)() = nullptr;
};

class OrcObject final : public LoadedObject {
 public:
  ~OrcObject() override {
    if (uses_async_) AsyncRuntime::get().quiesce();
  }
  explicit OrcObject(const std::string& object) {
    // The object's symbol table names the runtime entry when its code runs blocks on the pool.
    uses_async_ = object.find("mlirAsyncRuntimeExecute") != std::string::npos;
    if (uses_async_) AsyncRuntime::get();
    static const bool initialised = [] {
      llvm::InitializeNativeTarget();
      llvm::InitializeNativeTargetAsmPrinter();
      return true;
    }();
    (void)initialised;
    auto jit = llvm::orc::LLJITBuilder().create();
    if (!jit) throw BackendError("mlir: cannot start the JIT linker: " + message(jit.takeError()));
    jit_ = std::move(*jit);
    const llvm::DataLayout& dl = jit_->getDataLayout();
    auto& lib = jit_->getMainJITDylib();
    // malloc/free and libm from this process; memrefCopy from MLIR's small C runtime; the async
    // runtime (thread pool) for programs compiled with threads > 1.
    // SLEEF's GNU-ABI vector math first, so vectorised calls bind to it and not to glibc's
    // libmvec should the process have that loaded.
    auto sleef = llvm::orc::DynamicLibrarySearchGenerator::Load(EVOXC_SLEEF_GNUABI_LIB, dl.getGlobalPrefix());
    if (!sleef) throw BackendError("mlir: cannot load " EVOXC_SLEEF_GNUABI_LIB ": " + message(sleef.takeError()));
    lib.addGenerator(std::move(*sleef));
    auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(dl.getGlobalPrefix());
    if (!process) throw BackendError("mlir: " + message(process.takeError()));
    lib.addGenerator(std::move(*process));
    auto runtime = llvm::orc::DynamicLibrarySearchGenerator::Load(EVOXC_MLIR_RUNTIME_LIB, dl.getGlobalPrefix());
    if (!runtime) throw BackendError("mlir: cannot load " EVOXC_MLIR_RUNTIME_LIB ": " + message(runtime.takeError()));
    lib.addGenerator(std::move(*runtime));
    auto async = llvm::orc::DynamicLibrarySearchGenerator::Load(EVOXC_MLIR_ASYNC_RUNTIME_LIB, dl.getGlobalPrefix());
    if (!async) throw BackendError("mlir: cannot load " EVOXC_MLIR_ASYNC_RUNTIME_LIB ": " + message(async.takeError()));
    lib.addGenerator(std::move(*async));
    if (llvm::Error e = jit_->addObjectFile(llvm::MemoryBuffer::getMemBufferCopy(object, "evoxc-object")))
      throw PersistenceError("mlir: the object code does not link: " + message(std::move(e)));
    auto sym = jit_->lookup("evoxc_entry");
    if (!sym) throw PersistenceError("mlir: the object code has no evoxc_entry: " + message(sym.takeError()));
    entry_ = sym->toPtr<Entry>();
  }

 private:
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  bool uses_async_ = false;
};

}  // namespace

std::shared_ptr<const LoadedObject> LoadedObject::load(const std::string& object) {
  return std::make_shared<OrcObject>(object);
}

}  // namespace evoxc::mlir_codegen
