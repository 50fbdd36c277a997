// Transform rules and decompositions of the extension ops (src/ops/extension.cpp).
//
// external_call is opaque: vmap adds a batch level to it (JAX's "expand_dims" method: an operand that the new level
// does not batch gets a leading axis of extent 1, and the kernel's batch variant or a per-position loop does the
// rest at run time); it has no derivative. Its decomposition, for backends that cannot call host code, is the
// portable function registered for its kernel (evoxc/trace/extension.h), vmapped over the call's batch levels.
// stablehlo_call's body is StableHLO text, which the transforms cannot read.
#include <string>
#include <vector>

#include "evoxc/ops/external.h"
#include "evoxc/trace/extension.h"
#include "evoxc/trace/ops.h"
#include "evoxc/transforms/transforms.h"
#include "transforms/families.h"

namespace evoxc::transforms {
namespace {

using ST = SymbolicTensor;

int64_t batch_levels(const Operation& op) {
  return op.attributes().count("batch_dims") ? attr_int(op, "batch_dims") : 0;
}

std::vector<BatchArg> external_batch(BatchContext&, const Operation& op, std::span<const BatchArg> args) {
  std::vector<ST> operands;
  operands.reserve(args.size());
  for (const BatchArg& a : args) operands.push_back(a.batched ? a.v : expand_dims(a.v, {0}));
  AttrMap attrs = op.attributes();
  attrs["batch_dims"] = batch_levels(op) + 1;
  std::vector<BatchArg> out;
  for (const ST& r : emit_op(op_def(op), operands, std::move(attrs))) out.push_back(BatchArg{r, true});
  return out;
}

void check_portable(const Operation& op, const std::string& name, const std::vector<ST>& outs, size_t levels) {
  if (outs.size() != op.num_results())
    throw BackendError("external_call '" + name + "': the portable decomposition gives " + std::to_string(outs.size()) +
                       " results, the call has " + std::to_string(op.num_results()));
  for (size_t i = 0; i < outs.size(); ++i) {
    const TensorType& want = op.result(i)->type();
    std::vector<DimExpr> row(want.shape.begin() + static_cast<std::ptrdiff_t>(levels), want.shape.end());
    TensorType per_row(want.dtype, Shape(std::move(row)));
    if (outs[i].type() != per_row)
      throw BackendError("external_call '" + name + "': result " + std::to_string(i) +
                         " of the portable decomposition is " + outs[i].type().to_string() + ", the kernel gives " +
                         per_row.to_string());
  }
}

// The portable function on the call's operands. A batched call: every batch level broadcast to its extent and the
// levels collapsed into one axis, which one vmap of the portable (traced over one row's types) maps.
std::vector<ST> external_portable(const Operation& op, std::span<const ST> operands) {
  const std::string& name = attr_string(op.attributes(), "kernel", "external_call");
  std::shared_ptr<const ExternalPortable> portable = find_external_portable(name);
  if (!portable)
    throw BackendError("external_call '" + name +
                       "': this backend cannot call host kernels and no portable decomposition is registered for "
                       "the kernel (evoxc::register_external_portable, or handle.portable in Python); run the graph "
                       "on the interp or mlir backend, which call the registered kernel");
  warn("external_call '" + name +
       "': this backend cannot call host kernels; the kernel's registered portable decomposition runs instead");
  const auto levels = static_cast<size_t>(batch_levels(op));
  if (levels == 0) {
    std::vector<ST> outs = (*portable)(operands);
    check_portable(op, name, outs, 0);
    return outs;
  }
  std::vector<DimExpr> batch;
  for (size_t l = 0; l < levels; ++l) batch.push_back(op.result(0)->type().shape[l]);
  DimExpr rows(1);
  for (const DimExpr& b : batch) rows = rows * b;
  std::vector<ST> args;
  std::vector<TensorType> row_types;
  for (const ST& a : operands) {
    std::vector<DimExpr> full = batch, flat{rows}, row;
    const auto lead = static_cast<std::ptrdiff_t>(levels);
    full.insert(full.end(), a.shape().begin() + lead, a.shape().end());
    flat.insert(flat.end(), a.shape().begin() + lead, a.shape().end());
    row.insert(row.end(), a.shape().begin() + lead, a.shape().end());
    args.push_back(reshape(broadcast_to(a, Shape(std::move(full))), Shape(std::move(flat))));
    row_types.emplace_back(a.dtype(), Shape(std::move(row)));
  }
  std::vector<ST> outs = call_vmapped(
      [&](std::span<const ST> xs) {
        std::vector<ST> per_row = (*portable)(xs);
        check_portable(op, name, per_row, levels);
        return per_row;
      },
      row_types, std::vector<AxisTree>(args.size(), AxisTree(0)), rows, args);
  for (size_t i = 0; i < outs.size(); ++i) outs[i] = reshape(outs[i], op.result(i)->type().shape);
  return outs;
}

}  // namespace

void install_extension_rules(RuleTables& t) {
  t.batch.set("external_call", external_batch);
  const char* external_why =
      "an external kernel is opaque: it has no derivative; write the computation as an evoxc.block (a portable body "
      "the transforms differentiate) or differentiate around the call";
  t.jvp.defer("external_call", external_why);
  t.transpose.defer("external_call", external_why);
  const char* stablehlo_why =
      "its body is a StableHLO module, opaque to evoxc's transforms; apply the transform before exporting (jax.vmap, "
      "jax.jvp, jax.grad on the JAX function given to evoxc.xla.lower_jax)";
  t.batch.defer("stablehlo_call", stablehlo_why);
  t.jvp.defer("stablehlo_call", stablehlo_why);
  t.transpose.defer("stablehlo_call", stablehlo_why);
}

void install_extension_decompositions(DecomposeTable& t) { t.set("external_call", external_portable); }

}  // namespace evoxc::transforms
