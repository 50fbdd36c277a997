// Tests of .evoxcgraph persistence: JSON round trips, save/load, and malformed documents.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "evoxc/core/error.h"
#include "evoxc/core/limits.h"
#include "expect_error.h"
#include "ir/graph_util.h"

namespace evoxc {
namespace {

using nlohmann::json;

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("evoxc_ir_" + std::to_string(::getpid()) + "_" + name)).string();
}

TEST(Json, RoundTripsEveryTestGraph) {
  for (const auto& [name, g] : testing::all_test_graphs()) {
    std::string text = g.to_json();
    Graph back = Graph::from_json(text);
    std::string why;
    EXPECT_TRUE(graphs_equal(g, back, true, &why)) << name << ": " << why;
    EXPECT_EQ(back.to_json(), text) << name;
    EXPECT_EQ(back.to_string(), g.to_string()) << name;
  }
}

TEST(Json, DocumentFollowsTheSchema) {
  json doc = json::parse(testing::mlp_graph().to_json());
  EXPECT_EQ(doc["format"], "evoxcgraph");
  EXPECT_EQ(doc["version"], 1);
  EXPECT_EQ(doc["inputs"], "(*, *)");
  EXPECT_EQ(doc["outputs"], "*");
  const json& f = doc["module"]["functions"][0];
  EXPECT_EQ(f["name"], "main");
  EXPECT_EQ(f["args"], json::array({"tensor<4x8xf32>", "tensor<8x4xf32>"}));
  EXPECT_EQ(f["results"], json::array({"tensor<4xf32>"}));
  const json& rs = f["ops"][2];
  EXPECT_EQ(rs["name"], "reduce_sum");
  // Ids: args 0, 1; dot's result 2; tanh's result 3.
  EXPECT_EQ(rs["operands"], json::array({3}));
  EXPECT_EQ(rs["attributes"]["axes"], json::parse(R"({"kind": "ints", "value": [1]})"));
  EXPECT_EQ(rs["attributes"]["keepdims"], json::parse(R"({"kind": "bool", "value": false})"));
  EXPECT_EQ(rs["loc"], json::parse(R"({"file": "f.cpp", "line": 6, "column": 0})"));
  EXPECT_FALSE(f["ops"][3].contains("loc"));
}

TEST(Json, AttributeEncodings) {
  json doc = json::parse(testing::attrs_graph().to_json());
  const json& a = doc["module"]["functions"][0]["ops"][0]["attributes"];
  EXPECT_EQ(a["a_none"], json::parse(R"({"kind": "none"})"));
  EXPECT_EQ(a["i_nan"]["value"], "nan");
  EXPECT_EQ(a["m_neg_inf"]["value"], "-inf");
  EXPECT_EQ(a["k_payload_nan"]["value"], "nan(0x7FF0000000000123)");
  EXPECT_EQ(a["f_float_one"]["value"], 1.0);
  EXPECT_EQ(a["u_dtype"], json::parse(R"({"kind": "dtype", "value": "bf16"})"));
  EXPECT_EQ(a["w_shape"], json::parse(R"({"kind": "shape", "value": [4, "B"]})"));
  // The string holds bytes that are not UTF-8, so it travels as hex.
  EXPECT_EQ(a["p_string"]["hex"], "0x73617920226869225C0A09656E6401FF");
  EXPECT_EQ(a["y_dense_f32"]["value"],
            json::parse(R"({"dtype": "f32", "shape": [2, 2], "data": "0x0000803F000000800100C07F0000807F"})"));
}

TEST(Json, SaveAndLoad) {
  std::string path = temp_path("regions.evoxcgraph");
  Graph g = testing::regions_graph();
  g.save(path);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp." + std::to_string(::getpid())));
  Graph back = Graph::load(path);
  std::string why;
  EXPECT_TRUE(graphs_equal(g, back, true, &why)) << why;
  // Saving again over an existing file replaces it.
  testing::mlp_graph().save(path);
  EXPECT_TRUE(graphs_equal(testing::mlp_graph(), Graph::load(path), true, &why)) << why;
  std::filesystem::remove(path);
}

