// The coverage matrix (docs/architecture.md, "Rule tables"): for every registered op, whether each registered rule
// table has a rule, a deferral with a reason, or nothing. Its columns are a registry, not a list.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "evoxc/ops/op_def.h"
#include "evoxc/ops/rule_table.h"

namespace evoxc::coverage {

enum class Status : uint8_t {
  Ok,        // the table has a rule (interp: a kernel) for the op
  Deferred,  // no rule, on purpose, for `reason` (which names the step that adds it)
  Missing,   // no rule and no reason: a gap the coverage test reports
};
const char* status_name(Status s);  // "ok", "deferred", "missing"

struct Entry {
  Status status = Status::Missing;
  std::string reason;  // required for Deferred; empty otherwise
};

// One column: a rule table, fetched when the matrix is built (so its owner may build it lazily).
struct Column {
  std::string name;
  int position = 0;  // columns are ordered by position, then name
  std::function<const RuleTableBase&()> table;
};

// Every registered backend is a column at position 0 (its capabilities' rule table). Other
// layers add theirs here (the transforms: vmap, jvp, vjp), from a namespace-scope static of
// the object that owns the table. InternalError when the name is taken. Returns true, so it
// can initialise a static.
bool register_column(std::string name, int position, std::function<const RuleTableBase&()> table);

// The columns in order: the backends, then the registered ones.
std::vector<Column> columns();

// How a table answers for an op: Ok with a rule, Deferred with a recorded reason, else
// Missing. The block terminator is Ok everywhere: every backend and transform binds the
// returned values itself.
Entry entry(const RuleTableBase& table, const OpDef& op);

struct Row {
  const OpDef* op;
  std::vector<Entry> entries;  // one per columns() entry, same order
};
// One row per op of all_ops(), in registry order.
std::vector<Row> matrix();

// Human-readable gaps: "<op>: <column> is missing", one per line; empty when every op is covered.
std::vector<std::string> gaps();

}  // namespace evoxc::coverage
