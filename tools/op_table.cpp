// Builds and renders the op table from the registry, so it can never drift from the catalogue.
#include "op_table.h"

#include <algorithm>

#include "evoxc/pipeline/coverage.h"

namespace evoxc::cli {

namespace {

// "deferred [n]": note n holds the reason; equal reasons share one note.
std::string coverage_cell(const coverage::Entry& e, Table& table) {
  switch (e.status) {
    case coverage::Status::Ok: return "\u2713";
    case coverage::Status::Missing: return "MISSING";
    case coverage::Status::Deferred: break;
  }
  std::string note = e.reason.empty() ? std::string("(no reason given)") : e.reason;
  size_t n = 0;
  while (n < table.notes.size() && table.notes[n].substr(table.notes[n].find(' ') + 1) != note) ++n;
  if (n == table.notes.size()) table.notes.push_back("[" + std::to_string(n + 1) + "] " + note);
  return "deferred [" + std::to_string(n + 1) + "]";
}

// Columns align on characters, not bytes: a UTF-8 continuation byte adds no width.
size_t display_width(const std::string& s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

}  // namespace

std::vector<OpColumn> op_columns() {
  std::vector<OpColumn> cols = {
      {"op", [](const OpDef& d, Table&) { return d.name; }},
      {"category", [](const OpDef& d, Table&) { return std::string(op_category_name(d.category)); }},
      {"dtypes", [](const OpDef& d, Table&) { return std::string(dtype_class_name(d.operand_dtypes)); }},
      {"attributes",
       [](const OpDef& d, Table&) {
         // "axes: ints, keepdims: bool"; an optional attribute is marked with '?'.
         std::string s;
         for (const auto& a : d.attrs) {
           if (!s.empty()) s += ", ";
           s += a.name + (a.required ? "" : "?") + ": " + attr_kind_name(a.kind);
           for (AttrKind k : a.also) s += std::string("|") + attr_kind_name(k);
         }
         return s.empty() ? std::string("-") : s;
       }},
  };
  // One column per registered rule table (every backend, then the transforms' tables).
  for (coverage::Column& c : coverage::columns())
    cols.push_back({c.name, [table = std::move(c.table)](const OpDef& d, Table& t) {
                      return coverage_cell(coverage::entry(table(), d), t);
                    }});
  return cols;
}

Table build_op_table(const std::vector<OpColumn>& columns) {
  Table t;
  for (const auto& c : columns) t.header.push_back(c.header);
  for (const OpDef* def : all_ops()) {
    std::vector<std::string> row;
    for (const auto& c : columns) row.push_back(c.cell(*def, t));
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
    if (!table.notes.empty()) out += "\n";
    for (const auto& n : table.notes) out += "- " + n + "\n";
    return out;
  }
  std::vector<size_t> width(table.header.size(), 0);
  auto measure = [&](const std::vector<std::string>& cells) {
    for (size_t i = 0; i < cells.size() && i < width.size(); ++i)
      width[i] = std::max(width[i], display_width(cells[i]));
  };
  measure(table.header);
  for (const auto& r : table.rows) measure(r);
  auto line = [&](const std::vector<std::string>& cells) {
    std::string l;
    for (size_t i = 0; i < cells.size(); ++i) {
      l += cells[i];
      if (i + 1 < cells.size()) l += std::string(width[i] - display_width(cells[i]) + 2, ' ');
    }
    out += l + "\n";
  };
  line(table.header);
  for (const auto& r : table.rows) line(r);
  if (!table.notes.empty()) out += "\n";
  for (const auto& n : table.notes) out += n + "\n";
  return out;
}

}  // namespace evoxc::cli
