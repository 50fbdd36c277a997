// The must-fail list: bad op calls, each with the error type and a message substring that tells the user what to fix.
#include <gtest/gtest.h>

#include <functional>

#include "evoxc/core/file_io.h"
#include "evoxc/ir/graph.h"
#include "evoxc/ops/op_def.h"
#include "ops/ops_util.h"

namespace evoxc {
namespace {

using testing::tt;
using Ints = std::vector<int64_t>;

enum class Err { Type, Shape };

struct BadCall {
  std::string op;
  std::vector<TensorType> operands;
  AttrMap attrs;
  Err err;
  std::string substring;
};

const DimExpr B = Dim("B");
const DimExpr C = Dim("C");

std::vector<BadCall> bad_calls() {
  AttrMap red = {{"axes", Ints{0}}, {"keepdims", false}};
  return {
      {"add", {tt(f32, {2}), tt(f32, {2}), tt(f32, {2})}, {}, Err::Type, "op 'add' takes 2 operands, got 3"},
      {"exp", {}, {}, Err::Type, "op 'exp' takes 1 operand, got 0"},
      {"concatenate", {}, {{"axis", int64_t{0}}}, Err::Type, "takes at least 1 operand, got 0"},
      {"exp", {tt(i32, {2})}, {}, Err::Type, "operand 0 has dtype int32, expected float"},
      {"popcount", {tt(f32, {2})}, {}, Err::Type, "expected int"},
      {"logical_not", {tt(i8, {2})}, {}, Err::Type, "expected bool"},
      {"add", {tt(f32, {2}), tt(i32, {2})}, {}, Err::Type, "operand 1 has dtype int32 but operand 0 has dtype float32"},
      {"add", {tt(bool_, {2}), tt(bool_, {2})}, {}, Err::Type, "operand 0 has dtype bool"},
      {"shift_left", {tt(f32, {2}), tt(f32, {2})}, {}, Err::Type, "expected int"},
      {"equal", {tt(u8, {2}), tt(i8, {2})}, {}, Err::Type, "convert one operand first"},
      {"select", {tt(f32, {2}), tt(f32, {2}), tt(f32, {2})}, {}, Err::Type, "predicate (operand 0) must be bool"},
      {"add", {tt(f32, {B}), tt(f32, {C})}, {}, Err::Shape, "cannot broadcast"},
      {"add", {tt(f32, {B}), tt(f32, {4})}, {}, Err::Shape, "op 'add'"},
      {"gelu", {tt(f32, {2})}, {}, Err::Type, "missing required attribute 'approximate'"},
      {"gelu", {tt(f32, {2})}, {{"approximate", int64_t{1}}}, Err::Type, "attribute 'approximate' must be a bool"},
      {"exp", {tt(f32, {2})}, {{"axes", Ints{0}}}, Err::Type, "unknown attribute 'axes'"},
      {"reduce_sum", {tt(f32, {2, 3})}, {{"axes", Ints{0}}}, Err::Type, "missing required attribute 'keepdims'"},
      {"reduce_sum", {tt(f32, {2, 3})}, {{"axes", Ints{1, 0}}, {"keepdims", false}}, Err::Shape, "sorted"},
      {"reduce_sum", {tt(f32, {2, 3})}, {{"axes", Ints{2}}, {"keepdims", false}}, Err::Shape, "out of range"},
      {"reduce_any", {tt(f32, {2})}, red, Err::Type, "expected bool"},
      {"argmax",
       {tt(f32, {0})},
       {{"axis", int64_t{0}}, {"keepdims", false}, {"index_dtype", i64}},
       Err::Shape,
       "is empty"},
      {"argmax",
       {tt(f32, {3})},
       {{"axis", int64_t{0}}, {"keepdims", false}, {"index_dtype", u32}},
       Err::Type,
       "index_dtype must be int32 or int64"},
      {"dot", {tt(f32, {2, 3}), tt(f32, {4, 5})}, {}, Err::Shape, "contracting extents differ"},
      {"dot", {tt(f32, {}), tt(f32, {3})}, {}, Err::Shape, "rank >= 1"},
      {"dot", {tt(f32, {2, 2, 3}), tt(f32, {5, 3, 1})}, {}, Err::Shape, "cannot broadcast"},
      {"reshape", {tt(f32, {2, 6})}, {{"shape", Shape{5, 2}}}, Err::Shape, "element counts must match"},
      {"reshape", {tt(f32, {2})}, {{"shape", Shape{-1}}}, Err::Shape, "negative extent"},
      {"reshape", {tt(f32, {2})}, {{"shape", Ints{2}}}, Err::Type, "attribute 'shape' must be a shape"},
      {"transpose", {tt(f32, {2, 3})}, {{"permutation", Ints{1, 1}}}, Err::Shape, "is not a permutation"},
      {"broadcast_in_dim",
       {tt(f32, {3})},
       {{"shape", Shape{4}}, {"broadcast_dimensions", Ints{0}}},
       Err::Shape,
       "neither 1 nor the result extent"},
      {"broadcast_in_dim",
       {tt(f32, {1, 1})},
       {{"shape", Shape{4, 4}}, {"broadcast_dimensions", Ints{1, 0}}},
       Err::Shape,
       "strictly increasing"},
      {"squeeze", {tt(f32, {B})}, {{"axes", Ints{0}}}, Err::Shape, "not the constant 1"},
      {"expand_dims", {tt(f32, {2})}, {{"axes", Ints{0, 0}}}, Err::Shape, "sorted and free of duplicates"},
      {"slice",
       {tt(f32, {10})},
       {{"start_indices", Ints{0}}, {"limit_indices", Shape{11}}, {"strides", Ints{1}}},
       Err::Shape,
       "exceeds the extent"},
      {"slice",
       {tt(f32, {10})},
       {{"start_indices", Ints{0}}, {"limit_indices", Shape{5}}, {"strides", Ints{0}}},
       Err::Shape,
       "must be >= 1"},
      {"concatenate",
       {tt(f32, {2, 3}), tt(f32, {2, 4})},
       {{"axis", int64_t{0}}},
       Err::Shape,
       "only the concatenation axis 0 may differ"},
      {"concatenate", {tt(f32, {2}), tt(f64, {2})}, {{"axis", int64_t{0}}}, Err::Type, "never promote"},
      {"bitcast_convert", {tt(f32, {2})}, {{"dtype", i16}}, Err::Type, "same bit width"},
      {"bitcast_convert", {tt(i8, {2})}, {{"dtype", bool_}}, Err::Type, "use convert"},
      {"iota", {}, {{"shape", Shape{4}}, {"dimension", int64_t{1}}, {"dtype", i32}}, Err::Shape, "out of range"},
      {"full",
       {},
       {{"shape", Shape{4}}, {"value", std::string("x")}, {"dtype", i32}},
       Err::Type,
       "attribute 'value' must be a float or int or bool"},
      {"constant", {}, {}, Err::Type, "missing required attribute 'value'"},
      {"concatenate",
       {tt(f32, {INT64_MAX}), tt(f32, {INT64_MAX})},
       {{"axis", int64_t{0}}},
       Err::Shape,
       "overflows int64"},
  };
}

TEST(MustFail, EachBadCallRaisesItsTypedError) {
  for (const BadCall& c : bad_calls()) {
    SCOPED_TRACE(c.op + " / " + c.substring);
    try {
      infer_result_types(get_op(c.op), c.operands, c.attrs);
      ADD_FAILURE() << "no error";
    } catch (const ShapeError& e) {
      EXPECT_EQ(c.err, Err::Shape) << "got ShapeError: " << e.what();
      EXPECT_NE(std::string(e.what()).find(c.substring), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("'" + c.op + "'"), std::string::npos) << e.what();
    } catch (const TypeError& e) {
      EXPECT_EQ(c.err, Err::Type) << "got TypeError: " << e.what();
      EXPECT_NE(std::string(e.what()).find(c.substring), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("'" + c.op + "'"), std::string::npos) << e.what();
    }
  }
}

// Hostile inputs to the readers (issue 7): each must raise its typed error naming the problem,
// never overflow the stack, read forever or wrap an integer. Deep inputs are generated here.
struct HostileInput {
  std::string name;
  std::function<void()> run;
  enum Kind { Parse, Persistence, Shape } err;
  std::string substring;
};

std::string repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

// An EvoXIR module whose @main takes one argument of the given type.
std::string text_with_arg(const std::string& type) {
  return "module @\"m\" version " + std::to_string(kIrVersion) + " {\n  func @main(%arg0: " + type +
         ") -> () {\n    evoxc.return()\n  }\n}\n";
}

// A .evoxcgraph document with the given statics object and @main argument types (JSON text).
std::string json_with(const std::string& statics, const std::string& args) {
  return R"J({"format": "evoxcgraph", "version": )J" + std::to_string(kIrVersion) +
         R"J(, "inputs": "(*,)", "outputs": "()", "statics": )J" + statics +
         R"J(, "module": {"name": "m", "functions": [{"name": "main", "results": [], "args": [)J" + args +
         R"J(], "ops": [{"name": "return", "operands": [], "results": []}]}]}})J";
}

std::vector<HostileInput> hostile_inputs() {
  std::string parens = std::string(50000, '(') + "B" + std::string(50000, ')');
  std::string halvings = "(B" + repeat("//2", 100000) + ")";
  std::string mods = "(B" + repeat("%7//3", 100000) + ")";
  return {
      {".evoxcgraph shape attribute nesting parentheses 50,000 deep",
       [=] { Graph::from_json(json_with(R"({"[0]": {"kind": "shape", "value": [")" + parens + R"("]}})", "")); },
       HostileInput::Persistence, "statics.[0].value[0]: bad extent"},
      {".evoxcgraph shape attribute nesting parentheses 50,000 deep (why)",
       [=] { Graph::from_json(json_with(R"({"[0]": {"kind": "shape", "value": [")" + parens + R"("]}})", "")); },
       HostileInput::Persistence, "parentheses nested more than 258 deep"},
      {"EvoXIR text extent B//2//2... 100,000 times",
       [=] { Graph::parse(text_with_arg("tensor<" + halvings + "xf32>")); }, HostileInput::Parse,
       "nested more than 256 levels deep"},
      {"EvoXIR text extent B%7//3... 100,000 times", [=] { Graph::parse(text_with_arg("tensor<" + mods + "xf32>")); },
       HostileInput::Parse, "nested more than 256 levels deep"},
      {".evoxcgraph extent B//2//2... 100,000 times",
       [=] { Graph::from_json(json_with("{}", "\"tensor<" + halvings + "xf32>\"")); }, HostileInput::Persistence,
       "module.functions[0].args[0]: bad extent"},
      {".evoxcgraph extent B%7//3... 100,000 times",
       [=] { Graph::from_json(json_with("{}", "\"tensor<" + mods + "xf32>\"")); }, HostileInput::Persistence,
       "nested more than 256 levels deep"},
      {"extent chain built in memory",
       [] {
         DimExpr e = Dim("B");
         for (int i = 0; i < 100000; ++i) e = floordiv(e % 7, 3);
       },
       HostileInput::Shape, "nested more than 256 levels deep"},
      {"extent overflow B*2^62*4", [] { (void)((Dim("B") * (int64_t{1} << 62)) * 4); }, HostileInput::Shape,
       "int64 overflow in a product"},
      {"EvoXIR text extent overflow", [] { Graph::parse(text_with_arg("tensor<(B*4611686018427387904*4)xf32>")); },
       HostileInput::Parse, "int64 overflow in a product"},
      {".evoxcgraph JSON nested 100,000 deep",
       [] { Graph::from_json(json_with(std::string(100000, '[') + std::string(100000, ']'), "")); },
       HostileInput::Persistence, "JSON arrays and objects nested more than"},
      {"tree structure nested 100,000 deep", [] { parse_tree_structure(std::string(100000, '(')); },
       HostileInput::Parse, "containers nested more than 256 deep"},
      {"graph file /dev/zero", [] { Graph::load("/dev/zero"); }, HostileInput::Persistence, "not a regular file"},
      {"read_file /dev/zero", [] { read_file("/dev/zero"); }, HostileInput::Persistence,
       "'/dev/zero': not a regular file (it is a character device)"},
      {"read_file over its cap", [] { read_file("/proc/self/exe", 16); }, HostileInput::Persistence,
       "more than the limit of 16"},
  };
}

TEST(MustFail, HostileInputsRaiseTheirTypedErrors) {
  for (const HostileInput& c : hostile_inputs()) {
    SCOPED_TRACE(c.name);
    try {
      c.run();
      ADD_FAILURE() << "no error";
    } catch (const ParseError& e) {
      EXPECT_EQ(c.err, HostileInput::Parse) << "got ParseError: " << e.what();
      EXPECT_NE(std::string(e.what()).find(c.substring), std::string::npos) << e.what();
    } catch (const PersistenceError& e) {
      EXPECT_EQ(c.err, HostileInput::Persistence) << "got PersistenceError: " << e.what();
      EXPECT_NE(std::string(e.what()).find(c.substring), std::string::npos) << e.what();
    } catch (const ShapeError& e) {
      EXPECT_EQ(c.err, HostileInput::Shape) << "got ShapeError: " << e.what();
      EXPECT_NE(std::string(e.what()).find(c.substring), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace evoxc
