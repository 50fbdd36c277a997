// Dead-code elimination: drops every op whose results nothing live uses (EvoXIR ops are pure).
#include "evoxc/ir/builder.h"
#include "evoxc/passes/passes.h"
#include "passes/rewrite.h"

namespace evoxc {

namespace {

// Clones the live ops of `src` into `dst` (whose arguments are already mapped).
void clone_live(const Block& src, Block& dst, const passes_detail::Liveness& l, ValueMap& map) {
  Builder b(dst);
  for (const auto& op : src.operations()) {
    if (!l.live(*op)) continue;
    Operation* c = clone_shell(b, *op, map, [&](const Block& rb, Block& cb) { clone_live(rb, cb, l, map); });
    for (size_t i = 0; i < op->num_results(); ++i) map.map(op->result(i), c->result(i));
  }
}

}  // namespace

Graph dce(const Graph& g) {
  const Module& m = g.module();
  std::vector<passes_detail::Liveness> live(m.functions().size());
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
