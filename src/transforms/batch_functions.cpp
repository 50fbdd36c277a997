// batch_functions: the lock-step merge of N same-signature programs into one graph with a leading function axis.
#include <algorithm>
#include <cstring>
#include <map>
#include <sstream>
#include <unordered_map>

#include "evoxc/core/flat_table.h"
#include "evoxc/core/small_vector.h"
#include "evoxc/ops/row_switch.h"
#include "evoxc/passes/passes.h"
#include "evoxc/trace/indexing.h"
#include "evoxc/transforms/batch.h"
#include "transforms/driver.h"
#include "transforms/families.h"

namespace evoxc {

bool SwitchOps::allows(const OpDef& op) const {
  if (std::find(categories.begin(), categories.end(), op.category) != categories.end()) return true;
  for (const std::string& listed : op_names)
    if (get_op(listed).id == op.id) return true;  // by id: an unknown name is the registry's TypeError
  return false;
}

namespace transforms {
namespace {

// Where program i's value lives in the merged graph.
struct Ref {
  enum class Kind : uint8_t { Shared, Row, Own };
  Kind kind = Kind::Own;
  SymbolicTensor v;  // Shared / Own: the value; Row: unused
  int cls = -1;      // Row: the class
  int64_t row = 0;   // Row: the row in the class
};

// A batched value: row k belongs to program programs[k].
struct Class {
  SymbolicTensor v;
  std::vector<int> programs;
};

// The batching rules only need the group's extent: collapsed ops never have regions.
class GroupContext final : public BatchContext {
 public:
  explicit GroupContext(int64_t n) : size_(n) {}
  const DimExpr& size() const override { return size_; }
  std::vector<BatchArg> batch_block(const Block&, std::span<const BatchArg>) override {
    throw InternalError("batch_functions: a collapsed op has regions");
  }
  std::vector<bool> batched_returns(const Block&, const std::vector<bool>&) override {
    throw InternalError("batch_functions: a collapsed op has regions");
  }
  BatchArg lookup(const Value*) const override { throw InternalError("batch_functions: a collapsed op has regions"); }

 private:
  DimExpr size_;
};

int64_t static_numel(const TensorType& t) {
  int64_t n = 1;
  for (const DimExpr& d : t.shape) {
    auto c = d.as_const();
    if (!c) return 1;  // symbolic: counted as one element per row (the model's unit)
    n *= *c;
  }
  return n;
}

BatchReport::Cost cost_of(const Graph& g) {
  BatchReport::Cost c;
  for (const auto& op : g.main().entry().operations()) {
    if (op->is_terminator()) continue;
    ++c.dispatches;
    for (const auto& r : op->results()) c.work += static_cast<double>(static_numel(r->type()));
  }
  return c;
}

// The group key of an op: ops with equal keys may be merged. Switchable ops key on their
// arity class instead of their identity.
struct Key {
  uint32_t id;  // op id, or kSwitchKey + arity for a switchable op
  const Operation* op;
  bool operator==(const Key& o) const;
};
constexpr uint32_t kSwitchKey = 0x40000000u;

bool same_types(const Operation& a, const Operation& b) {
  if (a.num_operands() != b.num_operands() || a.num_results() != b.num_results()) return false;
  for (size_t i = 0; i < a.num_operands(); ++i)
    if (a.operand(i)->type() != b.operand(i)->type()) return false;
  for (size_t i = 0; i < a.num_results(); ++i)
    if (a.result(i)->type() != b.result(i)->type()) return false;
  return true;
}

// Attributes equal except the op's data attributes (which stack), whose kinds must agree.
bool same_structure(const Operation& a, const Operation& b) {
  const OpDef& d = op_def(a);
  const AttrMap &x = a.attributes(), &y = b.attributes();
  if (x.size() != y.size()) return false;
  for (auto ix = x.begin(), iy = y.begin(); ix != x.end(); ++ix, ++iy) {
    if (ix->first != iy->first) return false;
    bool data = std::find(d.data_attrs.begin(), d.data_attrs.end(), ix->first) != d.data_attrs.end();
    if (data ? attr_kind(ix->second) != attr_kind(iy->second) : !attr_equal(ix->second, iy->second)) return false;
  }
  return true;
}

bool Key::operator==(const Key& o) const {
  // Ops with regions never group (their regions would have to be compared).
  if (!op->regions().empty() || !o.op->regions().empty()) return op == o.op;
  if (id != o.id || !same_types(*op, *o.op)) return false;
  return id >= kSwitchKey || same_structure(*op, *o.op);
}

size_t key_hash(const Key& k) {
  size_t h = k.id * 0x9E3779B97F4A7C15ull;
  for (const Value* v : k.op->operands())
    h = h * 31 + v->type().shape.rank() * 7 + static_cast<size_t>(v->type().dtype);
  return h;
}

SymbolicTensor index_constant(const std::vector<int64_t>& idx) {
  static const OpDef& constant_op = get_op("constant");
  Tensor t = Tensor::from_vector(idx, {static_cast<int64_t>(idx.size())});
  return TraceContext::current().emit1(constant_op, std::span<const SymbolicTensor>(), {{"value", t}},
                                       SrcLoc::current());
}

// Rows `rows` of a (N, ...) value: a slice when they are consecutive, else a take.
SymbolicTensor take_rows(const SymbolicTensor& v, const std::vector<int>& rows, int64_t n) {
  bool consecutive = true;
  for (size_t k = 1; k < rows.size(); ++k) consecutive = consecutive && rows[k] == rows[k - 1] + 1;
  if (consecutive) {
    if (rows.front() == 0 && static_cast<int64_t>(rows.size()) == n) return v;
    return slice(v, {rows.front()}, {rows.back() + 1});
  }
  std::vector<int64_t> idx(rows.begin(), rows.end());
  return take(v, index_constant(idx), 0);
}

class Merger {
 public:
  Merger(trace_detail::Tracer& tracer, const std::vector<Graph>& programs, const BatchOptions& opts, BatchReport& rep)
      : tracer_(tracer),
        programs_(programs),
        opts_(opts),
        rep_(rep),
        maps_(programs.size()),
        first_user_(programs.size()) {
    // main() looks its function up by name: once per program, not per op.
    size_t ops = 0;
    for (const Graph& g : programs) {
      entries_.push_back(&g.main().entry());
      ops += entries_.back()->num_operations();
    }
    emitted_.reserve(ops);  // at most one emitted op per program op: no rehash while merging
  }

