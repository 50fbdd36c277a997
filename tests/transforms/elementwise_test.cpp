// Generated from the op registry: every elementwise op's batching, jvp and transpose rules, checked against a loop
// over the batch, finite differences and jvp/vjp duality on its catalogue sample.
#include <gtest/gtest.h>

#include <cmath>

#include "evoxc/transforms/rules.h"
#include "ops/ops_util.h"
#include "transforms/transform_util.h"

namespace evoxc {
namespace {

using testing::random_inputs;

// Operand values inside every elementwise function's domain (acosh needs x > 1).
std::vector<Tensor> domain_inputs(const Graph& g, const OpDef& def) {
  bool above_one = def.name == "acosh";
  return random_inputs(g, 5, above_one ? 1.2 : 0.2, above_one ? 2.0 : 0.9);
}

TEST(ElementwiseRules, VmapMatchesLoopForEveryOpAndDtype) {
  int checked = 0;
  for (const OpDef* def : all_ops()) {
    if (!def->elementwise) continue;
    for (DType t : {DType::F32, DType::F64, DType::I32, DType::Bool}) {
      if (!dtype_in_class(t, def->operand_dtypes)) continue;
      SCOPED_TRACE(def->name + " on " + std::string(dtype_name(t)));
      Graph g = testing::one_op_graph(*def, testing::sample_call(*def, t));
      std::vector<Tensor> ex = domain_inputs(g, *def);
      std::vector<bool> all(ex.size(), true);
      testing::expect_vmap_matches_loop(g, ex, all);
      // Every operand but the first shared (unbatched): the broadcasting path.
      std::vector<bool> first(ex.size(), false);
      first[0] = true;
      testing::expect_vmap_matches_loop(g, ex, first);
      ++checked;
    }
  }
  EXPECT_GT(checked, 100);
}

TEST(ElementwiseRules, JvpMatchesFiniteDifferencesAndVjpMatchesJvp) {
  int checked = 0;
  for (const OpDef* def : all_ops()) {
    if (!def->elementwise || !dtype_in_class(DType::F64, def->operand_dtypes)) continue;
    if (transforms::jvp_rules().deferral(def->id)) continue;  // reported by the coverage test
    SCOPED_TRACE(def->name);
    Graph g = testing::one_op_graph(*def, testing::sample_call(*def, DType::F64));
    std::vector<Tensor> p = domain_inputs(g, *def);
    // Finite differences need a float64 result; bitcast_convert has no derivative (its
    // tangent is zero by convention) and is checked by duality only.
    bool f64_out = g.output_specs()[0].dtype == DType::F64;
    if (f64_out && def->name != "bitcast_convert") testing::expect_jvp_matches_fd(g, p);
    testing::expect_vjp_matches_jvp(g, p, f64_out ? 1e-9 : 1e-6);
    ++checked;
  }
  EXPECT_GT(checked, 40);
}

TEST(ElementwiseRules, GradOfAScalarExpression) {
  // f(x, y) = sin(x) * y + exp(x / y): df/dx = cos(x) y + exp(x/y) / y, df/dy = sin(x) - exp(x/y) x / y^2.
  Graph g = trace([](const SymbolicTensor& x, const SymbolicTensor& y) { return sin(x) * y + exp(x / y); },
                  TensorSpec({}, DType::F64), TensorSpec({}, DType::F64));
  Graph gg = grad(g, {0, 1});
  double x = 0.7, y = 1.3;
  std::vector<Tensor> out = testing::run_flat(gg, {Tensor::scalar(x), Tensor::scalar(y)});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_NEAR(out[0].get_as_double(0), std::cos(x) * y + std::exp(x / y) / y, 1e-12);
  EXPECT_NEAR(out[1].get_as_double(0), std::sin(x) - std::exp(x / y) * x / (y * y), 1e-12);
}

}  // namespace
}  // namespace evoxc
