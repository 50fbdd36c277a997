// The subcommands of the `evoxc` tool, as functions so the parsing in main stays thin.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "evoxc/core/error.h"
#include "evoxc/ir/graph.h"
#include "evoxc/transforms/transforms.h"

namespace evoxc::cli {

// A user mistake the tool itself detects (a missing input, no `dot` program); exit code 1.
class CliError : public Error {
 public:
  explicit CliError(const std::string& what) : Error(what) {}
};

// Loads a graph file: .evoxcgraph JSON, or EvoXIR text when the file does not start with '{'.
Graph load_graph(const std::string& path);

void cmd_print(const std::string& path, std::ostream& out);
void cmd_verify(const std::string& path, std::ostream& out);
// The lowered program's text (lower(graph, backend).text()).
void cmd_lower(const std::string& path, const std::string& backend, std::ostream& out);
// "interp, stablehlo": the backends of this build.
std::string backend_list();

// The `run` subcommand's arguments (evoxc::RunOptions is what they become for the call).
struct RunArgs {
  std::string graph;
  std::vector<std::string> inputs;  // "PATH=FILE.npy"
  std::string output_dir = ".";
  double timeout_s = 0;        // --timeout: 0 = none
  int64_t max_iterations = 0;  // --max-iterations: 0 = unlimited
};
void cmd_run(const RunArgs& args, std::ostream& out);

void cmd_ops(bool markdown, std::ostream& out);
void cmd_devices(std::ostream& out);
// Each backend and its capabilities (also the second part of cmd_devices).
void cmd_backends(std::ostream& out);

struct DotOptions {
  std::string graph;
  std::string output;  // empty: stdout (unless svg is set)
  std::string svg;
};
void cmd_dot(const DotOptions& options, std::ostream& out);

void cmd_bench(bool quick, std::ostream& out);

// The `transform` subcommand's arguments; an empty option string means the option was not given.
struct TransformArgs {
  std::string transform;  // a name of transform_names()
  std::string graph;
  std::string output;      // .evoxcgraph: Graph::save; "-": EvoXIR text on stdout; else EvoXIR text
  std::string argnums;     // --argnums "0" (one argument) or "0,2" / "0," (a tuple)
  bool has_aux = false;    // --has-aux
  std::string in_axes;     // --in-axes, parse_axis_tree's syntax
  std::string out_axes;    // --out-axes
  std::string batch_size;  // --batch-size: N or a symbol name
};
// vmap, vectorize, jvp, vjp, grad, value_and_grad, jacfwd, jacrev, hessian.
const std::vector<std::string>& transform_names();
// The usage mistake in `args` that needs no graph (an option the transform does not take), or "".
std::string transform_usage_error(const TransformArgs& args);
void cmd_transform(const TransformArgs& args, std::ostream& out);

// The option texts of `transform`; ParseError saying what is wrong and where.
// "0", "-1", "none", "(0, none, {'w': 1})", "[0, 1]": an int is an axis, none (or None) is "not mapped";
// tuples need a trailing comma for one element, "(0,)", as printed trees have; dict keys are quoted.
AxisTree parse_axis_tree(std::string_view text);
// "1": one argument (its gradient alone); "0,2" or "1,": a tuple of arguments, as JAX reads argnums.
ArgNums parse_argnums(std::string_view text);
// "8": a constant batch extent (positive); "N": a symbol; "" (not given): nullopt, a fresh symbol.
std::optional<DimExpr> parse_batch_size(std::string_view text);

}  // namespace evoxc::cli