  // Merges the band of programs [begin, end): `inputs` per input leaf: the shared value, or the
  // band's rows of the mapped input. Returns the band's outputs (batched over its rows, or shared).
  std::vector<BatchArg> merge_band(const std::vector<int>& band, const std::vector<BatchArg>& inputs) {
    int n = static_cast<int>(band.size());
    for (int p : band) index_users(p);
    for (size_t j = 0; j < inputs.size(); ++j) {
      if (!inputs[j].batched) {
        for (int p : band)
          maps_[static_cast<size_t>(p)][entry(p).argument(j)] = Ref{Ref::Kind::Shared, inputs[j].v, -1, 0};
        continue;
      }
      int c = new_class(inputs[j].v, band);
      for (int k = 0; k < n; ++k)
        maps_[static_cast<size_t>(band[static_cast<size_t>(k)])]
             [programs_[static_cast<size_t>(band[static_cast<size_t>(k)])].main().entry().argument(j)] =
                 Ref{Ref::Kind::Row, {}, c, k};
    }
    align(band, opts_.alignment != Alignment::Occurrence);
    std::vector<BatchArg> outs;
    size_t nout = programs_.front().num_outputs();
    for (size_t j = 0; j < nout; ++j) {
      std::vector<Ref> refs;
      for (int p : band) refs.push_back(lookup(p, entry(p).terminator()->operand(j)));
      size_t before = static_cast<size_t>(rep_.muxes);
      outs.push_back(assemble(refs, programs_.front().output_specs()[j].shape));
      rep_.output_muxes += rep_.muxes - static_cast<int64_t>(before);
    }
    return outs;
  }

 private:
  const Block& entry(int p) const { return *entries_[static_cast<size_t>(p)]; }
  const Block& entry(size_t p) const { return *entries_[p]; }

  // Emits the group of band-local ops `entries` (one per program): one op over their rows when
  // there are two or more and the cost model says merging pays, else each program's own op.
  void emit_entries(const std::vector<int>& progs, const std::vector<const Operation*>& ops) {
    if (progs.size() >= 2 && worth_merging(progs, ops)) return emit_group(progs, ops);
    if (progs.size() <= 2) {
      for (size_t i = 0; i < progs.size(); ++i) emit_own(progs[i], *ops[i]);
      return;
    }
    // Not as a whole: the subgroups whose operands each come from one place (one shared value or
    // rows of one class) may still pay.
    std::vector<std::pair<size_t, std::vector<size_t>>> subs;  // source hash -> members
    std::vector<std::vector<Ref>> sources(progs.size());
    for (size_t k = 0; k < progs.size(); ++k) {
      size_t h = 0;
      for (const Value* v : ops[k]->operands()) {
        Ref r = lookup(progs[k], v);
        h = h * 0x100000001B3ull ^
            (r.kind == Ref::Kind::Row ? static_cast<size_t>(r.cls) * 2 + 1 : reinterpret_cast<uintptr_t>(r.v.value()));
        sources[k].push_back(r);
      }
      auto same_sources = [&](size_t a) {
        for (size_t j = 0; j < sources[k].size(); ++j) {
          const Ref &x = sources[a][j], &y = sources[k][j];
          if (x.kind != y.kind || (x.kind == Ref::Kind::Row ? x.cls != y.cls : x.v.value() != y.v.value()))
            return false;
        }
        return true;
      };
      auto it = std::find_if(subs.begin(), subs.end(),
                             [&](const auto& s) { return s.first == h && same_sources(s.second.front()); });
      if (it == subs.end()) {
        subs.push_back({h, {}});
        it = subs.end() - 1;
      }
      it->second.push_back(k);
    }
    if (subs.size() == progs.size()) {
      for (size_t i = 0; i < progs.size(); ++i) emit_own(progs[i], *ops[i]);
      return;
    }
    std::vector<int> sp;
    std::vector<const Operation*> so;
    for (const auto& [h, members] : subs) {
      sp.clear();
      so.clear();
      for (size_t k : members) {
        sp.push_back(progs[k]);
        so.push_back(ops[k]);
      }
      if (sp.size() >= 2 && worth_merging(sp, so)) {
        emit_group(sp, so);
      } else {
        for (size_t i = 0; i < sp.size(); ++i) emit_own(sp[i], *so[i]);
      }
    }
  }

