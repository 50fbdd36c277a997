// The `evoxc` command-line tool: argument parsing and the one-line error contract.
#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdlib>
#include <iostream>
#include <string>

#include "commands.h"

namespace {

// Every failure is one line on stderr, so scripts and tests can match it.
int report(const std::string& what, int code) {
  std::string line = what;
  for (char& c : line)
    if (c == '\n' || c == '\r') c = ' ';
  std::cerr << "evoxc: error: " << line << "\n";
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  namespace cli = evoxc::cli;
  CLI::App app{"evoxc: inspect, verify, run, transform and benchmark evoxc graphs (.evoxcgraph files)", "evoxc"};
  app.require_subcommand(1);

  std::string graph_path;
  CLI::App* print = app.add_subcommand("print", "Print a graph as EvoXIR text");
  print->add_option("FILE", graph_path, "a .evoxcgraph file (or EvoXIR text)")->required();

  CLI::App* verify = app.add_subcommand("verify", "Run the full verifier on a graph; prints \"ok: ...\" or the error");
  verify->add_option("FILE", graph_path, "a .evoxcgraph file (or EvoXIR text)")->required();

  std::string lower_backend = "interp";
  CLI::App* lower = app.add_subcommand("lower", "Print a graph lowered for a backend (stablehlo: StableHLO MLIR text)");
  lower->add_option("FILE", graph_path, "a .evoxcgraph file (or EvoXIR text)")->required();
  lower->add_option("-b,--backend", lower_backend, "the backend: " + cli::backend_list())->capture_default_str();

  cli::RunArgs run_opts;
  CLI::App* run = app.add_subcommand(
      "run", "Run a graph on the interpreter with .npy inputs; writes DIR/out<i>.npy per output leaf");
  run->add_option("FILE", run_opts.graph, "a .evoxcgraph file (or EvoXIR text)")->required();
  run->add_option("-i,--input", run_opts.inputs,
                  "PATH=FILE.npy for each input leaf; PATH as `evoxc print` names it ([0], [1]['x']) or the leaf's "
                  "flat index (0, 1)")
      ->allow_extra_args(false);
  run->add_option("-o,--output-dir", run_opts.output_dir, "folder for out<i>.npy (default: .)");
  run->add_option("--timeout", run_opts.timeout_s,
                  "stop the run after SECONDS (checked at loop iterations; loading is not counted); "
                  "default: no limit")
      ->type_name("SECONDS")
      ->check([](const std::string& text) -> std::string {
        // Also refuses nan and what would overflow the clock (CLI::PositiveNumber lets nan through).
        char* end = nullptr;
        double v = std::strtod(text.c_str(), &end);
        bool ok = end != text.c_str() && *end == '\0' && v > 0 && v <= 1e9;
        return ok ? "" : "must be a number of seconds in (0, 1e9], got '" + text + "'";
      });
  run->add_option("--max-iterations", run_opts.max_iterations,
                  "stop the run after N loop-body iterations, all loops counted together; default: no limit")
      ->type_name("N")
      ->check([](const std::string& text) -> std::string {
        char* end = nullptr;
        errno = 0;
        long long v = std::strtoll(text.c_str(), &end, 10);
        bool ok = end != text.c_str() && *end == '\0' && errno == 0 && v > 0;
        return ok ? "" : "must be a positive whole number, got '" + text + "'";
      });

  bool markdown = false;
  CLI::App* ops = app.add_subcommand(
      "ops", "List the op catalogue with dtypes, attributes and the coverage of every registered rule table");
  ops->add_flag("--markdown", markdown, "print a markdown table");

  CLI::App* devices = app.add_subcommand("devices", "List the devices and backends of this build");
  CLI::App* backends = app.add_subcommand("backends", "List the backends of this build and what each can do");

  cli::DotOptions dot_opts;
  CLI::App* dot = app.add_subcommand("dot", "Write the graph's main function as Graphviz DOT");
  dot->add_option("FILE", dot_opts.graph, "a .evoxcgraph file (or EvoXIR text)")->required();
  dot->add_option("-o,--output", dot_opts.output, "write the DOT text here (default: stdout)");
  dot->add_option("--svg", dot_opts.svg, "also render an SVG with Graphviz's `dot -Tsvg`");

  bool quick = false;
  CLI::App* bench = app.add_subcommand("bench", "Time the benchmark workloads on the interpreter");
  bench->add_flag("--quick", quick, "shorter timing batches");

  cli::TransformArgs tf_opts;
  CLI::App* transform =
      app.add_subcommand("transform", "Transform a graph (vmap, jvp, vjp, grad, ...) and write the transformed graph");
  // An option's text is checked as it is parsed, so a malformed one is a usage error (exit code 2)
  // found before the graph is read; a well-formed one that does not fit the graph is the
  // transform's TransformError (exit code 1).
  auto text_check = [](auto parse) {
    return [parse](const std::string& text) -> std::string {
      try {
        parse(text);
        return "";
      } catch (const evoxc::Error& e) {
        return e.what();
      }
    };
  };
  transform
      ->add_option("TRANSFORM", tf_opts.transform,
                   "vmap (or vectorize), jvp, vjp, grad, value_and_grad, jacfwd, jacrev or hessian")
      ->required()
      ->check([](const std::string& name) -> std::string {
        for (const auto& n : cli::transform_names())
          if (n == name) return "";
        std::string known;
        for (const auto& n : cli::transform_names()) known += (known.empty() ? "" : ", ") + n;
        return "unknown transform '" + name + "' (known: " + known + ")";
      });
  transform->add_option("FILE", tf_opts.graph, "a .evoxcgraph file (or EvoXIR text)")->required();
  transform
      ->add_option("-o,--output", tf_opts.output,
                   "where to write the result: FILE.evoxcgraph (JSON), any other name for EvoXIR text, - for stdout")
      ->required();
  transform
      ->add_option("--argnums", tf_opts.argnums,
                   "grad, value_and_grad, jacfwd, jacrev, hessian: the arguments to differentiate; one index (1) "
                   "gives that argument's result alone, a comma-separated list (0,2 or 1,) a tuple; default 0")
      ->type_name("I[,J...]")
      ->check(text_check(cli::parse_argnums));
  transform->add_flag("--has-aux", tf_opts.has_aux,
                      "grad, value_and_grad: the graph returns (loss, aux); aux is passed through");
  transform
      ->add_option("--in-axes", tf_opts.in_axes,
                   "vmap: the mapped axis of each input, a prefix tree of the input tree: an int, none (not mapped), "
                   "or a tuple/list/dict of them, e.g. \"(0, none, {'w': 1})\"; default 0")
      ->type_name("TREE")
      ->check(text_check(cli::parse_axis_tree));
  transform
      ->add_option("--out-axes", tf_opts.out_axes,
                   "vmap: where each output gets the batch axis, a prefix tree of the output tree; default 0")
      ->type_name("TREE")
      ->check(text_check(cli::parse_axis_tree));
  transform
      ->add_option("--batch-size", tf_opts.batch_size,
                   "vmap: the batch extent, a positive number or a symbol name; default a fresh symbol (B, B1, ...)")
      ->type_name("N|NAME")
      ->check(text_check(cli::parse_batch_size));

  // CLI11 reports an unknown subcommand as an unexpected argument; say what it is.
  if (argc > 1 && argv[1][0] != '-') {
    std::string name = argv[1];
    bool known = false;
    std::string names;
    for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
      known = known || sub->get_name() == name;
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known) return report("unknown subcommand '" + name + "' (known: " + names + "; see 'evoxc --help')", 2);
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    return report(std::string(e.what()) + " (see 'evoxc " +
                      (app.get_subcommands().empty() ? std::string() : app.get_subcommands()[0]->get_name() + " ") +
                      "--help')",
                  2);
  }

