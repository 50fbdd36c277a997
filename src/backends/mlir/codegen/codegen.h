// The narrow interface to MLIR and LLVM: compile upstream-dialect MLIR text to host object code, load object code.
// Only codegen/*.cpp include MLIR or LLVM headers (each costs ~20 s and over 1 GB to compile).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backends/common/runtime_symbol.h"

namespace evoxc::mlir_codegen {

// The machine object code is made for and must be loaded on.
struct HostTarget {
  std::string triple;    // "x86_64-unknown-linux-gnu"
  std::string cpu;       // "znver4"
  std::string features;  // "+avx2,+avx512f,..." (LLVM's host feature list, sorted)
};
HostTarget host_target();

struct CodegenOptions {
  int opt_level = 2;  // 0..3: LLVM's pipeline; >= 2 also lets float reductions reassociate
  bool reassociate_reductions = false;
  // > 1: outer parallel loops are split over this many workers of MLIR's async runtime (its thread
  // pool) in blocks of at least min_work innermost iterations; 1: one thread, no runtime calls.
  int threads = 1;
  int64_t min_work = 32768;
  // When set and true at a stage boundary, compile_to_object stops with a BackendError ("compile cancelled").
  const std::atomic<bool>* cancel = nullptr;
};

// The object code of `mlir_text` (a module of func/linalg/tensor/arith/math/scf ops whose
// function @main takes the inputs as tensors and the outputs as memrefs to fill) after the pass pipeline
// (pipeline_text()), with one exported symbol `evoxc_entry(void** args)`: args[i] points at the memref descriptor of
// input i, then of output i (outputs are written in place).
// BackendError with MLIR's diagnostics when the text does not parse, verify or lower. `stages`, when given,
// receives the wall time of each stage in order: context (MLIR's), parse, mlir passes, translate, llvm opt, codegen.
// With the environment variable EVOXC_MLIR_TIMING set, MLIR's per-pass timing report goes to stderr too.
using StageTimes = std::vector<std::pair<std::string, double>>;
std::string compile_to_object(const std::string& mlir_text, const CodegenOptions& options,
                              StageTimes* stages = nullptr);

// The pass pipeline compile_to_object runs, as MLIR's textual pipeline (for docs and -print).
std::string pipeline_text(const CodegenOptions& options);
// mlir_text after the pipeline up to (not including) the LLVM dialect: for inspection.
std::string lower_to_loops(const std::string& mlir_text, const CodegenOptions& options);

using evoxc::RuntimeSymbol;

// Object code linked into this process by an in-process JIT linker (no recompilation).
class LoadedObject {
 public:
  using Entry = void (*)(void** args);
  // Symbols the object may call are looked up in `runtime` first, then SLEEF's vector math, this
  // process and MLIR's C runner utilities. When the object calls MLIR's async runtime,
  // `before_unload` runs before its code is freed (it must wait until no worker is inside it).
  // PersistenceError when the object does not link (a corrupted payload).
  static std::shared_ptr<const LoadedObject> load(const std::string& object, const std::vector<RuntimeSymbol>& runtime,
                                                  void (*before_unload)());
  virtual ~LoadedObject() = default;
  Entry entry() const { return entry_; }

 protected:
  Entry entry_ = nullptr;
};

}  // namespace evoxc::mlir_codegen