  // Lock step: each step groups the programs by the key of their next op (the earliest one not
  // emitted yet) and every group takes one op per program that step (groups are disjoint).
  // Occurrence alignment stops there: the merged graph depends only on the op sequences.
  // Variant alignment lets a program in a switch group give, instead of its next op, a later
  // ready op (operands computed) of the same switch key whose variant most of the group's next
  // ops have — it joins the class holding that variant — so sibling branches written in another
  // order per program, such as (x+c)*(x-c) and (x-c)*(x+c), collapse into plain batched ops
  // instead of switch classes. Without switch_ops the two alignments are the same.
  void align(const std::vector<int>& band, bool variant) {
    size_t n = band.size();
    struct Prog {
      std::vector<const Operation*> ops;
      std::vector<char> done;
      size_t next = 0;  // the earliest op not emitted
    };
    std::vector<Prog> progs(n);
    for (size_t k = 0; k < n; ++k)
      for (const auto& op : entry(band[k]).operations())
        if (!op->is_terminator()) progs[k].ops.push_back(op.get());
    variant = variant && opts_.switch_ops.enabled();
    // Program-local op positions, for the readiness of a substitute (variant only).
    std::unordered_map<const Operation*, uint32_t> pos;
    if (variant)
      for (auto& pg : progs)
        for (size_t i = 0; i < pg.ops.size(); ++i) pos.emplace(pg.ops[i], static_cast<uint32_t>(i));
    auto ready = [&](const Prog& pg, const Operation& op) {
      for (const Value* v : op.operands()) {
        auto it = v->defining_op() ? pos.find(v->defining_op()) : pos.end();
        if (it != pos.end() && !pg.done[it->second]) return false;
      }
      return true;
    };
    for (auto& pg : progs) pg.done.assign(pg.ops.size(), 0);
    auto next = [&](size_t k) -> const Operation* {
      const Prog& pg = progs[k];
      return pg.next < pg.ops.size() ? pg.ops[pg.next] : nullptr;
    };
    std::unordered_multimap<size_t, size_t> by_hash;  // key hash -> group
    std::vector<std::vector<size_t>> groups;
    std::vector<int> gprogs;
    std::vector<const Operation*> gops;
    std::vector<size_t> gpos;
    std::vector<std::pair<uint32_t, size_t>> variants;  // op id -> programs whose next op it is
    while (true) {
      by_hash.clear();
      groups.clear();
      for (size_t k = 0; k < n; ++k) {
        const Operation* op = next(k);
        if (!op) continue;
        Key key = key_of(*op, true);
        size_t h = key_hash(key);
        size_t found = groups.size();
        for (auto [lo, hi] = by_hash.equal_range(h); lo != hi; ++lo)
          if (key_of(*next(groups[lo->second].front()), true) == key) found = lo->second;
        if (found == groups.size()) {
          by_hash.emplace(h, found);
          groups.emplace_back();
        }
        groups[found].push_back(k);
      }
      if (groups.empty()) break;
      // Groups in order of their first program (they were created in that order).
      for (const auto& g : groups) {
        gprogs.clear();
        gops.clear();
        gpos.clear();
        for (size_t k : g) {
          gprogs.push_back(band[k]);
          gops.push_back(next(k));
          gpos.push_back(progs[k].next);
        }
        Key key = key_of(*gops.front(), true);
        if (variant && g.size() >= 2 && key.id >= kSwitchKey) {
          variants.clear();
          for (const Operation* op : gops) {
            auto it =
                std::find_if(variants.begin(), variants.end(), [&](const auto& v) { return v.first == op->info().id; });
            if (it == variants.end()) {
              variants.push_back({op->info().id, 1});
            } else {
              ++it->second;
            }
          }
          uint32_t want = std::max_element(variants.begin(), variants.end(), [](const auto& x, const auto& y) {
                            return x.second < y.second;
                          })->first;
          for (size_t j = 0; j < g.size(); ++j) {
            if (gops[j]->info().id == want) continue;
            Prog& pg = progs[g[j]];
            for (size_t q = pg.next + 1; q < pg.ops.size(); ++q) {
              const Operation& cand = *pg.ops[q];
              if (pg.done[q] || cand.info().id != want || !(key_of(cand, true) == key) || !ready(pg, cand)) continue;
              gops[j] = &cand;
              gpos[j] = q;
              break;
            }
          }
        }
        emit_entries(gprogs, gops);
        for (size_t j = 0; j < g.size(); ++j) {
          Prog& pg = progs[g[j]];
          pg.done[gpos[j]] = 1;
          while (pg.next < pg.ops.size() && pg.done[pg.next]) ++pg.next;
        }
      }
    }
  }

  // The group key of an op; with `allow_switch`, a switchable op keys on its arity class.
  Key key_of(const Operation& op, bool allow_switch) const {
    const OpDef& d = op_def(op);
    if (allow_switch && opts_.switch_ops.enabled() && op.attributes().empty() && op.regions().empty() &&
        opts_.switch_ops.allows(d))
      return {kSwitchKey + static_cast<uint32_t>(op.num_operands()), &op};
    // Ops with regions never group (their regions would have to be compared): a unique key.
    if (!op.regions().empty())
      return {0x20000000u + static_cast<uint32_t>(reinterpret_cast<uintptr_t>(&op) & 0xFFFFFFF), &op};
    return {d.id, &op};
  }

  // What assembling an operand costs: ops dispatched and elements copied (`row` elements per
  // row). Nothing for a shared value or a whole class; a slice or a take (one copy) for rows of
  // one class; p slices and a concatenate (two copies) for p > 1 pieces.
  BatchReport::Cost assembly_cost(const std::vector<Ref>& refs, double row) const {
    auto rows = static_cast<double>(refs.size());
    switch (classify(refs)) {
      case Assembly::Shared:
      case Assembly::WholeClass: return {0, 0};
      case Assembly::ClassRows: return {rows * row, 1};
      case Assembly::Pieces: break;
    }
    int64_t n = 0;
    for (size_t k = 0; k < refs.size(); k = run_end(refs, k)) ++n;
    return {2 * rows * row, n + 1};
  }

  // How a value whose row k is refs[k]'s value is had: one shared value as it is, one class as
  // it is (the refs are exactly its rows in order), or pieces (slices and a concatenate).
  enum class Assembly : uint8_t { Shared, WholeClass, ClassRows, Pieces };
  Assembly classify(const std::vector<Ref>& refs) const {
    const Ref& f = refs.front();
    bool shared = f.kind == Ref::Kind::Shared;
    bool one_class = f.kind == Ref::Kind::Row;
    bool whole = one_class && classes_[static_cast<size_t>(f.cls)].programs.size() == refs.size();
    for (size_t k = 0; k < refs.size(); ++k) {
      const Ref& r = refs[k];
      shared = shared && r.kind == Ref::Kind::Shared && r.v.value() == f.v.value();
      one_class = one_class && r.kind == Ref::Kind::Row && r.cls == f.cls;
      whole = whole && one_class && r.row == static_cast<int64_t>(k);
    }
    return shared      ? Assembly::Shared
           : whole     ? Assembly::WholeClass
           : one_class ? Assembly::ClassRows
                       : Assembly::Pieces;
  }

  // The end of the piece starting at refs[k]: a run of consecutive rows of one class, or one ref.
  static size_t run_end(const std::vector<Ref>& refs, size_t k) {
    size_t e = k + 1;
    if (refs[k].kind == Ref::Kind::Row)
      while (e < refs.size() && refs[e].kind == Ref::Kind::Row && refs[e].cls == refs[k].cls &&
             refs[e].row == refs[k].row + static_cast<int64_t>(e - k))
        ++e;
    return e;
  }

