// Tests of verify_structure (op-independent IR invariants) and graphs_equal.
#include <gtest/gtest.h>

#include <memory>

#include "evoxc/core/error.h"
#include "ir/graph_util.h"

namespace evoxc {
namespace {

using testing::loc;
using testing::tt;

TreeDef leaf() { return TreeDef(LeafMark{}); }

TEST(VerifyStructure, AcceptsEveryTestGraph) {
  for (const auto& [name, g] : testing::all_test_graphs()) EXPECT_NO_THROW(verify_structure(g)) << name;
}

void expect_verify_error(const Graph& g, const std::vector<std::string>& parts) {
  try {
    verify_structure(g);
    ADD_FAILURE() << "verified without error";
  } catch (const VerifyError& e) {
    for (const auto& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

TEST(VerifyStructure, MissingMain) {
  auto m = std::make_shared<Module>("lib");
  m->add_function("other").entry().append("return", {}, {});
  expect_verify_error(Graph(m, TreeDef::tuple({}), TreeDef::tuple({})), {"no function @main"});
  expect_verify_error(Graph(), {"empty"});
}

TEST(VerifyStructure, ValueFromAnotherFunction) {
  auto m = std::make_shared<Module>("main");
  Function& f = m->add_function("main");
  Value* x = f.entry().add_argument(tt({2}));
  // A value from another function is never visible.
  auto other = std::make_shared<Module>("other");
  Value* foreign = other->add_function("main").entry().add_argument(tt({2}));
  f.entry().append("add", {x, foreign}, {tt({2})}, {}, loc("v.cpp", 3, 1));
  f.entry().append("return", {x}, {});
  f.result_types() = {tt({2})};
  expect_verify_error(Graph(m, TreeDef::tuple({leaf()}), leaf()),
                      {"evoxc.add (%0) at v.cpp:3:1 in @main", "operand 1 (%<unknown>)", "not defined before"});
}

TEST(VerifyStructure, ValueFromSiblingRegion) {
  auto m = std::make_shared<Module>("main");
  Function& f = m->add_function("main");
  Operation* op = f.entry().append("cond", {}, {}, {}, {}, 2);
  Value* inner = op->region(0).block().append("make", {}, {tt({})})->result();
  op->region(0).block().append("return", {inner}, {});
  op->region(1).block().append("use", {inner}, {}, {}, loc("s.py", 9, 2));
  op->region(1).block().append("return", {}, {});
  f.entry().append("return", {}, {});
  expect_verify_error(Graph(m, TreeDef::tuple({}), TreeDef::tuple({})),
                      {"evoxc.use at s.py:9:2 in @main", "operand 0 (%0)", "sibling region"});
}

TEST(VerifyStructure, OwnResultInsideOwnRegion) {
  auto m = std::make_shared<Module>("main");
  Function& f = m->add_function("main");
  Operation* op = f.entry().append("loop", {}, {tt({})}, {}, {}, 1);
  op->region(0).block().append("return", {op->result()}, {});
  f.entry().append("return", {op->result()}, {});
  f.result_types() = {tt({})};
  expect_verify_error(Graph(m, TreeDef::tuple({}), leaf()), {"evoxc.return at <unknown> in @main", "operand 0 (%0)"});
}

TEST(VerifyStructure, NegativeStaticExtentIsRefused) {
  // The parsers refuse tensor<(-5)xf32>; a graph built in memory is checked here.
  auto m = std::make_shared<Module>("main");
  Function& f = m->add_function("main");
  Value* x = f.entry().add_argument(tt({-5}));
  f.entry().append("return", {x}, {});
  f.result_types() = {tt({-5})};
  expect_verify_error(Graph(m, TreeDef::tuple({leaf()}), leaf()),
                      {"argument 0 of the body of @main", "tensor<(-5)xf32>", "negative"});
  auto m2 = std::make_shared<Module>("main");
  Function& f2 = m2->add_function("main");
  Value* y = f2.entry().append("make", {}, {tt({3, -1})}, {}, loc("n.cpp", 4, 2))->result();
  f2.entry().append("return", {y}, {});
  f2.result_types() = {tt({3, -1})};
  expect_verify_error(Graph(m2, TreeDef::tuple({}), leaf()), {"evoxc.make (%0) at n.cpp:4:2", "result 0", "negative"});
}

TEST(VerifyStructure, RegionsNestedBeyondTheBudgetAreRefused) {
  // In memory nothing bounds nesting until verify: 300 nested regions, below the limit of 256
  // a VerifyError and no deep recursion anywhere else first.
  auto m = std::make_shared<Module>("main");
  Function& f = m->add_function("main");
  Block* b = &f.entry();
  for (int i = 0; i < 300; ++i) {
    Operation* op = b->append("cond", {}, {}, {}, {}, 1);
    b->append("return", {}, {});
    b = &op->region(0).block();
  }
  b->append("return", {}, {});
  expect_verify_error(Graph(m, TreeDef::tuple({}), TreeDef::tuple({})), {"nested more than 256 regions deep"});
}

TEST(VerifyStructure, ValueOfLaterOpInEnclosingBlock) {
  auto m = std::make_shared<Module>("main");
  Function& f = m->add_function("main");
  Operation* a = f.entry().append("outer", {}, {}, {}, {}, 1);
  Value* later = f.entry().append("late", {}, {tt({})})->result();
  a->region(0).block().append("return", {later}, {});
  f.entry().append("return", {}, {});
  expect_verify_error(Graph(m, TreeDef::tuple({}), TreeDef::tuple({})), {"operand 0 (%0)", "not defined before"});
}

TEST(VerifyStructure, BlocksMustEndInOneReturn) {
  {
    auto m = std::make_shared<Module>("main");
    m->add_function("main");
    expect_verify_error(Graph(m, TreeDef::tuple({}), TreeDef::tuple({})), {"the body of @main is empty"});
  }
  {
    auto m = std::make_shared<Module>("main");
    Function& f = m->add_function("main");
    f.entry().append("noop", {}, {}, {}, loc("a.cpp", 1));
    expect_verify_error(Graph(m, TreeDef::tuple({}), TreeDef::tuple({})),
                        {"ends with evoxc.noop at a.cpp:1:0", "must end with evoxc.return"});
  }
  {
    auto m = std::make_shared<Module>("main");
    Function& f = m->add_function("main");
    f.entry().append("return", {}, {}, {}, loc("a.cpp", 2));
    f.entry().append("return", {}, {});
    expect_verify_error(Graph(m, TreeDef::tuple({}), TreeDef::tuple({})),
                        {"evoxc.return at a.cpp:2:0", "must be the last op", "1 op(s) follow"});
  }
  {
    auto m = std::make_shared<Module>("main");
    Function& f = m->add_function("main");
    f.entry().append("region_op", {}, {}, {}, loc("r.cpp", 4), 1);
    f.entry().append("return", {}, {});
    expect_verify_error(Graph(m, TreeDef::tuple({}), TreeDef::tuple({})),
                        {"region 0 of evoxc.region_op at r.cpp:4:0 in @main is empty"});
  }
}

Graph identity_graph(TensorType arg, std::vector<TensorType> declared, TreeDef in, TreeDef out) {
  auto m = std::make_shared<Module>("main");
  Function& f = m->add_function("main");
  Value* x = f.entry().add_argument(arg);
  f.entry().append("return", {x}, {}, {}, loc("id.cpp", 5));
  f.result_types() = std::move(declared);
  return Graph(m, std::move(in), std::move(out));
}

TEST(VerifyStructure, ReturnMatchesDeclaredResults) {
  EXPECT_NO_THROW(verify_structure(identity_graph(tt({2}), {tt({2})}, TreeDef::tuple({leaf()}), leaf())));
  expect_verify_error(identity_graph(tt({2}), {tt({3})}, TreeDef::tuple({leaf()}), leaf()),
                      {"evoxc.return at id.cpp:5:0 in @main", "tensor<2xf32>", "tensor<3xf32>"});
  expect_verify_error(identity_graph(tt({2}), {}, TreeDef::tuple({leaf()}), TreeDef::tuple({})),
                      {"returns 1 values", "declares 0 results"});
}

TEST(VerifyStructure, TreesMatchMainArity) {
  expect_verify_error(identity_graph(tt({2}), {tt({2})}, TreeDef::tuple({leaf(), leaf()}), leaf()),
                      {"@main has 1 arguments", "(*, *)", "2 leaves"});
  expect_verify_error(identity_graph(tt({2}), {tt({2})}, TreeDef::tuple({leaf()}), TreeDef::tuple({})),
                      {"@main has 1 results", "output structure ()"});
}

TEST(GraphsEqual, EqualCopiesAndDifferences) {
  std::string why;
  EXPECT_TRUE(graphs_equal(testing::regions_graph(), testing::regions_graph(), true, &why)) << why;
  EXPECT_FALSE(graphs_equal(testing::regions_graph(), testing::mlp_graph(), true, &why));
  EXPECT_FALSE(why.empty());

  // A changed attribute value.
  Graph a = testing::mlp_graph();
  auto m = std::make_shared<Module>("main");
  Function& f = m->add_function("main");
  Value* x = f.entry().add_argument(tt({4, 8}));
  Value* w = f.entry().add_argument(tt({8, 4}));
  Value* d = f.entry().append("dot", {x, w}, {tt({4, 4})}, {}, loc("f.cpp", 6))->result();
  Value* t = f.entry().append("tanh", {d}, {tt({4, 4})}, {}, loc("f.cpp", 7))->result();
  Value* s = f.entry()
                 .append("reduce_sum", {t}, {tt({4})}, {{"axes", std::vector<int64_t>{0}}, {"keepdims", false}},
                         loc("f.cpp", 6))
                 ->result();
  f.entry().append("return", {s}, {});
  f.result_types() = {tt({4})};
  Graph b(m, TreeDef::tuple({leaf(), leaf()}), leaf());
  EXPECT_FALSE(graphs_equal(a, b, false, &why));
  EXPECT_NE(why.find("'axes' is [1] vs [0]"), std::string::npos) << why;
  // With locations compared, the tanh location differs first.
  EXPECT_FALSE(graphs_equal(a, b, true, &why));
  EXPECT_NE(why.find("op 1 (evoxc.tanh): location f.cpp:6:0 vs f.cpp:7:0"), std::string::npos) << why;
}

TEST(GraphsEqual, OperandWiringMatters) {
  auto build = [](bool swap) {
    auto m = std::make_shared<Module>("main");
    Function& f = m->add_function("main");
    Value* x = f.entry().add_argument(tt({2}));
    Value* y = f.entry().add_argument(tt({2}));
    Value* s =
        f.entry().append("subtract", swap ? std::vector<Value*>{y, x} : std::vector<Value*>{x, y}, {tt({2})})->result();
    f.entry().append("return", {s}, {});
    f.result_types() = {tt({2})};
    return Graph(m, TreeDef::tuple({TreeDef(LeafMark{}), TreeDef(LeafMark{})}), TreeDef(LeafMark{}));
  };
  std::string why;
  EXPECT_TRUE(graphs_equal(build(false), build(false), true, &why)) << why;
  EXPECT_FALSE(graphs_equal(build(false), build(true), true, &why));
  EXPECT_NE(why.find("operand 0 is wired differently"), std::string::npos) << why;
}

TEST(GraphsEqual, TreesAndStatics) {
  Graph g = testing::symbolic_graph();
  Graph other_tree(g.module_ptr(), TreeDef::tuple({leaf(), leaf()}), g.output_tree(), g.static_values());
  std::string why;
  EXPECT_FALSE(graphs_equal(g, other_tree, true, &why));
  EXPECT_NE(why.find("input trees differ"), std::string::npos) << why;
  AttrMap statics = g.static_values();
  statics["[2]"] = int64_t{4};
  Graph other_static(g.module_ptr(), g.input_tree(), g.output_tree(), statics);
  EXPECT_FALSE(graphs_equal(g, other_static, true, &why));
  EXPECT_NE(why.find("static values: '[2]' is 3 vs 4"), std::string::npos) << why;
}

}  // namespace
}  // namespace evoxc
