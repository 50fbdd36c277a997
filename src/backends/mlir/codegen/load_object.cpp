// Object code -> callable entry in this process, through LLVM ORC's JIT linker (links, never recompiles).
#include <memory>
#include <string>

#include "backends/mlir/codegen/codegen.h"
#include "evoxc/core/error.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#ifndef EVOXC_MLIR_RUNTIME_LIB
#error "EVOXC_MLIR_RUNTIME_LIB (libmlir_c_runner_utils.so) must be defined by the build"
#endif

namespace evoxc::mlir_codegen {
namespace {

std::string message(llvm::Error e) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << e;
  return s;
}

class OrcObject final : public LoadedObject {
 public:
  explicit OrcObject(const std::string& object) {
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
    // malloc/free and libm from this process; memrefCopy from MLIR's small C runtime.
    auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(dl.getGlobalPrefix());
    if (!process) throw BackendError("mlir: " + message(process.takeError()));
    lib.addGenerator(std::move(*process));
    auto runtime = llvm::orc::DynamicLibrarySearchGenerator::Load(EVOXC_MLIR_RUNTIME_LIB, dl.getGlobalPrefix());
    if (!runtime) throw BackendError("mlir: cannot load " EVOXC_MLIR_RUNTIME_LIB ": " + message(runtime.takeError()));
    lib.addGenerator(std::move(*runtime));
    if (llvm::Error e = jit_->addObjectFile(llvm::MemoryBuffer::getMemBufferCopy(object, "evoxc-object")))
      throw PersistenceError("mlir: the object code does not link: " + message(std::move(e)));
    auto sym = jit_->lookup("evoxc_entry");
    if (!sym) throw PersistenceError("mlir: the object code has no evoxc_entry: " + message(sym.takeError()));
    entry_ = sym->toPtr<Entry>();
  }

 private:
  std::unique_ptr<llvm::orc::LLJIT> jit_;
};

}  // namespace

std::shared_ptr<const LoadedObject> LoadedObject::load(const std::string& object) {
  return std::make_shared<OrcObject>(object);
}

}  // namespace evoxc::mlir_codegen