  // The static cost model's decision (BatchCostModel's seconds): merging a group saves |G| - 1
  // dispatches; assembling its operands costs the dispatches and copies of assembly_cost. A
  // program whose result feeds an op unlike the other programs' (its first user's group key
  // differs from the most common one) will likely read its row back out alone (a slice: one
  // dispatch and one row copied).
  bool worth_merging(const std::vector<int>& progs, const std::vector<const Operation*>& ops) const {
    const BatchCostModel& m = opts_.cost_model;
    BatchReport::Cost cost;
    std::vector<Ref> refs;
    bool switched = false, any_batched = false;
    for (const Operation* o : ops) switched = switched || o->info().id != ops.front()->info().id;
    auto rows = static_cast<double>(progs.size());
    double out_numel =
        ops.front()->num_results() > 0 ? static_cast<double>(static_numel(ops.front()->result(0)->type())) : 0;
    for (size_t j = 0; j < ops.front()->num_operands(); ++j) {
      refs.clear();
      for (size_t k = 0; k < progs.size(); ++k) refs.push_back(lookup(progs[k], ops[k]->operand(j)));
      double numel = static_cast<double>(static_numel(ops.front()->operand(j)->type()));
      BatchReport::Cost c = assembly_cost(refs, numel);
      cost.work += c.work;
      cost.dispatches += c.dispatches;
      bool batched = classify(refs) != Assembly::Shared;
      any_batched = any_batched || batched;
      // A switch broadcasts a batched operand of a smaller shape to the rows' full shape.
      if (switched && batched && numel != out_numel) {
        cost.work += rows * out_numel;
        ++cost.dispatches;
      }
    }
    // A switch over shared operands only broadcasts the first to every row.
    if (switched && !any_batched) {
      cost.work += rows * out_numel;
      ++cost.dispatches;
    }
    if (ops.front()->num_results() > 0) {
      std::unordered_map<uint32_t, size_t> user_ids;
      size_t most = 0;
      for (size_t k = 0; k < progs.size(); ++k) {
        const Operation* const* user = first_user_[static_cast<size_t>(progs[k])].find(ops[k]->result(0));
        uint32_t id = user == nullptr ? ~0u : key_of(**user, true).id;
        most = std::max(most, ++user_ids[id]);
      }
      auto alone = static_cast<int64_t>(progs.size() - most);
      cost.dispatches += alone;
      cost.work += static_cast<double>(alone) * static_cast<double>(static_numel(ops.front()->result(0)->type()));
      // Stacking different constant values pays off only when every row is then consumed by a
      // merged op: a row read back out alone costs more than the program's own constant.
      const OpDef& d = op_def(*ops.front());
      if (!d.data_attrs.empty() && most < progs.size()) {
        for (const Operation* o : ops)
          for (const std::string& a : d.data_attrs) {
            auto ia = ops.front()->attributes().find(a), ib = o->attributes().find(a);
            if (ia != ops.front()->attributes().end() && ib != o->attributes().end() &&
                !attr_equal(ia->second, ib->second))
              return false;
          }
      }
    }
    double saved = static_cast<double>(progs.size() - 1) * m.dispatch_seconds;
    return static_cast<double>(cost.dispatches) * m.dispatch_seconds + cost.work * m.element_seconds < saved;
  }

  // Each value's first user in program p (its return counts as a user), whose group key decides.
  void index_users(int p) {
    auto& users = first_user_[static_cast<size_t>(p)];
    if (!users.empty()) return;
    // Sized once: every value of the program gets a Ref and most a first user.
    size_t values = entry(p).arguments().size();
    for (const auto& op : entry(p).operations()) values += op->num_results();
    users.reserve(values);
    maps_[static_cast<size_t>(p)].reserve(values);
    for (const auto& op : entry(p).operations())
      for (const Value* v : op->operands()) {
        const Operation*& first = users[v];
        if (first == nullptr) first = op.get();
      }
  }

  int new_class(SymbolicTensor v, std::vector<int> progs) {
    classes_.push_back({std::move(v), std::move(progs)});
    ++rep_.value_classes;
    return static_cast<int>(classes_.size()) - 1;
  }

  Ref lookup(int p, const Value* v) const {
    const Ref* r = maps_[static_cast<size_t>(p)].find(v);
    if (r == nullptr) throw InternalError("batch_functions: a value is used before it is defined");
    return *r;
  }

  // Program p's own value of a Ref (a row of a class is sliced out once and remembered).
  SymbolicTensor own_value(const Ref& r, const Shape& shape) {
    if (r.kind != Ref::Kind::Row) return r.v;
    auto key = std::make_pair(r.cls, r.row);
    auto it = rows_.find(key);
    if (it != rows_.end()) return it->second;
    const SymbolicTensor& c = classes_[static_cast<size_t>(r.cls)].v;
    SymbolicTensor s = reshape(slice(c, {r.row}, {r.row + 1}), shape);
    rows_.emplace(key, s);
    return s;
  }

  // A value whose row k is refs[k]'s value: shared when every ref is the same shared value,
  // a class's value when the refs are exactly its rows in order, else slices and a concatenate.
  BatchArg assemble(const std::vector<Ref>& refs, const Shape& shape) {
    const Ref& f = refs.front();
    switch (classify(refs)) {
      case Assembly::Shared: return {f.v, false};
      case Assembly::WholeClass: return {classes_[static_cast<size_t>(f.cls)].v, true};
      case Assembly::ClassRows: {
        // Rows of one class: a slice when consecutive, else one take.
        std::vector<int> rows;
        for (const Ref& r : refs) rows.push_back(static_cast<int>(r.row));
        const SymbolicTensor& c = classes_[static_cast<size_t>(f.cls)].v;
        return {take_rows(c, rows, static_cast<int64_t>(classes_[static_cast<size_t>(f.cls)].programs.size())), true};
      }
      case Assembly::Pieces: break;
    }
    ++rep_.muxes;
    std::vector<SymbolicTensor> pieces;
    for (size_t k = 0, e = 0; k < refs.size(); k = e) {
      e = run_end(refs, k);
      const Ref& r = refs[k];
      if (r.kind == Ref::Kind::Row)
        pieces.push_back(slice(classes_[static_cast<size_t>(r.cls)].v, {r.row}, {r.row + static_cast<int64_t>(e - k)}));
      else
        pieces.push_back(expand_dims(own_value(r, shape), 0));
    }
    return {pieces.size() == 1 ? pieces.front() : concatenate(pieces, 0), true};
  }

