// Symbolic regression with evoxc: each generation's trees are traced, merged by batch_functions, built and run once.
// Usage: population [--separate] [--switch-ops] [--bands K] [--alignment variant|occurrence|auto] [--generations N]
// [--population N] [--cases N] [--seed S] Tournament selection, subtree and point mutation towards y = x0^2 + sin(x1).
// --separate builds and runs the programs one by one instead; merged rows are bit for bit the separate results, so both
// modes evolve the same population.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "evoxc/evoxc.h"

namespace {

using evoxc::SymbolicTensor;

// splitmix64: a small deterministic RNG, the same sequence everywhere.
struct Rng {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  size_t below(size_t n) { return static_cast<size_t>(next() % n); }
  float uniform(float lo, float hi) { return lo + (hi - lo) * static_cast<float>(next() >> 40) * 0x1p-24f; }
};

// An expression tree in prefix order.
enum Op : uint8_t { X0, X1, Const, Add, Sub, Mul, Div, Sin, Cos, Log };
struct Node {
  Op op;
  float value = 0;  // Const
};
using Expr = std::vector<Node>;
constexpr size_t kMaxNodes = 40;
constexpr const char* kNames[] = {"x0", "x1", "", "+", "-", "*", "/", "sin", "cos", "log"};

int arity(Op op) { return op <= Const ? 0 : op <= Div ? 2 : 1; }

// One past the last node of the subtree starting at `i`.
size_t subtree_end(const Expr& e, size_t i) {
  for (int open = 1; open > 0; ++i) open += arity(e[i].op) - 1;
  return i;
}

Node random_leaf(Rng& rng) {
  size_t k = rng.below(3);
  return k == 2 ? Node{Const, std::round(rng.uniform(-2, 2) * 4) / 4 + 0.0f} : Node{static_cast<Op>(k)};
}

// Koza's grow method: stops at a leaf with probability 1/3 below the root, always at depth 0.
void grow(Rng& rng, int depth, bool root, Expr& out) {
  if (depth == 0 || (!root && rng.below(3) == 0)) {
    out.push_back(random_leaf(rng));
    return;
  }
  Op op = static_cast<Op>(Add + rng.below(7));
  out.push_back({op});
  for (int k = 0; k < arity(op); ++k) grow(rng, depth - 1, false, out);
}

// Subtree mutation (a random subtree replaced by a new one of depth <= 3) or point mutation (a
// node replaced by a random node of the same arity), retried until the child fits kMaxNodes.
Expr mutate(const Expr& parent, Rng& rng) {
  for (;;) {
    Expr child = parent;
    size_t i = rng.below(child.size());
    if (rng.below(2) == 0) {
      Expr fresh;
      grow(rng, 3, false, fresh);
      child.erase(child.begin() + static_cast<std::ptrdiff_t>(i),
                  child.begin() + static_cast<std::ptrdiff_t>(subtree_end(child, i)));
      child.insert(child.begin() + static_cast<std::ptrdiff_t>(i), fresh.begin(), fresh.end());
    } else {
      int a = arity(child[i].op);
      child[i] = a == 0 ? random_leaf(rng) : Node{static_cast<Op>(a == 2 ? Add + rng.below(4) : Sin + rng.below(3))};
    }
    if (child.size() <= kMaxNodes) return child;
  }
}

std::string to_string(const Expr& e, size_t& pos) {
  const Node& n = e[pos++];
  if (n.op == Const) {
    char text[16];
    std::snprintf(text, sizeof text, "%g", static_cast<double>(n.value));
    return text;
  }
  if (arity(n.op) == 0) return kNames[n.op];
  std::string a = to_string(e, pos);
  if (arity(n.op) == 1) return std::string(kNames[n.op]) + "(" + a + ")";
  std::string b = to_string(e, pos);
  return "(" + a + " " + kNames[n.op] + " " + b + ")";
}

// The recursive builder traced by evoxc::trace. Closure: division is protected where |b| <= 1e-6
// (result 1), log where |a| <= 1e-6 (result 0). Operands are built in order, one per statement.
SymbolicTensor build(const Expr& e, size_t& pos, const SymbolicTensor& x0, const SymbolicTensor& x1) {
  const Node& n = e[pos++];
  switch (n.op) {
    case X0: return x0;
    case X1: return x1;
    case Const: return evoxc::fill(x0.shape(), n.value, evoxc::f32);
    case Sin: return evoxc::sin(build(e, pos, x0, x1));
    case Cos: return evoxc::cos(build(e, pos, x0, x1));
    case Log: {
      SymbolicTensor a = evoxc::abs(build(e, pos, x0, x1));
      return evoxc::where(a > 1e-6f, evoxc::log(a), 0.0f);
    }
    default: break;
  }
  SymbolicTensor a = build(e, pos, x0, x1);
  SymbolicTensor b = build(e, pos, x0, x1);
  switch (n.op) {
    case Add: return a + b;
    case Sub: return a - b;
    case Mul: return a * b;
    default: return evoxc::where(evoxc::abs(b) > 1e-6f, a / b, 1.0f);
  }
}

struct Options {
  bool separate = false, switch_ops = false;
  uint64_t generations = 5, population = 200, cases = 256, bands = 0, seed = 6;
  evoxc::Alignment alignment = evoxc::Alignment::Variant;
};

struct Timing {
  double trace = 0, merge = 0, build = 0, run = 0;  // ms
  std::string note;
};

double ms_since(std::chrono::steady_clock::time_point& t0) {
  auto t1 = std::chrono::steady_clock::now();
  double ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  t0 = t1;
  return ms;
}

// Mean squared error of one row of predictions; a non-finite error is the worst fitness.
double mse(const float* pred, const std::vector<float>& y) {
  double s = 0;
  for (size_t c = 0; c < y.size(); ++c) s += std::pow(static_cast<double>(pred[c]) - y[c], 2);
  s /= static_cast<double>(y.size());
  return std::isfinite(s) ? s : HUGE_VAL;
}

// Fitness of every individual: traced, then merged (one build, one run) or built and run one by one.
std::vector<double> fitness_of(const std::vector<Expr>& pop, const evoxc::Tensor& x0, const evoxc::Tensor& x1,
                               const std::vector<float>& y, const Options& o, Timing& t) {
  auto t0 = std::chrono::steady_clock::now();
  evoxc::TensorSpec spec({static_cast<int64_t>(y.size())}, evoxc::f32);
  std::vector<evoxc::Graph> graphs;
  for (const Expr& e : pop)
    graphs.push_back(evoxc::trace(
        [&](const SymbolicTensor& a, const SymbolicTensor& b) {
          size_t pos = 0;
          return build(e, pos, a, b);
        },
        spec, spec));
  t.trace = ms_since(t0);
  std::vector<double> fitness;
  if (o.separate) {
    for (const evoxc::Graph& g : graphs) {
      evoxc::Executable exe = evoxc::build_graph(g);
      t.build += ms_since(t0);
      fitness.push_back(mse(evoxc::run(exe, x0, x1).leaf().data<float>(), y));
      t.run += ms_since(t0);
    }
    return fitness;
  }
  evoxc::BatchOptions options;
  options.axes = evoxc::AxisTree::tuple({evoxc::AxisTree(), evoxc::AxisTree()});  // x0, x1: shared (None)
  if (o.switch_ops) options.switch_ops = evoxc::SwitchOps::elementwise();         // same-position op variants: one op
  if (o.bands > 0) options.bands = evoxc::Bands::of(static_cast<int64_t>(o.bands));  // K bands merged apart
  options.alignment = o.alignment;
  evoxc::BatchResult merged = evoxc::batch_functions(graphs, options);
  t.merge = ms_since(t0);
  evoxc::Executable exe = evoxc::build_graph(merged.graph);
  t.build = ms_since(t0);
  evoxc::Tensor pred = evoxc::run(exe, x0, x1).leaf();  // (population, cases): row i is individual i
  for (size_t i = 0; i < pop.size(); ++i) fitness.push_back(mse(pred.data<float>() + i * y.size(), y));
  t.run = ms_since(t0);
  t.note = "  merged ops " + std::to_string(merged.report.emitted_ops) + "/" +
           std::to_string(merged.report.program_ops) + " (" + merged.report.alignment + ")";
  return fitness;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    Options o;
    std::map<std::string, uint64_t*> numbers{{"--generations", &o.generations},
                                             {"--population", &o.population},
                                             {"--cases", &o.cases},
                                             {"--bands", &o.bands},
                                             {"--seed", &o.seed}};
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      if (a == "--separate" || a == "--switch-ops") {
        (a == "--separate" ? o.separate : o.switch_ops) = true;
      } else if (a == "--alignment" && i + 1 < argc) {
        std::string v = argv[++i];
        if (v != "variant" && v != "occurrence" && v != "auto")
          throw std::invalid_argument("--alignment takes variant, occurrence or auto");
        o.alignment = v == "variant"      ? evoxc::Alignment::Variant
                      : v == "occurrence" ? evoxc::Alignment::Occurrence
                                          : evoxc::Alignment::Auto;
      } else if (numbers.count(a) && i + 1 < argc) {
        *numbers[a] = std::stoull(argv[++i]);
      } else {
        throw std::invalid_argument("unknown argument " + a);
      }
    }
    if (o.population < 2 || o.cases < 1) throw std::invalid_argument("needs --population >= 2, --cases >= 1");
    Rng rng{o.seed};
    std::vector<float> x0(o.cases), x1(o.cases), y(o.cases);
    for (size_t c = 0; c < o.cases; ++c) {
      x0[c] = rng.uniform(-3, 3);
      x1[c] = rng.uniform(-3, 3);
      y[c] = x0[c] * x0[c] + std::sin(x1[c]);
    }
    auto n = static_cast<int64_t>(o.cases);
    evoxc::Tensor tx0 = evoxc::Tensor::from_vector(x0, {n}), tx1 = evoxc::Tensor::from_vector(x1, {n});

