// The op table of `evoxc ops`: one row per registered op, one column per fact about it.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "evoxc/ops/op_def.h"

namespace evoxc::cli {

// One column: its header and how to fill a cell from an op. The coverage matrix (vmap,
// jvp, vjp, stablehlo, mlir rule tables) extends the table by adding entries here.
struct OpColumn {
  std::string header;
  std::function<std::string(const OpDef&)> cell;
};

struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

// The columns `evoxc ops` prints: op, category, dtypes, attributes, interp.
std::vector<OpColumn> op_columns();
// One row per op of the registry (all_ops(), in its order).
Table build_op_table(const std::vector<OpColumn>& columns = op_columns());
// Aligned plain text, or a GitHub markdown table (with `|` in cells escaped).
std::string render_table(const Table& table, bool markdown);

}  // namespace evoxc::cli
