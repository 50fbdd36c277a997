// Tests of the EvoXIR printer: golden files and the printed form of each attribute kind.
#include <gtest/gtest.h>

#include <fstream>
#include <limits>
#include <memory>

#include "evoxc/core/error.h"
#include "evoxc/core/limits.h"
#include "ir/graph_util.h"

namespace evoxc {
namespace {

using testing::loc;
using testing::tt;

// Set EVOXC_UPDATE_GOLDEN=1 to rewrite the golden files after a deliberate format change;
// review the diff before committing.
void expect_golden(const Graph& g, const std::string& name) {
  std::string text = g.to_string();
  std::string rel = "ir/" + name + ".evoxcir";
  if (std::getenv("EVOXC_UPDATE_GOLDEN")) {
    std::ofstream(std::string(EVOXC_TEST_DATA_DIR) + "/" + rel, std::ios::binary) << text;
  }
  std::string want = testing::read_test_data(rel);
  ASSERT_FALSE(want.empty()) << "missing golden file tests/data/" << rel;
  EXPECT_EQ(text, want) << "printed text of " << name << " differs from tests/data/" << rel;
}

TEST(Printer, GoldenMlp) { expect_golden(testing::mlp_graph(), "mlp"); }
TEST(Printer, GoldenSymbolic) { expect_golden(testing::symbolic_graph(), "symbolic"); }
TEST(Printer, GoldenAttrs) { expect_golden(testing::attrs_graph(), "attrs"); }
TEST(Printer, GoldenRegions) { expect_golden(testing::regions_graph(), "regions"); }
TEST(Printer, GoldenMultiFunction) { expect_golden(testing::multi_function_graph(), "multi_function"); }

TEST(Printer, IsDeterministic) {
  for (const auto& [name, g] : testing::all_test_graphs()) {
    EXPECT_EQ(g.to_string(), g.to_string()) << name;
    // A second, separately built copy prints the same.
    for (const auto& [name2, g2] : testing::all_test_graphs())
      if (name2 == name) {
        EXPECT_EQ(g.to_string(), g2.to_string()) << name;
      }
  }
}

// Prints a one-op graph whose op carries `a` as attribute "v" and returns the text of the value.
std::string printed_attr(const Attribute& a) {
  auto m = std::make_shared<Module>("main");
  Function& f = m->add_function("main");
  f.entry().append("probe", {}, {}, {{"v", a}});
  f.entry().append("return", {}, {});
  std::string text = Graph(m, TreeDef::tuple({}), TreeDef::tuple({})).to_string();
  auto start = text.find("{v = ");
  if (start == std::string::npos) return "<not found>";
  auto end = text.find("}\n", start);
  return text.substr(start + 5, end - start - 5);
}

TEST(Printer, AttributeForms) {
  EXPECT_EQ(printed_attr(std::monostate{}), "none");
  EXPECT_EQ(printed_attr(true), "true");
  EXPECT_EQ(printed_attr(int64_t{-3}), "-3");
  EXPECT_EQ(printed_attr(1.0), "1.0");
  EXPECT_EQ(printed_attr(0.5), "0.5");
  EXPECT_EQ(printed_attr(1e-07), "1e-07");
  EXPECT_EQ(printed_attr(-0.0), "-0.0");
  EXPECT_EQ(printed_attr(100.0), "100.0");
  EXPECT_EQ(printed_attr(std::numeric_limits<double>::quiet_NaN()), "nan");
  EXPECT_EQ(printed_attr(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(printed_attr(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(printed_attr(std::string("a\"b\\c\nd\te\x01")), "\"a\\\"b\\\\c\\nd\\te\\x01\"");
  EXPECT_EQ(printed_attr(std::vector<int64_t>{1, 2}), "[1, 2]");
  EXPECT_EQ(printed_attr(std::vector<int64_t>{}), "[]");
  EXPECT_EQ(printed_attr(std::vector<double>{1.0, 2.5}), "[1.0, 2.5]");
  EXPECT_EQ(printed_attr(std::vector<double>{}), "f64[]");
  EXPECT_EQ(printed_attr(f32), "f32");
  EXPECT_EQ(printed_attr(u8), "ui8");
  EXPECT_EQ(printed_attr(Shape({4, Dim("B")})), "shape<4xB>");
  EXPECT_EQ(printed_attr(Shape()), "shape<>");
  EXPECT_EQ(printed_attr(Tensor::from_vector<float>({1.0f, 1.0f}, {2})),
            "dense<tensor<2xf32>, \"0x0000803F0000803F\">");
  EXPECT_EQ(printed_attr(Tensor::from_vector<int16_t>({-2}, {})), "dense<tensor<i16>, \"0xFEFF\">");
}

TEST(Printer, SymbolicTypes) {
  EXPECT_EQ(tt({2 * Dim("B") + 1, 4}, i64).to_string(), "tensor<(2*B+1)x4xi64>");
  auto m = std::make_shared<Module>("main");
  Function& f = m->add_function("main");
  Value* a = f.entry().add_argument(tt({Dim("B"), 4}));
  f.entry().append("return", {a}, {});
  f.result_types() = {tt({Dim("B"), 4})};
  std::string text = Graph(m, TreeDef::tuple({TreeDef(LeafMark{})}), TreeDef(LeafMark{})).to_string();
  EXPECT_NE(text.find("func @main(%arg0: tensor<Bx4xf32>) -> tensor<Bx4xf32> {"), std::string::npos) << text;
}

TEST(Printer, ResultListsAndNoResults) {
  auto m = std::make_shared<Module>("main");
  Function& f = m->add_function("main");
  Value* a = f.entry().add_argument(tt({2}));
  Operation* two = f.entry().append("split", {a}, {tt({1}), tt({1})});
  f.entry().append("sink", {two->result(1)}, {});
  f.entry().append("return", {}, {});
  std::string text = Graph(m, TreeDef::tuple({TreeDef(LeafMark{})}), TreeDef::tuple({})).to_string();
  EXPECT_NE(text.find(") -> () {"), std::string::npos) << text;
  EXPECT_NE(text.find("%0, %1 = evoxc.split(%arg0) : (tensor<1xf32>, tensor<1xf32>)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("    evoxc.sink(%1)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("    evoxc.return()\n"), std::string::npos) << text;
}

TEST(Printer, StaticsAreQuotedPaths) {
  std::string text = testing::symbolic_graph().to_string();
  EXPECT_NE(text.find("statics = {\"[1]\" = none, \"[2]\" = 3, \"[3]['act']\" = \"relu\"}"), std::string::npos) << text;
}

TEST(Printer, EmptyGraphRaises) { EXPECT_THROW(Graph().to_string(), ValidationError); }

// A graph built in memory with `levels` nested region ops (test op "r").
Graph nested_regions_graph(int levels) {
  auto m = std::make_shared<Module>("main");
  Function& f = m->add_function("main");
  Block* b = &f.entry();
  for (int i = 0; i < levels; ++i) b = &b->append("r", {}, {}, {}, {}, 1)->region(0).block();
  return Graph(m, TreeDef::tuple({}), TreeDef::tuple({}));
}

TEST(Printer, RegionDepthBudgetIsShared) {
  // At the budget every writer and reader agrees; past it, the writers refuse what no reader would accept.
  Graph ok = nested_regions_graph(kMaxNestingDepth);
  std::string text = ok.to_string();
  EXPECT_EQ(Graph::parse(text).to_string(), text);
  EXPECT_EQ(Graph::from_json(ok.to_json()).to_string(), text);
  Graph deep = nested_regions_graph(kMaxNestingDepth + 1);
  try {
    (void)deep.to_string();
    ADD_FAILURE() << "printed a graph deeper than the budget";
  } catch (const VerifyError& e) {
    EXPECT_NE(std::string(e.what()).find("regions nested more than 256 deep"), std::string::npos) << e.what();
  }
  try {
    (void)deep.to_json();
    ADD_FAILURE() << "wrote a graph deeper than the budget";
  } catch (const PersistenceError& e) {
    EXPECT_NE(std::string(e.what()).find("regions nested more than 256 deep"), std::string::npos) << e.what();
  }
}

TEST(Printer, ExtentsAreBoundedSoPrintingIsSafe) {
  // The chain that used to overflow the printer's stack cannot be built any more.
  DimExpr e = Dim("B");
  EXPECT_THROW(
      {
        for (int i = 0; i < 100000; ++i) e = i % 2 ? floordiv(e, 3) : e % 5;
      },
      ShapeError);
  EXPECT_EQ(e.depth(), kMaxNestingDepth);
  auto m = std::make_shared<Module>("main");
  Function& f = m->add_function("main");
  Value* a = f.entry().add_argument(tt({e}));
  f.entry().append("return", {a}, {});
  f.result_types() = {tt({e})};
  Graph g(m, TreeDef::tuple({TreeDef(LeafMark{})}), TreeDef(LeafMark{}));
  EXPECT_EQ(Graph::parse(g.to_string()).to_string(), g.to_string());
  EXPECT_EQ(Graph::from_json(g.to_json()).to_string(), g.to_string());
}

}  // namespace
}  // namespace evoxc
