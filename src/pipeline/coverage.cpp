// The coverage matrix: which rule tables have a rule for each op, and why the others do not yet.
#include "evoxc/pipeline/coverage.h"

#include "evoxc/interp/interp.h"

namespace evoxc::coverage {
namespace {

Entry ok() { return Entry{Status::Ok, ""}; }
Entry deferred(std::string reason) { return Entry{Status::Deferred, std::move(reason)}; }

Entry interp_entry(const OpDef& d) {
  // The executor itself handles the terminator: it binds the returned values to the outputs.
  if (d.category == OpCategory::Terminator) return ok();
  if (interp::has_kernel(d.name)) return ok();
  return Entry{Status::Missing, ""};
}

// The transforms and the compiler backends do not exist yet; every op defers to the step
// that adds them. An op excluded on purpose later gets its own reason in that table.
std::function<Entry(const OpDef&)> later(std::string reason) {
  return [reason = std::move(reason)](const OpDef&) { return deferred(reason); };
}

}  // namespace

const char* status_name(Status s) {
  switch (s) {
    case Status::Ok: return "ok";
    case Status::Deferred: return "deferred";
    case Status::Missing: return "missing";
  }
  return "missing";
}

const std::vector<RuleTable>& rule_tables() {
  static const std::vector<RuleTable> tables = {
      {"interp", interp_entry},
      {"vmap", later("no vmap rules yet: the transforms (batching rules per op family) are a later issue")},
      {"jvp", later("no jvp rules yet: the transforms (forward-mode differentiation) are a later issue")},
      {"vjp", later("no vjp rules yet: reverse mode (jvp + transpose rules) is a later issue")},
      {"stablehlo", later("no StableHLO backend yet: lowering to StableHLO is a later issue")},
      {"mlir", later("no MLIR/LLVM backend yet: the compiler backends are a later issue")},
  };
  return tables;
}

std::vector<Row> matrix() {
  std::vector<Row> rows;
  for (const OpDef* def : all_ops()) {
    Row r{def, {}};
    for (const auto& t : rule_tables()) r.entries.push_back(t.entry(*def));
    rows.push_back(std::move(r));
  }
  return rows;
}

std::vector<std::string> gaps() {
  std::vector<std::string> out;
  const auto& tables = rule_tables();
  for (const Row& r : matrix()) {
    for (size_t i = 0; i < tables.size(); ++i) {
      const Entry& e = r.entries[i];
      if (e.status == Status::Missing)
        out.push_back(r.op->name + ": " + tables[i].name + " is missing (add a rule or a deferral with a reason)");
      else if (e.status == Status::Deferred && e.reason.empty())
        out.push_back(r.op->name + ": " + tables[i].name + " is deferred without a reason");
    }
  }
  return out;
}

}  // namespace evoxc::coverage
