// RuleTable: the one mechanism every layer uses to attach behaviour to ops — a dense array
// indexed by op id, filled per family by helpers, whose miss raises the owner's error.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "evoxc/core/error.h"
#include "evoxc/ops/op_def.h"

namespace evoxc {

// What the coverage matrix needs to know of a table, whatever its rule type.
class RuleTableBase {
 public:
  explicit RuleTableBase(std::string name) : name_(std::move(name)) {}
  virtual ~RuleTableBase() = default;
  RuleTableBase(const RuleTableBase&) = delete;
  RuleTableBase& operator=(const RuleTableBase&) = delete;

  // The table's name: "interp", "vmap", "jvp", "stablehlo", ...
  const std::string& name() const { return name_; }
  virtual bool has(uint32_t id) const = 0;
  // Why the op has deliberately no rule; nullptr when it has none recorded.
  virtual const std::string* deferral(uint32_t id) const = 0;

 private:
  std::string name_;
};

// Rules of type `Rule` keyed by op id. `Error` is the owning layer's error type
// (BackendError for a backend, TransformError for a transform): get() raises it, naming
// the op, its location, this table and the deferral reason where one was recorded.
// Filling happens once, when the owning layer builds the table; lookups are then
// read-only and safe from any thread.
template <typename Rule, typename Error>
class RuleTable final : public RuleTableBase {
 public:
  explicit RuleTable(std::string name) : RuleTableBase(std::move(name)), rules_(num_ops()), deferred_(num_ops()) {}

  // Sets an op's rule. InternalError for an unknown op or a second rule for one op.
  void set(const OpDef& def, Rule rule) {
    if (rules_[def.id]) throw InternalError(name() + " table: op '" + def.name + "' has two rules");
    rules_[def.id] = std::move(rule);
  }
  void set(std::string_view op, Rule rule) { set(get_op(op), std::move(rule)); }
  // Records that the op has deliberately no rule here, and why (shown in the coverage
  // matrix and appended to the error).
  void defer(std::string_view op, std::string reason) { deferred_[get_op(op).id] = std::move(reason); }

  // The rule, or nullptr.
  const Rule* find(uint32_t id) const { return id < rules_.size() && rules_[id] ? &*rules_[id] : nullptr; }
  const Rule* find(const Operation& op) const { return find(op.op_id()); }
  // The rule, or Error "<table>: evoxc.<op> at <loc> has no <table> rule[: <reason>]".
  const Rule& get(const Operation& op) const {
    if (const Rule* r = find(op)) return *r;
    throw Error(miss_message(op.op_id(), op.location().to_string()));
  }
  const Rule& get(const OpDef& def) const {
    if (const Rule* r = find(def.id)) return *r;
    throw Error(miss_message(def.id, ""));
  }

  bool has(uint32_t id) const override { return find(id) != nullptr; }
  const std::string* deferral(uint32_t id) const override {
    return id < deferred_.size() && !deferred_[id].empty() ? &deferred_[id] : nullptr;
  }

 private:
  std::string miss_message(uint32_t id, const std::string& where) const {
    std::string m = name() + ": evoxc." + op_def(id).name;
    if (!where.empty()) m += " at " + where;
    m += " has no " + name() + " rule";
    if (const std::string* why = deferral(id)) m += ": " + *why;
    return m;
  }
  std::vector<std::optional<Rule>> rules_;
  std::vector<std::string> deferred_;
};

// Installs `rule` for every op of `category` that has no rule yet (a family helper).
template <typename Rule, typename Error>
void set_for_category(RuleTable<Rule, Error>& t, OpCategory category, const Rule& rule) {
  for (const OpDef* d : all_ops())
    if (d->category == category && !t.has(d->id)) t.set(*d, rule);
}

}  // namespace evoxc
