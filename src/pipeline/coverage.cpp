// The coverage matrix, built by walking the registered backends and rule tables.
#include "evoxc/pipeline/coverage.h"

#include <algorithm>
#include <mutex>

#include "evoxc/core/error.h"
#include "evoxc/pipeline/pipeline.h"
#include "evoxc/transforms/rules.h"

namespace evoxc::coverage {
namespace {

// The transforms' columns come first among the registered ones: vmap, jvp, then vjp
// (derived from the jvp and transpose tables).
struct Columns {
  std::mutex mu;
  std::vector<Column> list{
      Column{"vmap", 1, []() -> const RuleTableBase& { return transforms::batch_rules(); }},
      Column{"jvp", 2, []() -> const RuleTableBase& { return transforms::jvp_rules(); }},
      Column{"vjp", 3, []() -> const RuleTableBase& { return transforms::vjp_coverage(); }},
  };
};

Columns& registered() {
  static Columns c;
  return c;
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

bool register_column(std::string name, int position, std::function<const RuleTableBase&()> table) {
  if (name.empty() || !table) throw InternalError("coverage::register_column: a column needs a name and a table");
  Columns& c = registered();
  std::lock_guard<std::mutex> lock(c.mu);
  for (const auto& col : c.list)
    if (col.name == name) throw InternalError("coverage::register_column: column '" + name + "' is registered twice");
  c.list.push_back(Column{std::move(name), position, std::move(table)});
  return true;
}

std::vector<Column> columns() {
  std::vector<Column> out;
  for (const auto& name : backend_names()) {
    out.push_back(Column{name, 0, [name]() -> const RuleTableBase& { return get_backend(name).lowered_ops(); }});
  }
  {
    Columns& c = registered();
    std::lock_guard<std::mutex> lock(c.mu);
    out.insert(out.end(), c.list.begin(), c.list.end());
  }
  std::stable_sort(out.begin(), out.end(), [](const Column& a, const Column& b) {
    return a.position != b.position ? a.position < b.position : a.name < b.name;
  });
  return out;
}

Entry entry(const RuleTableBase& table, const OpDef& op) {
  if (table.has(op.id) || op.terminator) return Entry{Status::Ok, ""};
  if (const std::string* why = table.deferral(op.id)) return Entry{Status::Deferred, *why};
  return Entry{Status::Missing, ""};
}

std::vector<Row> matrix() {
  std::vector<const RuleTableBase*> tables;
  for (const auto& c : columns()) tables.push_back(&c.table());
  std::vector<Row> rows;
  for (const OpDef* def : all_ops()) {
    Row r{def, {}};
    for (const RuleTableBase* t : tables) r.entries.push_back(entry(*t, *def));
    rows.push_back(std::move(r));
  }
  return rows;
}

std::vector<std::string> gaps() {
  std::vector<std::string> out;
  std::vector<Column> cols = columns();
  for (const Row& r : matrix()) {
    for (size_t i = 0; i < cols.size() && i < r.entries.size(); ++i) {
      const Entry& e = r.entries[i];
      if (e.status == Status::Missing)
        out.push_back(r.op->name + ": " + cols[i].name + " is missing (add a rule or a deferral with a reason)");
      else if (e.status == Status::Deferred && e.reason.empty())
        out.push_back(r.op->name + ": " + cols[i].name + " is deferred without a reason");
    }
  }
  return out;
}

}  // namespace evoxc::coverage
