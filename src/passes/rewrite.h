// Private to the passes: cloning one op whose region bodies the pass itself rewrites, and liveness.
#pragma once

#include <vector>

#include "evoxc/core/flat_table.h"
#include "evoxc/ir/builder.h"

namespace evoxc::passes_detail {

// Clones `op` at the end of the builder's block with its operands remapped through `map`
// (unmapped ones kept), the same result types, attributes and location, and for each region
// an entry block with arguments of the same types (mapped in `map`); `fill(src, dst)` then
// writes each region's ops, so a pass can rewrite region bodies as it does the outer block.
// The clone's results are not mapped: the pass decides whether they replace the op's.
template <typename Fill>
Operation* clone_shell(Builder& b, const Operation& op, ValueMap& map, Fill&& fill) {
  b.set_location(op.location());
  Operation* c = b.block().push_back(clone_detached(op, map, b.block().arena()));
  for (size_t i = 0; i < op.regions().size(); ++i) {
    const Block& rb = op.region(i).block();
    Block& cb = c->region(i).block();
    for (const auto& a : rb.arguments()) map.map(a.get(), cb.add_argument(a->type()));
    fill(rb, cb);
  }
  return c;
}

// Marks live ops of one block, last to first: the terminator is live, and an op is live when
// a live op (here or in a nested region) uses one of its results. Regions of a live op are
// walked when it is reached, so the outer values they capture are marked before their
// producers are visited.
class Liveness {
 public:
  void block(const Block& b) {
    const auto& ops = b.operations();
    ops_.reserve(ops.size());
    values_.reserve(ops.size() * 2);
    for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
      const Operation& op = **it;
      bool live = op.is_terminator();
      for (const auto& r : op.results()) live = live || values_.contains(r.get());
      if (!live) {
        ++dead_;
        continue;
      }
      ops_.insert(&op);
      for (const Value* v : op.operands()) values_.insert(v);
      for (const auto& r : op.regions()) block(r->block());
    }
  }
  bool live(const Operation& op) const { return ops_.contains(&op); }
  size_t dead() const { return dead_; }

 private:
  PtrSet values_;
  PtrSet ops_;
  size_t dead_ = 0;
};

}  // namespace evoxc::passes_detail
