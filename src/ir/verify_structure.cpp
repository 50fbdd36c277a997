// Op-independent structural checks of a graph (verify_structure) and structural equality (graphs_equal).
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "evoxc/core/error.h"
#include "evoxc/core/flat_table.h"
#include "evoxc/core/limits.h"
#include "evoxc/ir/graph.h"
#include "ir_text.h"

namespace evoxc {
namespace {

class FunctionVerifier {
 public:
  explicit FunctionVerifier(const Function& f) : f_(f) {}

  void run() { block(f_.entry(), nullptr, 0, 0); }

  // Messages name values as the printer does; the names are computed only for a message.
  std::string describe(const Operation& op) const {
    std::string s = "evoxc." + op.name();
    if (op.num_results() > 0) s += " (" + irtext::value_name(names(), op.result(0)) + ")";
    return s + " at " + op.location().to_string() + " in @" + f_.name();
  }

 private:
  [[noreturn]] static void fail(const std::string& msg) { throw VerifyError("verify: " + msg); }

  const irtext::ValueNames& names() const {
    if (!names_) {
      names_.emplace();
      irtext::name_function_values(f_, *names_);
    }
    return *names_;
  }
  // "the body of @main" or "region 1 of evoxc.cond (%3) at f.cpp:2:0 in @main".
  std::string where(const Operation* parent, size_t region) const {
    if (!parent) return "the body of @" + f_.name();
    return "region " + std::to_string(region) + " of " + describe(*parent);
  }

  // A static extent below zero cannot be a tensor's (an in-memory graph can hold one: the
  // text parser and the JSON reader refuse it, a Builder caller may not).
  // `what` builds the value's description only when there is an error to report.
  template <typename What>
  void check_extents(const Value* v, const What& what) {
    for (const DimExpr& d : v->shape())
      if (d.is_const() && d.value() < 0)
        fail(what() + " has type " + v->type().to_string() + ", whose extent " + d.to_string() + " is negative");
  }

  void block(const Block& b, const Operation* parent, size_t region, int depth) {
    // The readers bound nesting; a graph built in memory is bounded here, before anything
    // else recurses through it.
    if (depth > kMaxNestingDepth)
      fail(where(parent, region) + " is nested more than " + std::to_string(kMaxNestingDepth) +
           " regions deep (core/limits.h)");
    const size_t mark = added_.size();
    for (size_t i = 0; i < b.num_arguments(); ++i) {
      const Value* a = b.argument(i);
      if (a->owner_block() != &b || a->index() != i || a->defining_op() != nullptr)
        fail("argument " + std::to_string(i) + " of " + where(parent, region) +
             " does not record this block as its owner");
      check_extents(a, [&] { return "argument " + std::to_string(i) + " of " + where(parent, region); });
      visible_.insert(a);
      added_.push_back(a);
    }
    const auto& ops = b.operations();
    if (ops.empty()) fail(where(parent, region) + " is empty; every block must end with evoxc.return");
    for (size_t i = 0; i < ops.size(); ++i) {
      const Operation& op = *ops[i];
      if (op.parent_block() != &b) fail(describe(op) + " does not record its parent block");
      for (size_t k = 0; k < op.num_operands(); ++k) {
        const Value* v = op.operand(k);
        if (!visible_.contains(v))
          fail(describe(op) + ": operand " + std::to_string(k) + " (" + irtext::value_name(names(), v) +
               ") is not defined before this use; it must come from an earlier op or argument of this block or an "
               "enclosing one, not from a later op, a sibling region or another function");
      }
      if (op.is_terminator()) {
        if (i + 1 != ops.size())
          fail(describe(op) + ": evoxc.return must be the last op of " + where(parent, region) + ", but " +
               std::to_string(ops.size() - i - 1) + " op(s) follow it");
        if (op.num_results() != 0 || !op.regions().empty())
          fail(describe(op) + ": evoxc.return must have no results and no regions");
      } else if (i + 1 == ops.size()) {
        fail(where(parent, region) + " ends with " + describe(op) + "; every block must end with evoxc.return");
      }
      for (size_t r = 0; r < op.num_results(); ++r) {
        const Value* v = op.result(r);
        if (v->defining_op() != &op || v->index() != r || v->owner_block() != nullptr)
          fail(describe(op) + ": result " + std::to_string(r) + " does not record this op as its definition");
        check_extents(v, [&] { return describe(op) + ": result " + std::to_string(r); });
      }
      for (size_t r = 0; r < op.regions().size(); ++r) {
        if (op.regions()[r]->parent_op() != &op)
          fail(describe(op) + ": region " + std::to_string(r) + " has another parent");
        block(op.regions()[r]->block(), &op, r, depth + 1);
      }
      // Results become visible only after the op's own regions: a region cannot use them.
      for (const auto& r : op.results()) {
        visible_.insert(r.get());
        added_.push_back(r.get());
      }
    }
    // Leaving the block hides its values again (the function's own block needs no cleanup).
    if (parent)
      for (size_t k = mark; k < added_.size(); ++k) visible_.erase(added_[k]);
    added_.resize(mark);
  }