  void bind_results(const std::vector<int>& progs, const std::vector<const Operation*>& ops,
                    const std::vector<BatchArg>& outs) {
    for (size_t i = 0; i < outs.size(); ++i) {
      if (!outs[i].batched) {
        for (size_t k = 0; k < progs.size(); ++k)
          maps_[static_cast<size_t>(progs[k])][ops[k]->result(i)] = Ref{Ref::Kind::Shared, outs[i].v, -1, 0};
        continue;
      }
      int c = new_class(outs[i].v, progs);
      for (size_t k = 0; k < progs.size(); ++k)
        maps_[static_cast<size_t>(progs[k])][ops[k]->result(i)] = Ref{Ref::Kind::Row, {}, c, static_cast<int64_t>(k)};
    }
  }

  // Emits `op` over `vals` unless an equal op (same op, operand values, attributes and result
  // types) was emitted already — the same subexpression in several programs, over shared inputs
  // or the same rows — then reuses it: CSE while merging, so the final CSE pass finds nothing to
  // copy the graph for.
  std::vector<SymbolicTensor> emit_dedup(const Operation& op, std::span<const SymbolicTensor> vals) {
    size_t h = op.info().id;
    for (const auto& v : vals) h = h * 0x100000001B3ull ^ reinterpret_cast<uintptr_t>(v.value());
    for (const auto& [name, value] : op.attributes()) h = h * 0x100000001B3ull ^ attr_hash(value);
    // The emitted op itself carries what an equal op must match: its operands, attributes and types.
    const Operation* equal = emitted_.find(h, [&](const Operation& e) {
      if (e.info().id != op.info().id || e.num_operands() != vals.size() || !same_types(e, op)) return false;
      bool eq = true;
      for (size_t i = 0; eq && i < vals.size(); ++i) eq = e.operand(i) == vals[i].value();
      const AttrMap &x = e.attributes(), &y = op.attributes();
      eq = eq && x.size() == y.size();
      for (auto i = x.begin(), j = y.begin(); eq && i != x.end(); ++i, ++j)
        eq = i->first == j->first && attr_equal(i->second, j->second);
      return eq;
    });
    if (equal != nullptr) {
      std::vector<SymbolicTensor> outs;
      for (const auto& r : equal->results()) outs.push_back(tracer_.context().wrap(r.get()));
      return outs;
    }
    // The op is a verified program's, over values of its operands' types: its result types hold.
    SmallVector<TensorType, 2> types;
    for (const auto& r : op.results()) types.push_back(r->type());
    std::vector<SymbolicTensor> outs =
        tracer_.context().emit_typed(op.info(), vals, op.attributes(), types, SrcLoc::current());
    if (!outs.empty()) emitted_.insert(h, outs.front().value()->defining_op());
    return outs;
  }

  void emit_own(int p, const Operation& op) {
    LocationScope scope(tracer_.context(), op.location());
    SmallVector<SymbolicTensor, 4> vals;
    bool shared = op.regions().empty();
    for (const Value* v : op.operands()) {
      Ref r = lookup(p, v);
      shared = shared && r.kind == Ref::Kind::Shared;
      vals.push_back(own_value(r, v->type().shape));
    }
    std::vector<SymbolicTensor> outs =
        op.regions().empty()
            ? emit_dedup(op, vals)
            : clone_with_captures(op, vals, [&](const Value* v) { return own_value(lookup(p, v), v->type().shape); });
    // An op over shared values only computes the same for every program: its results are shared.
    for (size_t i = 0; i < outs.size(); ++i)
      maps_[static_cast<size_t>(p)][op.result(i)] = Ref{shared ? Ref::Kind::Shared : Ref::Kind::Own, outs[i], -1, 0};
    ++rep_.own_ops;
  }

  void emit_group(const std::vector<int>& progs, const std::vector<const Operation*>& ops) {
    const Operation& op0 = *ops.front();
    LocationScope scope(tracer_.context(), op0.location());
    bool same_op = true;
    for (const Operation* o : ops) same_op = same_op && o->info().id == op0.info().id;
    std::vector<BatchArg> args;
    bool any_batched = false;
    for (size_t j = 0; j < op0.num_operands(); ++j) {
      std::vector<Ref> refs;
      for (size_t k = 0; k < progs.size(); ++k) refs.push_back(lookup(progs[k], ops[k]->operand(j)));
      args.push_back(assemble(refs, op0.operand(j)->type().shape));
      any_batched = any_batched || args.back().batched;
    }
    if (!same_op) return emit_switch(progs, ops, args);
    const OpDef& d = op_def(op0);
    bool same_data = true;
    for (const Operation* o : ops)
      for (const std::string& a : d.data_attrs) {
        auto ia = op0.attributes().find(a), ib = o->attributes().find(a);
        bool has_a = ia != op0.attributes().end(), has_b = ib != o->attributes().end();
        same_data = same_data && has_a == has_b && (!has_a || attr_equal(ia->second, ib->second));
      }
    if (!same_data) {
      if (stack_data(progs, ops)) return;
      // No way to stack this op's data: each program computes its own.
      for (size_t k = 0; k < progs.size(); ++k) emit_own(progs[k], *ops[k]);
      return;
    }
    if (!any_batched) {
      // Every program computes the same op on the same shared values: once.
      std::vector<SymbolicTensor> vals;
      for (const auto& a : args) vals.push_back(a.v);
      auto outs = emit_dedup(op0, vals);
      std::vector<BatchArg> shared;
      for (auto& o : outs) shared.push_back({o, false});
      bind_results(progs, ops, shared);
      ++rep_.shared_classes;
      return;
    }
    const BatchRule* rule = batch_rules().find(op0);
    if (!rule)
      throw TransformError("batch_functions: evoxc." + op0.name() + " at " + op0.location().to_string() + " (program " +
                           std::to_string(progs.front()) + ") has no batching rule");
    GroupContext ctx(static_cast<int64_t>(progs.size()));
    std::vector<BatchArg> outs = (*rule)(ctx, op0, args);
    bind_results(progs, ops, outs);
  }

