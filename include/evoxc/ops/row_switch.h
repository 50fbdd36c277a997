// The row_switch op's variant list, resolved once to op definitions: shared by its inference (ops), its kernel
// (interp), its lowerings (stablehlo, mlir) and its producer (batch_functions).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "evoxc/ir/attribute.h"
#include "evoxc/ops/op_def.h"

namespace evoxc {

// The variants of a row_switch op from its `variants` attribute, in order. The attribute holds the ops' names joined by
// commas — the form a graph is saved and printed in, stable across builds where op ids are not — and this is the one
// place that reads it: TypeError for a missing attribute, an empty or unknown name.
std::vector<const OpDef*> row_switch_variants(const AttrMap& attrs);
// The `variants` attribute naming the ops with these ids, in order.
std::string row_switch_spec(std::span<const uint32_t> op_ids);

}  // namespace evoxc
