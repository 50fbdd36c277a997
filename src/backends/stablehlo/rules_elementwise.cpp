// StableHLO lowering rules: the elementwise family.
#include "backends/stablehlo/emitter.h"

namespace evoxc::stablehlo {

void add_elementwise_rules(Table& t) {
  t.set("add", [](Emitter& e, const Operation& op, std::span<const Val> in) -> std::vector<Val> {
    const TensorType& r = op.result(0)->type();
    return {e.op1("add", {e.broadcast_to(in[0], r.shape), e.broadcast_to(in[1], r.shape)}, "", r)};
  });
}

}  // namespace evoxc::stablehlo
