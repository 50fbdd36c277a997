// call(): a Graph inlined into another trace, checked against its signature.
#include <gtest/gtest.h>

#include "evoxc/evoxc.h"
#include "expect_error.h"

namespace evoxc {
namespace {

TEST(Call, InlinesAGraphIntoTheTraceAndKeepsItsOutputTree) {
  Graph inner = trace([](const SymbolicTensor& a, const SymbolicTensor& b) { return std::make_pair(a + b, a * b); },
                      TensorSpec(Shape{3}, f32), TensorSpec(Shape{3}, f32));
  Graph outer = trace(
      [&](const SymbolicTensor& x) {
        Tree<SymbolicTensor> r =
            call(inner, Tree<SymbolicTensor>::tuple({Tree<SymbolicTensor>(x), Tree<SymbolicTensor>(x)}));
        return subtract(r[0].leaf(), r[1].leaf());
      },
      TensorSpec(Shape{3}, f32));
  Tensor x = Tensor::from_vector<float>({1, 2, 3}, {3});
  Tensor y = evaluate(
                 [&](const SymbolicTensor& v) {
                   return call(outer, Tree<SymbolicTensor>::tuple({Tree<SymbolicTensor>(v)})).leaf();
                 },
                 x)
                 .leaf();
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{1, 0, -3}));  // 2x - x^2
}

TEST(Call, MismatchesAreTraceErrors) {
  Graph inner = trace([](const SymbolicTensor& a) { return a * 2.0; }, TensorSpec(Shape{3}, f32));
  test::expect_error<TraceError>(
      [&] {
        trace(
            [&](const SymbolicTensor& x) {
              return call(inner, Tree<SymbolicTensor>::tuple({Tree<SymbolicTensor>(x)})).leaf();
            },
            TensorSpec(Shape{4}, f32));
      },
      "takes tensor<3xf32>");
  test::expect_error<TraceError>(
      [&] {
        trace([&](const SymbolicTensor& x) { return call(inner, Tree<SymbolicTensor>(x)).leaf(); },
              TensorSpec(Shape{3}, f32));
      },
      "input tree");
}

}  // namespace
}  // namespace evoxc
