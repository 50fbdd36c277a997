// Renders main's dataflow as DOT: inputs, ops and outputs as nodes, operands as edges.
#include "graph_dot.h"

#include <map>

namespace evoxc::cli {
namespace {

// A DOT double-quoted string: quotes and backslashes escaped, newlines as \n.
std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string display_path(const std::string& p) { return p.empty() ? "<root>" : p; }

}  // namespace

std::string graph_to_dot(const Graph& graph) {
  const Block& entry = graph.main().entry();
  std::string out = "digraph " + quote(graph.module().name()) + " {\n  rankdir=TB;\n  node [fontname=\"monospace\"];\n";
  std::map<const Value*, std::pair<std::string, int>> producer;  // value -> node id, result number (-1: single)
  std::vector<std::string> in_paths = graph.input_paths();
  for (size_t i = 0; i < entry.num_arguments(); ++i) {
    const Value* v = entry.argument(i);
    std::string id = "in" + std::to_string(i);
    std::string path = i < in_paths.size() ? display_path(in_paths[i]) : "%arg" + std::to_string(i);
    out += "  " + id + " [shape=box, style=filled, fillcolor=\"#dde8ff\", label=" +
           quote("input " + path + "\n" + v->type().to_string()) + "];\n";
    producer[v] = {id, -1};
  }
  std::vector<std::string> out_paths = graph.output_paths();
  auto edge = [&](const Value* v, const std::string& to) {
    auto it = producer.find(v);
    if (it == producer.end()) return;  // not defined in the entry block (cannot happen in a verified graph)
    out += "  " + it->second.first + " -> " + to;
    if (it->second.second >= 0) out += " [label=" + quote("#" + std::to_string(it->second.second)) + "]";
    out += ";\n";
  };
  size_t n = 0;
  for (const auto& op : entry.operations()) {
    if (op->is_terminator()) {
      for (size_t i = 0; i < op->num_operands(); ++i) {
        std::string id = "out" + std::to_string(i);
        std::string path = i < out_paths.size() ? display_path(out_paths[i]) : std::to_string(i);
        out += "  " + id + " [shape=box, style=filled, fillcolor=\"#ddffdd\", label=" +
               quote("output " + path + "\n" + op->operand(i)->type().to_string()) + "];\n";
        edge(op->operand(i), id);
      }
      continue;
    }
    std::string id = "op" + std::to_string(n++);
    std::string label = op->name();
    for (const auto& r : op->results()) label += "\n" + r->type().to_string();
    if (!op->regions().empty()) label += "\n(" + std::to_string(op->regions().size()) + " regions)";
    out += "  " + id + " [label=" + quote(label) + "];\n";
    for (const Value* v : op->operands()) edge(v, id);
    for (size_t r = 0; r < op->num_results(); ++r)
      producer[op->result(r)] = {id, op->num_results() > 1 ? static_cast<int>(r) : -1};
  }
  return out + "}\n";
}

}  // namespace evoxc::cli