TEST(Json, LoadOfMissingFileIsPersistenceError) {
  try {
    Graph::load(temp_path("does_not_exist.evoxcgraph"));
    FAIL() << "no error";
  } catch (const PersistenceError& e) {
    EXPECT_NE(std::string(e.what()).find("does not exist"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Graph::load(std::filesystem::temp_directory_path().string()), PersistenceError);
}

TEST(Json, FailingSaveIsPersistenceError) {
  EXPECT_THROW(testing::mlp_graph().save("/nonexistent_dir_evoxc/x.evoxcgraph"), PersistenceError);
  // The target is a directory: rename fails, and the temp file is cleaned up.
  std::string dir = temp_path("dir");
  std::filesystem::create_directories(dir + "/sub");
  EXPECT_THROW(testing::mlp_graph().save(dir), PersistenceError);
  EXPECT_FALSE(std::filesystem::exists(dir + ".tmp." + std::to_string(::getpid())));
  std::filesystem::remove_all(dir);
}

struct BadDoc {
  const char* name;
  std::string text;
  const char* message;
};

// The mlp document with one edit applied to its parsed JSON.
template <typename F>
std::string mlp_doc(F edit) {
  json doc = json::parse(testing::mlp_graph().to_json());
  edit(doc);
  return doc.dump();
}

TEST(Json, MalformedDocumentsRaisePersistenceErrors) {
  std::string good = testing::mlp_graph().to_json();
  std::vector<BadDoc> cases = {
      {"empty", "", "not valid JSON"},
      {"truncated", good.substr(0, good.size() / 2), "not valid JSON"},
      {"not an object", "[1, 2]", "must be a JSON object"},
      {"wrong format tag", mlp_doc([](json& d) { d["format"] = "onnx"; }), "expected \"evoxcgraph\""},
      {"wrong version", mlp_doc([](json& d) { d["version"] = 7; }), "format version 7"},
      {"version as string", mlp_doc([](json& d) { d["version"] = "1"; }), "expected an integer"},
      {"missing module", mlp_doc([](json& d) { d.erase("module"); }), "missing key \"module\""},
      {"missing inputs", mlp_doc([](json& d) { d.erase("inputs"); }), "missing key \"inputs\""},
      {"bad tree", mlp_doc([](json& d) { d["outputs"] = "(*"; }), "outputs"},
      {"functions not array", mlp_doc([](json& d) { d["module"]["functions"] = 3; }), "expected an array"},
      {"bad type string", mlp_doc([](json& d) { d["module"]["functions"][0]["args"][0] = "tensor<4x8xq9>"; }),
       "unknown element type 'q9'"},
      {"type not string", mlp_doc([](json& d) { d["module"]["functions"][0]["args"][0] = 4; }), "expected a string"},
      {"dangling operand", mlp_doc([](json& d) { d["module"]["functions"][0]["ops"][1]["operands"][0] = 99; }),
       "value id 99"},
      {"forward operand", mlp_doc([](json& d) { d["module"]["functions"][0]["ops"][0]["operands"][0] = 3; }),
       "value id 3"},
      {"negative operand", mlp_doc([](json& d) { d["module"]["functions"][0]["ops"][0]["operands"][0] = -1; }),
       "value id -1"},
      {"operand not int", mlp_doc([](json& d) { d["module"]["functions"][0]["ops"][0]["operands"][0] = 0.5; }),
       "expected an integer"},
      {"unknown attr kind",
       mlp_doc([](json& d) { d["module"]["functions"][0]["ops"][2]["attributes"]["axes"]["kind"] = "complex"; }),
       "unknown attribute kind \"complex\""},
      {"attr value type",
       mlp_doc([](json& d) { d["module"]["functions"][0]["ops"][2]["attributes"]["axes"]["value"] = "1"; }),
       "expected an array"},
      {"bool attr type",
       mlp_doc([](json& d) { d["module"]["functions"][0]["ops"][2]["attributes"]["keepdims"]["value"] = 0; }),
       "expected true or false"},
      {"bad float string",
       mlp_doc([](json& d) { d["statics"]["[0]"] = json::parse(R"({"kind": "float", "value": "lots"})"); }),
       "expected a number"},
      {"int too big",
       mlp_doc([](json& d) { d["statics"]["[0]"] = json::parse(R"({"kind": "int", "value": 18446744073709551615})"); }),
       "out of range"},
      {"dense size", mlp_doc([](json& d) {
         d["statics"]["[0]"] =
             json::parse(R"({"kind": "tensor", "value": {"dtype": "f32", "shape": [3], "data": "0x00"}})");
       }),
       "needs 3 elements"},
      {"dense hostile shape", mlp_doc([](json& d) {
         d["statics"]["[0]"] = json::parse(
             R"({"kind": "tensor", "value": {"dtype": "f32", "shape": [4000000000, 4000000000, 4000000000], "data": "0x"}})");
       }),
       "too many elements"},
      {"bad dim", mlp_doc([](json& d) { d["statics"]["[0]"] = json::parse(R"({"kind": "shape", "value": ["B+"]})"); }),
       "bad extent"},
      {"bad loc", mlp_doc([](json& d) { d["module"]["functions"][0]["ops"][0]["loc"]["line"] = "six"; }),
       "expected an integer"},
      {"regions not array", mlp_doc([](json& d) { d["module"]["functions"][0]["ops"][0]["regions"] = json::object(); }),
       "expected an array"},
      {"duplicate function", mlp_doc([](json& d) { d["module"]["functions"].push_back(d["module"]["functions"][0]); }),
       "defined twice"},
  };
  for (const auto& c : cases) {
    try {
      Graph::from_json(c.text);
      ADD_FAILURE() << c.name << ": read without error";
    } catch (const PersistenceError& e) {
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << c.name << ": " << e.what();
    }
  }
}

TEST(Json, LoadNamesTheFile) {
  std::string path = temp_path("bad.evoxcgraph");
  std::ofstream(path) << "{\"format\": \"evoxcgraph\", \"version\": 2}";
  try {
    Graph::load(path);
    FAIL() << "no error";
  } catch (const PersistenceError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("version 2"), std::string::npos) << e.what();
  }
  std::filesystem::remove(path);
}

TEST(Json, TruncationsNeverCrash) {
  for (const auto& [name, g] : testing::all_test_graphs()) {
    std::string text = g.to_json();
    size_t last_brace = text.rfind('}');
    for (size_t n = 0; n < last_brace; n += 1) {
      EXPECT_THROW(Graph::from_json(std::string_view(text).substr(0, n)), PersistenceError) << name << " " << n;
    }
  }
}

TEST(Json, DeepJsonIsAnErrorNotACrash) {
  EXPECT_THROW(Graph::from_json(std::string(200000, '[')), PersistenceError);
  EXPECT_THROW(Graph::from_json(std::string(200000, '[') + std::string(200000, ']')), PersistenceError);
}

// The mlp document with `levels` nested region ops (test op "r") as main's body.
std::string nested_regions_doc(int levels) {
  json region = json::parse(R"({"args": [], "ops": []})");
  for (int i = 0; i < levels; ++i) {
    json op = json::parse(R"({"name": "r", "operands": [], "results": []})");
    op["regions"] = json::array({region});
    region = json::parse(R"({"args": []})");
    region["ops"] = json::array({op});
  }
  json doc = json::parse(testing::mlp_graph().to_json());
  doc["module"]["functions"][0]["ops"] = region["ops"];
  return doc.dump();
}

using test::expect_error;

using test::repeat;

// The mlp document with the JSON text `raw` spliced in as the value of statics "[0]".
std::string mlp_with_raw_static(const std::string& raw) {
  std::string doc = mlp_doc([](json& d) { d["statics"]["[0]"] = "@@RAW@@"; });
  doc.replace(doc.find("\"@@RAW@@\""), 9, raw);
  return doc;
}

TEST(Json, DeepNestingIsAnErrorNotACrash) {
  // 256 region levels are the budget: they load; one more is refused by the reader, 300 by the JSON pre-scan.
  Graph g = Graph::from_json(nested_regions_doc(kMaxNestingDepth));
  EXPECT_EQ(Graph::from_json(g.to_json()).to_json(), g.to_json());
  expect_error<PersistenceError>([] { Graph::from_json(nested_regions_doc(kMaxNestingDepth + 1)); },
                                 "regions nested more than 256 deep");
  expect_error<PersistenceError>([] { Graph::from_json(nested_regions_doc(300)); },
                                 "JSON arrays and objects nested more than 1040 deep at byte");
}

TEST(Json, DeepJsonInAnyFieldIsRefusedBeforeParsing) {
  std::string deep = std::string(50000, '[') + std::string(50000, ']');
  std::string deep_obj = repeat("{\"a\":", 50000) + "1" + std::string(50000, '}');
  for (const std::string& raw :
       {deep, deep_obj, "{\"kind\": \"ints\", \"value\": " + deep + "}",
        "{\"kind\": \"floats\", \"value\": [" + deep + "]}", "{\"kind\": \"float\", \"value\": " + deep + "}"}) {
    expect_error<PersistenceError>([&] { Graph::from_json(mlp_with_raw_static(raw)); }, "nested more than 1040 deep");
  }
  // Brackets inside strings are text, not nesting.
  std::string bracket_name = mlp_doc([](json& d) { d["module"]["name"] = std::string(5000, '['); });
  EXPECT_EQ(Graph::from_json(bracket_name).module().name(), std::string(5000, '['));
}

TEST(Json, HostileExtentsAreErrorsNotCrashes) {
  // A shape attribute nesting parentheses 50,000 deep (it used to overflow the stack).
  std::string parens = std::string(50000, '(') + "B" + std::string(50000, ')');
  expect_error<PersistenceError>(
      [&] {
        Graph::from_json(mlp_doc([&](json& d) { d["statics"]["[0]"] = {{"kind", "shape"}, {"value", {parens}}}; }));
      },
      "statics.[0].value[0]: bad extent");
  expect_error<PersistenceError>(
      [&] {
        Graph::from_json(mlp_doc([&](json& d) { d["statics"]["[0]"] = {{"kind", "shape"}, {"value", {parens}}}; }));
      },
      "parentheses nested more than 258 deep");
  // A chain of // and % 100,000 long, in a shape attribute and in a type.
  std::string chain = "B" + repeat("//3%5", 100000);
  expect_error<PersistenceError>(
      [&] {
        Graph::from_json(mlp_doc([&](json& d) { d["statics"]["[0]"] = {{"kind", "shape"}, {"value", {chain}}}; }));
      },
      "nested more than 256 levels deep");
  expect_error<PersistenceError>(
      [&] {
        Graph::from_json(
            mlp_doc([&](json& d) { d["module"]["functions"][0]["args"][0] = "tensor<(" + chain + ")x8xf32>"; }));
      },
      "nested more than 256 levels deep");
  // B//2 100,000 times: folds to B//2^62 and nests once per 62 halvings, past the budget.
  std::string halvings = "(B" + repeat("//2", 100000) + ")";
  expect_error<PersistenceError>(
      [&] {
        Graph::from_json(
            mlp_doc([&](json& d) { d["module"]["functions"][0]["args"][0] = "tensor<" + halvings + "xf32>"; }));
      },
      "module.functions[0].args[0]");
  // Overflow in extent arithmetic is a typed error.
  expect_error<PersistenceError>(
      [&] {
        Graph::from_json(mlp_doc([&](json& d) {
          d["statics"]["[0]"] = {{"kind", "shape"}, {"value", {"(B*4611686018427387904*4)"}}};
        }));
      },
      "int64 overflow in a product");
}

TEST(Json, LoadRefusesNonRegularFiles) {
  expect_error<PersistenceError>([] { Graph::load("/dev/zero"); }, "not a regular file (it is a character device)");
  expect_error<PersistenceError>([] { Graph::load(std::filesystem::temp_directory_path().string()); },
                                 "not a regular file (it is a directory)");
  std::string fifo = temp_path("fifo.evoxcgraph");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expect_error<PersistenceError>([&] { Graph::load(fifo); }, "not a regular file (it is a FIFO)");
  std::filesystem::remove(fifo);
}

TEST(Json, LoadRefusesFilesOverTheCap) {
  std::string path = temp_path("capped.evoxcgraph");
  testing::mlp_graph().save(path);
  auto size = std::filesystem::file_size(path);
  ::setenv("EVOXC_MAX_FILE_BYTES", std::to_string(size - 1).c_str(), 1);
  expect_error<PersistenceError>([&] { Graph::load(path); }, "more than the limit of " + std::to_string(size - 1));
  ::setenv("EVOXC_MAX_FILE_BYTES", std::to_string(size).c_str(), 1);
  EXPECT_NO_THROW(Graph::load(path));
  ::unsetenv("EVOXC_MAX_FILE_BYTES");
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace evoxc
