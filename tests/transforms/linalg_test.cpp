// The linear-algebra product rules (dot, dot_general, conv, trace, norm, matrix_rank): generated checks on each op's
// catalogue sample, hand cases for the attribute combinations, and the per-sample-gradient example.
#include "evoxc/trace/linalg.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "evoxc/transforms/rules.h"
#include "ops/ops_util.h"
#include "transforms/transform_util.h"

namespace evoxc {
namespace {

using Ints = std::vector<int64_t>;
using testing::random_inputs;

const std::vector<std::string> kOps = {"dot", "dot_general", "conv", "trace", "norm", "matrix_rank"};

// Every mapping pattern with at least one operand batched, over one or two operands.
std::vector<std::vector<bool>> patterns(size_t n) {
  if (n == 1) return {{true}};
  return {{true, true}, {true, false}, {false, true}};
}

Graph call_graph(const std::string& op, std::vector<TensorType> operands, AttrMap attrs) {
  return testing::one_op_graph(get_op(op), OpSample{std::move(operands), std::move(attrs)});
}

std::vector<TensorType> types(DType t, const std::vector<Shape>& shapes) {
  std::vector<TensorType> out;
  for (const Shape& s : shapes) out.emplace_back(t, s);
  return out;
}

// vectorize with a static batch extent (the conv rule's grouped folds) against the symbolic one
// (its patch contraction), on the same batched inputs; the symbolic one is checked against a loop.
void expect_static_matches_symbolic(const Graph& g, const std::vector<bool>& mapped, int64_t n = 3) {
  std::vector<Tensor> in;
  std::vector<AxisTree> axes;
  std::vector<TensorSpec> specs = g.input_specs();
  for (size_t i = 0; i < specs.size(); ++i) {
    Ints shape;
    if (mapped[i]) shape.push_back(n);
    for (const DimExpr& d : specs[i].shape) shape.push_back(d.value());
    in.push_back(testing::random_tensor(shape, specs[i].dtype, 500 + i));
    axes.push_back(mapped[i] ? AxisTree(0) : AxisTree::none());
  }
  Graph fixed = vectorize(g, AxisTree::tuple(axes), AxisTree(0), DimExpr(n));
  Graph sym = vectorize(g, AxisTree::tuple(axes), AxisTree(0));
  std::vector<Tensor> a = testing::run_flat(fixed, in), b = testing::run_flat(sym, in);
  ASSERT_EQ(a.size(), b.size());
  for (size_t k = 0; k < a.size(); ++k) testing::expect_close(a[k], b[k], 1e-9, 1e-9, "static vs symbolic vmap");
}

// The three generic checks on one graph: vmap against a loop for every mapping pattern (f64, and
// f32 when `f32` is given), jvp against finite differences and vjp against jvp by duality (f64).
void check_all(const std::string& op, const std::vector<Shape>& shapes, const AttrMap& attrs, bool f32 = true,
               bool static_batch = false) {
  SCOPED_TRACE(op + " " + [&] {
    std::string s;
    for (const Shape& sh : shapes) s += "(" + sh.to_string() + ")";
    return s;
  }());
  for (DType t : {DType::F64, DType::F32}) {
    if (t == DType::F32 && !f32) continue;
    Graph g = call_graph(op, types(t, shapes), attrs);
    std::vector<Tensor> ex = random_inputs(g, 5);
    double tol = t == DType::F32 ? 1e-5 : 1e-9;
    for (const auto& m : patterns(shapes.size())) {
      testing::expect_vmap_matches_loop(g, ex, m, 3, tol, tol);
      if (static_batch && t == DType::F64) expect_static_matches_symbolic(g, m);
    }
  }
  Graph g = call_graph(op, types(DType::F64, shapes), attrs);
  std::vector<Tensor> p = random_inputs(g, 5);
  testing::expect_jvp_matches_fd(g, p);
  testing::expect_vjp_matches_jvp(g, p);
}

// ---------------------------------------------------------------- generated

TEST(LinalgRules, EveryOpHasItsRules) {
  for (const std::string& name : kOps) {
    const OpDef& d = get_op(name);
    SCOPED_TRACE(name);
    EXPECT_TRUE(transforms::batch_rules().has(d.id));
    EXPECT_TRUE(transforms::jvp_rules().has(d.id));
    bool linear = !d.linear_each.empty() || !d.linear_operands.empty();
    EXPECT_EQ(transforms::transpose_rules().has(d.id), linear);
  }
}

TEST(LinalgRules, VmapMatchesLoopOnEveryCatalogueSample) {
  for (const std::string& name : kOps) {
    const OpDef& def = get_op(name);
    for (DType t : {DType::F32, DType::F64}) {
      if (!dtype_in_class(t, def.operand_dtypes)) continue;
      SCOPED_TRACE(name + " on " + std::string(dtype_name(t)));
      Graph g = testing::one_op_graph(def, testing::sample_call(def, t));
      std::vector<Tensor> ex = random_inputs(g, 5);
      double tol = t == DType::F32 ? 1e-5 : 1e-9;
      for (const auto& m : patterns(ex.size())) testing::expect_vmap_matches_loop(g, ex, m, 3, tol, tol);
    }
  }
}

TEST(LinalgRules, JvpMatchesFiniteDifferencesAndVjpMatchesJvpOnEveryCatalogueSample) {
  for (const std::string& name : kOps) {
    const OpDef& def = get_op(name);
    SCOPED_TRACE(name);
    Graph g = testing::one_op_graph(def, testing::sample_call(def, DType::F64));
    std::vector<Tensor> p = random_inputs(g, 5);
    testing::expect_jvp_matches_fd(g, p);
    // matrix_rank has an int64 result: no cotangent seeds it, so there is no vjp to compare.
    if (g.output_specs()[0].dtype == DType::F64) testing::expect_vjp_matches_jvp(g, p);
  }
}

TEST(LinalgRules, IntegerOperandsBatch) {
  for (const char* name : {"dot", "dot_general", "conv", "trace"}) {
    SCOPED_TRACE(name);
    const OpDef& def = get_op(name);
    Graph g = testing::one_op_graph(def, testing::sample_call(def, DType::I32));
    std::vector<Tensor> ex = random_inputs(g, 5, -4, 4);
    for (const auto& m : patterns(ex.size())) testing::expect_vmap_matches_loop(g, ex, m, 3, 0, 0);
  }
}

// ---------------------------------------------------------------- dot_general

AttrMap dg_attrs(Ints lc, Ints rc, Ints lb, Ints rb) {
  return {{"lhs_contracting_dims", lc}, {"rhs_contracting_dims", rc}, {"lhs_batch_dims", lb}, {"rhs_batch_dims", rb}};
}

TEST(LinalgRules, DotGeneralWithBatchDims) {
  check_all("dot_general", {{2, 3, 4}, {2, 4, 5}}, dg_attrs({2}, {1}, {0}, {0}));
  // Batch and contracting axes out of order, two of each, free axes on both sides.
  check_all("dot_general", {{3, 2, 4, 5}, {5, 2, 6, 4, 3}}, dg_attrs({3, 2}, {0, 3}, {1, 0}, {1, 4}));
  // An outer product (nothing contracted) and a full contraction to a scalar.
  check_all("dot_general", {{3}, {4}}, dg_attrs({}, {}, {}, {}));
  check_all("dot_general", {{3, 4}, {4, 3}}, dg_attrs({0, 1}, {1, 0}, {}, {}));
}

// ---------------------------------------------------------------- dot (numpy matmul)

TEST(LinalgRules, MatmulOfOneDAndNDOperands) {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{4}, {4}},
      {{4}, {4, 5}},
      {{3, 4}, {4}},
      {{2, 3, 4}, {4, 5}},
      {{4}, {2, 3, 4, 5}},
      {{3, 1, 2, 4}, {2, 4, 5}},
      {{3, 4}, {2, 3, 4, 5}},
      {{2, 3, 4}, {4}},
  };
  for (const auto& [a, b] : cases) check_all("dot", {a, b}, {});
}

