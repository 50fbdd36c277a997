// Dead-code elimination: drops every op whose results nothing live uses (EvoXIR ops are pure).
#include <unordered_set>

#include "evoxc/passes/passes.h"
#include "passes/rewrite.h"

namespace evoxc {

namespace {

// Marks live ops of one block, last to first: the terminator is live, and an op is live when
// a live op (here or in a nested region) uses one of its results. Regions of a live op are
// walked when it is reached, so the outer values they capture are marked before their
// producers are visited.
class Liveness {
 public:
  void block(const Block& b) {
    const auto& ops = b.operations();
    for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
      const Operation& op = **it;
      bool live = op.is_terminator();
      for (const auto& r : op.results()) live = live || values_.count(r.get());
      if (!live) {
        ++dead_;
        continue;
      }
      ops_.insert(&op);
      for (const Value* v : op.operands()) values_.insert(v);
      for (const auto& r : op.regions()) block(r->block());
    }
  }
  bool live(const Operation& op) const { return ops_.count(&op) != 0; }
  size_t dead() const { return dead_; }

 private:
  std::unordered_set<const Value*> values_;
  std::unordered_set<const Operation*> ops_;
  size_t dead_ = 0;
};

// Clones the live ops of `src` into `dst` (whose arguments are already mapped).
void clone_live(const Block& src, Block& dst, const Liveness& l, ValueMap& map) {
  Builder b(dst);
  for (const auto& op : src.operations()) {
    if (!l.live(*op)) continue;
    Operation* c =
        passes_detail::clone_shell(b, *op, map, [&](const Block& rb, Block& cb) { clone_live(rb, cb, l, map); });
    for (size_t i = 0; i < op->num_results(); ++i) map.map(op->result(i), c->result(i));
  }
}

}  // namespace

Graph dce(const Graph& g) {
  const Module& m = g.module();
  std::vector<Liveness> live(m.functions().size());
  size_t dead = 0;
  for (size_t i = 0; i < m.functions().size(); ++i) {
    live[i].block(m.functions()[i]->entry());
    dead += live[i].dead();
  }
  if (dead == 0) return g;
  auto out = std::make_shared<Module>(m.name(), m.version());
  for (size_t i = 0; i < m.functions().size(); ++i) {
    const Function& f = *m.functions()[i];
    Function& nf = out->add_function(f.name());
    nf.result_types() = f.result_types();
    ValueMap map;
    for (const auto& a : f.entry().arguments()) map.map(a.get(), nf.entry().add_argument(a->type()));
    clone_live(f.entry(), nf.entry(), live[i], map);
  }
  return Graph(std::move(out), g.input_tree(), g.output_tree(), g.static_values());
}

}  // namespace evoxc
