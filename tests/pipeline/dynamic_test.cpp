// Tests of the type-erased entries bindings use: build_dynamic, evaluate_dynamic and run over a whole input tree.
#include <gtest/gtest.h>

#include "evoxc/evoxc.h"

namespace evoxc {
namespace {

using ST = SymbolicTensor;

const ST& tensor_at(const TracedArg& a) { return std::get<ST>(a.leaf()); }

// fn(params, x) = x * params['w'] * params['scale'] + params['b'], with 'scale' a static
// value inside the dict: what a Python caller passes as ({'w': w, 'b': b, 'scale': 2.0}, x).
Tree<ST> affine(const std::vector<TracedArg>& args) {
  const TracedArg& p = args.at(0);
  double scale = std::get<double>(p["scale"].leaf());
  ST y = tensor_at(args.at(1)) * tensor_at(p["w"]) * scale + tensor_at(p["b"]);
  return Tree<ST>::dict({{"y", Tree<ST>(y)}, {"w", Tree<ST>(tensor_at(p["w"]))}});
}

TEST(Dynamic, BuildDynamicTracesAndLoads) {
  std::map<std::string, TraceArg> p{
      {"w", arg_leaf(TensorSpec({3}, f32))}, {"b", arg_leaf(TensorSpec({3}, f32))}, {"scale", arg_leaf(2.0)}};
  std::vector<TraceArg> args{TraceArg::dict(p), arg_leaf(TensorSpec({Dim("N"), 3}, f32))};
  Executable exe = build_dynamic(affine, args);
  EXPECT_EQ(exe.backend(), "interp");
  EXPECT_EQ(exe.num_inputs(), 3u);  // b, w, x: the static is not an input
  EXPECT_EQ(exe.graph().static_values().count("[0]['scale']"), 1u);

  Tensor w = Tensor::from_vector<float>({1, 2, 3}, {3}), b = Tensor::from_vector<float>({0, 0, 1}, {3});
  Tensor x = Tensor::from_vector<float>({1, 1, 1, 2, 2, 2}, {2, 3});
  // The whole input tree, with the static position None.
  std::map<std::string, Tree<Tensor>> pt{{"w", w}, {"b", b}, {"scale", Tree<Tensor>()}};
  Tree<Tensor> out = run(exe, Tree<Tensor>::tuple({Tree<Tensor>::dict(pt), x}));
  EXPECT_EQ(out["y"].leaf().to_vector<float>(), (std::vector<float>{2, 4, 7, 4, 8, 13}));
  EXPECT_EQ(out["w"].leaf().to_vector<float>(), (std::vector<float>{1, 2, 3}));
}

TEST(Dynamic, EvaluateDynamicDerivesSpecsAndRuns) {
  Tensor w = Tensor::from_vector<float>({1, 2, 3}, {3}), b = Tensor::from_vector<float>({0, 0, 1}, {3});
  Tensor x = Tensor::from_vector<float>({1, 1, 1}, {1, 3});
  std::map<std::string, EvalArg> p{{"w", EvalArg(w)}, {"b", EvalArg(b)}, {"scale", EvalArg(EvalLeaf(0.5))}};
  Tree<Tensor> out = evaluate_dynamic(affine, {EvalArg::dict(p), EvalArg(x)});
  EXPECT_EQ(out["y"].leaf().to_vector<float>(), (std::vector<float>{0.5f, 1, 2.5f}));
  EXPECT_EQ(out["y"].leaf().shape(), (std::vector<int64_t>{1, 3}));

  // The same computation through the compile-time entry gives the same bits.
  auto f = [](std::map<std::string, ST> q, ST v) { return v * q["w"] * 0.5 + q["b"]; };
  Tree<Tensor> want = evaluate(f, std::map<std::string, Tensor>{{"w", w}, {"b", b}}, x);
  EXPECT_EQ(want.leaf().to_vector<float>(), out["y"].leaf().to_vector<float>());
}

TEST(Dynamic, ErrorsAreTheStagesOwn) {
  // A mismatched run input names the path.
  Executable exe = build_dynamic([](const std::vector<TracedArg>& a) { return Tree<ST>(tensor_at(a[0]) + 1.0); },
                                 {arg_leaf(TensorSpec({2}, f32))});
  try {
    run(exe, Tree<Tensor>::tuple({Tree<Tensor>::list({Tensor::zeros({2})})}));
    FAIL() << "expected ValidationError";
  } catch (const ValidationError& e) {
    EXPECT_NE(std::string(e.what()).find("[0]"), std::string::npos) << e.what();
  }
  // An unknown backend in the options is a BackendError.
  BuildOptions o;
  o.backend = "tvm";
  EXPECT_THROW(evaluate_dynamic([](const std::vector<TracedArg>& a) { return Tree<ST>(tensor_at(a[0])); },
                                {EvalArg(Tensor::zeros({2}))}, o),
               BackendError);
}

}  // namespace
}  // namespace evoxc