// ---------------------------------------------------------------- conv

AttrMap conv_attrs(Ints strides, Ints padding, Ints ldil, Ints rdil, int64_t groups) {
  return {{"window_strides", strides},
          {"padding", padding},
          {"lhs_dilation", ldil},
          {"rhs_dilation", rdil},
          {"feature_group_count", groups}};
}

TEST(LinalgRules, ConvStridePaddingDilationGroups) {
  // Stride 2 (with a window that leaves the last input column unused).
  check_all("conv", {{2, 2, 6, 7}, {3, 2, 3, 2}}, conv_attrs({2, 2}, {0, 0, 0, 0}, {1, 1}, {1, 1}, 1), true, true);
  // Padding, including a negative (cropping) entry.
  check_all("conv", {{2, 2, 5, 5}, {3, 2, 3, 3}}, conv_attrs({1, 1}, {1, 2, -1, 1}, {1, 1}, {1, 1}, 1), true, true);
  // rhs (atrous) dilation with stride.
  check_all("conv", {{1, 2, 9, 8}, {2, 2, 2, 3}}, conv_attrs({2, 1}, {1, 1, 0, 2}, {1, 1}, {2, 3}, 1), true, true);
  // lhs (transposed-conv) dilation.
  check_all("conv", {{2, 1, 4, 3}, {2, 1, 3, 2}}, conv_attrs({1, 2}, {2, 1, 1, 1}, {2, 3}, {1, 1}, 1), true, true);
  // Feature groups: 4 lhs features in 2 groups, 6 outputs.
  check_all("conv", {{2, 4, 5, 5}, {6, 2, 3, 3}}, conv_attrs({1, 1}, {1, 1, 1, 1}, {1, 1}, {1, 1}, 2), true, true);
  // Everything at once, 1-D.
  check_all("conv", {{2, 6, 11}, {9, 2, 3}}, conv_attrs({2}, {2, 1}, {2}, {2}, 3), true, true);
  // Depthwise, 3-D spatial.
  check_all("conv", {{1, 2, 4, 3, 3}, {2, 1, 2, 2, 1}},
            conv_attrs({1, 2, 1}, {0, 1, 1, 0, 0, 0}, {1, 1, 1}, {2, 1, 1}, 2), false, true);
}

