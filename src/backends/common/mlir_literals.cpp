// MLIR literal text shared by the stablehlo and mlir backends: hex dense constants, nested bool lists, exact splats.
#include "backends/common/mlir_literals.h"

#include <functional>
#include <memory>
#include <vector>

#include "evoxc/ops/op_def.h"
#include "evoxc/pipeline/pipeline.h"

namespace evoxc::mlir_literals {

std::string hex_bytes(const void* data, size_t n) {
  static const char* kDigits = "0123456789ABCDEF";
  std::string s = "\"0x";
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) {
    s += kDigits[p[i] >> 4];
    s += kDigits[p[i] & 15];
  }
  return s + "\"";
}

std::string dense(const Tensor& t) {
  if (t.numel() == 0) return "dense<>";
  if (t.dtype() != DType::Bool) return "dense<" + hex_bytes(t.raw_data(), t.nbytes()) + ">";
  const bool* b = t.data<bool>();
  std::vector<int64_t> shape = t.shape();
  std::string s;
  int64_t k = 0;
  std::function<void(size_t)> rec = [&](size_t axis) {
    if (axis == shape.size()) {
      s += b[k++] ? "true" : "false";
      return;
    }
    s += "[";
    for (int64_t i = 0; i < shape[axis]; ++i) {
      if (i) s += ", ";
      rec(axis + 1);
    }
    s += "]";
  };
  rec(0);
  return "dense<" + s + ">";
}

Tensor full_scalar(const Attribute& value, DType t) {
  auto module = std::make_shared<Module>();
  Function& f = module->add_function("main");
  Operation* op = f.entry().append(get_op("full"), {}, {TensorType(t, Shape{})},
                                   {{"shape", Shape{}}, {"value", value}, {"dtype", t}});
  f.entry().append(get_op("return"), {op->result(0)}, {});
  f.result_types() = {TensorType(t, Shape{})};
  Graph g(module, TreeDef::tuple({}), TreeDef::tuple({TreeDef(LeafMark{})}));
  Executable exe = load(compile(lower(g, "interp")));
  std::vector<Tensor> outs(1);
  exe.execute({}, outs);
  return outs[0];
}

}  // namespace evoxc::mlir_literals
