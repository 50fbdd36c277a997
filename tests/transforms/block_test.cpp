// Custom ops (block_call): the portable body runs where nothing is registered, a registered implementation replaces
// it on the interpreter (decided at load), the body survives saving, backends without a rule and the transforms
// inline it, and bad blocks are typed errors.
#include "evoxc/trace/block.h"

#include <gtest/gtest.h>

#include <cmath>

#include "evoxc/evoxc.h"
#include "evoxc/transforms/decompose.h"
#include "transforms/transform_util.h"

namespace evoxc {
namespace {

using ST = SymbolicTensor;
using testing::run_flat;
using testing::values_of;

// softplus(x) * s, one block with two operands and two results.
std::vector<ST> body(const std::vector<ST>& a) { return {log1p(exp(a[0])) * a[1], a[0] + a[1]}; }

Graph graph_of() {
  return trace(
      [](const ST& x, const ST& s) {
        return block_call("test.softplus", body, {x, s});
      },
      TensorSpec(Shape{4}, DType::F64), TensorSpec(Shape{}, DType::F64));
}

std::vector<Tensor> inputs() {
  return {testing::make_tensor({-1.0, 0.0, 0.5, 3.0}, {4}, DType::F64), testing::make_tensor({2.0}, {}, DType::F64)};
}

TEST(Block, TheBodyRunsWhereNothingIsRegistered) {
  Graph g = graph_of();
  EXPECT_NE(g.to_string().find("evoxc.block_call"), std::string::npos);
  EXPECT_NE(g.to_string().find("test.softplus"), std::string::npos);
  std::vector<Tensor> out = run_flat(g, inputs());
  std::vector<double> y = values_of(out[0]);
  EXPECT_NEAR(y[0], std::log1p(std::exp(-1.0)) * 2, 1e-15);
  EXPECT_NEAR(y[3], std::log1p(std::exp(3.0)) * 2, 1e-15);
  EXPECT_EQ(values_of(out[1]), (std::vector<double>{1.0, 2.0, 2.5, 5.0}));
}

TEST(Block, ARegisteredImplementationReplacesTheBodyAtLoad) {
  Graph g = graph_of();
  int calls = 0;
  register_block_impl("test.softplus", "interp", [&](std::span<const Tensor> in, std::span<Tensor> out) {
    ++calls;
    const double* x = in[0].data<const double>();
    double s = *in[1].data<const double>();
    double* y = out[0].data<double>();
    double* z = out[1].data<double>();
    for (int64_t i = 0; i < in[0].numel(); ++i) {
      y[i] = 1000.0 + x[i];  // distinguishable from the body
      z[i] = x[i] + s;
    }
  });
  Executable with = load(compile(lower(g, "interp")));
  EXPECT_EQ(unregister_block_impl("test.softplus", "interp"), true);
  Executable without = load(compile(lower(g, "interp")));
  std::vector<Tensor> in = inputs();
  std::vector<Tensor> a(2), b(2);
  with.execute(in, a);
  without.execute(in, b);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(values_of(a[0])[2], 1000.5);  // the implementation, kept by the executable loaded with it
  EXPECT_NEAR(values_of(b[0])[2], std::log1p(std::exp(0.5)) * 2, 1e-15);
  EXPECT_EQ(values_of(a[1]), values_of(b[1]));
}

TEST(Block, TheBodyTravelsWithTheGraph) {
  Graph g = graph_of();
  Graph back = Graph::from_json(g.to_json());
  EXPECT_EQ(values_of(run_flat(back, inputs())[0]), values_of(run_flat(g, inputs())[0]));
}

const RuleTableBase& nothing_native() {
  static const RuleTable<int, BackendError> t("none");
  return t;
}

TEST(Block, BackendsWithoutARuleInlineTheBody) {
  Graph g = graph_of();
  Graph d = decompose(g, nothing_native());
  EXPECT_EQ(d.to_string().find("block_call"), std::string::npos);
  std::vector<Tensor> want = run_flat(g, inputs()), got = run_flat(d, inputs());
  EXPECT_EQ(values_of(got[0]), values_of(want[0]));
  EXPECT_EQ(values_of(got[1]), values_of(want[1]));
}

TEST(Block, VmapAndGradWorkOnTheBody) {
  Graph g = trace(
      [](const ST& x) {
        return sum(
            block_call("test.sq", [](const std::vector<ST>& a) { return std::vector<ST>{a[0] * a[0]}; }, {x})[0]);
      },
      TensorSpec(Shape{3}, DType::F64));
  Graph dg = grad(g);
  std::vector<Tensor> r = run_flat(dg, {testing::make_tensor({1.0, -2.0, 0.5}, {3}, DType::F64)});
  EXPECT_EQ(values_of(r[0]), (std::vector<double>{2.0, -4.0, 1.0}));
  Graph v = vmap(g);
  std::vector<Tensor> rv = run_flat(v, {testing::make_tensor({1, 2, 3, 4, 5, 6}, {2, 3}, DType::F64)});
  EXPECT_EQ(values_of(rv[0]), (std::vector<double>{14.0, 77.0}));
}

TEST(Block, BadBlocksAreTypedErrors) {
  EXPECT_THROW(trace(
                   [](const ST& x) {
                     return block_call("", body, {x, x});
                   },
                   TensorSpec(Shape{}, DType::F64)),
               TraceError);
  EXPECT_THROW(trace(
                   [](const ST& x) {
                     return block_call("empty", [](const std::vector<ST>&) { return std::vector<ST>{}; }, {x});
                   },
                   TensorSpec(Shape{}, DType::F64)),
               TraceError);
  EXPECT_THROW(register_block_impl("x", "interp", nullptr), ValidationError);
}

}  // namespace
}  // namespace evoxc