TEST(LinalgRules, ConvDerivativesOfTheVectorizedConv) {
  // vmap with a symbolic batch folds it into N (symbolic then) or contracts patches; the derivatives
  // of those graphs transpose convs over symbolic extents outside the spatial ones.
  for (int64_t groups : {1, 2}) {
    SCOPED_TRACE(groups);
    Graph g = call_graph("conv", types(DType::F64, {{2, 4, 6, 5}, {4, 4 / groups, 3, 2}}),
                         conv_attrs({2, 1}, {1, 0, 1, 1}, {1, 2}, {2, 1}, groups));
    for (const auto& m : patterns(2)) {
      std::vector<AxisTree> axes{m[0] ? AxisTree(0) : AxisTree::none(), m[1] ? AxisTree(0) : AxisTree::none()};
      Graph vg = vectorize(g, AxisTree::tuple(axes));
      std::vector<Tensor> p = random_inputs(vg, 7);
      testing::expect_jvp_matches_fd(vg, p);
      testing::expect_vjp_matches_jvp(vg, p);
    }
  }
}

TEST(LinalgRules, ConvVjpOfAnEmptyOutputIsZero) {
  // The window is larger than the input: the output has no positions, and no cotangent flows back.
  Graph g = call_graph("conv", types(DType::F64, {{1, 1, 2}, {1, 1, 3}}), conv_attrs({1}, {0, 0}, {1}, {1}, 1));
  std::vector<Tensor> p = random_inputs(g, 5);
  testing::expect_vjp_matches_jvp(g, p);
}

// ---------------------------------------------------------------- trace

TEST(LinalgRules, TraceWithOffsetsAndAxes) {
  auto attrs = [](int64_t off, int64_t a1, int64_t a2) {
    return AttrMap{{"offset", off}, {"axis1", a1}, {"axis2", a2}};
  };
  check_all("trace", {{3, 4}}, attrs(1, 0, 1));
  check_all("trace", {{3, 4}}, attrs(-2, 1, 0));
  check_all("trace", {{2, 3, 4}}, attrs(0, 2, 0));
  check_all("trace", {{4, 2, 3}}, attrs(5, 0, 2));  // past the edge: always 0
}

// ---------------------------------------------------------------- norm, matrix_rank

TEST(LinalgRules, NormOfEveryOrd) {
  for (double p : {1.0, 2.0, 3.0, 0.5, -1.5, 0.0, double(INFINITY), -double(INFINITY)}) {
    SCOPED_TRACE("p = " + std::to_string(p));
    check_all("norm", {{2, 5}}, {{"ord", std::string("vector")}, {"p", p}});
  }
  for (const char* ord : {"fro", "nuc", "1", "2", "inf", "-1", "-2", "-inf"}) {
    SCOPED_TRACE(ord);
    check_all("norm", {{2, 4, 3}}, {{"ord", std::string(ord)}});
    check_all("norm", {{3, 5}}, {{"ord", std::string(ord)}}, false);
  }
}

