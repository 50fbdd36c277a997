// The rewriting kit: op identity, Builder with inference and explicit locations, detached
// region ops, value maps, cloning and region captures.
#include "evoxc/ir/builder.h"

#include <gtest/gtest.h>

#include "evoxc/ops/op_def.h"
#include "ir/graph_util.h"

namespace evoxc {
namespace {

using testing::loc;
using testing::tt;

// main(%a: tensor<Bx3xf32>, %b: tensor<3xf32>) with `body` filling the entry block.
template <typename F>
Graph make_graph(F&& body, std::vector<TensorType> args = {tt({Dim("B"), 3}), tt({3})}) {
  auto m = std::make_shared<Module>("main", kIrVersion);
  Function& f = m->add_function("main");
  std::vector<Value*> in;
  for (const auto& t : args) in.push_back(f.entry().add_argument(t));
  Builder b(f.entry(), loc("b.cpp", 1));
  std::vector<Value*> out = body(b, in);
  for (Value* v : out) f.result_types().push_back(v->type());
  b.create_return(out);
  std::vector<TreeDef> leaves(args.size(), TreeDef(LeafMark{}));
  std::vector<TreeDef> outs(out.size(), TreeDef(LeafMark{}));
  return Graph(m, TreeDef::tuple(std::move(leaves)), TreeDef::tuple(std::move(outs)));
}

TEST(OpIdentity, EveryOperationLinksToItsOpDefWithADenseId) {
  const auto& ops = all_ops();
  ASSERT_EQ(ops.size(), num_ops());
  ASSERT_GE(registered_ops().size(), num_ops());  // the IR tests add a few test-only ops after the catalogue
  for (size_t i = 0; i < ops.size(); ++i) {
    EXPECT_EQ(ops[i]->id, i) << ops[i]->name;
    EXPECT_EQ(registered_ops()[i], ops[i]);
    EXPECT_EQ(&op_def(static_cast<uint32_t>(i)), ops[i]);
    EXPECT_EQ(find_op_info(ops[i]->name), ops[i]);
  }
  Graph g = make_graph([](Builder& b, std::vector<Value*> in) {
    return std::vector<Value*>{b.create1("add", {in[0], in[1]})};
  });
  const Operation& add = *g.main().entry().operations()[0];
  EXPECT_EQ(&op_def(add), &get_op("add"));
  EXPECT_EQ(add.op_id(), get_op("add").id);
  EXPECT_TRUE(g.main().entry().terminator()->is_terminator());
  EXPECT_FALSE(add.is_terminator());
}

TEST(OpIdentity, AnUnknownOpIsAnErrorWhereItIsBuiltOrRead) {
  Block b;
  EXPECT_THROW(b.append("frobnicate", {}, {}), TypeError);
  try {
    Graph::parse(
        "module @main version 1 attributes {} {\n"
        "  func @main(%a: tensor<2xf32>) -> (tensor<2xf32>) {\n"
        "    %0 = evoxc.frobnicate(%a) : tensor<2xf32>\n"
        "    evoxc.return(%0)\n  }\n}\n");
    FAIL() << "parsed an unknown op";
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown op evoxc.frobnicate"), std::string::npos) << e.what();
  }
  Graph g =
      make_graph([](Builder& b, std::vector<Value*> in) { return std::vector<Value*>{b.create1("exp", {in[1]})}; });
  std::string json = g.to_json();
  size_t p = json.find("\"exp\"");
  ASSERT_NE(p, std::string::npos);
  json.replace(p, 5, "\"exq\"");
  try {
    Graph::from_json(json);
    FAIL() << "read an unknown op";
  } catch (const PersistenceError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown op 'exq'"), std::string::npos) << e.what();
  }
}

TEST(Builder, InfersResultTypesAndRecordsTheLocation) {
  Graph g = make_graph([](Builder& b, std::vector<Value*> in) {
    Value* s = b.create1("add", {in[0], in[1]});  // broadcasts (B,3) with (3,)
    b.set_location(loc("b.cpp", 7, 2));
    Value* r = b.create1("reduce_sum", {s}, {{"axes", std::vector<int64_t>{1}}, {"keepdims", false}});
    return std::vector<Value*>{s, r};
  });
  verify(g);
  const auto& ops = g.main().entry().operations();
  EXPECT_EQ(ops[0]->result()->type(), tt({Dim("B"), 3}));
  EXPECT_EQ(ops[1]->result()->type(), tt({Dim("B")}));
  EXPECT_EQ(ops[0]->location().to_string(), "b.cpp:1:0");
  EXPECT_EQ(ops[1]->location().to_string(), "b.cpp:7:2");
}

TEST(Builder, InferenceErrorsNameTheOpAndTheLocation) {
  auto m = std::make_shared<Module>();
  Function& f = m->add_function("main");
  Value* a = f.entry().add_argument(tt({2}));
  Value* c = f.entry().add_argument(tt({3}));
  Builder b(f.entry(), loc("bad.cpp", 9));
  try {
    b.create("add", {a, c});
    FAIL() << "built an add of (2,) and (3,)";
  } catch (const ShapeError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("add"), std::string::npos) << msg;
    EXPECT_NE(msg.find("bad.cpp:9:0"), std::string::npos) << msg;
  }
  EXPECT_EQ(f.entry().num_operations(), 0u);  // nothing half-built was left behind
}

TEST(Builder, BuildsARegionOpBeforeInsertingIt) {
  Graph g = make_graph(
      [](Builder& b, std::vector<Value*> in) {
        auto op = b.create_detached(get_op("cond"), {in[0], in[1]}, {}, 2);
        EXPECT_EQ(op->num_results(), 0u);
        for (size_t r = 0; r < 2; ++r) {
          Block& body = op->region(r).block();
          Value* x = body.add_argument(in[1]->type());
          Builder rb(body, loc("branch.cpp", static_cast<int>(r) + 1));
          rb.create_return({r == 0 ? rb.create1("exp", {x}) : x});
        }
        Operation* inserted = b.insert(std::move(op));
        return std::vector<Value*>{inserted->result(0)};
      },
      {tt({}, bool_), tt({3})});
  verify(g);
  EXPECT_EQ(g.main().entry().operations()[0]->result()->type(), tt({3}));
}

TEST(Clone, CloneModuleGivesAnEqualGraphForEveryTestGraph) {
  for (const auto& [name, g] : testing::all_test_graphs()) {
    auto copy = clone_module(g.module());
    Graph h(copy, g.input_tree(), g.output_tree(), g.static_values());
    std::string why;
    EXPECT_TRUE(graphs_equal(g, h, true, &why)) << name << ": " << why;
    EXPECT_NE(&h.module(), &g.module());
  }
}

TEST(Clone, CloneOpRemapsOperandsAndKeepsUnmappedOuterValues) {
  Graph src = make_graph([](Builder& b, std::vector<Value*> in) {
    return std::vector<Value*>{b.create1("add", {in[0], in[1]})};
  });
  const Operation& add = *src.main().entry().operations()[0];
  auto m = std::make_shared<Module>();
  Function& f = m->add_function("main");
  Value* a = f.entry().add_argument(tt({Dim("B"), 3}));
  Value* other = f.entry().add_argument(tt({3}));
  ValueMap map;
  map.map(add.operand(0), a);  // operand 1 stays unmapped: the clone keeps the original value
  Builder b(f.entry());
  Operation* c = clone_op(b, add, map);
  EXPECT_EQ(c->operand(0), a);
  EXPECT_EQ(c->operand(1), add.operand(1));
  EXPECT_EQ(map.lookup(add.result()), c->result());
  EXPECT_EQ(c->location().to_string(), "b.cpp:1:0");
  (void)other;
}

TEST(Clone, InlineBlockClonesABodyWithItsArgumentsBound) {
  Graph g = make_graph([](Builder& b, std::vector<Value*> in) {
    Value* e = b.create1("exp", {in[1]});
    return std::vector<Value*>{b.create1("multiply", {e, in[1]})};
  });
  Graph h = make_graph(
      [&](Builder& b, std::vector<Value*> in) {
        ValueMap map;
        return inline_block(b, g.main().entry(), in, map);
      },
      {tt({Dim("B"), 3}), tt({3})});
  verify(h);
  std::string text = h.to_string();
  EXPECT_NE(text.find("evoxc.exp(%arg1)"), std::string::npos) << text;
  EXPECT_NE(text.find("evoxc.multiply(%0, %arg1)"), std::string::npos) << text;
}

TEST(Captures, AreTheOuterValuesUsedInsideRegionsInFirstUseOrder) {
  const Graph g = testing::regions_graph();
  for (const auto& op : g.main().entry().operations()) {
    if (op->regions().empty()) continue;
    std::vector<const Value*> caps = captured_values(*op);
    for (const Value* v : caps) {
      // A capture is defined outside the op: an argument of main or a result of an op before it.
      bool outside = v->is_block_argument() ? v->owner_block() == &g.main().entry()
                                            : v->defining_op()->parent_block() == &g.main().entry();
      EXPECT_TRUE(outside);
    }
    EXPECT_FALSE(caps.empty()) << "regions_graph's region ops use values of enclosing blocks";
  }
  auto uses = count_uses(g.main());
  EXPECT_GT(uses[g.main().entry().argument(0)], 0u);
}

}  // namespace
}  // namespace evoxc
