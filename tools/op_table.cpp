// Builds and renders the op table from the registry, so it can never drift from the catalogue.
#include "op_table.h"

#include <algorithm>

#include "evoxc/interp/interp.h"

namespace evoxc::cli {

std::vector<OpColumn> op_columns() {
  return {
      {"op", [](const OpDef& d) { return d.name; }},
      {"category", [](const OpDef& d) { return std::string(op_category_name(d.category)); }},
      {"dtypes", [](const OpDef& d) { return std::string(dtype_class_name(d.operand_dtypes)); }},
      {"attributes",
       [](const OpDef& d) {
         // "axes: ints, keepdims: bool"; an optional attribute is marked with '?'.
         std::string s;
         for (const auto& a : d.attrs) {
           if (!s.empty()) s += ", ";
           s += a.name + (a.required ? "" : "?") + ": " + attr_kind_name(a.kind);
           for (AttrKind k : a.also) s += std::string("|") + attr_kind_name(k);
         }
         return s.empty() ? std::string("-") : s;
       }},
      {"interp", [](const OpDef& d) { return std::string(interp::has_kernel(d.name) ? "yes" : "no"); }},
  };
}

Table build_op_table(const std::vector<OpColumn>& columns) {
  Table t;
  for (const auto& c : columns) t.header.push_back(c.header);
  for (const OpDef* def : all_ops()) {
    std::vector<std::string> row;
    for (const auto& c : columns) row.push_back(c.cell(*def));
    t.rows.push_back(std::move(row));
  }
  return t;
}

std::string render_table(const Table& table, bool markdown) {
  std::string out;
  if (markdown) {
    auto line = [&](const std::vector<std::string>& cells) {
      out += "|";
      for (const auto& c : cells) {
        std::string e;
        for (char ch : c) e += ch == '|' ? std::string("\\|") : std::string(1, ch);
        out += " " + e + " |";
      }
      out += "\n";
    };
    line(table.header);
    out += "|";
    for (size_t i = 0; i < table.header.size(); ++i) out += "---|";
    out += "\n";
    for (const auto& r : table.rows) line(r);
    return out;
  }
  std::vector<size_t> width(table.header.size(), 0);
  auto measure = [&](const std::vector<std::string>& cells) {
    for (size_t i = 0; i < cells.size() && i < width.size(); ++i) width[i] = std::max(width[i], cells[i].size());
  };
  measure(table.header);
  for (const auto& r : table.rows) measure(r);
  auto line = [&](const std::vector<std::string>& cells) {
    std::string l;
    for (size_t i = 0; i < cells.size(); ++i) {
      l += cells[i];
      if (i + 1 < cells.size()) l += std::string(width[i] - cells[i].size() + 2, ' ');
    }
    out += l + "\n";
  };
  line(table.header);
  for (const auto& r : table.rows) line(r);
  return out;
}

}  // namespace evoxc::cli