    std::vector<Expr> pop(o.population);
    for (size_t i = 0; i < pop.size(); ++i) grow(rng, 2 + static_cast<int>(i % 4), true, pop[i]);  // depths 2..5
    std::printf("%s evaluation, %zu individuals, %zu fitness cases, target y = x0^2 + sin(x1)\n",
                o.separate ? "separate" : "merged", pop.size(), y.size());
    size_t best = 0;
    for (uint64_t gen = 0; gen < o.generations; ++gen) {
      Timing t;
      std::vector<double> fit = fitness_of(pop, tx0, tx1, y, o, t);
      best = static_cast<size_t>(std::min_element(fit.begin(), fit.end()) - fit.begin());
      size_t nodes = 0;
      for (const Expr& e : pop) nodes += e.size();
      std::printf("gen %zu  best MSE %10.6f  nodes %5zu  trace %7.1f  merge %7.1f  build %7.1f  run %7.1f  ms%s\n",
                  static_cast<size_t>(gen), fit[best], nodes, t.trace, t.merge, t.build, t.run, t.note.c_str());
      if (gen + 1 == o.generations) break;
      // The next generation: the best individual unchanged, the rest mutated winners of 4-way tournaments.
      std::vector<Expr> next{pop[best]};
      while (next.size() < pop.size()) {
        size_t w = rng.below(pop.size());
        for (int k = 1; k < 4; ++k) {
          size_t c = rng.below(pop.size());
          if (fit[c] < fit[w]) w = c;
        }
        next.push_back(mutate(pop[w], rng));
      }
      pop = std::move(next);
    }
    size_t pos = 0;
    std::printf("best: %s\n", to_string(pop[best], pos).c_str());
    return 0;
  } catch (const evoxc::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {  // a bad argument
    std::fprintf(stderr,
                 "%s\nusage: %s [--separate] [--switch-ops] [--bands K] [--alignment variant|occurrence|auto] "
                 "[--generations N] [--population N] "
                 "[--cases N] [--seed S]\n",
                 e.what(), argv[0]);
    return 2;
  }
}
