// External kernels (external_call, evoxc.external_call): opaque kernels a graph names, with their implementations
// registered out of band. A graph carries only the kernel's name and result types, so a process that loads a saved
// graph registers its kernels first; a backend resolves each call once (the interpreter at load, the mlir backend
// on the call site's first run) by the slot of its own name, then the default slot.
//
// Batching follows JAX's `vmap_method="expand_dims"`: external_call's `batch_dims` leading axes of every operand
// have extent 1 (that operand is not batched at that level) or the level's batch extent; every result has those
// levels with the batch extents. A registered batch variant gets one such level and broadcasts itself; without
// one, a backend calls the plain kernel once per batch position, on zero-copy views.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "evoxc/core/tensor.h"
#include "evoxc/ir/graph.h"

namespace evoxc {

// One operand or result of a kernel call: contiguous row-major elements of `dtype` at `data`, `rank` extents at
// `shape`. Valid for the duration of the call only.
struct ExternalBuffer {
  void* data = nullptr;
  const int64_t* shape = nullptr;
  int64_t rank = 0;
  DType dtype = DType::F32;
  int64_t numel() const;
};

// A kernel: computes `outputs` (already allocated, of the call's result types) from `inputs` (read only). It may
// throw an evoxc error, which the run reports as is; another exception becomes a BackendError naming the kernel.
// Called from whichever thread runs the executable, and from several at once when several runs are in flight.
using ExternalKernel = std::function<void(std::span<const ExternalBuffer> inputs, std::span<ExternalBuffer> outputs)>;
// The same over host Tensors viewing the buffers (no copy; the views allocate their shape vectors).
using ExternalTensorKernel = std::function<void(std::span<const Tensor> inputs, std::span<Tensor> outputs)>;
// The C form, for kernels from any native code: `user` is passed back as registered.
using ExternalCKernel = void (*)(void* user, const ExternalBuffer* inputs, int64_t num_inputs, ExternalBuffer* outputs,
                                 int64_t num_outputs);

// The slot every backend falls back to.
inline constexpr std::string_view kDefaultKernelSlot = "default";

// Registers (or replaces, batch variant included) kernel `name`'s implementation in `slot` (a backend's name,
// "default" for all). Executables that resolved the kernel before keep what they found.
void register_external_kernel(const std::string& name, ExternalKernel kernel,
                              const std::string& slot = std::string(kDefaultKernelSlot));
ExternalKernel tensor_kernel(ExternalTensorKernel kernel);
ExternalKernel c_kernel(ExternalCKernel fn, void* user);
// Registers the batch variant of kernel `name` in `slot`: called with one leading batch level (extent 1 on the
// operands that level does not batch), where the plain kernel would be called once per position.
void register_external_batch_variant(const std::string& name, ExternalKernel kernel,
                                     const std::string& slot = std::string(kDefaultKernelSlot));
// Removes the kernel and batch variant of `slot`; true when there was one.
bool unregister_external_kernel(const std::string& name, const std::string& slot = std::string(kDefaultKernelSlot));

// What a backend found for kernel `name`: the kernel (never null), the batch variant of the same slot (or null)
// and the slot's name.
struct ResolvedKernel {
  std::shared_ptr<const ExternalKernel> kernel;
  std::shared_ptr<const ExternalKernel> batched;
  std::string slot;
};
// The entry of slot `backend`, else of the default slot, else nullopt.
std::optional<ResolvedKernel> resolve_external_kernel(std::string_view name, std::string_view backend);
// resolve_external_kernel, or a BackendError naming the kernel and both slots (what a load reports).
ResolvedKernel require_external_kernel(std::string_view name, std::string_view backend);
// (name, slot) of every registered kernel, sorted.
std::vector<std::pair<std::string, std::string>> registered_external_kernels();

// Runs a resolved kernel on one external_call with `batch_dims` leading batch levels: the batch variant on the
// innermost level when there is one, the kernel per batch position otherwise (views into the buffers, no copy).
// `inputs` and `outputs` are the whole operands and results. Exceptions from the kernel other than evoxc errors
// become BackendErrors naming it.
void call_external_kernel(const ResolvedKernel& k, std::string_view name, std::span<const ExternalBuffer> inputs,
                          std::span<ExternalBuffer> outputs, int64_t batch_dims);

// The distinct kernel names of every external_call in `graph` (any function, any region depth), sorted: what a
// backend resolves when it loads the graph.
std::vector<std::string> external_kernels_of(const Graph& graph);

// external_call's `results` attribute: the result types printed as "tensor<4x8xf32>, tensor<Nxi32>", and back
// (TypeError naming `what` on text that is not such a list).
std::string external_results_text(std::span<const TensorType> results);
std::vector<TensorType> parse_external_results(std::string_view text, std::string_view what = "external_call");

}  // namespace evoxc