  const Function& f_;
  mutable std::optional<irtext::ValueNames> names_;
  PtrSet visible_;
  std::vector<const Value*> added_;
};

class Comparer {
 public:
  Comparer(bool locations, std::string* why) : locations_(locations), why_(why) {}

  bool graphs(const Graph& a, const Graph& b) {
    if (a.defined() != b.defined()) return fail("one graph is empty and the other is not");
    if (!a.defined()) return true;
    if (a.input_tree().structure_string() != b.input_tree().structure_string())
      return fail("input trees differ: " + a.input_tree().structure_string() + " vs " +
                  b.input_tree().structure_string());
    if (a.output_tree().structure_string() != b.output_tree().structure_string())
      return fail("output trees differ: " + a.output_tree().structure_string() + " vs " +
                  b.output_tree().structure_string());
    if (!attr_maps(a.static_values(), b.static_values(), "static values")) return false;
    const Module& ma = a.module();
    const Module& mb = b.module();
    if (ma.name() != mb.name()) return fail("module names differ: " + ma.name() + " vs " + mb.name());
    if (ma.version() != mb.version()) return fail("module versions differ");
    if (ma.functions().size() != mb.functions().size())
      return fail("function counts differ: " + std::to_string(ma.functions().size()) + " vs " +
                  std::to_string(mb.functions().size()));
    for (size_t i = 0; i < ma.functions().size(); ++i)
      if (!function(*ma.functions()[i], *mb.functions()[i])) return false;
    return true;
  }

 private:
  bool fail(const std::string& w) {
    if (why_) *why_ = w;
    return false;
  }

  bool attr_maps(const AttrMap& a, const AttrMap& b, const std::string& where) {
    auto ia = a.begin();
    auto ib = b.begin();
    for (; ia != a.end() && ib != b.end(); ++ia, ++ib) {
      if (ia->first != ib->first) return fail(where + ": key '" + ia->first + "' vs '" + ib->first + "'");
      if (!attr_equal(ia->second, ib->second))
        return fail(where + ": '" + ia->first + "' is " + irtext::attr_text(ia->second) + " vs " +
                    irtext::attr_text(ib->second));
    }
    if (ia != a.end()) return fail(where + ": '" + ia->first + "' is only in the first");
    if (ib != b.end()) return fail(where + ": '" + ib->first + "' is only in the second");
    return true;
  }

  bool types(const std::vector<TensorType>& a, const std::vector<TensorType>& b, const std::string& where) {
    if (a.size() != b.size())
      return fail(where + ": " + std::to_string(a.size()) + " vs " + std::to_string(b.size()) + " types");
    for (size_t i = 0; i < a.size(); ++i)
      if (a[i] != b[i])
        return fail(where + " " + std::to_string(i) + ": " + a[i].to_string() + " vs " + b[i].to_string());
    return true;
  }

  bool function(const Function& a, const Function& b) {
    std::string where = "@" + a.name();
    if (a.name() != b.name()) return fail("function names differ: @" + a.name() + " vs @" + b.name());
    if (!types(a.result_types(), b.result_types(), where + " result type")) return false;
    map_.clear();
    return block(a.entry(), b.entry(), where);
  }

