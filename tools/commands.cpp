// The subcommands of the `evoxc` tool: print, verify, run, ops, devices, dot, bench, transform.
#include "commands.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <map>
#include <ostream>
#include <sstream>

#include "evoxc/core/file_io.h"
#if EVOXC_HAS_XLA
#include "evoxc/backends/xla.h"
#endif
#include "evoxc/core/limits.h"
#include "evoxc/interp/interp.h"
#include "evoxc/io/npy.h"
#include "evoxc/ops/op_def.h"
#include "evoxc/pipeline/pipeline.h"
#include "graph_dot.h"
#include "op_table.h"
#include "workloads.h"

extern char** environ;

namespace evoxc::cli {
namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) s += ",";
  return s + ")";
}

std::string display_path(const std::string& p) { return p.empty() ? "<root>" : p; }

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string s;
  for (size_t i = 0; i < items.size(); ++i) s += (i ? sep : "") + items[i];
  return s;
}

// Maps an --input name to a leaf index: an exact path ("[1]['x']"; "<root>" or "" for a
// graph whose input is one bare leaf) or the leaf's flat index ("1").
size_t resolve_input(const std::string& name, const std::vector<std::string>& paths) {
  for (size_t i = 0; i < paths.size(); ++i)
    if (paths[i] == name || (paths[i].empty() && name == "<root>")) return i;
  bool digits = !name.empty() && name.size() < 10;
  for (char c : name) digits = digits && std::isdigit(static_cast<unsigned char>(c));
  if (digits) {
    size_t i = std::stoul(name);
    if (i < paths.size()) return i;
    throw CliError("input index " + name + " is out of range: the graph has " + std::to_string(paths.size()) +
                   " input leaves");
  }
  std::vector<std::string> shown;
  for (const auto& p : paths) shown.push_back(display_path(p));
  throw CliError("unknown input path '" + name + "'; the graph's inputs are: " + join(shown, ", "));
}

// "PATH=FILE": the path may itself contain '=' inside quotes ("[1]['a=b']"), so split after
// the last ']' when the name is a bracketed path.
std::pair<std::string, std::string> split_input(const std::string& arg) {
  size_t eq = std::string::npos;
  if (!arg.empty() && arg[0] == '[') {
    size_t close = arg.rfind("]=");
    if (close != std::string::npos) eq = close + 1;
  } else {
    eq = arg.find('=');
  }
  if (eq == std::string::npos || eq + 1 >= arg.size())
    throw CliError("--input '" + arg + "' is not of the form PATH=FILE.npy (e.g. \"[0]=x.npy\" or 0=x.npy)");
  return {arg.substr(0, eq), arg.substr(eq + 1)};
}

// Whether an executable named `prog` is on PATH.
bool on_path(const std::string& prog) {
  const char* path = std::getenv("PATH");
  if (!path) return false;
  std::stringstream ss(path);
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    if (dir.empty()) continue;
    std::string f = dir + "/" + prog;
    if (::access(f.c_str(), X_OK) == 0) return true;
  }
  return false;
}

