// mlir lowering rules: the unary elementwise family (first cut; the full family follows).
#include "backends/mlir/emitter.h"

namespace evoxc::mlir_backend {
namespace {

const TensorType& result_type(const Operation& op) { return op.result(0)->type(); }

using Fn1 = std::function<Scalar(Body&, const Scalar&)>;

// A float op computed in f32 for the 16-bit floats and rounded once.
void float_unary(Table& t, const char* name, Fn1 f) {
  t.set(name, [f = std::move(f)](Emitter& e, const Operation& op, std::span<const Val> in) -> std::vector<Val> {
    DType d = result_type(op).dtype;
    return {e.map(in, result_type(op),
                  [&](Body& b, std::span<const Scalar> x) { return b.narrow(f(b, b.widen(x[0])), d); })};
  });
}

}  // namespace

void add_elementwise_rules(Table& t) {
  float_unary(t, "tanh", [](Body& b, const Scalar& x) { return b.un("math.tanh", x); });
  float_unary(t, "exp", [](Body& b, const Scalar& x) { return b.un("math.exp", x); });
}

}  // namespace evoxc::mlir_backend
