// Generated from the op registry: every op, on every dtype it accepts, verifies, lowers, loads and runs on the interpreter.
#include <gtest/gtest.h>

#include "evoxc/evoxc.h"
#include "evoxc/interp/interp.h"

namespace evoxc {
namespace {

// Attributes that make each op valid on (2, 3) operands; ops absent here take none.
AttrMap sample_attrs(const std::string& op, DType t) {
  Shape s23{2, 3};
  if (op == "gelu") return {{"approximate", false}};
  if (op == "nan_to_num") return {{"nan", 0.0}, {"posinf", 1.0}, {"neginf", -1.0}};
  if (op.starts_with("reduce_")) return {{"axes", std::vector<int64_t>{1}}, {"keepdims", false}};
  if (op == "argmax" || op == "argmin") return {{"axis", int64_t{1}}, {"keepdims", false}, {"index_dtype", i64}};
  if (op == "convert") return {{"dtype", f32}};
  if (op == "bitcast_convert") {
    DType same_width = size_of(t) == 1 ? i8 : size_of(t) == 2 ? i16 : size_of(t) == 4 ? f32 : f64;
    if (same_width == t) same_width = size_of(t) == 1 ? u8 : size_of(t) == 2 ? u16 : size_of(t) == 4 ? i32 : i64;
    return {{"dtype", same_width}};
  }
  if (op == "reshape") return {{"shape", Shape{3, 2}}};
  if (op == "transpose") return {{"permutation", std::vector<int64_t>{1, 0}}};
  if (op == "broadcast_in_dim") return {{"shape", Shape{4, 2, 3}}, {"broadcast_dimensions", std::vector<int64_t>{1, 2}}};
  if (op == "expand_dims") return {{"axes", std::vector<int64_t>{0}}};
  if (op == "squeeze") return {{"axes", std::vector<int64_t>{}}};
  if (op == "slice")
    return {{"start_indices", std::vector<int64_t>{0, 1}}, {"limit_indices", s23}, {"strides", std::vector<int64_t>{1, 2}}};
  if (op == "concatenate") return {{"axis", int64_t{0}}};
  if (op == "iota") return {{"shape", s23}, {"dimension", int64_t{1}}, {"dtype", t}};
  if (op == "full") {
    Attribute v = is_bool(t) ? Attribute(true) : is_float(t) ? Attribute(1.5) : Attribute(int64_t{3});
    return {{"shape", s23}, {"value", v}, {"dtype", t}};
  }
  if (op == "constant") return {{"value", Tensor::zeros({2, 3}, t)}};
  return {};
}

// Operand types for one op and dtype: (2, 3) tensors, (3, 2) as dot's right side, a bool predicate for select.
std::vector<TensorType> sample_operands(const OpDef& def, DType t) {
  TensorType x(t, Shape{2, 3});
  if (def.name == "select") return {TensorType(bool_, Shape{2, 3}), x, x};
  if (def.name == "dot") return {x, TensorType(t, Shape{3, 2})};
  int n = def.min_operands;
  if (def.name == "concatenate") n = 2;
  return std::vector<TensorType>(static_cast<size_t>(n), x);
}

TEST(Catalogue, EveryOpRunsOnEveryAcceptedDtype) {
  int ran = 0;
  for (const OpDef* def : all_ops()) {
    if (def->category == OpCategory::Terminator) continue;
    EXPECT_TRUE(interp::has_kernel(def->name)) << def->name << " has no interpreter kernel";
    for (int k = 0; k < kNumDTypes; ++k) {
      auto t = static_cast<DType>(k);
      bool creation = def->category == OpCategory::Creation;
      if (!creation && !dtype_in_class(t, def->operand_dtypes)) continue;
      if (def->name == "iota" && is_bool(t)) continue;
      if (def->name == "bitcast_convert" && is_bool(t)) continue;
      SCOPED_TRACE(def->name + " on " + std::string(dtype_name(t)));
      std::vector<TensorType> in = sample_operands(*def, t);
      AttrMap attrs = sample_attrs(def->name, t);
      std::vector<TensorType> out;
      ASSERT_NO_THROW(out = infer_result_types(*def, in, attrs));
      auto module = std::make_shared<Module>();
      Function& f = module->add_function("main");
      std::vector<Value*> args;
      for (const auto& ty : in) args.push_back(f.entry().add_argument(ty));
      Operation* op = f.entry().append(def->name, args, out, attrs);
      std::vector<Value*> results;
      for (const auto& r : op->results()) results.push_back(r.get());
      f.entry().append("return", results, {});
      f.result_types() = out;
      std::vector<TreeDef> in_leaves(in.size(), TreeDef(LeafMark{}));
      std::vector<TreeDef> out_leaves(out.size(), TreeDef(LeafMark{}));
      Graph g(module, TreeDef::tuple(in_leaves), TreeDef::tuple(out_leaves));
      Executable exe;
      ASSERT_NO_THROW(exe = load(compile(lower(g))));
      std::vector<Tensor> inputs;
      for (const auto& ty : in) inputs.push_back(Tensor::full(ty.shape.to_ints(), 1.0, ty.dtype));
      std::vector<Tensor> outputs(out.size());
      ASSERT_NO_THROW(exe.execute(inputs, outputs));
      for (size_t i = 0; i < out.size(); ++i) {
        EXPECT_EQ(outputs[i].dtype(), out[i].dtype);
        EXPECT_EQ(outputs[i].shape(), out[i].shape.to_ints());
      }
      ++ran;
    }
  }
  EXPECT_GT(ran, 500);  // about 90 ops, most on several dtypes
}

}  // namespace
}  // namespace evoxc
