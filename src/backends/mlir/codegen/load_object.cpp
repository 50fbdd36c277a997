// Object code -> callable entry in this process, through LLVM ORC's JIT linker (links, never recompiles).
#include <cstdint>
#include <memory>
#include <string>

#include "backends/mlir/codegen/codegen.h"
#include "evoxc/core/error.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/Object/Archive.h"
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
  ~OrcObject() override {
    if (before_unload_) before_unload_();
  }
  OrcObject(const std::string& object, const std::vector<RuntimeSymbol>& runtime, void (*before_unload)()) {
    // The object's symbol table names the runtime entry when its code runs blocks on the pool.
    if (object.find("mlirAsyncRuntimeExecute") != std::string::npos) before_unload_ = before_unload;
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
    llvm::orc::SymbolMap table;
    for (const RuntimeSymbol& r : runtime)
      table[jit_->mangleAndIntern(r.name)] = {llvm::orc::ExecutorAddr::fromPtr(r.address),
                                              llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
    if (llvm::Error e = lib.define(llvm::orc::absoluteSymbols(std::move(table))))
      throw BackendError("mlir: cannot define the runtime symbols: " + message(std::move(e)));
    // malloc/free and libm from this process; memrefCopy from MLIR's small C runtime.
    // SLEEF's GNU-ABI vector math first, so vectorised calls bind to it and not to glibc's
    // libmvec should the process have that loaded.
    auto sleef = llvm::orc::DynamicLibrarySearchGenerator::Load(EVOXC_SLEEF_GNUABI_LIB, dl.getGlobalPrefix());
    if (!sleef) throw BackendError("mlir: cannot load " EVOXC_SLEEF_GNUABI_LIB ": " + message(sleef.takeError()));
    lib.addGenerator(std::move(*sleef));
    auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(dl.getGlobalPrefix());
    if (!process) throw BackendError("mlir: " + message(process.takeError()));
    lib.addGenerator(std::move(*process));
    auto utils = llvm::orc::DynamicLibrarySearchGenerator::Load(EVOXC_MLIR_RUNTIME_LIB, dl.getGlobalPrefix());
    if (!utils) throw BackendError("mlir: cannot load " EVOXC_MLIR_RUNTIME_LIB ": " + message(utils.takeError()));
    lib.addGenerator(std::move(*utils));
    add_objects(object);
    auto sym = jit_->lookup("evoxc_entry");
    if (!sym) throw PersistenceError("mlir: the object code has no evoxc_entry: " + message(sym.takeError()));
    entry_ = sym->toPtr<Entry>();
  }

 private:
  // One object, or an ar archive of the parts of a split compile (compile_to_object): every member is linked.
  void add_objects(const std::string& object) {
    auto add = [&](llvm::StringRef bytes, llvm::StringRef name) {
      if (llvm::Error e = jit_->addObjectFile(llvm::MemoryBuffer::getMemBufferCopy(bytes, name)))
        throw PersistenceError("mlir: the object code does not link: " + message(std::move(e)));
    };
    if (!llvm::StringRef(object).starts_with(llvm::object::ArchiveMagic)) {
      add(object, "evoxc-object");
      return;
    }
    auto archive = llvm::object::Archive::create(llvm::MemoryBufferRef(object, "evoxc-objects"));
    if (!archive) throw PersistenceError("mlir: the object archive is corrupted: " + message(archive.takeError()));
    llvm::Error err = llvm::Error::success();
    size_t members = 0;
    for (const llvm::object::Archive::Child& child : (*archive)->children(err)) {
      auto bytes = child.getBuffer();
      if (!bytes) throw PersistenceError("mlir: the object archive is corrupted: " + message(bytes.takeError()));
      add(*bytes, "evoxc-object-" + std::to_string(members++));
    }
    if (err) throw PersistenceError("mlir: the object archive is corrupted: " + message(std::move(err)));
    if (members == 0) throw PersistenceError("mlir: the object archive is empty");
  }

  std::unique_ptr<llvm::orc::LLJIT> jit_;
  void (*before_unload_)() = nullptr;
};

}  // namespace

std::shared_ptr<const LoadedObject> LoadedObject::load(const std::string& object,
                                                       const std::vector<RuntimeSymbol>& runtime,
                                                       void (*before_unload)()) {
  return std::make_shared<OrcObject>(object, runtime, before_unload);
}

}  // namespace evoxc::mlir_codegen
