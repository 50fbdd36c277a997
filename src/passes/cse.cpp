// Common-subexpression elimination: a later op equal to an earlier visible one reuses its results.
#include <algorithm>
#include <functional>
#include <unordered_map>

#include "evoxc/core/flat_table.h"
#include "evoxc/ir/builder.h"
#include "evoxc/passes/passes.h"
#include "passes/rewrite.h"

namespace evoxc {

namespace {

size_t mix(size_t h, size_t v) { return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)); }

// Two region-free ops compute the same values when op, (already rewritten) operands,
// attributes and result types agree; EvoXIR has no side effects.
bool same(const Operation& a, const Operation& b) {
  if (a.op_id() != b.op_id() || !std::ranges::equal(a.operands(), b.operands()) || a.num_results() != b.num_results())
    return false;
  for (size_t i = 0; i < a.num_results(); ++i)
    if (a.result(i)->type() != b.result(i)->type()) return false;
  const AttrMap &x = a.attributes(), &y = b.attributes();
  if (x.size() != y.size()) return false;
  for (auto i = x.begin(), j = y.begin(); i != x.end(); ++i, ++j)
    if (i->first != j->first || !attr_equal(i->second, j->second)) return false;
  return true;
}

size_t key(const Operation& op) {
  size_t h = op.op_id();
  for (const Value* v : op.operands()) h = mix(h, std::hash<const Value*>()(v));
  h = mix(h, op.attributes().size());
  for (const auto& [name, value] : op.attributes()) h = mix(mix(h, std::hash<std::string>()(name)), attr_hash(value));
  return h;
}

// Whether any op duplicates an earlier visible one. Until the first duplicate nothing is
// replaced, so operands can be compared as they are: most graphs (a trace already shares its
// scalars) have none, and then the pass returns the graph without building a copy.
class DuplicateFinder {
 public:
  explicit DuplicateFinder(const passes_detail::Liveness* live) : live_(live) {}
  bool block(const Block& b) {
    scopes_.emplace_back();
    scopes_.back().reserve(b.operations().size());
    for (const auto& op : b.operations()) {
      if (live_ && !live_->live(*op)) continue;
      for (const auto& r : op->regions())
        if (block(r->block())) return true;
      if (op->is_terminator() || !op->regions().empty()) continue;
      size_t k = key(*op);
      for (auto s = scopes_.rbegin(); s != scopes_.rend(); ++s)
        if (s->find(k, [&](const Operation& prior) { return same(prior, *op); })) return true;
      scopes_.back().insert(k, op.get());
    }
    scopes_.pop_back();
    return false;
  }

 private:
  const passes_detail::Liveness* live_;
  std::vector<HashIndex<Operation>> scopes_;
};

class Cse {
 public:
  explicit Cse(const passes_detail::Liveness* live) : live_(live) {}
  size_t replaced = 0;

  // Rewrites `src` into `dst`. `scopes` holds the ops visible here: this block's and those of
  // every enclosing block (a region may reuse an outer value).
  void block(const Block& src, Block& dst, ValueMap& map) {
    scopes_.emplace_back();
    scopes_.back().reserve(src.operations().size());
    Builder b(dst);
    for (const auto& op : src.operations()) {
      if (live_ && !live_->live(*op)) continue;
      Operation* c = clone_shell(b, *op, map, [&](const Block& rb, Block& cb) { block(rb, cb, map); });
      const Operation* prior = op->is_terminator() || !op->regions().empty() ? nullptr : find(*c);
      if (prior) {
        for (size_t i = 0; i < op->num_results(); ++i) map.map(op->result(i), prior->result(i));
        drop_last(dst);
        ++replaced;
        continue;
      }
      for (size_t i = 0; i < op->num_results(); ++i) map.map(op->result(i), c->result(i));
      if (!op->is_terminator() && op->regions().empty()) scopes_.back().insert(key(*c), c);
    }
    scopes_.pop_back();
  }

 private:
  const Operation* find(const Operation& op) const {
    size_t k = key(op);
    for (auto s = scopes_.rbegin(); s != scopes_.rend(); ++s)
      if (const Operation* prior = s->find(k, [&](const Operation& o) { return same(o, op); })) return prior;
    return nullptr;
  }
  // The clone just appended duplicates an earlier op: remove it again (nothing uses it yet).
  static void drop_last(Block& b) { b.erase_last(); }

  const passes_detail::Liveness* live_;
  std::vector<HashIndex<Operation>> scopes_;
};

// CSE over the live ops only (`live` null: every op), in one copy of the module; `g` itself
// when nothing is dead and nothing repeats.
Graph rewrite(const Graph& g, const std::vector<passes_detail::Liveness>* live) {
  const Module& m = g.module();
  bool any = false;
  for (size_t i = 0; i < m.functions().size(); ++i) {
    const passes_detail::Liveness* l = live ? &(*live)[i] : nullptr;
    any = any || (l && l->dead() > 0) || DuplicateFinder(l).block(m.functions()[i]->entry());
  }
  if (!any) return g;
  auto out = std::make_shared<Module>(m.name(), m.version());
  for (size_t i = 0; i < m.functions().size(); ++i) {
    const Function& f = *m.functions()[i];
    Cse pass(live ? &(*live)[i] : nullptr);
    Function& nf = out->add_function(f.name());
    nf.result_types() = f.result_types();
    ValueMap map;
    for (const auto& a : f.entry().arguments()) map.map(a.get(), nf.entry().add_argument(a->type()));
    pass.block(f.entry(), nf.entry(), map);
  }
  return Graph(std::move(out), g.input_tree(), g.output_tree(), g.static_values());
}

}  // namespace

Graph cse(const Graph& g) { return rewrite(g, nullptr); }

Graph dce_cse(const Graph& g) {
  const Module& m = g.module();
  std::vector<passes_detail::Liveness> live(m.functions().size());
  for (size_t i = 0; i < m.functions().size(); ++i) live[i].block(m.functions()[i]->entry());
  return rewrite(g, &live);
}

}  // namespace evoxc
