// Hand-built EvoXIR graphs shared by the ir tests.
#include "ir/graph_util.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <sstream>

namespace evoxc::testing {

namespace {

// The IR tests also print and parse ops the catalogue does not have (one carrying every
// attribute kind, generic region ops), so they register a small test dialect in the IR's
// op table, after the catalogue (ids stay dense for the catalogue's tables) and before any
// test runs. The ops layer's verifier still rejects these names.
class TestOp final : public OpInfo {
 public:
  explicit TestOp(const char* n) { name = n; }
  std::vector<TensorType> infer_types(std::span<const TensorType>, const AttrMap&, const Operation*) const override {
    return {};
  }
};

class TestOpsEnvironment final : public ::testing::Environment {
 public:
  void SetUp() override {
    (void)registered_ops();  // the catalogue first
    static TestOp ops[] = {TestOp("custom_attrs"),
                           TestOp("map"),
                           TestOp("print"),
                           TestOp("while"),
                           TestOp("late"),
                           TestOp("loop"),
                           TestOp("make"),
                           TestOp("noop"),
                           TestOp("outer"),
                           TestOp("probe"),
                           TestOp("region_op"),
                           TestOp("sink"),
                           TestOp("split"),
                           TestOp("use"),
                           TestOp("a"),
                           TestOp("b"),
                           TestOp("c"),
                           TestOp("r"),
                           TestOp("dots"),
                           TestOp(""),
                           TestOp("has space"),
                           TestOp("1st"),
                           TestOp("dots.in.name"),
                           TestOp("quote\"d")};
    for (TestOp& op : ops)
      if (!find_op_info(op.name)) register_op_info(op);
  }
};

[[maybe_unused]] ::testing::Environment* const kTestOps = ::testing::AddGlobalTestEnvironment(new TestOpsEnvironment);

}  // namespace

Graph mlp_graph() {
  auto m = std::make_shared<Module>("main");
  Function& f = m->add_function("main");
  Block& b = f.entry();
  Value* x = b.add_argument(tt({4, 8}));
  Value* w = b.add_argument(tt({8, 4}));
  Location l = loc("f.cpp", 6);
  Value* d = b.append("dot", {x, w}, {tt({4, 4})}, {}, l)->result();
  Value* t = b.append("tanh", {d}, {tt({4, 4})}, {}, l)->result();
  AttrMap ra{{"axes", std::vector<int64_t>{1}}, {"keepdims", false}};
  Value* s = b.append("reduce_sum", {t}, {tt({4})}, ra, l)->result();
  b.append("return", {s}, {});
  f.result_types() = {tt({4})};
  return Graph(m, TreeDef::tuple({TreeDef(LeafMark{}), TreeDef(LeafMark{})}), TreeDef(LeafMark{}));
}

Graph symbolic_graph() {
  DimExpr B = Dim("B");
  DimExpr N = Dim("max_len");  // contains an 'x', so it prints in parentheses
  auto m = std::make_shared<Module>("symbolic");
  Function& f = m->add_function("main");
  Block& b = f.entry();
  Value* x = b.add_argument(tt({B, 4}));
  Value* w = b.add_argument(tt({2 * B + 1, N}, i64));
  Value* c = b.append("convert", {x}, {tt({B, 4}, f64)}, {{"dtype", f64}}, loc("sym.cpp", 10, 3))->result();
  Value* r = b.append("reshape", {w}, {tt({floordiv(2 * B + 1, 2), min(N, B), max(B, 3) - 1}, i64)},
                      {{"shape", Shape({floordiv(2 * B + 1, 2), min(N, B), max(B, 3) - 1})}}, loc("sym.cpp", 11, 3))
                 ->result();
  Value* k = b.append("slice", {c}, {tt({B % 3, 4}, f64)},
                      {{"start_indices", std::vector<int64_t>{0, 0}},
                       {"limit_indices", Shape({B % 3, 4})},
                       {"strides", std::vector<int64_t>{1, 1}}})
                 ->result();
  b.append("return", {k, r}, {});
  f.result_types() = {tt({B % 3, 4}, f64), tt({floordiv(2 * B + 1, 2), min(N, B), max(B, 3) - 1}, i64)};
  TreeDef leaf{LeafMark{}};
  TreeDef inputs = TreeDef::tuple({TreeDef::dict({{"x", leaf}, {"w y", leaf}}), TreeDef::none()});
  TreeDef outputs = TreeDef::list({leaf, TreeDef::tuple({leaf})});
  AttrMap statics{{"[1]", std::monostate{}}, {"[2]", int64_t{3}}, {"[3]['act']", std::string("relu")}};
  return Graph(m, inputs, outputs, statics);
}

namespace {
Tensor bytes_tensor(std::vector<int64_t> shape, DType dt, const std::vector<unsigned char>& bytes) {
  Tensor t = Tensor::empty(std::move(shape), dt);
  if (!bytes.empty()) std::memcpy(t.raw_data(), bytes.data(), bytes.size());
  return t;
}
}  // namespace

Graph attrs_graph() {
  auto m = std::make_shared<Module>("attrs \"quoted\"");
  Function& f = m->add_function("main");
  Block& b = f.entry();
  double payload_nan = std::bit_cast<double>(uint64_t{0x7FF0000000000123});
  double neg_nan = -std::numeric_limits<double>::quiet_NaN();
  // 1.0f, -0.0f, a NaN with a payload, +inf as float32 bytes (little-endian)
  Tensor f32s = bytes_tensor(
      {2, 2}, f32, {0x00, 0x00, 0x80, 0x3F, 0x00, 0x00, 0x00, 0x80, 0x01, 0x00, 0xC0, 0x7F, 0x00, 0x00, 0x80, 0x7F});
  Tensor i64s = Tensor::from_vector<int64_t>({-1, std::numeric_limits<int64_t>::min()}, {2});
  Tensor bools = Tensor::from_vector<bool>({true}, {});
  Tensor empty = Tensor::empty({0, 3}, bf16);
  AttrMap a{
      {"a_none", std::monostate{}},
      {"b_true", true},
      {"c_false", false},
      {"d_int", int64_t{-3}},
      {"e_int_min", std::numeric_limits<int64_t>::min()},
      {"f_float_one", 1.0},
      {"g_float_small", 1e-07},
      {"h_float_negzero", -0.0},
      {"i_nan", std::numeric_limits<double>::quiet_NaN()},
      {"j_neg_nan", neg_nan},
      {"k_payload_nan", payload_nan},
      {"l_inf", std::numeric_limits<double>::infinity()},
      {"m_neg_inf", -std::numeric_limits<double>::infinity()},
      {"n_big", 1e300},
      {"o_denorm", std::numeric_limits<double>::denorm_min()},
      {"p_string", std::string("say \"hi\"\\\n\tend\x01\xff")},
      {"q_ints", std::vector<int64_t>{1, -2, 3}},
      {"r_ints_empty", std::vector<int64_t>{}},
      {"s_floats", std::vector<double>{1.0, 2.5, -0.0, std::numeric_limits<double>::infinity()}},
      {"t_floats_empty", std::vector<double>{}},
      {"u_dtype", bf16},
      {"v_dtype_bool", bool_},
      {"w_shape", Shape({4, Dim("B")})},
      {"x_shape_scalar", Shape()},
      {"y_dense_f32", f32s},
      {"z_dense_i64", i64s},
      {"zz_dense_bool_scalar", bools},
      {"zz_dense_empty", empty},
      {"not an identifier", int64_t{7}},
  };
  Value* x = b.add_argument(tt({}));
  Value* y = b.append("custom_attrs", {x}, {tt({})}, a, loc("dir with \"quote\"\\x.cpp", 1, 2))->result();
  b.append("return", {y}, {});
  f.result_types() = {tt({})};
  return Graph(m, TreeDef::tuple({TreeDef(LeafMark{})}), TreeDef(LeafMark{}));
}

Graph regions_graph() {
  auto m = std::make_shared<Module>("main");
  Function& f = m->add_function("main");
  Block& b = f.entry();
  Value* n = b.add_argument(tt({}, i64));
  Value* x = b.add_argument(tt({3}));
  Value* one =
      b.append("full", {}, {tt({}, i64)}, {{"shape", Shape()}, {"value", int64_t{1}}, {"dtype", i64}})->result();
  Operation* loop = b.append("while", {n, x}, {tt({}, i64), tt({3})}, {}, loc("loop.py", 20, 4), 2);
  {
    Block& cond = loop->region(0).block();
    Value* i = cond.add_argument(tt({}, i64));
    cond.add_argument(tt({3}));
    // Uses `one` from the enclosing block.
    Value* p = cond.append("greater", {i, one}, {tt({}, bool_)})->result();
    cond.append("return", {p}, {});
  }
  {
    Block& body = loop->region(1).block();
    Value* i = body.add_argument(tt({}, i64));
    Value* v = body.add_argument(tt({3}));
    Value* i2 = body.append("subtract", {i, one}, {tt({}, i64)})->result();
    Operation* inner = body.append("map", {v}, {tt({3})}, {{"note", std::string("nested")}}, {}, 1);
    Block& ib = inner->region(0).block();
    Value* e = ib.add_argument(tt({}));
    // `one` comes from two blocks up.
    Value* c = ib.append("convert", {one}, {tt({})}, {{"dtype", f32}})->result();
    Value* s = ib.append("multiply", {e, c}, {tt({})})->result();
    ib.append("return", {s}, {});
    body.append("print", {i2}, {}, {{"fmt", std::string("i={}")}});
    body.append("return", {i2, inner->result()}, {});
  }
  Value* out = b.append("add", {loop->result(1), x}, {tt({3})}, {}, loc("loop.py", 25, 0))->result();
  b.append("return", {loop->result(0), out}, {});
  f.result_types() = {tt({}, i64), tt({3})};
  TreeDef leaf{LeafMark{}};
  return Graph(m, TreeDef::tuple({leaf, leaf}), TreeDef::dict({{"count", leaf}, {"value", leaf}}));
}

Graph multi_function_graph() {
  auto m = std::make_shared<Module>("two");
  Function& h = m->add_function("helper-fn");
  Value* a = h.entry().add_argument(tt({2}));
  h.entry().append("print", {a}, {});
  h.entry().append("return", {}, {});
  Function& f = m->add_function("main");
  Value* x = f.entry().add_argument(tt({2}));
  f.entry().append("return", {x}, {});
  f.result_types() = {tt({2})};
  return Graph(m, TreeDef::tuple({TreeDef(LeafMark{})}), TreeDef(LeafMark{}));
}

std::vector<std::pair<std::string, Graph>> all_test_graphs() {
  return {{"mlp", mlp_graph()},
          {"symbolic", symbolic_graph()},
          {"attrs", attrs_graph()},
          {"regions", regions_graph()},
          {"multi_function", multi_function_graph()}};
}

std::string read_test_data(const std::string& relative_path) {
  std::ifstream f(std::string(EVOXC_TEST_DATA_DIR) + "/" + relative_path, std::ios::binary);
  if (!f) return {};
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace evoxc::testing
