// The op table of `evoxc ops`: one row per registered op, one column per fact about it.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "evoxc/ops/op_def.h"

namespace evoxc::cli {

struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  // Lines printed after the table (the numbered deferral reasons cells refer to).
  std::vector<std::string> notes;
};

// One column: its header and how to fill a cell from an op. A cell may add a line to the
// table's notes (a coverage cell shows "deferred [n]" and puts its reason in note n).
struct OpColumn {
  std::string header;
  std::function<std::string(const OpDef&, Table& table)> cell;
};

// The columns `evoxc ops` prints: op, category, dtypes, attributes, then one per registered
// rule table of the coverage matrix (coverage::columns(): each backend, then the transforms):
// "✓", "deferred [n]" or "MISSING".
std::vector<OpColumn> op_columns();
// One row per op of the registry (all_ops(), in its order).
Table build_op_table(const std::vector<OpColumn>& columns = op_columns());
// Aligned plain text, or a GitHub markdown table (with `|` in cells escaped), then the notes.
std::string render_table(const Table& table, bool markdown);

}  // namespace evoxc::cli