  bool block(const Block& a, const Block& b, const std::string& where) {
    std::vector<TensorType> ta, tb;
    for (const auto& v : a.arguments()) ta.push_back(v->type());
    for (const auto& v : b.arguments()) tb.push_back(v->type());
    if (!types(ta, tb, where + ": argument")) return false;
    for (size_t i = 0; i < a.num_arguments(); ++i) map_[a.argument(i)] = b.argument(i);
    if (a.operations().size() != b.operations().size())
      return fail(where + ": " + std::to_string(a.operations().size()) + " vs " +
                  std::to_string(b.operations().size()) + " ops");
    for (size_t i = 0; i < a.operations().size(); ++i) {
      const Operation& x = *a.operations()[i];
      const Operation& y = *b.operations()[i];
      std::string w = where + ", op " + std::to_string(i) + " (evoxc." + x.name() + ")";
      if (x.name() != y.name()) return fail(w + ": name differs from evoxc." + y.name());
      if (x.num_operands() != y.num_operands())
        return fail(w + ": " + std::to_string(x.num_operands()) + " vs " + std::to_string(y.num_operands()) +
                    " operands");
      for (size_t k = 0; k < x.num_operands(); ++k) {
        auto it = map_.find(x.operand(k));
        const Value* want = it == map_.end() ? x.operand(k) : it->second;
        if (want != y.operand(k)) return fail(w + ": operand " + std::to_string(k) + " is wired differently");
      }
      std::vector<TensorType> ra, rb;
      for (const auto& r : x.results()) ra.push_back(r->type());
      for (const auto& r : y.results()) rb.push_back(r->type());
      if (!types(ra, rb, w + ": result")) return false;
      for (size_t r = 0; r < x.num_results(); ++r) map_[x.result(r)] = y.result(r);
      if (!attr_maps(x.attributes(), y.attributes(), w + ": attributes")) return false;
      if (locations_ && !same_location(x.location(), y.location()))
        return fail(w + ": location " + x.location().to_string() + " vs " + y.location().to_string());
      if (x.regions().size() != y.regions().size())
        return fail(w + ": " + std::to_string(x.regions().size()) + " vs " + std::to_string(y.regions().size()) +
                    " regions");
      for (size_t r = 0; r < x.regions().size(); ++r)
        if (!block(x.region(r).block(), y.region(r).block(), w + ", region " + std::to_string(r))) return false;
    }
    return true;
  }

  static bool same_location(const Location& a, const Location& b) {
    if (!a.known() && !b.known()) return true;
    return a.file == b.file && a.line == b.line && a.column == b.column;
  }

  bool locations_;
  std::string* why_;
  std::unordered_map<const Value*, const Value*> map_;
};

}  // namespace

void verify_structure(const Graph& g) {
  if (!g.defined()) throw VerifyError("verify: the graph is empty (default-constructed); build it with trace or parse");
  const Module& m = g.module();
  const Function* main = nullptr;
  std::unordered_set<std::string> names;
  for (const auto& f : m.functions()) {
    if (!names.insert(f->name()).second) throw VerifyError("verify: module defines @" + f->name() + " twice");
    if (f->name() == "main") main = f.get();
  }
  if (!main) throw VerifyError("verify: module @" + m.name() + " has no function @main (the entry point)");
  for (const auto& f : m.functions()) FunctionVerifier(*f).run();

  const Operation& ret = *main->entry().terminator();
  auto ret_desc = [&] { return FunctionVerifier(*main).describe(ret); };
  const auto& declared = main->result_types();
  if (ret.num_operands() != declared.size())
    throw VerifyError("verify: " + ret_desc() + " returns " + std::to_string(ret.num_operands()) +
                      " values, but @main declares " + std::to_string(declared.size()) + " results");
  for (size_t i = 0; i < declared.size(); ++i)
    if (ret.operand(i)->type() != declared[i])
      throw VerifyError("verify: " + ret_desc() + ": operand " + std::to_string(i) + " has type " +
                        ret.operand(i)->type().to_string() + ", but @main declares result " + std::to_string(i) +
                        " as " + declared[i].to_string());
  size_t in_leaves = g.input_tree().num_leaves();
  if (main->entry().num_arguments() != in_leaves)
    throw VerifyError("verify: @main has " + std::to_string(main->entry().num_arguments()) +
                      " arguments, but the input structure " + g.input_tree().structure_string() + " has " +
                      std::to_string(in_leaves) + " leaves");
  size_t out_leaves = g.output_tree().num_leaves();
  if (declared.size() != out_leaves)
    throw VerifyError("verify: @main has " + std::to_string(declared.size()) + " results, but the output structure " +
                      g.output_tree().structure_string() + " has " + std::to_string(out_leaves) + " leaves");
}

bool graphs_equal(const Graph& a, const Graph& b, bool compare_locations, std::string* why) {
  return Comparer(compare_locations, why).graphs(a, b);
}

}  // namespace evoxc
