// Test helpers for the interpreter: graph building, typed tensor construction and reading back.
#include "interp/graph_util.h"

#include <cmath>

#include "interp/vecmath.h"

namespace evoxc::testing {

std::vector<std::pair<std::string, const interp::vecmath::Table*>> vecmath_tables() {
  namespace vm = interp::vecmath;
  std::vector<std::pair<std::string, const vm::Table*>> t;
  __builtin_cpu_init();
  bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (avx2 && __builtin_cpu_supports("avx512f") && vm::table_avx512()) t.emplace_back("avx512", vm::table_avx512());
  if (avx2 && vm::table_avx2()) t.emplace_back("avx2", vm::table_avx2());
  if (vm::table_sse2()) t.emplace_back("sse2", vm::table_sse2());
  t.emplace_back("scalar", vm::table_scalar());
  return t;
}

GraphBuilder::GraphBuilder() : module_(std::make_shared<Module>("test")), fn_(&module_->add_function("main")) {}

Value* GraphBuilder::input(DType t, Shape s) { return fn_->entry().add_argument(TensorType(t, std::move(s))); }

Value* GraphBuilder::op(const std::string& name, std::vector<Value*> operands, TensorType result, AttrMap attrs,
                        Location loc) {
  return fn_->entry()
      .append(name, std::move(operands), {std::move(result)}, std::move(attrs), std::move(loc))
      ->result(0);
}

Graph GraphBuilder::build(std::vector<Value*> outputs, std::optional<TreeDef> inputs) {
  for (Value* v : outputs) fn_->result_types().push_back(v->type());
  fn_->entry().append("return", outputs, {});
  std::vector<TreeDef> in_leaves(fn_->entry().num_arguments(), TreeDef(LeafMark{}));
  std::vector<TreeDef> out_leaves(outputs.size(), TreeDef(LeafMark{}));
  TreeDef in = inputs ? *inputs : TreeDef::tuple(in_leaves);
  return Graph(module_, in, TreeDef::tuple(out_leaves));
}

std::vector<Tensor> run_graph(const Graph& g, const std::vector<Tensor>& inputs) {
  auto p = interp::prepare(g);
  std::vector<Tensor> outs(g.num_outputs());
  interp::execute(*p, inputs, outs);
  return outs;
}

Tensor make_tensor(DType t, const std::vector<int64_t>& shape, const std::vector<double>& values) {
  Tensor x = Tensor::empty(shape, t);
  visit_dtype(t, [&](auto tag) {
    using T = decltype(tag);
    T* p = static_cast<T*>(x.raw_data());
    for (size_t i = 0; i < values.size(); ++i) {
      double v = values[i];
      if constexpr (std::is_same_v<T, bool>) {
        p[i] = v != 0.0;
      } else if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
        p[i] = T(static_cast<float>(v));
      } else if constexpr (std::is_floating_point_v<T>) {
        p[i] = static_cast<T>(v);
      } else {
        p[i] = static_cast<T>(static_cast<int64_t>(v));
      }
    }
  });
  return x;
}

std::vector<double> sample_values(DType t, int64_t n, uint32_t seed) {
  std::vector<double> out(static_cast<size_t>(n));
  uint32_t s = seed * 2654435761u + 12345u;
  for (auto& v : out) {
    s = s * 1664525u + 1013904223u;
    uint32_t r = s >> 8;
    if (is_bool(t)) {
      v = (r & 1u) ? 1.0 : 0.0;
    } else if (is_unsigned_int(t)) {
      v = static_cast<double>(r % 7u);
    } else if (is_signed_int(t)) {
      v = static_cast<double>(static_cast<int>(r % 9u) - 4);
    } else {
      // Multiples of 1/8 are exact in every float type, so references stay exact.
      v = static_cast<double>(static_cast<int>(r % 64u) - 32) / 8.0;
    }
  }
  return out;
}

std::vector<double> to_doubles(const Tensor& t) {
  std::vector<double> out(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) out[static_cast<size_t>(i)] = t.get_as_double(i);
  return out;
}

std::vector<DType> all_dtypes() {
  return {DType::Bool, DType::I8,  DType::I16, DType::I32,  DType::I64, DType::U8, DType::U16,
          DType::U32,  DType::U64, DType::F16, DType::BF16, DType::F32, DType::F64};
}
std::vector<DType> numeric_dtypes() {
  return {DType::I8,  DType::I16, DType::I32, DType::I64,  DType::U8,  DType::U16,
          DType::U32, DType::U64, DType::F16, DType::BF16, DType::F32, DType::F64};
}
std::vector<DType> float_dtypes() { return {DType::F16, DType::BF16, DType::F32, DType::F64}; }

double tolerance(DType t, double magnitude) {
  double m = std::max(1.0, std::fabs(magnitude));
  switch (t) {
    case DType::F16: return 2e-3 * m;
    case DType::BF16: return 1e-2 * m;
    case DType::F32: return 1e-5 * m;
    case DType::F64: return 1e-12 * m;
    default: return 0.0;
  }
}

}  // namespace evoxc::testing
