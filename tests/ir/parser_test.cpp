// Tests of the EvoXIR parser: parse(print(g)) identity, hand-written text, and must-fail inputs.
#include <gtest/gtest.h>

#include <bit>
#include <limits>
#include <memory>

#include "evoxc/core/error.h"
#include "evoxc/core/limits.h"
#include "expect_error.h"
#include "ir/graph_util.h"

namespace evoxc {
namespace {

TEST(Parser, RoundTripsEveryTestGraph) {
  for (const auto& [name, g] : testing::all_test_graphs()) {
    std::string text = g.to_string();
    Graph back = Graph::parse(text);
    std::string why;
    EXPECT_TRUE(graphs_equal(g, back, true, &why)) << name << ": " << why << "\n" << text;
    // Printing is a fixed point after one round.
    EXPECT_EQ(back.to_string(), text) << name;
  }
}

TEST(Parser, ParsesGoldenFiles) {
  for (const char* name : {"mlp", "symbolic", "attrs", "regions", "multi_function"}) {
    std::string text = testing::read_test_data(std::string("ir/") + name + ".evoxcir");
    ASSERT_FALSE(text.empty()) << name;
    EXPECT_EQ(Graph::parse(text).to_string(), text) << name;
  }
}

TEST(Parser, ReadsTheBriefExampleStructure) {
  Graph g = Graph::parse(testing::read_test_data("ir/mlp.evoxcir"));
  ASSERT_EQ(g.main().entry().num_arguments(), 2u);
  EXPECT_EQ(g.main().entry().argument(1)->type().to_string(), "tensor<8x4xf32>");
  const auto& ops = g.main().entry().operations();
  ASSERT_EQ(ops.size(), 4u);
  EXPECT_EQ(ops[0]->name(), "dot");
  EXPECT_EQ(ops[0]->operand(0), g.main().entry().argument(0));
  EXPECT_EQ(ops[1]->operand(0), ops[0]->result());
  EXPECT_EQ(ops[2]->location().file, "f.cpp");
  EXPECT_EQ(ops[2]->location().line, 6);
  EXPECT_EQ(std::get<std::vector<int64_t>>(ops[2]->attributes().at("axes")), std::vector<int64_t>{1});
  EXPECT_EQ(std::get<bool>(ops[2]->attributes().at("keepdims")), false);
  EXPECT_EQ(g.input_tree().structure_string(), "(*, *)");
  EXPECT_EQ(g.output_tree().structure_string(), "*");
}

TEST(Parser, AttributesReadBackBitExact) {
  Graph g = Graph::parse(testing::attrs_graph().to_string());
  const AttrMap& a = g.main().entry().operations()[0]->attributes();
  EXPECT_EQ(std::bit_cast<uint64_t>(std::get<double>(a.at("h_float_negzero"))), uint64_t{1} << 63);
  EXPECT_EQ(std::bit_cast<uint64_t>(std::get<double>(a.at("k_payload_nan"))), uint64_t{0x7FF0000000000123});
  EXPECT_EQ(std::get<int64_t>(a.at("e_int_min")), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(std::get<std::string>(a.at("p_string")), std::string("say \"hi\"\\\n\tend\x01\xff"));
  EXPECT_TRUE(std::holds_alternative<std::vector<double>>(a.at("t_floats_empty")));
  EXPECT_TRUE(std::holds_alternative<std::vector<int64_t>>(a.at("r_ints_empty")));
  const Tensor& t = std::get<Tensor>(a.at("y_dense_f32"));
  EXPECT_EQ(t.shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(t.to_vector<float>()[0], 1.0f);
  EXPECT_EQ(std::bit_cast<uint32_t>(t.to_vector<float>()[1]), 0x80000000u);
  EXPECT_EQ(std::bit_cast<uint32_t>(t.to_vector<float>()[2]), 0x7FC00001u);
}

TEST(Parser, AcceptsHandWrittenTextWithCommentsAndDefaults) {
  Graph g = Graph::parse(R"(// a comment
module @m version 1 {
  func @main(%x: tensor<Bx2xf32>) -> tensor<Bx2xf32> {
    %y = evoxc.neg(%x) attributes {"quoted key" = 1.5e3} : tensor<Bx2xf32>   // trailing comment
    evoxc.return(%y)
  }
})");
  EXPECT_EQ(g.input_tree().structure_string(), "(*,)");
  EXPECT_EQ(g.output_tree().structure_string(), "*");
  EXPECT_EQ(std::get<double>(g.main().entry().operations()[0]->attributes().at("quoted key")), 1500.0);
  EXPECT_NO_THROW(verify_structure(g));
}

TEST(Parser, SymbolicTypesRoundTrip) {
  DimExpr B = Dim("B"), C = Dim("C"), X = Dim("x0");
  std::vector<DimExpr> dims = {
      B,         C - B, B * C, (B + 1) * (C - 2),     floordiv(B, C), B % (C + 1), min(B, C), max(B + 1, 7), X,
      X * 2 + 1, 0,     1,     3 * floordiv(X + B, 2)};
  for (const auto& d : dims) {
    TensorType t(i32, Shape({d, 2, d}));
    auto m = std::make_shared<Module>("main");
    Function& f = m->add_function("main");
    Value* a = f.entry().add_argument(t);
    f.entry().append("return", {a}, {});
    f.result_types() = {t};
    Graph g(m, TreeDef::tuple({TreeDef(LeafMark{})}), TreeDef(LeafMark{}));
    Graph back = Graph::parse(g.to_string());
    EXPECT_EQ(back.main().entry().argument(0)->type(), t) << t.to_string();
  }
}

TEST(Parser, OddNamesRoundTrip) {
  auto m = std::make_shared<Module>("");
  Function& f = m->add_function("main");
  Value* a = f.entry().add_argument(TensorType(f32, Shape()));
  for (const char* name : {"", "has space", "1st", "dots.in.name", "quote\"d"})
    f.entry().append(name, {a}, {}, {{"", int64_t{1}}, {"k-ey", int64_t{2}}});
  f.entry().append("return", {a}, {});
  f.result_types() = {TensorType(f32, Shape())};
  Graph g(m, TreeDef::tuple({TreeDef(LeafMark{})}), TreeDef(LeafMark{}));
  std::string text = g.to_string();
  EXPECT_NE(text.find("evoxc.\"has space\"(%arg0)"), std::string::npos) << text;
  EXPECT_NE(text.find("evoxc.dots.in.name(%arg0)"), std::string::npos) << text;
  std::string why;
  EXPECT_TRUE(graphs_equal(g, Graph::parse(text), true, &why)) << why << "\n" << text;
}

TEST(Parser, TreeStructures) {
  for (const char* s : {"*", "None", "()", "(*,)", "(*, *)", "[]", "[*, [*, None]]", "{}", "{'a': *, 'b c': (*,)}",
                        "(*, {'b': *, 'w': *}, None)"}) {
    EXPECT_EQ(parse_tree_structure(s).structure_string(), s);
  }
  EXPECT_EQ(parse_tree_structure("{'b': *, 'a': [*, *]}").num_leaves(), 3u);
  EXPECT_EQ(parse_tree_structure(" ( * , * , ) ").structure_string(), "(*, *)");
}

struct BadText {
  const char* name;
  std::string text;
  const char* message;  // a substring the error must contain
};

std::string mlp_with(const std::string& from, const std::string& to) {
  std::string t = testing::mlp_graph().to_string();
  auto p = t.find(from);
  if (p == std::string::npos) return "<pattern not found: " + from + ">";
  return t.replace(p, from.size(), to);
}

TEST(Parser, MalformedTextsRaiseParseErrors) {
  std::vector<BadText> cases = {
      {"empty", "", "expected 'module'"},
      {"undefined value", mlp_with("evoxc.tanh(%0)", "evoxc.tanh(%9)"), "use of undefined value %9"},
      {"forward reference", mlp_with("evoxc.tanh(%0)", "evoxc.tanh(%1)"), "use of undefined value %1"},
      {"redefinition", mlp_with("%1 = evoxc.tanh", "%0 = evoxc.tanh"), "defined twice"},
      {"bad dtype", mlp_with("tensor<4x8xf32>", "tensor<4x8xf33>"), "unknown element type 'f33'"},
      {"bad dim", mlp_with("tensor<4x8xf32>", "tensor<4x8+xf32>"), "bad extent"},
      {"missing result type", mlp_with(" : tensor<4x4xf32> loc(\"f.cpp\":6:0)\n    %1", " loc(\"f.cpp\":6:0)\n    %1"),
       "names 1 results but gives 0 result types"},
      {"bad op prefix", mlp_with("evoxc.tanh", "mhlo.tanh"), "starting with 'evoxc.'"},
      {"unterminated string", mlp_with("loc(\"f.cpp\"", "loc(\"f.cpp"), "unterminated string"},
      {"bad escape", mlp_with("\"f.cpp\"", "\"f\\q.cpp\""), "unknown escape"},
      {"int overflow", mlp_with("axes = [1]", "axes = [99999999999999999999]"), "out of range"},
      {"mixed list", mlp_with("axes = [1]", "axes = [1, 2.0]"), "mixes ints and floats"},
      {"bad float", mlp_with("axes = [1]", "axes = 1.2.3"), "bad float literal"},
      {"unknown value", mlp_with("keepdims = false", "keepdims = maybe"), "unknown attribute value 'maybe'"},
      {"duplicate attr", mlp_with("keepdims = false", "axes = [2]"), "given twice"},
      {"dense size", mlp_with("keepdims = false", "k = dense<tensor<2xf32>, \"0x0000\">"), "needs 2 elements"},
      {"dense symbolic", mlp_with("keepdims = false", "k = dense<tensor<Bxf32>, \"0x\">"), "static shape"},
      {"dense hostile size", mlp_with("keepdims = false", "k = dense<tensor<99999999999x99999999999xf32>, \"0x\">"),
       "too many elements"},
      {"dense bad hex", mlp_with("keepdims = false", "k = dense<tensor<1xi8>, \"0xZZ\">"), "non-hex"},
      {"unknown module attr", mlp_with("outputs = \"*\"", "outputs = \"*\", colour = 1"), "unknown module attribute"},
      {"bad tree", mlp_with("inputs = \"(*, *)\"", "inputs = \"(*, *\""), "bad inputs structure"},
      {"trailing text", testing::mlp_graph().to_string() + "junk", "end of input"},
      {"duplicate function", mlp_with("  }\n}", "  }\n  func @main() -> () {\n    evoxc.return()\n  }\n}"),
       "defined twice"},
      {"sibling region value",
       "module @\"m\" version 1 {\n func @main() -> () {\n"
       "  evoxc.a() regions { () { %0 = evoxc.b() : tensor<f32>\n evoxc.return() }"
       " () { evoxc.c(%0)\n evoxc.return() } }\n  evoxc.return()\n }\n}",
       "use of undefined value %0"},
      {"own result in region",
       "module @\"m\" version 1 {\n func @main() -> () {\n"
       "  %0 = evoxc.a() regions { () { evoxc.c(%0)\n evoxc.return() } } : tensor<f32>\n"
       "  evoxc.return()\n }\n}",
       "use of undefined value %0"},
  };
  for (const auto& c : cases) {
    try {
      Graph::parse(c.text);
      ADD_FAILURE() << c.name << ": parsed without error";
    } catch (const ParseError& e) {
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << c.name << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find("parse error at "), std::string::npos) << c.name << ": " << e.what();
    }
  }
}

TEST(Parser, ErrorsCarryLineAndColumn) {
  try {
    Graph::parse(mlp_with("evoxc.tanh(%0)", "evoxc.tanh(%7)"));
    FAIL() << "no error";
  } catch (const ParseError& e) {
    // Line 4 of the text, column of '%7' (4 spaces + "%1 = evoxc.tanh(" = 20 chars before it).
    EXPECT_NE(std::string(e.what()).find("at 4:21:"), std::string::npos) << e.what();
  }
}

TEST(Parser, VersionMismatchIsPersistenceError) {
  try {
    Graph::parse(mlp_with("version 1", "version 2"));
    FAIL() << "no error";
  } catch (const PersistenceError& e) {
    EXPECT_NE(std::string(e.what()).find("version 2"), std::string::npos) << e.what();
  }
}

TEST(Parser, BadTreeStructures) {
  for (const char* s : {"", "(*)", "(*, ", "{'a' *}", "{'a': *, 'a': *}", "[*,, *]", "x", "{'a: *}", "(*) *"}) {
    EXPECT_THROW(parse_tree_structure(s), ParseError) << s;
  }
  EXPECT_THROW(parse_tree_structure(std::string(5000, '(')), ParseError);
}

TEST(Parser, HostileDimExpressionsAreErrors) {
  std::string deep = "tensor<" + std::string(100000, '(') + "1" + std::string(100000, ')') + "xf32>";
  EXPECT_THROW(Graph::parse(mlp_with("tensor<4x8xf32>", deep)), ParseError);
}

TEST(Parser, DeepNestingIsAnErrorNotACrash) {
  std::string text = "module @\"m\" version 1 {\n func @main() -> () {\n";
  for (int i = 0; i < 2000; ++i) text += "evoxc.r() regions { () {\n";
  EXPECT_THROW(Graph::parse(text), ParseError);
}

using test::expect_error;

using test::repeat;

// A module whose @main nests `levels` region ops (test op "r"), closed properly.
std::string nested_regions_text(int levels) {
  std::string text = "module @\"m\" version 1 {\n func @main() -> () {\n";
  text += repeat("evoxc.r() regions { () {\n", levels);
  text += repeat("} }\n", levels);
  return text + " }\n}\n";
}

TEST(Parser, RegionDepthBudgetIsShared) {
  Graph g = Graph::parse(nested_regions_text(kMaxNestingDepth));
  EXPECT_EQ(Graph::parse(g.to_string()).to_string(), g.to_string());
  expect_error<ParseError>([] { Graph::parse(nested_regions_text(kMaxNestingDepth + 1)); },
                           "regions nested more than 256 deep");
  expect_error<ParseError>([] { Graph::parse(nested_regions_text(kMaxNestingDepth + 1)); }, "at 259:");
}

TEST(Parser, TreeDepthBudgetIsShared) {
  std::string ok = repeat("[", kMaxNestingDepth) + "*" + repeat("]", kMaxNestingDepth);
  EXPECT_EQ(parse_tree_structure(ok).depth(), kMaxNestingDepth);
  EXPECT_EQ(parse_tree_structure(ok).structure_string(), ok);
  for (const std::string& deep : {"[" + ok + "]", "(" + ok + ",)", "{'a': " + ok + "}", "[" + repeat("[", 256) + "]"})
    expect_error<ParseError>([&] { parse_tree_structure(deep); }, "containers nested more than 256 deep");
  expect_error<ParseError>([] { parse_tree_structure(repeat("(", 100000)); }, "containers nested more than 256 deep");
}

TEST(Parser, NamesAndLocationsMustBeWhatJsonCanHold) {
  // Found by fuzzing: a location with raw bytes >= 0x80 parsed, but the graph could not be saved.
  for (const std::string& bad : {std::string("make_s\xFC\xFC"
                                             "eeds.cpp"),
                                 std::string("\\xFC.cpp"), std::string("\xED\xA0\x80.cpp")}) {
    expect_error<ParseError>([&] { Graph::parse(mlp_with("loc(\"f.cpp\":6:0)", "loc(\"" + bad + "\":6:0)")); },
                             "a quoted file name must be valid UTF-8");
  }
  expect_error<ParseError>([] { Graph::parse(mlp_with("module @\"main\"", "module @\"m\\xFF\"")); },
                           "a module name must be valid UTF-8");
  expect_error<ParseError>([] { Graph::parse(mlp_with("func @main", "func @\"ma\\xC0\\x80in\"")); },
                           "a function name must be valid UTF-8");
  expect_error<ParseError>([] { Graph::parse(mlp_with("keepdims = false", "keepdims = false, \"k\\xFE\" = 1")); },
                           "an attribute name must be valid UTF-8");
  // UTF-8 names and any bytes in string values still round-trip through text and JSON.
  Graph g = Graph::parse(mlp_with("loc(\"f.cpp\":6:0)", "loc(\"\xD1\x84\xD0\xB0\xD0\xB9\xD0\xBB.py\":6:0)"));
  EXPECT_EQ(Graph::parse(g.to_string()).to_string(), g.to_string());
  EXPECT_EQ(Graph::from_json(g.to_json()).to_string(), g.to_string());
  Graph v = Graph::parse(mlp_with("keepdims = false", "keepdims = false, s = \"\\xFF\\xFE\""));
  EXPECT_EQ(Graph::from_json(v.to_json()).to_string(), v.to_string());
}

TEST(Parser, HostileExtentsAreParseErrorsWithAPosition) {
  // Extents used to overflow the stack in the printer and in comparison; now they are refused while parsing.
  std::string chain = "B" + repeat("//3%5", 100000);
  expect_error<ParseError>([&] { Graph::parse(mlp_with("tensor<4x8xf32>", "tensor<(" + chain + ")x8xf32>")); },
                           "nested more than 256 levels deep");
  expect_error<ParseError>([&] { Graph::parse(mlp_with("tensor<4x8xf32>", "tensor<(" + chain + ")x8xf32>")); },
                           "at 2:");
  std::string halvings = "(B" + repeat("//2", 100000) + ")";
  expect_error<ParseError>([&] { Graph::parse(mlp_with("tensor<4x8xf32>", "tensor<" + halvings + "x8xf32>")); },
                           "nested more than 256 levels deep");
  std::string parens = std::string(50000, '(') + "B" + std::string(50000, ')');
  expect_error<ParseError>(
      [&] { Graph::parse(mlp_with("keepdims = false", "keepdims = false, s = shape<" + parens + ">")); },
      "nests parentheses more than 258 deep");
  expect_error<ParseError>(
      [&] { Graph::parse(mlp_with("keepdims = false", "keepdims = false, s = shape<min(B," + parens + ")>")); },
      "nests parentheses more than 258 deep");
  expect_error<ParseError>(
      [&] { Graph::parse(mlp_with("keepdims = false", "keepdims = false, s = shape<(B*4611686018427387904*4)>")); },
      "int64 overflow in a product");
  // Within the budget, a long halving chain folds and reads back.
  Graph g = Graph::parse(mlp_with("keepdims = false", "keepdims = false, s = shape<(B" + repeat("//2", 60) + ")>"));
  EXPECT_NE(g.to_string().find("shape<(B//1152921504606846976)>"), std::string::npos) << g.to_string();
}

// Every prefix of a valid text must fail cleanly with a typed error, never crash.
TEST(Parser, TruncationsNeverCrash) {
  for (const auto& [name, g] : testing::all_test_graphs()) {
    std::string text = g.to_string();
    size_t last_brace = text.rfind('}');
    for (size_t n = 0; n < last_brace; ++n) {
      try {
        Graph::parse(std::string_view(text).substr(0, n));
        ADD_FAILURE() << name << ": prefix of " << n << " bytes parsed";
      } catch (const ParseError&) {
      } catch (const PersistenceError&) {
      }
    }
  }
}

// Single-byte corruptions either parse or raise ParseError/PersistenceError.
TEST(Parser, ByteFlipsNeverCrash) {
  std::string text = testing::regions_graph().to_string() + testing::attrs_graph().to_string();
  const char repl[] = {'\0', '%', '"', '(', ')', '{', '}', '<', '>', 'x', '9', '-', ',', '\\', '\xff'};
  for (size_t i = 0; i < text.size(); i += 3) {
    for (char r : repl) {
      std::string t = text;
      t[i] = r;
      try {
        Graph::parse(t);
      } catch (const ParseError&) {
      } catch (const PersistenceError&) {
      }
    }
  }
}

}  // namespace
}  // namespace evoxc
