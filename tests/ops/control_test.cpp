// Inference of the control ops (cond, while_loop, scan) over hand-built regions, and the errors for bad signatures.
#include <gtest/gtest.h>

#include "evoxc/evoxc.h"

namespace evoxc {
namespace {

TensorType tt(Shape s, DType d = f32) { return TensorType(d, std::move(s)); }

// Builds `op` in a fresh block with operands of `in` types; `fill` adds each region's body.
struct Built {
  std::shared_ptr<Module> m = std::make_shared<Module>("main");
  Operation* op = nullptr;
};
Built build_op(const std::string& name, const std::vector<TensorType>& in, size_t nregions, AttrMap attrs,
               const std::vector<std::vector<TensorType>>& region_args,
               const std::vector<std::vector<size_t>>& returns /* per region: arg indices returned */) {
  Built b;
  Function& f = b.m->add_function("main");
  std::vector<Value*> ops;
  for (const auto& t : in) ops.push_back(f.entry().add_argument(t));
  b.op = f.entry().append(name, ops, {}, std::move(attrs), Location{"c.cpp", 1, 1}, nregions);
  for (size_t r = 0; r < nregions; ++r) {
    Block& blk = b.op->region(r).block();
    std::vector<Value*> args;
    for (const auto& t : region_args[r]) args.push_back(blk.add_argument(t));
    std::vector<Value*> ret;
    for (size_t i : returns[r]) ret.push_back(args.at(i));
    blk.append("return", ret, {});
  }
  return b;
}

std::vector<TensorType> infer(const Built& b) {
  const OpDef& d = get_op(b.op->name());
  std::vector<TensorType> in;
  for (const Value* v : b.op->operands()) in.push_back(v->type());
  infer_result_types(d, in, b.op->attributes());
  return d.infer_regions(in, b.op->attributes(), *b.op);
}

template <typename E>
void expect_fail(const Built& b, const std::vector<std::string>& parts) {
  try {
    infer(b);
    ADD_FAILURE() << "no error";
  } catch (const E& e) {
    for (const auto& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

TEST(ControlOps, Registered) {
  for (const char* n : {"cond", "while_loop", "scan"}) {
    const OpDef& d = get_op(n);
    EXPECT_EQ(d.category, OpCategory::ControlFlow);
    EXPECT_TRUE(d.infer_regions);
  }
  EXPECT_EQ(get_op("cond").num_regions, -1);
  EXPECT_EQ(get_op("while_loop").num_regions, 2);
  EXPECT_EQ(get_op("scan").num_regions, 1);
}

TEST(ControlOps, CondInference) {
  DimExpr N = Dim("N");
  auto x = tt({N, 3});
  Built b =
      build_op("cond", {tt({}, bool_), x, tt({}, i32)}, 2, {}, {{x, tt({}, i32)}, {x, tt({}, i32)}}, {{1, 0}, {1, 0}});
  EXPECT_EQ(infer(b), (std::vector<TensorType>{tt({}, i32), x}));
  // n-way with an int64 index, three regions.
  Built s = build_op("cond", {tt({}, i64), x}, 3, {}, {{x}, {x}, {x}}, {{0}, {0}, {0}});
  EXPECT_EQ(infer(s), (std::vector<TensorType>{x}));
  // No operands besides the predicate; regions return nothing.
  Built e = build_op("cond", {tt({}, bool_)}, 2, {}, {{}, {}}, {{}, {}});
  EXPECT_TRUE(infer(e).empty());
}

TEST(ControlOps, WhileInference) {
  DimExpr N = Dim("N");
  auto c = tt({N}), i = tt({}, i64);
  Built b = build_op("while_loop", {i, c}, 2, {}, {{i, c}, {i, c}}, {{}, {0, 1}});
  // The cond region returns nothing, not a bool.
  expect_fail<TypeError>(b, {"op 'while_loop'", "cond region must return one tensor<i1>", "()"});
  Built ok = build_op("while_loop", {tt({}, bool_), c}, 2, {}, {{tt({}, bool_), c}, {tt({}, bool_), c}}, {{0}, {0, 1}});
  EXPECT_EQ(infer(ok), (std::vector<TensorType>{tt({}, bool_), c}));
}

TEST(ControlOps, ScanInference) {
  DimExpr L = Dim("L"), N = Dim("N");
  auto carry = tt({N}), xs = tt({L, N}, f64), slice = tt({N}, f64);
  // body(carry, x) -> (carry, x): ys stacks the x slices.
  Built b = build_op("scan", {carry, xs}, 1, {{"num_carry", int64_t{1}}}, {{carry, slice}}, {{0, 1}});
  EXPECT_EQ(infer(b), (std::vector<TensorType>{carry, tt({L, N}, f64)}));
  // A static length with no xs; reverse set.
  Built n = build_op("scan", {carry}, 1, {{"num_carry", int64_t{1}}, {"length", int64_t{4}}, {"reverse", true}},
                     {{carry}}, {{0, 0}});
  EXPECT_EQ(infer(n), (std::vector<TensorType>{carry, tt({4, N})}));
  // A static length against a symbolic leading extent is allowed (checked at run time).
  Built s = build_op("scan", {xs}, 1, {{"num_carry", int64_t{0}}, {"length", int64_t{2}}}, {{slice}}, {{0}});
  EXPECT_EQ(infer(s), (std::vector<TensorType>{tt({2, N}, f64)}));
  // Zero-length static scan.
  Built z = build_op("scan", {tt({0, 2})}, 1, {{"num_carry", int64_t{0}}}, {{tt({2})}}, {{0}});
  EXPECT_EQ(infer(z), (std::vector<TensorType>{tt({0, 2})}));
}

TEST(ControlOps, MustFail) {
  auto x = tt({3});
  expect_fail<TypeError>(build_op("cond", {tt({}, f32), x}, 2, {}, {{x}, {x}}, {{0}, {0}}),
                         {"op 'cond'", "operand 0 (the predicate)", "tensor<f32>"});
  expect_fail<TypeError>(build_op("cond", {tt({2}, bool_), x}, 2, {}, {{x}, {x}}, {{0}, {0}}), {"rank-0"});
  expect_fail<TypeError>(build_op("cond", {tt({}, bool_), x}, 3, {}, {{x}, {x}, {x}}, {{0}, {0}, {0}}),
                         {"bool predicate needs 2 regions"});
  expect_fail<TypeError>(build_op("cond", {tt({}, i32), x}, 0, {}, {}, {}), {"at least one region"});
  expect_fail<TypeError>(build_op("cond", {tt({}, bool_), x}, 2, {}, {{x}, {tt({3}, f64)}}, {{0}, {0}}),
                         {"block argument 0 of branch 1 has type tensor<3xf64>, expected tensor<3xf32>"});
  expect_fail<TypeError>(
      build_op("cond", {tt({}, bool_), x, tt({3}, f64)}, 2, {}, {{x, tt({3}, f64)}, {x, tt({3}, f64)}}, {{0}, {1}}),
      {"branch 1 returns tensor<3xf64> at result 0 where branch 0 gives tensor<3xf32>"});
  expect_fail<TypeError>(build_op("cond", {tt({}, bool_), x}, 2, {}, {{x}, {x}}, {{0}, {0, 0}}),
                         {"branch 1 returns 2 values"});
  expect_fail<TypeError>(build_op("while_loop", {x}, 2, {}, {{x}, {x}}, {{0}, {0}}),
                         {"cond region must return one tensor<i1>"});
  expect_fail<TypeError>(
      build_op("while_loop", {tt({}, bool_)}, 2, {}, {{tt({}, bool_)}, {tt({}, bool_)}}, {{0}, {0, 0}}),
      {"the body region returns 2 values"});
  expect_fail<TypeError>(build_op("scan", {x}, 1, {{"num_carry", int64_t{2}}}, {{x}}, {{0}}),
                         {"num_carry = 2 must lie in"});
  expect_fail<TypeError>(build_op("scan", {x}, 1, {}, {{x}}, {{0}}), {"missing required attribute 'num_carry'"});
  expect_fail<ShapeError>(build_op("scan", {x}, 1, {{"num_carry", int64_t{1}}}, {{x}}, {{0}}),
                          {"'length' attribute is required"});
  expect_fail<ShapeError>(build_op("scan", {tt({})}, 1, {{"num_carry", int64_t{0}}}, {{}}, {{}}), {"rank >= 1"});
  expect_fail<ShapeError>(
      build_op("scan", {tt({3, 2}), tt({4})}, 1, {{"num_carry", int64_t{0}}}, {{tt({2}), tt({})}}, {{}}),
      {"leading extent 4", "scan length is 3"});
  expect_fail<ShapeError>(
      build_op("scan", {tt({3})}, 1, {{"num_carry", int64_t{0}}, {"length", int64_t{2}}}, {{tt({})}}, {{}}),
      {"leading extent 3", "scan length is 2"});
  expect_fail<ShapeError>(
      build_op("scan", {tt({3})}, 1, {{"num_carry", int64_t{0}}, {"length", int64_t{-1}}}, {{tt({})}}, {{}}),
      {"must be non-negative"});
  expect_fail<TypeError>(build_op("scan", {x, tt({2, 3})}, 1, {{"num_carry", int64_t{1}}}, {{x, tt({3})}}, {{}}),
                         {"returns 0 values, fewer than the 1 carry values"});
  expect_fail<TypeError>(
      build_op("scan", {x, tt({2, 3}, i32)}, 1, {{"num_carry", int64_t{1}}}, {{x, tt({3}, i32)}}, {{1}}),
      {"the body region returns tensor<3xi32> at result 0 where the carry gives tensor<3xf32>"});
}

TEST(ControlOps, VerifyUsesRegions) {
  Graph g = trace([](SymbolicTensor x) { return x; }, TensorSpec({3}, f32));
  verify(g);
  auto x = tt({3});
  Built b = build_op("cond", {tt({}, bool_), x}, 2, {}, {{x}, {tt({3}, f64)}}, {{0}, {0}});
  b.op->parent_block()->append("return", {}, {});
  Graph bad(b.m, TreeDef::tuple({TreeDef(LeafMark{}), TreeDef(LeafMark{})}), TreeDef::tuple({}));
  try {
    verify(bad);
    ADD_FAILURE() << "no error";
  } catch (const VerifyError& e) {
    EXPECT_NE(std::string(e.what()).find("branch 1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace evoxc