// Runs a program without a shell (no quoting problems with file names); its exit status.
int run_program(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawnp(&pid, argv[0], nullptr, nullptr, argv.data(), environ) != 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Reads the --in-axes/--out-axes text by recursive descent: an int, none, or a tuple, list or
// dict of them. Containers nest at most kMaxNestingDepth deep (the budget a Tree accepts), so
// hostile text cannot overflow the stack; every mistake is a ParseError with the column.
class AxisTreeParser {
 public:
  explicit AxisTreeParser(std::string_view text) : s_(text) {}
  AxisTree parse() {
    AxisTree t = node(0);
    skip();
    if (i_ != s_.size()) fail("unexpected " + here() + " after the end of the tree");
    return t;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    std::string shown = s_.size() > 80 ? std::string(s_.substr(0, 77)) + "..." : std::string(s_);
    throw ParseError("axis tree \"" + shown + "\", column " + std::to_string(i_ + 1) + ": " + what);
  }
  std::string here() const { return i_ < s_.size() ? "'" + std::string(1, s_[i_]) + "'" : "the end of the text"; }
  void skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool accept(char c) {
    skip();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  // After an item of a container closed by `close`: a ',' (true) or the closing bracket next.
  bool separator(char close, const char* what) {
    if (accept(',')) return true;
    skip();
    if (i_ >= s_.size() || s_[i_] != close)
      fail(std::string("expected ',' or '") + close + "' in a " + what + ", got " + here());
    return false;
  }

  AxisTree node(int depth) {
    skip();
    if (i_ >= s_.size()) fail("expected an axis (an integer), none, '(', '[' or '{', got the end of the text");
    char c = s_[i_];
    if (c == '(' || c == '[' || c == '{') {
      // `depth` containers enclose this node; opening one more must stay within the budget.
      if (depth >= kMaxNestingDepth) fail("containers nested more than " + std::to_string(kMaxNestingDepth) + " deep");
      ++i_;
      if (c == '(') return tuple(depth);
      if (c == '[') return list(depth);
      return dict(depth);
    }
    if (c == '-' || c == '+' || std::isdigit(static_cast<unsigned char>(c))) return integer();
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = i_;
      while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_')) ++i_;
      std::string word(s_.substr(start, i_ - start));
      if (word == "none" || word == "None") return AxisTree::none();
      i_ = start;
      fail("unknown word '" + word + "' (an axis is an integer; none means not mapped)");
    }
    fail("expected an axis (an integer), none, '(', '[' or '{', got " + here());
  }

  AxisTree integer() {
    size_t start = i_;
    if (s_[i_] == '+' || s_[i_] == '-') ++i_;
    size_t digits = i_;
    while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
    if (i_ == digits) fail("expected digits after the sign");
    int64_t v = 0;
    auto [end, ec] = std::from_chars(s_.data() + digits, s_.data() + i_, v);
    if (ec != std::errc() || end != s_.data() + i_) {
      std::string shown(s_.substr(start, i_ - start));
      i_ = start;
      fail("axis " + shown + " is out of range");
    }
    return AxisTree(s_[start] == '-' ? -v : v);
  }

  AxisTree tuple(int depth) {
    std::vector<AxisTree> items;
    bool trailing_comma = false;
    while (!accept(')')) {
      items.push_back(node(depth + 1));
      trailing_comma = separator(')', "tuple");
    }
    if (items.size() == 1 && !trailing_comma)
      fail(
          "a one-element tuple needs a trailing comma, (0,), as printed trees have; write the axis alone to map "
          "everything below it");
    return AxisTree::tuple(std::move(items));
  }

  AxisTree list(int depth) {
    std::vector<AxisTree> items;
    while (!accept(']')) {
      items.push_back(node(depth + 1));
      separator(']', "list");
    }
    return AxisTree::list(std::move(items));
  }

  AxisTree dict(int depth) {
    std::map<std::string, AxisTree> items;
    while (!accept('}')) {
      skip();
      size_t kpos = i_;
      if (i_ >= s_.size() || (s_[i_] != '\'' && s_[i_] != '"'))
        fail("expected a dict key in quotes ('w' or \"w\"), got " + here());
      char q = s_[i_];
      size_t close = s_.find(q, i_ + 1);
      if (close == std::string_view::npos) fail("unterminated dict key (missing closing quote)");
      std::string key(s_.substr(i_ + 1, close - i_ - 1));
      i_ = close + 1;
      if (!accept(':')) fail("expected ':' after the dict key '" + key + "', got " + here());
      AxisTree value = node(depth + 1);
      if (!items.emplace(key, std::move(value)).second) {
        i_ = kpos;
        fail("dict key '" + key + "' appears twice");
      }
      separator('}', "dict");
    }
    return AxisTree::dict(std::move(items));
  }

  std::string_view s_;
  size_t i_ = 0;
};

// One row per transform name: which options it takes.
struct TransformInfo {
  const char* name;
  bool argnums;  // --argnums
  bool has_aux;  // --has-aux
  bool axes;     // --in-axes, --out-axes, --batch-size
};
constexpr TransformInfo kTransforms[] = {
    {"vmap", false, false, true},   {"vectorize", false, false, true}, {"jvp", false, false, false},
    {"vjp", false, false, false},   {"grad", true, true, false},       {"value_and_grad", true, true, false},
    {"jacfwd", true, false, false}, {"jacrev", true, false, false},    {"hessian", true, false, false},
};

size_t count_ops(const Graph& g) { return g.main().entry().operations().size(); }

}  // namespace

Graph load_graph(const std::string& path) {
  std::string text = read_file(path);  // PersistenceError naming the path
  size_t i = text.find_first_not_of(" \t\r\n");
  if (i != std::string::npos && text[i] == '{') return Graph::load(path);
  try {
    return Graph::parse(text);
  } catch (const ParseError& e) {
    throw ParseError(path + ": " + e.what() + " (expected a .evoxcgraph JSON file or EvoXIR text)");
  } catch (const PersistenceError& e) {
    throw PersistenceError(path + ": " + e.what());
  }
}

void cmd_print(const std::string& path, std::ostream& out) { out << load_graph(path).to_string(); }

