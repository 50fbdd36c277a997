// mlir lowering rules: binary elementwise ops, comparisons, select, clamp, convert, bitcast_convert (first cut).
#include "backends/mlir/emitter.h"

namespace evoxc::mlir_backend {
namespace {

const TensorType& result_type(const Operation& op) { return op.result(0)->type(); }

using Fn2 = std::function<Scalar(Body&, const Scalar&, const Scalar&)>;

// numpy broadcasting comes from the indexing maps; the body sees one element of each operand.
void binary(Table& t, const char* name, Fn2 f) {
  t.set(name, [f = std::move(f)](Emitter& e, const Operation& op, std::span<const Val> in) -> std::vector<Val> {
    return {e.map(in, result_type(op), [&](Body& b, std::span<const Scalar> x) { return f(b, x[0], x[1]); })};
  });
}

}  // namespace

void add_binary_rules(Table& t) {
  binary(t, "add", [](Body& b, const Scalar& x, const Scalar& y) {
    if (is_float(x.dtype)) return b.bin("arith.addf", x, y);
    return x.dtype == DType::Bool ? b.bin("arith.ori", x, y) : b.bin("arith.addi", x, y);
  });
  binary(t, "multiply", [](Body& b, const Scalar& x, const Scalar& y) {
    if (is_float(x.dtype)) return b.bin("arith.mulf", x, y);
    return x.dtype == DType::Bool ? b.bin("arith.andi", x, y) : b.bin("arith.muli", x, y);
  });
}

}  // namespace evoxc::mlir_backend
