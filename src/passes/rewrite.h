// Private to the passes: cloning one op whose region bodies the pass itself rewrites.
#pragma once

#include <vector>

#include "evoxc/ir/builder.h"

namespace evoxc::passes_detail {

// Clones `op` at the end of the builder's block with its operands remapped through `map`
// (unmapped ones kept), the same result types, attributes and location, and for each region
// an entry block with arguments of the same types (mapped in `map`); `fill(src, dst)` then
// writes each region's ops, so a pass can rewrite region bodies as it does the outer block.
// The clone's results are not mapped: the pass decides whether they replace the op's.
template <typename Fill>
Operation* clone_shell(Builder& b, const Operation& op, ValueMap& map, Fill&& fill) {
  std::vector<Value*> operands;
  operands.reserve(op.num_operands());
  for (const Value* v : op.operands()) operands.push_back(map.lookup_or_self(v));
  std::vector<TensorType> types;
  types.reserve(op.num_results());
  for (const auto& r : op.results()) types.push_back(r->type());
  b.set_location(op.location());
  Operation* c = b.create_typed(op.info(), std::move(operands), types, op.attributes(), op.regions().size());
  for (size_t i = 0; i < op.regions().size(); ++i) {
    const Block& rb = op.region(i).block();
    Block& cb = c->region(i).block();
    for (const auto& a : rb.arguments()) map.map(a.get(), cb.add_argument(a->type()));
    fill(rb, cb);
  }
  return c;
}

}  // namespace evoxc::passes_detail
