// OpDefs for N-d convolution (XLA's conv_general_dilated with NCH.../OIH... layouts fixed).
#include <string>
#include <vector>

#include "ops/registry.h"

namespace evoxc::ops_detail {
namespace {

const std::string kOp = "conv";

std::string ints_text(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// Attribute values are bounded so every constant expression below stays far from int64 overflow.
constexpr int64_t kMaxAttr = int64_t{1} << 31;

const std::vector<int64_t>& spatial_attr(const AttrMap& attrs, const std::string& name, size_t n, size_t per,
                                         int64_t lo) {
  const auto& v = attr_ints(attrs, name, kOp);
  if (v.size() != n * per)
    throw ShapeError(op_label(kOp) + ": '" + name + "' " + ints_text(v) + " needs " + std::to_string(n * per) +
                     " entries (" + (per == 2 ? "a (low, high) pair per" : "one per") + " spatial dim; there are " +
                     std::to_string(n) + ")");
  for (int64_t x : v)
    if (x < lo || x > kMaxAttr)
      throw ShapeError(op_label(kOp) + ": '" + name + "' " + ints_text(v) + " has entry " + std::to_string(x) +
                       "; entries must lie in [" + std::to_string(lo) + ", 2^31]");
  return v;
}

// XLA's dilated extent: (b - 1) * d + 1, and 0 for an empty b.
DimExpr dilate(const DimExpr& b, int64_t d) {
  if (d == 1) return b;
  // DimExpr arithmetic throws a ShapeError on int64 overflow, so hostile extents cannot wrap.
  if (b.is_const()) return b.value() == 0 ? DimExpr(0) : DimExpr(b.value() - 1) * DimExpr(d) + DimExpr(1);
  return max(b * DimExpr(d) - DimExpr(d - 1), DimExpr(0));
}

std::vector<TensorType> infer_conv(std::span<const TensorType> ops, const AttrMap& attrs) {
  require_same_dtype(kOp, ops);
  const Shape& x = ops[0].shape;
  const Shape& w = ops[1].shape;
  const std::string op = op_label(kOp);
  if (x.rank() < 3 || w.rank() != x.rank())
    throw ShapeError(op + ": lhs (" + x.to_string() + ") must be (N, C, spatial...) with rank >= 3 and rhs (" +
                     w.to_string() + ") (O, C/groups, window...) of the same rank; add a unit spatial dim for 0-d");
  size_t n = x.rank() - 2;
  const auto& strides = spatial_attr(attrs, "window_strides", n, 1, 1);
  const auto& padding = spatial_attr(attrs, "padding", n, 2, -kMaxAttr);
  const auto& ldil = spatial_attr(attrs, "lhs_dilation", n, 1, 1);
  const auto& rdil = spatial_attr(attrs, "rhs_dilation", n, 1, 1);
  int64_t groups = attr_int(attrs, "feature_group_count", kOp);
  if (groups < 1 || groups > kMaxAttr)
    throw ShapeError(op + ": feature_group_count " + std::to_string(groups) + " must be in [1, 2^31]");
  // lhs features = groups * rhs input features; output features divide into the groups.
  DimExpr want_c = DimExpr(groups) * w[1];
  if (x[1] != want_c)
    throw ShapeError(op + ": lhs has " + x[1].to_string() + " features but rhs (" + w.to_string() + ") with " +
                     std::to_string(groups) + " group(s) expects " + want_c.to_string() +
                     "; rhs dim 1 must be the lhs features / feature_group_count");
  if (w[0].is_const() && w[0].value() % groups != 0)
    throw ShapeError(op + ": rhs output features " + w[0].to_string() + " are not divisible by feature_group_count " +
                     std::to_string(groups));
  if (!w[0].is_const() && groups != 1)
    throw ShapeError(op + ": grouped convolution needs a static output-feature extent, got " + w[0].to_string());
  std::vector<DimExpr> out = {x[0], w[0]};
  for (size_t i = 0; i < n; ++i) {
    DimExpr bound = dilate(x[i + 2], ldil[i]) + DimExpr(padding[2 * i]) + DimExpr(padding[2 * i + 1]);
    DimExpr window = dilate(w[i + 2], rdil[i]);
    if (bound.is_const() && bound.value() < 0)
      throw ShapeError(op + ": spatial dim " + std::to_string(i) + " of lhs (" + x.to_string() +
                       ") is negative after padding (" + bound.to_string() + "); crop less");
    if (bound.is_const() && window.is_const()) {
      int64_t b = bound.value(), k = window.value();
      out.emplace_back(k > b ? int64_t{0} : (b - k) / strides[i] + 1);
    } else {
      // Symbolic: the interpreter checks at run time that the window fits the padded input.
      out.push_back(floordiv(bound - window, DimExpr(strides[i])) + DimExpr(1));
    }
  }
  return {TensorType(ops[0].dtype, Shape(std::move(out)))};
}

}  // namespace

void register_conv_ops(OpTable& t) {
  OpDef d;
  d.name = "conv";
  d.category = OpCategory::LinearAlgebra;
  d.min_operands = d.max_operands = 2;
  d.operand_dtypes = DTypeClass::Numeric;
  d.attrs = {{"window_strides", AttrKind::Ints},
             {"padding", AttrKind::Ints},
             {"lhs_dilation", AttrKind::Ints},
             {"rhs_dilation", AttrKind::Ints},
             {"feature_group_count", AttrKind::Int}};
  d.infer = infer_conv;
  // Bilinear in input and kernel (JAX: conv_general_dilated's defbilinear); the window attributes are structure.
  set_linear_each(d, {0, 1});
  using Ints = std::vector<int64_t>;
  d.sample = sample_shapes({{1, 2, 5, 5}, {3, 2, 3, 3}}, {{"window_strides", Ints{1, 1}},
                                                          {"padding", Ints{0, 0, 0, 0}},
                                                          {"lhs_dilation", Ints{1, 1}},
                                                          {"rhs_dilation", Ints{1, 1}},
                                                          {"feature_group_count", int64_t{1}}});
  d.doc =
      "N-d cross-correlation of lhs (N, C, spatial...) with rhs (O, C/groups, window...) -> (N, O, out...); "
      "padding is (low, high) per spatial dim (negative crops), lhs/rhs dilation, feature groups; 2 numeric "
      "operands of one dtype";
  t.add(std::move(d));
}

}  // namespace evoxc::ops_detail