TEST(LinalgRules, NormTangentAtZeroIsZero) {
  for (const char* ord : {"fro", "vector"}) {
    SCOPED_TRACE(ord);
    AttrMap a{{"ord", std::string(ord)}};
    if (std::string(ord) == "vector") a["p"] = 2.0;
    Graph g = call_graph("norm", types(DType::F64, {{2, 3}}), a);
    Tensor x = Tensor::zeros({2, 3}, DType::F64);
    Tensor t = testing::random_tensor({2, 3}, DType::F64, 3);
    std::vector<Tensor> out = testing::run_flat(jvp(g), {x, t});
    for (double v : testing::values_of(out[1])) EXPECT_EQ(v, 0.0);
  }
}

TEST(LinalgRules, NormTiesShareTheDerivative) {
  // |x| peaks twice (-3 and 3): each gets half of the derivative, sign included.
  Graph g = call_graph("norm", types(DType::F64, {{3}}), {{"ord", std::string("vector")}, {"p", double(INFINITY)}});
  Tensor x = testing::make_tensor({1, -3, 3}, {3}, DType::F64), t = testing::make_tensor({5, -2, 4}, {3}, DType::F64);
  EXPECT_DOUBLE_EQ(testing::run_flat(jvp(g), {x, t})[1].get_as_double(0), 3.0);
  // The column sums tie too under ord "1".
  Graph g1 = call_graph("norm", types(DType::F64, {{2, 2}}), {{"ord", std::string("1")}});
  Tensor m = testing::make_tensor({1, -2, 2, 1}, {2, 2}, DType::F64);
  Tensor tm = testing::make_tensor({1, 2, 3, 4}, {2, 2}, DType::F64);
  EXPECT_DOUBLE_EQ(testing::run_flat(jvp(g1), {m, tm})[1].get_as_double(0), (1 + 3 - 2 + 4) / 2.0);
}

TEST(LinalgRules, NormTangentsInFloat32) {
  // The max/min picks come from the rule's own sums, so float32 rounding in the kernel cannot lose them.
  for (const char* ord : {"1", "-1", "inf", "-inf"}) {
    SCOPED_TRACE(ord);
    Graph g32 = call_graph("norm", types(DType::F32, {{5, 7}}), {{"ord", std::string(ord)}});
    Graph g64 = call_graph("norm", types(DType::F64, {{5, 7}}), {{"ord", std::string(ord)}});
    std::vector<Tensor> p64 = random_inputs(g64, 3), t64 = random_inputs(g64, 4);
    std::vector<Tensor> p32 = random_inputs(g32, 3), t32 = random_inputs(g32, 4);
    Tensor a = testing::run_flat(jvp(g32), {p32[0], t32[0]})[1], b = testing::run_flat(jvp(g64), {p64[0], t64[0]})[1];
    EXPECT_NE(b.get_as_double(0), 0.0);
    EXPECT_NEAR(a.get_as_double(0), b.get_as_double(0), 1e-5);
  }
}

TEST(LinalgRules, MatrixRankBatches) {
  for (const auto& attrs : {AttrMap{}, AttrMap{{"tol", 0.5}}, AttrMap{{"rtol", 0.3}}}) {
    Graph g = call_graph("matrix_rank", types(DType::F64, {{4, 3}}), attrs);
    testing::expect_vmap_matches_loop(g, random_inputs(g, 5), {true});
    std::vector<Tensor> p = random_inputs(g, 5);
    testing::expect_jvp_matches_fd(g, p);  // the primal output; an int64 result has no tangent
  }
}