  // Options the chosen transform does not take are usage errors too.
  if (*transform) {
    std::string usage = cli::transform_usage_error(tf_opts);
    if (!usage.empty()) return report(usage + " (see 'evoxc transform --help')", 2);
  }

  try {
    if (*print) cli::cmd_print(graph_path, std::cout);
    if (*verify) cli::cmd_verify(graph_path, std::cout);
    if (*lower) cli::cmd_lower(graph_path, lower_backend, std::cout);
    if (*run) cli::cmd_run(run_opts, std::cout);
    if (*ops) cli::cmd_ops(markdown, std::cout);
    if (*devices) cli::cmd_devices(std::cout);
    if (*backends) cli::cmd_backends(std::cout);
    if (*dot) cli::cmd_dot(dot_opts, std::cout);
    if (*bench) cli::cmd_bench(quick, std::cout);
    if (*transform) cli::cmd_transform(tf_opts, std::cout);
  } catch (const evoxc::InternalError& e) {
    return report(std::string("internal error (please report it): ") + e.what(), 1);
  } catch (const evoxc::Error& e) {
    return report(e.what(), 1);
  } catch (const std::exception& e) {
    return report(e.what(), 1);
  }
  std::cout.flush();
  return std::cout ? 0 : report("cannot write to stdout", 1);
}
