// Graph: a module plus its input/output pytree structure and snapshotted static values.
#pragma once

#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "evoxc/core/tree.h"
#include "evoxc/ir/ir.h"

namespace evoxc {

// The result of trace and of every transform. Immutable once built, so copies share
// the module and may be read from many threads.
class Graph {
 public:
  Graph() = default;
  // `inputs` has one leaf per argument of main's entry block, `outputs` one leaf per
  // operand of its return; `statics` maps an argument path ("[2]") to the static value
  // that was snapshotted there while tracing.
  Graph(std::shared_ptr<const Module> module, TreeDef inputs, TreeDef outputs, AttrMap statics = {});

  bool defined() const { return module_ != nullptr; }
  const Module& module() const;
  const std::shared_ptr<const Module>& module_ptr() const { return module_; }
  const Function& main() const { return module().main(); }
  const TreeDef& input_tree() const { return inputs_; }
  const TreeDef& output_tree() const { return outputs_; }
  const AttrMap& static_values() const { return statics_; }

  size_t num_inputs() const;
  size_t num_outputs() const;
  std::vector<TensorSpec> input_specs() const;
  std::vector<TensorSpec> output_specs() const;
  // Paths of the leaves in flattening order: "[0]", "[1]['x']".
  std::vector<std::string> input_paths() const;
  std::vector<std::string> output_paths() const;

  // The printed EvoXIR module (see docs/ir.md); parse(to_string()) rebuilds an equal graph.
  std::string to_string() const;
  // "<Graph 2 tensor inputs, 0 static values>"
  std::string summary() const;
  void print(std::ostream& os) const;
  void print() const;

  static Graph parse(std::string_view text);

  // .evoxcgraph: versioned JSON. save() writes atomically (temp file + rename);
  // load() raises PersistenceError on a wrong version or a malformed file.
  std::string to_json() const;
  static Graph from_json(std::string_view json);
  void save(const std::string& path) const;
  static Graph load(const std::string& path);

 private:
  std::shared_ptr<const Module> module_;
  TreeDef inputs_;
  TreeDef outputs_;
  AttrMap statics_;
};

// Paths of the leaves of a tree in flattening order.
std::vector<std::string> tree_leaf_paths(const TreeDef& t);
// Parses the text of TreeDef::structure_string(); ParseError on bad text.
TreeDef parse_tree_structure(std::string_view text);

// Structural checks that need no op knowledge: SSA dominance (every operand defined
// before use in its block or an enclosing one), results owned by their op, every block
// ends in evoxc.return, main's return matches its declared result types, the trees
// match the arity of main. VerifyError naming the op and location on failure. The
// full verifier (ops/verify.h) adds per-op type and attribute checks.
void verify_structure(const Graph& g);

// Structural equality of two graphs (ops, types, attributes, trees, statics; not locations
// unless `compare_locations`). Used by round-trip tests.
bool graphs_equal(const Graph& a, const Graph& b, bool compare_locations = true, std::string* why = nullptr);

}  // namespace evoxc
