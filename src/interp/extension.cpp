// Interpreter kernels of the extension ops: external_call calls the kernel registered for "interp" (or the default
// slot), resolved at prepare, on views of the frame's buffers; stablehlo_call is deferred to where StableHLO runs.
#include <string>
#include <vector>

#include "evoxc/core/small_vector.h"
#include "evoxc/ops/external.h"
#include "kernel_table.h"

namespace evoxc::interp {
namespace {

class ExternalKernelCall final : public Kernel {
 public:
  std::string name;
  ResolvedKernel kernel;
  int64_t batch_dims = 0;
  struct Slot {
    uint32_t id, dim_off, rank;
    DType dtype;
  };
  std::vector<Slot> ins, outs;

  void run(const Frame& f) const override {
    // Up to 8 operands and 8 results without touching the heap.
    SmallVector<ExternalBuffer, 8> in(ins.size(), ExternalBuffer{}), out(outs.size(), ExternalBuffer{});
    auto fill = [&](const Slot& s, ExternalBuffer& b) {
      b.data = f.ptr[s.id];
      b.shape = f.dims + s.dim_off;
      b.rank = s.rank;
      b.dtype = s.dtype;
    };
    for (size_t i = 0; i < ins.size(); ++i) fill(ins[i], in[i]);
    for (size_t i = 0; i < outs.size(); ++i) fill(outs[i], out[i]);
    call_external_kernel(kernel, name, {in.data(), in.size()}, {out.data(), out.size()}, batch_dims);
  }
};

KernelPtr make_external(PrepareCtx& ctx) {
  auto k = std::make_unique<ExternalKernelCall>();
  k->name = ctx.attr_string("kernel");
  k->kernel = require_external_kernel(k->name, "interp");
  k->batch_dims = ctx.op.attributes().count("batch_dims") ? ctx.attr_int("batch_dims") : 0;
  auto slot = [&](uint32_t id) {
    const ValueDesc& d = ctx.val(id);
    return ExternalKernelCall::Slot{id, d.dim_off, d.rank(), d.dtype()};
  };
  for (uint32_t id : ctx.in) k->ins.push_back(slot(id));
  for (uint32_t id : ctx.out) k->outs.push_back(slot(id));
  return k;
}

}  // namespace

void install_extension_kernels(KernelTable& t) {
  t.set("external_call", &make_external);
  t.defer("stablehlo_call",
          "a StableHLO module runs where StableHLO runs: build the graph with backend=\"xla\" (a PJRT plugin)");
}

}  // namespace evoxc::interp