void cmd_lower(const std::string& path, const std::string& backend, std::ostream& out) {
  out << lower(load_graph(path), backend).text();
}

std::string backend_list() { return join(backend_names(), ", "); }

void cmd_verify(const std::string& path, std::ostream& out) {
  Graph g = load_graph(path);
  verify(g);  // VerifyError/TypeError/ShapeError on failure
  out << "ok: " << path << ": " << g.summary() << ", " << g.num_outputs() << " outputs, "
      << g.main().entry().operations().size() << " ops in main\n";
}

void cmd_run(const RunArgs& options, std::ostream& out) {
  Graph g = load_graph(options.graph);
  // Verify before reading the input specs and paths: an unverified graph's input tree may
  // not match @main's arguments (the same error `evoxc verify` gives).
  verify(g);
  std::vector<std::string> paths = g.input_paths();
  std::vector<TensorSpec> specs = g.input_specs();
  std::vector<std::string> files(paths.size());
  for (const auto& arg : options.inputs) {
    auto [name, file] = split_input(arg);
    size_t i = resolve_input(name, paths);
    if (!files[i].empty())
      throw CliError("input " + display_path(paths[i]) + " is given twice (" + files[i] + " and " + file + ")");
    files[i] = file;
  }
  for (size_t i = 0; i < paths.size(); ++i)
    if (files[i].empty())
      throw CliError("missing input " + display_path(paths[i]) + " (" + specs[i].to_string() +
                     "); give it as --input \"" + display_path(paths[i]) + "=FILE.npy\"");

  std::vector<Tensor> inputs;
  for (size_t i = 0; i < paths.size(); ++i) {
    Tensor t = io::read_npy(files[i]);
    // Checked here too so the message names the file; the executable checks shapes and dims again.
    std::string where = "input " + display_path(paths[i]) + " (" + files[i] + ")";
    if (t.dtype() != specs[i].dtype)
      throw ValidationError(where + ": expected dtype " + std::string(dtype_name(specs[i].dtype)) + ", got " +
                            std::string(dtype_name(t.dtype())));
    if (t.rank() != specs[i].shape.rank())
      throw ValidationError(where + ": expected " + specs[i].to_string() + ", got shape " + shape_text(t.shape()));
    for (size_t d = 0; d < t.rank(); ++d) {
      auto c = specs[i].shape[d].as_const();
      if (c && *c != t.shape()[d])
        throw ValidationError(where + ": expected " + specs[i].to_string() + ", got shape " + shape_text(t.shape()));
    }
    inputs.push_back(std::move(t));
  }

  Executable exe = build_graph(g);
  std::vector<Tensor> outputs(exe.num_outputs());
  // --timeout counts from here: loading and checking the inputs are not part of the run.
  RunOptions limits;
  if (options.timeout_s > 0)
    limits.deadline = RunOptions::Clock::now() + std::chrono::duration_cast<RunOptions::Clock::duration>(
                                                     std::chrono::duration<double>(options.timeout_s));
  limits.max_loop_iterations = options.max_iterations;
  exe.execute(inputs, outputs, limits);

  std::error_code ec;
  std::filesystem::create_directories(options.output_dir, ec);
  if (ec) throw PersistenceError(options.output_dir + ": cannot create the output folder: " + ec.message());
  std::vector<std::string> out_paths = g.output_paths();
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::string file = (std::filesystem::path(options.output_dir) / ("out" + std::to_string(i) + ".npy")).string();
    std::string path = display_path(i < out_paths.size() ? out_paths[i] : std::to_string(i));
    try {
      io::write_npy(file, outputs[i]);
    } catch (const ValidationError& e) {  // bfloat16: say which output
      throw ValidationError("output " + path + ": " + e.what());
    }
    out << "output " << path << ": " << dtype_name(outputs[i].dtype()) << " " << shape_text(outputs[i].shape())
        << " -> " << file << "\n";
  }
}

void cmd_ops(bool markdown, std::ostream& out) {
  Table t = build_op_table();
  out << render_table(t, markdown);
  if (!markdown) out << t.rows.size() << " ops\n";
}

