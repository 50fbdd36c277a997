// Linear-algebra op family: dot, with numpy matmul's rank rules over symbolic shapes.
#include <string>
#include <vector>

#include "ops/registry.h"

namespace evoxc::ops_detail {
namespace {

Shape dims_range(const Shape& s, size_t begin, size_t end) {
  return Shape(std::vector<DimExpr>(s.dims().begin() + static_cast<std::ptrdiff_t>(begin),
                                    s.dims().begin() + static_cast<std::ptrdiff_t>(end)));
}

std::vector<TensorType> infer_dot(std::span<const TensorType> ops, const AttrMap&) {
  require_same_dtype("dot", ops);
  const Shape& a = ops[0].shape;
  const Shape& b = ops[1].shape;
  for (size_t i = 0; i < 2; ++i)
    if (ops[i].rank() == 0)
      throw ShapeError(op_label("dot") + ": operand " + std::to_string(i) +
                       " is a scalar; dot needs rank >= 1 (use multiply for scalars)");
  // numpy matmul: a 1-D lhs gains a leading unit dim and a 1-D rhs a trailing one; both are dropped again.
  size_t ra = a.rank(), rb = b.rank();
  const DimExpr& ka = a[ra - 1];
  const DimExpr& kb = rb == 1 ? b[0] : b[rb - 2];
  if (ka != kb)
    throw ShapeError(op_label("dot") + ": contracting extents differ: (" + a.to_string() + ") . (" + b.to_string() +
                     ") contracts " + ka.to_string() + " with " + kb.to_string() +
                     "; the last dim of the lhs must equal the " + (rb == 1 ? "only" : "second-to-last") +
                     " dim of the rhs");
  Shape batch_a = ra >= 2 ? dims_range(a, 0, ra - 2) : Shape();
  Shape batch_b = rb >= 2 ? dims_range(b, 0, rb - 2) : Shape();
  Shape out = broadcast_shapes(batch_a, batch_b, op_label("dot") + " batch dims");
  if (ra >= 2) out.dims().push_back(a[ra - 2]);
  if (rb >= 2) out.dims().push_back(b[rb - 1]);
  return {TensorType(ops[0].dtype, std::move(out))};
}

}  // namespace

void register_linalg_ops(OpTable& t) {
  OpDef d;
  d.name = "dot";
  d.category = OpCategory::LinearAlgebra;
  d.min_operands = d.max_operands = 2;
  d.operand_dtypes = DTypeClass::Numeric;
  d.infer = infer_dot;
  // Bilinear: linear in each operand with the other fixed (JAX: dot_general's defbilinear).
  set_linear_each(d, {0, 1});
  d.sample = sample_shapes({{2, 3}, {3, 4}});
  d.doc =
      "numpy matmul: 1-D.1-D -> scalar, (..., n, k).(..., k, m) with broadcast batch dims, a 1-D operand "
      "gains and loses a unit dim; 2 numeric operands of one dtype, rank >= 1";
  t.add(std::move(d));
}

}  // namespace evoxc::ops_detail
