// Private to the passes: liveness of ops.
#pragma once

#include <vector>

#include "evoxc/core/flat_table.h"
#include "evoxc/ir/ir.h"

namespace evoxc::passes_detail {

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
