// The subcommands of the `evoxc` tool, as functions so the parsing in main stays thin.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "evoxc/core/error.h"
#include "evoxc/ir/graph.h"

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

struct DotOptions {
  std::string graph;
  std::string output;  // empty: stdout (unless svg is set)
  std::string svg;
};
void cmd_dot(const DotOptions& options, std::ostream& out);

void cmd_bench(bool quick, std::ostream& out);

}  // namespace evoxc::cli
