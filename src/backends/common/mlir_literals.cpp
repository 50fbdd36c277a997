// MLIR literal text shared by the stablehlo and mlir backends: hex dense constants, nested bool lists, exact splats.
#include "backends/common/mlir_literals.h"

#include <functional>
#include <vector>

#include "backends/common/constant_fold.h"
#include "evoxc/ops/op_def.h"

namespace evoxc::mlir_literals {

std::string tensor_type(const Shape& shape, const std::string& element) {
  std::string s = "tensor<";
  for (const DimExpr& d : shape) {
    auto c = d.as_const();
    s += c ? std::to_string(*c) : std::string("?");
    s += "x";
  }
  return s + element + ">";
}

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
  return backends::fold_on_interp(get_op("full"), TensorType(t, Shape{}),
                                  {{"shape", Shape{}}, {"value", value}, {"dtype", t}});
}

}  // namespace evoxc::mlir_literals