// vmap of vmap: the inner rules' output (for a batched kernel with a symbolic batch: the patch
// contraction) batched again, against the inner vmap run on each outer slice.
TEST(LinalgRules, NestedVmap) {
  auto take = [](const Tensor& t, int64_t i) {
    std::vector<double> v = testing::values_of(t);
    Ints shape(t.shape().begin() + 1, t.shape().end());
    size_t n = v.size() / size_t(t.shape()[0]);
    return testing::make_tensor(std::vector<double>(v.begin() + i * n, v.begin() + (i + 1) * n), shape, t.dtype());
  };
  struct Case {
    std::string op;
    std::vector<Shape> shapes;
    AttrMap attrs;
  };
  const std::vector<Case> cases = {
      {"conv", {{2, 4, 5, 5}, {6, 2, 3, 3}}, conv_attrs({2, 1}, {1, 1, 0, 1}, {1, 1}, {1, 2}, 2)},
      {"dot_general", {{3, 2, 4}, {4, 2, 3}}, dg_attrs({2}, {0}, {1}, {1})},
      {"dot", {{3}, {2, 3, 2}}, {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    Graph g = call_graph(c.op, types(DType::F64, c.shapes), c.attrs);
    for (const auto& m : patterns(2)) {
      std::vector<AxisTree> axes{m[0] ? AxisTree(0) : AxisTree::none(), m[1] ? AxisTree(0) : AxisTree::none()};
      Graph inner = vectorize(g, AxisTree::tuple(axes));
      Graph outer = vectorize(inner, AxisTree::tuple(axes));
      std::vector<Tensor> in;
      for (size_t i = 0; i < 2; ++i) {
        Ints shape;
        if (m[i]) shape = {2, 3};
        for (const DimExpr& d : c.shapes[i]) shape.push_back(d.value());
        in.push_back(testing::random_tensor(shape, DType::F64, 40 + i));
      }
      Tensor got = testing::run_flat(outer, in)[0];
      for (int64_t b = 0; b < 2; ++b) {
        std::vector<Tensor> slice_in;
        for (size_t i = 0; i < 2; ++i) slice_in.push_back(m[i] ? take(in[i], b) : in[i]);
        testing::expect_close(take(got, b), testing::run_flat(inner, slice_in)[0], 1e-12, 1e-12, "outer slice");
      }
    }
  }
}

// ---------------------------------------------------------------- jacobians and hessians

// jacfwd vmaps the jvp graph over a basis of tangents and jacrev the vjp graph over a basis of
// cotangents: the latter batches the transposed ops (flipped-kernel convs with exchanged strides and
// dilations, cotangents as conv kernels), so the two Jacobians agreeing checks the rules composed.
void expect_jacobians_agree(const std::string& op, const std::vector<Shape>& shapes, const AttrMap& attrs) {
  SCOPED_TRACE(op);
  Graph g = call_graph(op, types(DType::F64, shapes), attrs);
  ArgNums all = shapes.size() == 1 ? ArgNums(0) : ArgNums{0, 1};
  std::vector<Tensor> p = random_inputs(g, 9);
  std::vector<Tensor> f = testing::run_flat(jacfwd(g, all), p), r = testing::run_flat(jacrev(g, all), p);
  ASSERT_EQ(f.size(), r.size());
  for (size_t k = 0; k < f.size(); ++k) testing::expect_close(f[k], r[k], 1e-9, 1e-9, "jacfwd vs jacrev");
}

TEST(LinalgRules, JacfwdMatchesJacrev) {
  expect_jacobians_agree("dot", {{2, 3, 4}, {4}}, {});
  expect_jacobians_agree("dot", {{3}, {2, 3, 2}}, {});
  expect_jacobians_agree("dot_general", {{3, 2, 4}, {4, 2, 3}}, dg_attrs({2, 0}, {0, 2}, {1}, {1}));
  expect_jacobians_agree("conv", {{2, 2, 6, 7}, {3, 2, 3, 2}}, conv_attrs({2, 2}, {1, 0, -1, 1}, {1, 1}, {1, 1}, 1));
  expect_jacobians_agree("conv", {{1, 2, 4, 3}, {2, 2, 3, 2}}, conv_attrs({1, 2}, {2, 1, 1, 1}, {2, 3}, {1, 1}, 1));
  expect_jacobians_agree("conv", {{2, 6, 9}, {9, 2, 3}}, conv_attrs({2}, {2, 1}, {2}, {2}, 3));
  expect_jacobians_agree("trace", {{3, 2, 4}}, {{"offset", int64_t{1}}, {"axis1", int64_t{2}}, {"axis2", int64_t{0}}});
  for (const char* ord : {"fro", "nuc", "2", "-2", "1", "-inf"})
    expect_jacobians_agree("norm", {{3, 4}}, {{"ord", std::string(ord)}});
  expect_jacobians_agree("norm", {{2, 4}}, {{"ord", std::string("vector")}, {"p", 3.0}});
}

// Second order: the hessian of sum(norm(x . w, p = 3)) in x against finite differences of its gradient.
TEST(LinalgRules, HessianMatchesFiniteDifferencesOfTheGradient) {
  Graph f =
      trace([](const SymbolicTensor& x,
               const SymbolicTensor& w) { return sum(linalg::norm(matmul(x, w), 3.0, std::vector<int64_t>{-1})); },
            TensorSpec({2, 3}, DType::F64), TensorSpec({3, 4}, DType::F64));
  Graph gr = grad(f, 0), h = hessian(f, 0);
  Tensor x = testing::random_tensor({2, 3}, DType::F64, 4), w = testing::random_tensor({3, 4}, DType::F64, 5);
  std::vector<double> hv = testing::values_of(testing::run_flat(h, {x, w})[0]);
  ASSERT_EQ(hv.size(), 36u);
  std::vector<double> xv = testing::values_of(x);
  const double eps = 1e-6;
  for (size_t j = 0; j < 6; ++j) {
    std::vector<double> xp = xv, xm = xv;
    xp[j] += eps;
    xm[j] -= eps;
    std::vector<double> gp =
        testing::values_of(testing::run_flat(gr, {testing::make_tensor(xp, {2, 3}, DType::F64), w})[0]);
    std::vector<double> gm =
        testing::values_of(testing::run_flat(gr, {testing::make_tensor(xm, {2, 3}, DType::F64), w})[0]);
    for (size_t i = 0; i < 6; ++i) EXPECT_NEAR(hv[i * 6 + j], (gp[i] - gm[i]) / (2 * eps), 1e-6) << i << ", " << j;
  }
}

// ---------------------------------------------------------------- per-sample gradients

// The seed example: loss(x, y, w) = mean((tanh(x . w) - y)^2); vmap(grad(loss, argnums=2),
// in_axes=(0, 0, None)) gives every sample's gradient in w.
TEST(LinalgRules, PerSampleGradients) {
  Graph loss = trace(
      [](const SymbolicTensor& x, const SymbolicTensor& y, const SymbolicTensor& w) {
        SymbolicTensor d = tanh(dot(x, w)) - y;
        return mean(d * d);
      },
      TensorSpec({4, 8}, DType::F64), TensorSpec({4, 4}, DType::F64), TensorSpec({8, 4}, DType::F64));
  Graph g = grad(loss, 2);
  Graph per_sample = vmap(g, AxisTree::tuple({AxisTree(0), AxisTree(0), AxisTree::none()}));
  Tensor x = testing::random_tensor({8, 4, 8}, DType::F64, 1);
  Tensor y = testing::random_tensor({8, 4, 4}, DType::F64, 2);
  Tensor w = testing::random_tensor({8, 4}, DType::F64, 3);
  std::vector<Tensor> out = testing::run_flat(per_sample, {x, y, w});
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].shape(), (Ints{8, 8, 4}));
  std::vector<double> xs = testing::values_of(x), ys = testing::values_of(y), ws = testing::values_of(w);
  std::vector<double> got = testing::values_of(out[0]);
  for (int64_t s = 0; s < 8; ++s) {
    // Without vmap: grad on the sample alone, and the closed form x^T (2/16 (h - y)(1 - h^2)), h = tanh(x w).
    auto sample = [&](const std::vector<double>& v, int64_t n) {
      return std::vector<double>(v.begin() + s * n, v.begin() + (s + 1) * n);
    };
    Tensor xi = testing::make_tensor(sample(xs, 32), {4, 8}, DType::F64);
    Tensor yi = testing::make_tensor(sample(ys, 16), {4, 4}, DType::F64);
    Tensor gi = testing::run_flat(g, {xi, yi, w})[0];
    Tensor row = testing::make_tensor(sample(got, 32), {8, 4}, DType::F64);
    testing::expect_close(row, gi, 1e-12, 1e-12, "sample " + std::to_string(s));
    std::vector<double> closed(32, 0.0);
    for (int64_t i = 0; i < 4; ++i)
      for (int64_t j = 0; j < 4; ++j) {
        double z = 0;
        for (int64_t k = 0; k < 8; ++k) z += xs[size_t(s * 32 + i * 8 + k)] * ws[size_t(k * 4 + j)];
        double h = std::tanh(z), r = 2.0 / 16.0 * (h - ys[size_t(s * 16 + i * 4 + j)]) * (1 - h * h);
        for (int64_t k = 0; k < 8; ++k) closed[size_t(k * 4 + j)] += xs[size_t(s * 32 + i * 8 + k)] * r;
      }
    testing::expect_close(gi, testing::make_tensor(closed, {8, 4}, DType::F64), 1e-12, 1e-12,
                          "closed form, sample " + std::to_string(s));
  }
}

}  // namespace
}  // namespace evoxc
