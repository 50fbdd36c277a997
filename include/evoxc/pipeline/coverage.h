// The coverage matrix (DESIGN §5): for every registered op, whether each rule table has a rule, a deferral with a
// reason, or nothing.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "evoxc/ops/op_def.h"

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

// One rule table: its name and how it answers for an op. A later layer that adds
// rules (vmap, jvp, vjp, stablehlo, mlir) replaces its table's `entry` function here.
struct RuleTable {
  std::string name;
  std::function<Entry(const OpDef&)> entry;
};

// The tables, in column order: interp, vmap, jvp, vjp, stablehlo, mlir.
const std::vector<RuleTable>& rule_tables();

struct Row {
  const OpDef* op;
  std::vector<Entry> entries;  // one per rule_tables() entry, same order
};
// One row per op of all_ops(), in registry order.
std::vector<Row> matrix();

// Human-readable gaps: "<op>: <table> is missing" or "<op>: <table> is deferred without a
// reason", one per line; empty when every op is covered.
std::vector<std::string> gaps();

}  // namespace evoxc::coverage
