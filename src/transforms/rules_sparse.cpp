// Transform rules and decompositions of the sparse primitives (src/ops/sparse.cpp).
//
// sparse_validate is the identity on its components once checked: vmap checks every batch element (its kernel
// takes leading batch axes), tangents and cotangents of the values pass through. sparse_csr_matmul is bilinear in
// the values and the dense operand: its jvp is the sum of the two partial products, the dense operand's transpose
// is the same op with `transpose` flipped, the values' transpose gathers the two matching rows and sums their
// product. vmap of the dense operand alone folds the batch into its columns (one product); a batched structure or
// batched values vmap the decomposition. The decompositions — gather, multiply and scatter-add — are what the
// compiled backends run, so sparse products compile everywhere (the structure checks stay the interpreter's).
#include <vector>

#include "evoxc/trace/indexing.h"
#include "evoxc/trace/layout.h"
#include "evoxc/trace/ops.h"
#include "evoxc/trace/sparse.h"
#include "evoxc/transforms/transforms.h"
#include "transforms/families.h"

namespace evoxc::transforms {
namespace {

using ST = SymbolicTensor;

bool transposed(const Operation& op) { return attr_flag(op, "transpose"); }

// values[k] * rows of `b` at `at`, as (nse,) or (nse, N).
ST scaled_rows(const ST& values, const ST& b, const ST& at) {
  ST g = take(b, at, 0);
  return b.rank() == 2 ? expand_dims(values, {1}) * g : values * g;
}

std::vector<ST> csr_matmul_decomposition(const Operation& op, std::span<const ST> in) {
  const TensorType& out = op.result(0)->type();
  ST rows = sparse::entry_rows(in[0], in[1].shape()[0]);
  ST cols = astype(in[1], DType::I64);
  const bool t = transposed(op);
  ST contrib = scaled_rows(in[2], in[3], t ? rows : cols);
  return {scatter_add(zeros(out), t ? cols : rows, contrib, 0)};
}

std::vector<ST> validate_decomposition(const Operation&, std::span<const ST> in) {
  return std::vector<ST>(in.begin(), in.end());
}

// vmap through the op's decomposition, over the batched operands.
std::vector<BatchArg> batch_by_decomposition(BatchContext& ctx, const Operation& op, std::span<const BatchArg> args) {
  const DecomposeRule& rule = decompositions().get(op);
  std::vector<TensorType> row;
  std::vector<AxisTree> axes;
  std::vector<ST> values;
  for (size_t i = 0; i < args.size(); ++i) {
    row.push_back(op.operand(i)->type());
    axes.push_back(args[i].batched ? AxisTree(0) : AxisTree::none());
    values.push_back(args[i].v);
  }
  std::vector<BatchArg> out;
  for (const ST& r :
       call_vmapped([&](std::span<const ST> xs) { return rule(op, xs); }, row, std::move(axes), ctx.size(), values))
    out.push_back({r, true});
  return out;
}

std::vector<BatchArg> csr_matmul_batch(BatchContext& ctx, const Operation& op, std::span<const BatchArg> args) {
  if (args[0].batched || args[1].batched || args[2].batched) return batch_by_decomposition(ctx, op, args);
  // Only the dense operand: its batch folded into the columns, one product, unfolded.
  const ST& b = args[3].v;
  std::vector<ST> in{args[0].v, args[1].v, args[2].v, b};
  if (b.rank() == 2) {
    in[3] = transpose(b, std::vector<int64_t>{1, 0});
    ST r = emit_like(op, in)[0];
    return {{transpose(r, std::vector<int64_t>{1, 0}), true}};
  }
  const DimExpr& k = b.shape()[1];
  const DimExpr& n = b.shape()[2];
  in[3] = reshape(moveaxis(b, 0, 1), Shape{k, ctx.size() * n});
  ST r = emit_like(op, in)[0];
  const DimExpr& m = r.shape()[0];
  return {{moveaxis(reshape(r, Shape{m, ctx.size(), n}), 1, 0), true}};
}

std::vector<BatchArg> validate_batch(BatchContext& ctx, const Operation& op, std::span<const BatchArg> args) {
  std::vector<ST> in;
  for (const BatchArg& a : args) in.push_back(ctx.materialize(a));
  std::vector<BatchArg> out;
  for (const ST& r : emit_like(op, in)) out.push_back({r, true});
  return out;
}

JvpResult validate_jvp(JvpContext&, const Operation& op, std::span<const ST> primals, std::span<const ST> tangents) {
  return {emit_like(op, primals), std::vector<ST>(tangents.begin(), tangents.end())};
}

std::vector<ST> validate_transpose(TransposeContext&, const Operation&, std::span<const ST>,
                                   const std::vector<bool>& linear, std::span<const ST> cts) {
  std::vector<ST> out(cts.size());
  for (size_t i = 0; i < cts.size(); ++i)
    if (linear[i]) out[i] = cts[i];
  return out;
}

JvpResult csr_matmul_jvp(JvpContext&, const Operation& op, std::span<const ST> p, std::span<const ST> t) {
  ST y = emit_like(op, p)[0];
  ST dy;
  if (t[2].defined()) dy = emit_like(op, std::vector<ST>{p[0], p[1], t[2], p[3]})[0];
  if (t[3].defined()) dy = add_tangents(dy, emit_like(op, std::vector<ST>{p[0], p[1], p[2], t[3]})[0]);
  return {{y}, {dy}};
}

std::vector<ST> csr_matmul_transpose(TransposeContext&, const Operation& op, std::span<const ST> in,
                                     const std::vector<bool>& linear, std::span<const ST> cts) {
  std::vector<ST> out(4);
  const ST& ct = cts[0];
  if (!ct.defined()) return out;
  const bool t = transposed(op);
  if (linear[3]) {
    // d(A @ B)/dB^T: A^T @ ct (and back).
    AttrMap attrs = op.attributes();
    attrs["transpose"] = !t;
    out[3] = emit_like(op, std::vector<ST>{in[0], in[1], in[2], ct}, attrs)[0];
  }
  if (linear[2]) {
    // ct_values[k] = <ct[row_k], B[col_k]> (A @ B), <B[row_k], ct[col_k]> (A^T @ B).
    ST rows = sparse::entry_rows(in[0], in[1].shape()[0]);
    ST cols = astype(in[1], DType::I64);
    ST g_ct = take(ct, t ? cols : rows, 0);
    ST g_b = take(in[3], t ? rows : cols, 0);
    ST prod = g_ct * g_b;
    out[2] = prod.rank() == 2 ? sum(prod, Axes(int64_t{1})) : prod;
  }
  return out;
}

}  // namespace

void install_sparse_rules(RuleTables& t) {
  t.batch.set("sparse_validate", validate_batch);
  t.jvp.set("sparse_validate", validate_jvp);
  t.transpose.set("sparse_validate", validate_transpose);
  t.batch.set("sparse_csr_matmul", csr_matmul_batch);
  t.jvp.set("sparse_csr_matmul", csr_matmul_jvp);
  t.transpose.set("sparse_csr_matmul", csr_matmul_transpose);
}

void install_sparse_decompositions(DecomposeTable& t) {
  t.set("sparse_validate", validate_decomposition);
  t.set("sparse_csr_matmul", csr_matmul_decomposition);
}

}  // namespace evoxc::transforms