  // full/constant ops differing only in their values: one (rows, ...) constant.
  bool stack_data(const std::vector<int>& progs, const std::vector<const Operation*>& ops) {
    const Operation& op0 = *ops.front();
    static const OpDef& full = get_op("full");
    static const OpDef& constant_op = get_op("constant");
    auto g = static_cast<int64_t>(ops.size());
    const TensorType& t = op0.result(0)->type();
    if (op0.info().id == full.id) {
      // The values in their attribute's own type, then the same conversion full applies.
      const Attribute& v0 = op0.attributes().at("value");
      DType host = std::holds_alternative<double>(v0)    ? DType::F64
                   : std::holds_alternative<int64_t>(v0) ? DType::I64
                                                         : DType::Bool;
      Tensor values = Tensor::empty({g}, host);
      for (int64_t k = 0; k < g; ++k) {
        const Attribute& a = ops[static_cast<size_t>(k)]->attributes().at("value");
        if (host == DType::F64) values.data<double>()[k] = std::get<double>(a);
        if (host == DType::I64) values.data<int64_t>()[k] = std::get<int64_t>(a);
        if (host == DType::Bool) values.data<bool>()[k] = std::get<bool>(a);
      }
      SymbolicTensor c = tracer_.context().emit1(constant_op, std::span<const SymbolicTensor>(), {{"value", values}},
                                                 SrcLoc::current());
      if (host != t.dtype) c = convert(c, t.dtype);
      if (t.rank() > 0) {
        std::vector<DimExpr> dims{DimExpr(g)};
        for (const DimExpr& d : t.shape) dims.push_back(d);
        c = broadcast_in_dim(c, Shape(dims), {0});
      }
      bind_results(progs, ops, {{c, true}});
      return true;
    }
    if (op0.info().id == constant_op.id) {
      std::vector<int64_t> shape{g};
      const Tensor& t0 = attr_tensor(op0.attributes(), "value", "constant");
      for (int64_t e : t0.shape()) shape.push_back(e);
      Tensor stacked = Tensor::empty(shape, t0.dtype());
      auto* dst = static_cast<char*>(stacked.raw_data());
      for (int64_t k = 0; k < g; ++k) {
        const Tensor& tk = attr_tensor(ops[static_cast<size_t>(k)]->attributes(), "value", "constant");
        std::memcpy(dst + static_cast<size_t>(k) * t0.nbytes(), tk.raw_data(), t0.nbytes());
      }
      SymbolicTensor c = tracer_.context().emit1(constant_op, std::span<const SymbolicTensor>(), {{"value", stacked}},
                                                 SrcLoc::current());
      bind_results(progs, ops, {{c, true}});
      return true;
    }
    return false;
  }

  // Same-position elementwise ops that differ: one evoxc.row_switch with a row -> variant table.
  void emit_switch(const std::vector<int>& progs, const std::vector<const Operation*>& ops,
                   std::vector<BatchArg>& args) {
    static const OpDef& row_switch = get_op("row_switch");
    const TensorType& rt = ops.front()->result(0)->type();
    SwitchRecord rec;
    std::vector<uint32_t> ids;  // the variants' op ids, in first-use order
    std::vector<int64_t> rows;
    for (size_t k = 0; k < ops.size(); ++k) {
      uint32_t id = ops[k]->info().id;
      auto it = std::find(ids.begin(), ids.end(), id);
      if (it == ids.end()) {
        ids.push_back(id);
        rec.variants.push_back(ops[k]->name());
        rec.rows.emplace_back();
        it = ids.end() - 1;
      }
      auto vi = it - ids.begin();
      rows.push_back(vi);
      rec.rows[static_cast<size_t>(vi)].push_back(progs[k]);
    }
    std::vector<DimExpr> full_dims{DimExpr(static_cast<int64_t>(progs.size()))};
    for (const DimExpr& d : rt.shape) full_dims.push_back(d);
    std::vector<SymbolicTensor> operands;
    bool any_batched = std::any_of(args.begin(), args.end(), [](const BatchArg& a) { return a.batched; });
    if (!any_batched) {
      // Every operand is shared, the ops differ: the rows come from the first operand's broadcast.
      std::vector<int64_t> dims;
      for (size_t i = 0; i < args[0].v.rank(); ++i)
        dims.push_back(static_cast<int64_t>(rt.rank() - args[0].v.rank() + i + 1));
      std::vector<DimExpr> d0{DimExpr(static_cast<int64_t>(progs.size()))};
      for (size_t i = 0; i < rt.rank(); ++i)
        d0.push_back(i + args[0].v.rank() >= rt.rank() ? args[0].v.shape()[i + args[0].v.rank() - rt.rank()]
                                                       : DimExpr(1));
      args[0] = {broadcast_in_dim(args[0].v, Shape(d0), dims), true};
    }
    for (auto& a : args) {
      if (a.batched && a.v.shape() != Shape(full_dims)) {
        // A per-row operand of a broadcast shape: aligned to the row's full shape.
        size_t r = a.v.rank() - 1, R = rt.rank();
        std::vector<int64_t> dims{0};
        for (size_t i = 0; i < r; ++i) dims.push_back(static_cast<int64_t>(R - r + i + 1));
        a.v = broadcast_in_dim(a.v, Shape(full_dims), dims);
      }
      operands.push_back(a.v);
    }
    SymbolicTensor out = tracer_.context().emit1(
        row_switch, operands, {{"variants", row_switch_spec(ids)}, {"rows", rows}}, SrcLoc::current());
    rep_.switched.push_back(std::move(rec));
    bind_results(progs, ops, {{out, true}});
  }