void cmd_devices(std::ostream& out) {
  out << "devices:\n";
  for (const Device& d : devices()) out << "  " << d.to_string() << "\n";
  cmd_backends(out);
#if EVOXC_HAS_XLA
  // The xla backend's plugins: what discovery finds, why a candidate was rejected, which one loads.
  out << "xla plugins (PJRT C API " << xla::header_api_version().first << "." << xla::header_api_version().second
      << " headers):\n";
  std::vector<xla::Candidate> found = xla::discover();
  if (found.empty()) out << "  none found (set EVOXC_PJRT_PLUGIN, or EVOXC_PJRT_PLUGIN_PATH to a site-packages)\n";
  for (const xla::Candidate& c : found)
    out << "  " << c.path << " (" << c.platform << ")" << (c.rejected.empty() ? "" : ": rejected, " + c.rejected)
        << "\n";
  std::string why;
  if (xla::available(&why)) {
    const xla::PluginInfo& p = xla::plugin_info();
    out << "  loaded: " << p.path << ", platform " << p.platform << " " << p.platform_version << ", PJRT "
        << p.api_major << "." << p.api_minor << ", " << p.devices.size() << " device(s)\n";
  } else {
    out << "  none loads: " << why << "\n";
  }
#endif
}

void cmd_backends(std::ostream& out) {
  out << "backends:\n";
  for (const auto& name : backend_names()) {
    const Capabilities& c = get_backend(name).capabilities();
    std::vector<std::string> kinds, dts;
    for (Device::Kind k : c.device_kinds) kinds.emplace_back(Device(k, 0).kind_name());
    for (DType t : c.dtypes) dts.emplace_back(dtype_name(t));
    auto yn = [](bool b) { return b ? "yes" : "no"; };
    out << "  " << name << ": devices " << (kinds.empty() ? std::string("none (an export target)") : join(kinds, ", "))
        << "; symbolic shapes " << yn(c.symbolic_shapes) << "; regions " << yn(c.regions) << "; serializable artifact "
        << yn(c.serializable_artifact) << "; dtypes " << join(dts, ", ") << "; batch cost model "
        << c.batch_cost.dispatch_seconds * 1e9 << " ns/dispatch + " << c.batch_cost.element_seconds * 1e9
        << " ns/element\n";
  }
}

void cmd_dot(const DotOptions& options, std::ostream& out) {
  std::string dot = graph_to_dot(load_graph(options.graph));
  if (!options.svg.empty() && !on_path("dot"))
    throw CliError(
        "--svg needs Graphviz's 'dot' program, which is not on PATH; install graphviz (apt-get install "
        "graphviz), or write the DOT text with -o FILE.dot");
  if (!options.output.empty()) {
    write_file_atomic(options.output, dot);
  } else if (options.svg.empty()) {
    out << dot;
  }
  if (options.svg.empty()) return;
  std::string src = options.output;
  bool temp = src.empty();
  if (temp) {
    src = (std::filesystem::temp_directory_path() / ("evoxc_dot_" + std::to_string(::getpid()) + ".dot")).string();
    write_file_atomic(src, dot);
  }
  int rc = run_program({"dot", "-Tsvg", "-o", options.svg, src});
  if (temp) std::remove(src.c_str());
  if (rc != 0) throw CliError("'dot -Tsvg' failed (exit status " + std::to_string(rc) + ") writing " + options.svg);
}

void cmd_bench(bool quick, std::ostream& out) {
  std::vector<bench::WorkloadResult> results = bench::run_workloads(quick);
  out << std::left << std::setw(24) << "workload" << std::setw(14) << "time/call"
      << "what\n";
  for (const auto& r : results) {
    std::ostringstream t;
    t << std::fixed << std::setprecision(2);
    if (r.seconds < 1e-3)
      t << r.seconds * 1e6 << " us";
    else
      t << r.seconds * 1e3 << " ms";
    out << std::left << std::setw(24) << r.name << std::setw(14) << t.str() << r.description << "\n";
  }
  out << "interpreter threads: " << interp::num_threads() << "\n";
  out << "For the side-by-side comparison with numpy, PyTorch and JAX, run: .venv/bin/python bench/compare.py"
      << (quick ? " --quick" : "") << "\n";
}

AxisTree parse_axis_tree(std::string_view text) { return AxisTreeParser(text).parse(); }

ArgNums parse_argnums(std::string_view text) {
  auto fail = [&](const std::string& what) -> ParseError {
    return ParseError("argnums \"" + std::string(text.substr(0, 80)) + "\": " + what +
                      " (write one argument index, 1, or a comma-separated tuple, 0,2 or 1,)");
  };
  std::vector<int64_t> nums;
  bool comma = false;
  size_t i = 0;
  auto skip = [&] {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  };
  skip();
  if (i == text.size()) throw fail("no argument index");
  while (i < text.size()) {
    size_t start = i;
    if (text[i] == '-' || text[i] == '+') ++i;
    size_t digits = i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
    if (i == digits) throw fail("expected an argument index at column " + std::to_string(start + 1));
    int64_t v = 0;
    auto [end, ec] = std::from_chars(text.data() + digits, text.data() + i, v);
    if (ec != std::errc() || end != text.data() + i)
      throw fail("index " + std::string(text.substr(start, i - start)) + " is out of range");
    nums.push_back(text[start] == '-' ? -v : v);
    skip();
    if (i == text.size()) break;
    if (text[i] != ',') throw fail("expected ',' at column " + std::to_string(i + 1));
    comma = true;
    ++i;
    skip();
  }
  if (!comma) return ArgNums(nums.front());
  return ArgNums::tuple(std::move(nums));
}

