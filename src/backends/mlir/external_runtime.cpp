// The runtime side of external_call in compiled mlir programs: unpacks the wrapper's buffer array into
// ExternalBuffers (packing an operand whose strides are not row-major), finds the call site's kernel (by name on its
// first call only; a per-site global caches it) and runs it. Errors go to the call's ErrorSink and the results are
// zeroed, so later compiled code reads defined values.
#include "backends/mlir/external_runtime.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <vector>

#include "backends/mlir/memref.h"
#include "backends/mlir/runtime_errors.h"
#include "evoxc/core/error.h"
#include "evoxc/core/small_vector.h"

namespace evoxc::mlir_backend {

ExternalTable::ExternalTable(const Graph& graph) {
  for (const std::string& name : external_kernels_of(graph))
    entries_.push_back({name, require_external_kernel(name, "mlir")});
}

const ExternalEntry* ExternalTable::find(std::string_view name) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), name,
                             [](const ExternalEntry& e, std::string_view n) { return e.name < n; });
  return it != entries_.end() && it->name == name ? &*it : nullptr;
}

namespace external_runtime {
namespace {

const ExternalEntry& entry(const Memref<1>* name, const Memref<1>* slot, const ErrorSink* sink) {
  std::atomic_ref<int64_t> cached = slot_of(slot);
  // The slot holds the entry's address (an i64 global of the compiled code).
  if (int64_t p = cached.load(std::memory_order_acquire))
    return *reinterpret_cast<const ExternalEntry*>(p);  // NOLINT(performance-no-int-to-ptr)
  // The name's bytes end with a NUL the lowering adds.
  std::string_view n(name->aligned + name->offset, static_cast<size_t>(name->sizes[0] - 1));
  const ExternalEntry* e = sink && sink->externals ? sink->externals->find(n) : nullptr;
  if (!e)
    throw InternalError("mlir: external_call '" + std::string(n) + "' was not resolved when the executable loaded");
  cached.store(reinterpret_cast<int64_t>(e), std::memory_order_release);
  return *e;
}

// Copies a strided buffer into `dst` in row-major order.
void pack(const char* src, const int64_t* sizes, const int64_t* strides, int64_t rank, size_t esz, char* dst) {
  std::vector<int64_t> idx(static_cast<size_t>(rank), 0);
  int64_t n = 1;
  for (int64_t a = 0; a < rank; ++a) n *= sizes[a];
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0;
    for (int64_t a = 0; a < rank; ++a) off += idx[static_cast<size_t>(a)] * strides[a];
    std::memcpy(dst + static_cast<size_t>(i) * esz, src + off * static_cast<int64_t>(esz), esz);
    for (int64_t a = rank - 1; a >= 0; --a) {
      if (++idx[static_cast<size_t>(a)] < sizes[a]) break;
      idx[static_cast<size_t>(a)] = 0;
    }
  }
}

bool row_major(const int64_t* sizes, const int64_t* strides, int64_t rank) {
  int64_t expect = 1;
  for (int64_t a = rank - 1; a >= 0; --a) {
    if (sizes[a] != 1 && strides[a] != expect) return false;
    expect *= sizes[a];
  }
  return true;
}

void external_call(const Memref<1>* meta, const Memref<1>* name, const Memref<1>* slot, int64_t num_inputs,
                   int64_t num_outputs, int64_t levels, void* sink) {
  auto* errors = static_cast<ErrorSink*>(sink);
  const int64_t* m = reinterpret_cast<const int64_t*>(meta->aligned) + meta->offset;
  SmallVector<ExternalBuffer, 8> in(static_cast<size_t>(num_inputs), ExternalBuffer{});
  SmallVector<ExternalBuffer, 8> out(static_cast<size_t>(num_outputs), ExternalBuffer{});
  std::vector<std::vector<char>> packed;
  size_t pos = 0;
  for (int64_t b = 0; b < num_inputs + num_outputs; ++b) {
    ExternalBuffer& x = b < num_inputs ? in[static_cast<size_t>(b)] : out[static_cast<size_t>(b - num_inputs)];
    x.dtype = static_cast<DType>(m[pos + 2]);
    x.rank = m[pos + 3];
    x.shape = m + pos + 4;
    const int64_t* strides = m + pos + 4 + x.rank;
    const size_t esz = size_of(x.dtype);
    // The wrapper stores each buffer's aligned address as an i64.
    char* data =
        reinterpret_cast<char*>(m[pos]) + m[pos + 1] * static_cast<int64_t>(esz);  // NOLINT(performance-no-int-to-ptr)
    if (b < num_inputs && !row_major(x.shape, strides, x.rank)) {  // results are fresh row-major buffers
      packed.emplace_back(static_cast<size_t>(x.numel()) * esz);
      pack(data, x.shape, strides, x.rank, esz, packed.back().data());
      data = packed.back().data();
    }
    x.data = data;
    pos += 4 + 2 * static_cast<size_t>(x.rank);
  }
  try {
    const ExternalEntry& e = entry(name, slot, errors);
    call_external_kernel(e.kernel, e.name, {in.data(), in.size()}, {out.data(), out.size()}, levels);
  } catch (...) {
    for (ExternalBuffer& x : out) std::memset(x.data, 0, static_cast<size_t>(x.numel()) * size_of(x.dtype));
    if (errors) errors->capture();
  }
}

}  // namespace

const std::vector<mlir_codegen::RuntimeSymbol>& symbols() {
  static const std::vector<mlir_codegen::RuntimeSymbol> table = {
      {"_mlir_ciface_evoxc_external_call", reinterpret_cast<void*>(external_call)},
  };
  return table;
}

}  // namespace external_runtime
}  // namespace evoxc::mlir_backend