  trace_detail::Tracer& tracer_;
  const std::vector<Graph>& programs_;
  const BatchOptions& opts_;
  BatchReport& rep_;
  // Flat maps: every value of every program gets a Ref and most a first user.
  std::vector<PtrMap<const Value*, Ref>> maps_;
  std::vector<Class> classes_;
  std::map<std::pair<int, int64_t>, SymbolicTensor> rows_;
  HashIndex<Operation> emitted_;  // ops emitted through emit_dedup, by hash
  std::vector<PtrMap<const Value*, const Operation*>> first_user_;
  std::vector<const Block*> entries_;
};

void check_signatures(const std::vector<Graph>& programs) {
  const Graph& g0 = programs.front();
  auto in0 = g0.input_specs(), out0 = g0.output_specs();
  // Paths are built only for a message.
  auto paths_in = [&] { return g0.input_paths(); };
  auto paths_out = [&] { return g0.output_paths(); };
  for (size_t i = 1; i < programs.size(); ++i) {
    const Graph& g = programs[i];
    std::string why;
    auto fail = [&](const std::string& what) {
      throw TransformError("batch_functions: program " + std::to_string(i) + " " + what + " (programs must share " +
                           "their input and output specs)");
    };
    if (auto m = g0.input_tree().first_mismatch(g.input_tree(), &why)) fail("has inputs " + why + " at " + *m);
    if (auto m = g0.output_tree().first_mismatch(g.output_tree(), &why)) fail("has outputs " + why + " at " + *m);
    auto in = g.input_specs(), out = g.output_specs();
    for (size_t k = 0; k < in.size(); ++k)
      if (!(in[k] == in0[k]))
        fail("has input " + paths_in()[k] + " of type " + in[k].to_string() + " where program 0 has " +
             in0[k].to_string());
    for (size_t k = 0; k < out.size(); ++k)
      if (!(out[k] == out0[k]))
        fail("has output " + paths_out()[k] + " of type " + out[k].to_string() + " where program 0 has " +
             out0[k].to_string());
  }
}

}  // namespace
}  // namespace transforms

const char* alignment_name(Alignment a) {
  switch (a) {
    case Alignment::Variant: return "variant";
    case Alignment::Occurrence: return "occurrence";
    case Alignment::Auto: return "auto";
  }
  return "?";
}

std::string BatchReport::to_string() const {
  std::ostringstream os;
  os << "BatchReport(programs=" << programs << ", program_ops=" << program_ops << ", emitted_ops=" << emitted_ops
     << ", value_classes=" << value_classes << ", shared_classes=" << shared_classes << ", own_ops=" << own_ops
     << ", switched=" << switched.size() << ", muxes=" << muxes << ", output_muxes=" << output_muxes
     << ", bands=" << bands << ", alignment=" << alignment << ", cost_estimate=(work=" << cost_estimate.work
     << ", dispatches=" << cost_estimate.dispatches << "), separate_cost=(work=" << separate_cost.work
     << ", dispatches=" << separate_cost.dispatches << "))";
  return os.str();
}

namespace transforms {
namespace {

// The programs of each band, in program order within a band.
using Partition = std::vector<std::vector<int>>;

Partition contiguous_bands(int64_t n, int64_t k) {
  Partition p;
  for (int64_t b = 0; b < k; ++b) {
    p.emplace_back();
    for (int64_t i = n * b / k; i < n * (b + 1) / k; ++i) p.back().push_back(static_cast<int>(i));
  }
  return p;
}

// Programs grouped by structural fingerprint (the sequence of their ops' ids and result
// types), groups in order of their first program: programs of one group merge without muxes.
Partition fingerprint_bands(const std::vector<Graph>& programs) {
  std::vector<std::pair<size_t, std::vector<int>>> groups;
  std::unordered_map<size_t, std::vector<size_t>> by_hash;
  auto same = [&](int a, int b) {
    const auto &x = programs[static_cast<size_t>(a)].main().entry().operations(),
               &y = programs[static_cast<size_t>(b)].main().entry().operations();
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i)
      if (x[i]->info().id != y[i]->info().id || !same_types(*x[i], *y[i])) return false;
    return true;
  };
  for (size_t i = 0; i < programs.size(); ++i) {
    size_t h = 0;
    for (const auto& op : programs[i].main().entry().operations()) h = h * 1000003u + op->info().id;
    auto& cands = by_hash[h];
    bool placed = false;
    for (size_t gi : cands)
      if (same(groups[gi].second.front(), static_cast<int>(i))) {
        groups[gi].second.push_back(static_cast<int>(i));
        placed = true;
        break;
      }
    if (!placed) {
      cands.push_back(groups.size());
      groups.push_back({h, {static_cast<int>(i)}});
    }
  }
  Partition p;
  for (auto& g : groups) p.push_back(std::move(g.second));
  return p;
}

// Merges `programs` band by band into the trace being built; returns the graph and fills `rep`.
// The axis (0) or none of every input and output leaf, from BatchOptions::axes/out_axes.
struct LeafAxes {
  std::vector<std::optional<int64_t>> in, out;
};

Graph merge_partition(const std::vector<Graph>& programs, const BatchOptions& options, const LeafAxes& axes,
                      const Partition& bands, BatchReport& rep) {
  const Graph& g0 = programs.front();
  auto n = static_cast<int64_t>(programs.size());
  std::vector<TensorSpec> in_specs = g0.input_specs(), out_specs = g0.output_specs();
  const auto& in_ax = axes.in;
  const auto& out_ax = axes.out;
  std::vector<std::string> out_paths = g0.output_paths();
  rep = BatchReport();
  rep.programs = n;
  rep.alignment = alignment_name(options.alignment);
  rep.bands = static_cast<int64_t>(bands.size());
  trace_detail::Tracer tracer;
  std::vector<SymbolicTensor> inputs;
  for (size_t j = 0; j < in_specs.size(); ++j) {
    TensorSpec s = in_specs[j];
    if (in_ax[j]) s.shape.dims().insert(s.shape.dims().begin(), DimExpr(n));
    inputs.push_back(tracer.input(s));
  }
  Merger merger(tracer, programs, options, rep);
  std::vector<std::vector<BatchArg>> band_outs;
  std::vector<int> order;  // program of each row of the concatenated band outputs
  for (const auto& band : bands) {
    rep.band_sizes.push_back(static_cast<int64_t>(band.size()));
    order.insert(order.end(), band.begin(), band.end());
    std::vector<BatchArg> band_in;
    for (size_t j = 0; j < inputs.size(); ++j)
      band_in.push_back(in_ax[j] ? BatchArg{take_rows(inputs[j], band, n), true} : BatchArg{inputs[j], false});
    band_outs.push_back(merger.merge_band(band, band_in));
  }
  // Row r of the concatenation holds program order[r]; the outputs need program order.
  std::vector<int> inverse(static_cast<size_t>(n));
  for (size_t r = 0; r < order.size(); ++r) inverse[static_cast<size_t>(order[r])] = static_cast<int>(r);
  std::vector<SymbolicTensor> results;
  for (size_t j = 0; j < out_specs.size(); ++j) {
    if (!out_ax[j]) {
      for (const auto& bo : band_outs)
        if (bo[j].batched || bo[j].v.value() != band_outs.front()[j].v.value())
          throw TransformError("batch_functions: output " + out_paths[j] +
                               " differs between programs, but its out_axes is None (give it axis 0)");
      results.push_back(band_outs.front()[j].v);
      continue;
    }
    std::vector<SymbolicTensor> parts;
    for (size_t b = 0; b < band_outs.size(); ++b) {
      const BatchArg& a = band_outs[b][j];
      if (a.batched) {
        parts.push_back(a.v);
      } else {
        std::vector<DimExpr> dims{DimExpr(rep.band_sizes[b])};
        std::vector<int64_t> bdims;
        for (size_t i = 0; i < out_specs[j].shape.rank(); ++i) {
          dims.push_back(out_specs[j].shape[i]);
          bdims.push_back(static_cast<int64_t>(i + 1));
        }
        parts.push_back(broadcast_in_dim(a.v, Shape(dims), bdims));
      }
    }
    SymbolicTensor all = parts.size() == 1 ? parts.front() : concatenate(parts, 0);
    results.push_back(take_rows(all, inverse, n));
  }
  Graph g = tracer.finish(g0.output_tree().unflatten(results), g0.input_tree());
  Graph out = finish_transform(g, g0.static_values());
  rep.cost_estimate = cost_of(out);
  rep.emitted_ops = rep.cost_estimate.dispatches;
  return out;
}

double estimated_seconds(const BatchReport::Cost& c, const BatchCostModel& m) {
  return static_cast<double>(c.dispatches) * m.dispatch_seconds + c.work * m.element_seconds;
}

}  // namespace
}  // namespace transforms