std::optional<DimExpr> parse_batch_size(std::string_view text) {
  if (text.empty()) return std::nullopt;
  if (std::isdigit(static_cast<unsigned char>(text[0])) || text[0] == '-' || text[0] == '+') {
    int64_t v = 0;
    auto [end, ec] = std::from_chars(text.data() + (text[0] == '+'), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size() || v <= 0)
      throw ParseError("batch size '" + std::string(text) + "' must be a positive whole number or a symbol name");
    return DimExpr(v);
  }
  try {
    return DimExpr::symbol(std::string(text));
  } catch (const ShapeError& e) {
    throw ParseError("batch size '" + std::string(text) + "': " + e.what());
  }
}

const std::vector<std::string>& transform_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const TransformInfo& t : kTransforms) v.emplace_back(t.name);
    return v;
  }();
  return names;
}

std::string transform_usage_error(const TransformArgs& args) {
  const TransformInfo* found = nullptr;
  for (const TransformInfo& info : kTransforms)
    if (args.transform == info.name) found = &info;
  if (!found) return "unknown transform '" + args.transform + "' (known: " + join(transform_names(), ", ") + ")";
  const TransformInfo& t = *found;
  auto refuse = [&](const std::string& option, const std::string& takers) {
    return option + " does not apply to " + args.transform + " (only " + takers + " take it)";
  };
  if (!args.argnums.empty() && !t.argnums) return refuse("--argnums", "grad, value_and_grad, jacfwd, jacrev, hessian");
  if (args.has_aux && !t.has_aux) return refuse("--has-aux", "grad and value_and_grad");
  for (const auto& [option, value] : {std::pair<const char*, const std::string&>{"--in-axes", args.in_axes},
                                      {"--out-axes", args.out_axes},
                                      {"--batch-size", args.batch_size}})
    if (!value.empty() && !t.axes) return refuse(option, "vmap and vectorize");
  return "";
}

void cmd_transform(const TransformArgs& args, std::ostream& out) {
  std::string usage = transform_usage_error(args);
  if (!usage.empty()) throw CliError(usage);
  const TransformInfo& t = *std::find_if(std::begin(kTransforms), std::end(kTransforms),
                                         [&](const TransformInfo& info) { return args.transform == info.name; });
  Graph g = load_graph(args.graph);
  // Verify first: the transforms assume a well-formed graph, and a bad file should get
  // verify's message, not an error from inside a transform.
  verify(g);
  ArgNums argnums = args.argnums.empty() ? ArgNums() : parse_argnums(args.argnums);
  std::string name = t.name;
  Graph result;
  if (t.axes) {
    AxisTree in_axes = args.in_axes.empty() ? AxisTree(0) : parse_axis_tree(args.in_axes);
    AxisTree out_axes = args.out_axes.empty() ? AxisTree(0) : parse_axis_tree(args.out_axes);
    result = vectorize(g, in_axes, out_axes, parse_batch_size(args.batch_size));
  } else if (name == "jvp") {
    result = jvp(g);
  } else if (name == "vjp") {
    result = vjp(g);
  } else if (name == "grad") {
    result = grad(g, argnums, args.has_aux);
  } else if (name == "value_and_grad") {
    result = value_and_grad(g, argnums, args.has_aux);
  } else if (name == "jacfwd") {
    result = jacfwd(g, argnums);
  } else if (name == "jacrev") {
    result = jacrev(g, argnums);
  } else if (name == "hessian") {
    result = hessian(g, argnums);
  } else {
    throw InternalError("evoxc transform: no call for the transform '" + name + "'");
  }

  if (args.output == "-") {  // the text alone, so it can be piped
    out << result.to_string();
    return;
  }
  const std::string suffix = ".evoxcgraph";
  bool json = args.output.size() >= suffix.size() &&
              args.output.compare(args.output.size() - suffix.size(), suffix.size(), suffix) == 0;
  if (json)
    result.save(args.output);
  else
    write_file_atomic(args.output, result.to_string());
  out << args.transform << ": " << count_ops(g) << " ops -> " << count_ops(result) << " ops in main, written to "
      << args.output << "\n";
}

}  // namespace evoxc::cli
