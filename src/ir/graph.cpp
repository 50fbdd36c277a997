// Graph accessors and summaries; printing, parsing and JSON live in their own files.
#include "evoxc/ir/graph.h"

#include <iostream>

#include "evoxc/core/error.h"

namespace evoxc {

Graph::Graph(std::shared_ptr<const Module> module, TreeDef inputs, TreeDef outputs, AttrMap statics)
    : module_(std::move(module)),
      inputs_(std::move(inputs)),
      outputs_(std::move(outputs)),
      statics_(std::move(statics)) {}

const Module& Graph::module() const {
  if (!module_) throw ValidationError("Graph: empty graph (default-constructed)");
  return *module_;
}

size_t Graph::num_inputs() const { return main().entry().num_arguments(); }
size_t Graph::num_outputs() const { return main().result_types().size(); }

std::vector<TensorSpec> Graph::input_specs() const {
  // One spec per input leaf, which callers index by input_paths(): an unverified graph whose
  // tree disagrees with @main gets verify's error rather than specs that do not line up.
  const Block& entry = main().entry();
  if (size_t leaves = inputs_.num_leaves(); leaves != entry.num_arguments())
    throw VerifyError("verify: @main has " + std::to_string(entry.num_arguments()) +
                      " arguments, but the input structure " + inputs_.structure_string() + " has " +
                      std::to_string(leaves) + " leaves");
  std::vector<TensorSpec> out;
  for (const auto& a : entry.arguments()) out.emplace_back(a->shape(), a->dtype());
  return out;
}
std::vector<TensorSpec> Graph::output_specs() const {
  std::vector<TensorSpec> out;
  for (const auto& t : main().result_types()) out.emplace_back(t.shape, t.dtype);
  return out;
}

namespace {
void collect_paths(const TreeDef& t, const std::string& path, std::vector<std::string>& out) {
  if (t.is_leaf()) {
    out.push_back(path.empty() ? "<root>" : path);
    return;
  }
  for (size_t i = 0; i < t.size(); ++i) {
    std::string p = path + (t.kind() == TreeKind::Dict ? "['" + t.keys()[i] + "']" : "[" + std::to_string(i) + "]");
    collect_paths(t.children()[i], p, out);
  }
}
}  // namespace

std::vector<std::string> tree_leaf_paths(const TreeDef& t) {
  std::vector<std::string> out;
  collect_paths(t, "", out);
  return out;
}

std::vector<std::string> Graph::input_paths() const { return tree_leaf_paths(inputs_); }
std::vector<std::string> Graph::output_paths() const { return tree_leaf_paths(outputs_); }

std::string Graph::summary() const {
  return "<Graph " + std::to_string(num_inputs()) + " tensor inputs, " + std::to_string(statics_.size()) +
         " static values>";
}

void Graph::print(std::ostream& os) const { os << to_string(); }
void Graph::print() const { print(std::cout); }

}  // namespace evoxc
