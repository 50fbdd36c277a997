// Tests of verify(): graphs built by hand with Block::append, good and broken.
#include <gtest/gtest.h>

#include "evoxc/ops/op_def.h"
#include "ops/ops_util.h"

namespace evoxc {
namespace {

using testing::tt;

const DimExpr B = Dim("B");

// A main function with the given argument types; the caller appends ops and calls finish().
struct GraphBuilder {
  std::shared_ptr<Module> module = std::make_shared<Module>();
  Function& f = module->add_function("main");
  std::vector<Value*> args;

  explicit GraphBuilder(const std::vector<TensorType>& arg_types) {
    for (const auto& t : arg_types) args.push_back(f.entry().add_argument(t));
  }
  Block& block() { return f.entry(); }
  Graph finish(const std::vector<Value*>& outs) {
    std::vector<TensorType> types;
    for (Value* v : outs) types.push_back(v->type());
    f.result_types() = types;
    block().append("return", outs, {});
    std::vector<TreeDef> in(args.size(), TreeDef(LeafMark{}));
    std::vector<TreeDef> out(outs.size(), TreeDef(LeafMark{}));
    return Graph(module, TreeDef::tuple(in), TreeDef::tuple(out));
  }
};

Location loc(int line) { return Location{"f.cpp", line, 0}; }

// An op the IR knows but the catalogue does not (as the IR tests' test-only ops are): the
// IR builds it, and verify must reject it.
struct Frobnicate final : OpInfo {
  Frobnicate() { name = "frobnicate"; }
  std::vector<TensorType> infer_types(std::span<const TensorType>, const AttrMap&, const Operation*) const override {
    return {};
  }
};
const OpInfo& frobnicate() {
  static Frobnicate op;
  // find_op_info loads the catalogue first, so this op's id lies past every OpDef's.
  static const bool registered = find_op_info(op.name) != nullptr || (register_op_info(op), true);
  (void)registered;
  return op;
}

std::string verify_message(const Graph& g) {
  try {
    verify(g);
  } catch (const VerifyError& e) {
    return e.what();
  }
  return "";
}

TEST(Verify, AcceptsAWellTypedGraph) {
  GraphBuilder gb({tt(f32, {B, 3}), tt(f32, {3})});
  Block& b = gb.block();
  Value* s = b.append("add", {gb.args[0], gb.args[1]}, {tt(f32, {B, 3})}, {}, loc(1))->result();
  Value* e = b.append("exp", {s}, {tt(f32, {B, 3})}, {}, loc(2))->result();
  Value* r =
      b.append("reduce_sum", {e}, {tt(f32, {B})}, {{"axes", std::vector<int64_t>{1}}, {"keepdims", false}}, loc(3))
          ->result();
  Value* m =
      b.append("argmax", {e}, {tt(i32, {3})}, {{"axis", int64_t{0}}, {"keepdims", false}, {"index_dtype", i32}}, loc(4))
          ->result();
  Graph g = gb.finish({r, m});
  EXPECT_NO_THROW(verify(g));
  EXPECT_EQ(verify_message(g), "");
}

TEST(Verify, AcceptsCreationOpsAndConcatenate) {
  GraphBuilder gb({tt(i32, {B})});
  Block& b = gb.block();
  Value* io =
      b.append("iota", {}, {tt(i32, {B})}, {{"shape", Shape{B}}, {"dimension", int64_t{0}}, {"dtype", i32}})->result();
  Value* c = b.append("concatenate", {gb.args[0], io}, {tt(i32, {2 * B})}, {{"axis", int64_t{0}}})->result();
  EXPECT_NO_THROW(verify(gb.finish({c})));
}

TEST(Verify, RejectsAWrongRecordedResultType) {
  GraphBuilder gb({tt(f32, {B, 3}), tt(f32, {3})});
  Value* s = gb.block().append("add", {gb.args[0], gb.args[1]}, {tt(f32, {3})}, {}, loc(3))->result();
  std::string msg = verify_message(gb.finish({s}));
  EXPECT_NE(msg.find("op 'add' at f.cpp:3:0: result 0 has type tensor<3xf32>, inference gives tensor<Bx3xf32>"),
            std::string::npos)
      << msg;
}

TEST(Verify, RejectsAWrongResultCount) {
  GraphBuilder gb({tt(f32, {2})});
  Operation* op = gb.block().append("exp", {gb.args[0]}, {tt(f32, {2}), tt(f32, {2})}, {}, loc(5));
  std::string msg = verify_message(gb.finish({op->result(0)}));
  EXPECT_NE(msg.find("op 'exp' at f.cpp:5:0: has 2 results, inference gives 1"), std::string::npos) << msg;
}

TEST(Verify, RejectsAnUnknownOp) {
  GraphBuilder gb({tt(f32, {2})});
  Value* v = gb.block().append(frobnicate(), {gb.args[0]}, {tt(f32, {2})}, {}, loc(7))->result();
  std::string msg = verify_message(gb.finish({v}));
  EXPECT_NE(msg.find("unknown op 'frobnicate' at f.cpp:7:0"), std::string::npos) << msg;
}

TEST(Verify, TurnsInferenceErrorsIntoVerifyErrorsWithTheLocation) {
  {
    GraphBuilder gb({tt(f32, {2}), tt(i32, {2})});
    Value* v = gb.block().append("add", {gb.args[0], gb.args[1]}, {tt(f32, {2})}, {}, loc(9))->result();
    std::string msg = verify_message(gb.finish({v}));
    EXPECT_NE(msg.find("op 'add'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("int32"), std::string::npos) << msg;
    EXPECT_NE(msg.find("f.cpp:9:0"), std::string::npos) << msg;
  }
  {
    GraphBuilder gb({tt(f32, {2, 3})});
    Value* v = gb.block()
                   .append("reduce_sum", {gb.args[0]}, {tt(f32, {2})}, {{"axes", std::vector<int64_t>{1}}}, loc(11))
                   ->result();
    std::string msg = verify_message(gb.finish({v}));
    EXPECT_NE(msg.find("missing required attribute 'keepdims'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("f.cpp:11:0"), std::string::npos) << msg;
  }
  {
    GraphBuilder gb({tt(f32, {Dim("B")}), tt(f32, {Dim("C")})});
    Value* v = gb.block().append("multiply", {gb.args[0], gb.args[1]}, {tt(f32, {B})}, {}, loc(12))->result();
    std::string msg = verify_message(gb.finish({v}));
    EXPECT_NE(msg.find("cannot broadcast"), std::string::npos) << msg;
    EXPECT_NE(msg.find("f.cpp:12:0"), std::string::npos) << msg;
  }
}

TEST(Verify, RejectsRegionsOnOpsThatTakeNone) {
  GraphBuilder gb({tt(f32, {2})});
  Operation* op = gb.block().append("exp", {gb.args[0]}, {tt(f32, {2})}, {}, loc(4), 1);
  op->region(0).block().append("return", {}, {});
  std::string msg = verify_message(gb.finish({op->result()}));
  EXPECT_NE(msg.find("op 'exp' at f.cpp:4:0: has 1 regions, expected 0"), std::string::npos) << msg;
}

TEST(Verify, RunsTheStructuralChecksFirst) {
  // A block without a terminator breaks structure before any op is looked at.
  auto module = std::make_shared<Module>();
  Function& f = module->add_function("main");
  Value* a = f.entry().add_argument(tt(f32, {2}));
  f.entry().append(frobnicate(), {a}, {tt(f32, {2})});
  Graph g(module, TreeDef::tuple({TreeDef(LeafMark{})}), TreeDef::tuple({}));
  std::string msg = verify_message(g);
  EXPECT_NE(msg.find("evoxc.return"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("unknown op"), std::string::npos) << msg;
  EXPECT_THROW(verify(Graph()), VerifyError);
}

}  // namespace
}  // namespace evoxc