BatchResult batch_functions(const std::vector<Graph>& programs, const BatchOptions& options) {
  using namespace transforms;
  if (programs.empty()) throw TransformError("batch_functions: needs at least one program");
  for (const Graph& g : programs) verify(g);
  check_signatures(programs);
  const Graph& g0 = programs.front();
  auto n = static_cast<int64_t>(programs.size());
  LeafAxes axes{broadcast_axes(options.axes, g0.input_tree(), "batch_functions axes"),
                broadcast_axes(options.out_axes, g0.output_tree(), "batch_functions out_axes")};
  const auto& in_ax = axes.in;
  const auto& out_ax = axes.out;
  std::vector<std::string> in_paths = g0.input_paths(), out_paths = g0.output_paths();
  for (size_t j = 0; j < in_ax.size(); ++j)
    if (in_ax[j] && *in_ax[j] != 0)
      throw TransformError("batch_functions: axes for input " + in_paths[j] + " must be 0 or None");
  for (size_t j = 0; j < out_ax.size(); ++j)
    if (out_ax[j] && *out_ax[j] != 0)
      throw TransformError("batch_functions: out_axes for output " + out_paths[j] + " must be 0 or None");

  BatchReport::Cost separate;
  for (const Graph& p : programs) {
    BatchReport::Cost c = cost_of(p);
    separate.work += c.work;
    separate.dispatches += c.dispatches;
  }
  auto finish = [&](Graph g, BatchReport rep) {
    rep.separate_cost = separate;
    rep.program_ops = separate.dispatches;
    return BatchResult{std::move(g), std::move(rep)};
  };
  // One alignment: the bands as asked, or for "auto" the flat merge and the merge by structural
  // fingerprint, whichever the cost model estimates faster (never worse than flat by its own
  // estimate).
  auto faster = [&](const BatchReport& a, const BatchReport& b) {
    return estimated_seconds(a.cost_estimate, options.cost_model) <
           estimated_seconds(b.cost_estimate, options.cost_model);
  };
  auto merge_aligned = [&](const BatchOptions& o) -> std::pair<Graph, BatchReport> {
    if (!o.bands.automatic) {
      int64_t k = o.bands.count <= 0 ? 1 : std::min(o.bands.count, n);
      BatchReport rep;
      Graph g = merge_partition(programs, o, axes, contiguous_bands(n, k), rep);
      return {std::move(g), std::move(rep)};
    }
    BatchReport flat_rep, fp_rep;
    Graph flat = merge_partition(programs, o, axes, contiguous_bands(n, 1), flat_rep);
    Partition fp = fingerprint_bands(programs);
    if (fp.size() == 1) return {std::move(flat), std::move(flat_rep)};
    Graph grouped = merge_partition(programs, o, axes, fp, fp_rep);
    if (faster(fp_rep, flat_rep)) return {std::move(grouped), std::move(fp_rep)};
    return {std::move(flat), std::move(flat_rep)};
  };
  if (options.alignment != Alignment::Auto) {
    auto [g, rep] = merge_aligned(options);
    return finish(std::move(g), std::move(rep));
  }
  // alignment "auto": variant first, occurrence when the model estimates it faster.
  BatchOptions o = options;
  o.alignment = Alignment::Variant;
  auto [gv, rv] = merge_aligned(o);
  o.alignment = Alignment::Occurrence;
  auto [go, ro] = merge_aligned(o);
  if (faster(ro, rv)) return finish(std::move(go), std::move(ro));
  return finish(std::move(gv), std::move(rv));
}

BatchFunction batch_functions(std::vector<TraceFunction> fns, BatchOptions options) {
  if (fns.empty()) throw TransformError("batch_functions: needs at least one program");
  return [fns = std::move(fns), options = std::move(options)](const std::vector<TraceArg>& args) {
    std::vector<TraceArg> stripped = args;
    DimExpr n = transforms::strip_batch(stripped, options.axes, "batch_functions");
    if (n != DimExpr(static_cast<int64_t>(fns.size())))
      throw TransformError("batch_functions: the function axis of the mapped arguments has extent " + n.to_string() +
                           ", but there are " + std::to_string(fns.size()) + " functions");
    std::vector<Graph> graphs;
    graphs.reserve(fns.size());
    for (const TraceFunction& f : fns) graphs.push_back(trace_dynamic(f, stripped));
    return batch_functions(graphs, options);
  };
}

}  // namespace evoxc
