// postfix_eval for compiled mlir programs: MLIR's C interface passes each operand as a strided rank-2 memref
// descriptor; the engine (src/interp/postfix.h) takes contiguous rows, so other strides are packed first.
// Errors go to the call's ErrorSink, and the output is zeroed so later compiled code reads defined values.
#include "backends/mlir/postfix_runtime.h"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "backends/mlir/memref.h"
#include "backends/mlir/runtime_errors.h"
#include "evoxc/core/error.h"
#include "interp/postfix.h"

namespace evoxc::mlir_backend::postfix_runtime {
namespace {

// The engines of every primitive table and dtype this process has run, never freed: there are as many as
// distinct tables, and a program's slot points at one for as long as the program is loaded.
const interp::PostfixEngine& intern(const std::string& primitives, DType t) {
  static std::mutex mu;
  static std::map<std::pair<std::string, int>, std::unique_ptr<const interp::PostfixEngine>> engines;
  std::lock_guard<std::mutex> lock(mu);
  auto& e = engines[{primitives, static_cast<int>(t)}];
  if (!e) e = std::make_unique<const interp::PostfixEngine>(primitives, t);
  return *e;
}

// The engine of a call site: its slot (an i64 of the program's data, 0 until the first call) caches it.
const interp::PostfixEngine& engine(const Memref<1>* text, const Memref<1>* slot, DType t) {
  std::atomic_ref<int64_t> cached = slot_of(slot);
  if (int64_t p = cached.load(std::memory_order_acquire)) return *reinterpret_cast<const interp::PostfixEngine*>(p);
  // The table's bytes end with a NUL the lowering adds (so an empty table is a 1-byte global).
  std::string primitives(text->aligned + text->offset, static_cast<size_t>(text->sizes[0] - 1));
  const interp::PostfixEngine& e = intern(primitives, t);
  cached.store(reinterpret_cast<int64_t>(&e), std::memory_order_release);
  return e;
}

// The rows of a rank-2 operand as one contiguous block (packed into `scratch` unless they already are).
const char* contiguous(const Memref<2>* m, size_t esz, std::vector<char>& scratch) {
  const int64_t rows = m->sizes[0], cols = m->sizes[1];
  const char* base = m->aligned + m->offset * static_cast<int64_t>(esz);
  if ((m->strides[1] == 1 || cols <= 1) && (m->strides[0] == cols || rows <= 1)) return base;
  scratch.resize(static_cast<size_t>(rows * cols) * esz);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      std::memcpy(scratch.data() + static_cast<size_t>(i * cols + j) * esz,
                  base + (i * m->strides[0] + j * m->strides[1]) * static_cast<int64_t>(esz), esz);
  return scratch.data();
}

void postfix_eval(const Memref<2>* codes, const Memref<2>* args, const Memref<2>* consts, const Memref<2>* x,
                  Memref<2>* out, const Memref<1>* text, const Memref<1>* slot, int32_t dtype, void* sink) {
  const DType t = static_cast<DType>(dtype);
  const size_t esz = size_of(t);
  try {
    const interp::PostfixEngine& e = engine(text, slot, t);
    interp::PostfixDims d;
    d.programs = codes->sizes[0];
    d.length = codes->sizes[1];
    d.constants = consts->sizes[1];
    d.variables = x->sizes[0];
    d.cases = x->sizes[1];
    std::vector<char> sc, sa, sk, sx;
    e.run(reinterpret_cast<const int32_t*>(contiguous(codes, 4, sc)),
          reinterpret_cast<const int32_t*>(contiguous(args, 4, sa)), contiguous(consts, esz, sk),
          contiguous(x, esz, sx), out->aligned + out->offset * static_cast<int64_t>(esz), d);
  } catch (...) {
    std::memset(out->aligned + out->offset * static_cast<int64_t>(esz), 0,
                static_cast<size_t>(out->sizes[0] * out->sizes[1]) * esz);
    if (sink) static_cast<ErrorSink*>(sink)->capture();
  }
}

}  // namespace

const std::vector<mlir_codegen::RuntimeSymbol>& symbols() {
  // One name per MLIR element type (int8 and uint8 share i8: the dtype argument tells them apart).
  static const std::vector<mlir_codegen::RuntimeSymbol> table = {
      {"_mlir_ciface_evoxc_postfix_eval_i1", reinterpret_cast<void*>(postfix_eval)},
      {"_mlir_ciface_evoxc_postfix_eval_i8", reinterpret_cast<void*>(postfix_eval)},
      {"_mlir_ciface_evoxc_postfix_eval_i16", reinterpret_cast<void*>(postfix_eval)},
      {"_mlir_ciface_evoxc_postfix_eval_i32", reinterpret_cast<void*>(postfix_eval)},
      {"_mlir_ciface_evoxc_postfix_eval_i64", reinterpret_cast<void*>(postfix_eval)},
      {"_mlir_ciface_evoxc_postfix_eval_f16", reinterpret_cast<void*>(postfix_eval)},
      {"_mlir_ciface_evoxc_postfix_eval_bf16", reinterpret_cast<void*>(postfix_eval)},
      {"_mlir_ciface_evoxc_postfix_eval_f32", reinterpret_cast<void*>(postfix_eval)},
      {"_mlir_ciface_evoxc_postfix_eval_f64", reinterpret_cast<void*>(postfix_eval)},
  };
  return table;
}

}  // namespace evoxc::mlir_backend::postfix_runtime
