// A seeded population of random GP expression trees (the staging workload of the batch issue):
// the generator and the function that traces one tree, shared by the staging bench and tests.
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "evoxc/evoxc.h"

namespace evoxc::bench {

// One node of a prefix-order expression tree.
struct GpNode {
  enum Kind : uint8_t { Var, Const, Add, Sub, Mul, Div, Sin, Cos, Tanh, Log };
  Kind kind;
  int var = 0;      // Var: input index
  float value = 0;  // Const
};
using GpTree = std::vector<GpNode>;  // prefix order

inline int gp_arity(GpNode::Kind k) {
  if (k <= GpNode::Const) return 0;
  return k <= GpNode::Div ? 2 : 1;
}

// A random tree of exactly `size` nodes over `num_vars` inputs: operators drawn uniformly from
// add, sub, mul, protected div, sin, cos, tanh, protected log; leaves are inputs (2/3) or
// constants in [-1, 1] (1/3).
inline void gp_grow(std::mt19937_64& rng, int size, int num_vars, GpTree& out) {
  std::uniform_real_distribution<float> cst(-1.f, 1.f);
  if (size == 1) {
    if (rng() % 3 == 0) {
      out.push_back({GpNode::Const, 0, cst(rng)});
    } else {
      out.push_back({GpNode::Var, static_cast<int>(rng() % static_cast<uint64_t>(num_vars)), 0});
    }
    return;
  }
  // A binary node needs at least 3 nodes; with 2 left only a unary fits.
  bool binary = size >= 3 && (size == 3 || rng() % 2 == 0);
  if (binary) {
    auto k = static_cast<GpNode::Kind>(GpNode::Add + rng() % 4);
    out.push_back({k, 0, 0});
    int left = 1 + static_cast<int>(rng() % static_cast<uint64_t>(size - 2));
    gp_grow(rng, left, num_vars, out);
    gp_grow(rng, size - 1 - left, num_vars, out);
  } else {
    auto k = static_cast<GpNode::Kind>(GpNode::Sin + rng() % 4);
    out.push_back({k, 0, 0});
    gp_grow(rng, size - 1, num_vars, out);
  }
}

inline std::vector<GpTree> gp_population(uint64_t seed, int count, int size, int num_vars) {
  std::mt19937_64 rng(seed);
  std::vector<GpTree> pop(static_cast<size_t>(count));
  for (auto& t : pop) gp_grow(rng, size, num_vars, t);
  return pop;
}

// Evaluates the tree at `pos` symbolically. Protected division is where(|b| > 1e-6, a / b, 1),
// protected log is log(|x| + 1e-6): Koza's closure, as DEAP and Operon users write it.
inline SymbolicTensor gp_eval(const GpTree& t, size_t& pos, const std::vector<SymbolicTensor>& vars) {
  const GpNode& n = t[pos++];
  switch (n.kind) {
    case GpNode::Var: return vars[static_cast<size_t>(n.var)];
    case GpNode::Const: return fill(vars[0].shape(), n.value, f32);
    case GpNode::Sin: return sin(gp_eval(t, pos, vars));
    case GpNode::Cos: return cos(gp_eval(t, pos, vars));
    case GpNode::Tanh: return tanh(gp_eval(t, pos, vars));
    case GpNode::Log: return log(abs(gp_eval(t, pos, vars)) + 1e-6f);
    default: break;
  }
  SymbolicTensor a = gp_eval(t, pos, vars);
  SymbolicTensor b = gp_eval(t, pos, vars);
  switch (n.kind) {
    case GpNode::Add: return a + b;
    case GpNode::Sub: return a - b;
    case GpNode::Mul: return a * b;
    default: return where(abs(b) > 1e-6f, a / b, 1.0f);
  }
}

// The tree as programs-as-data nodes (evoxc::gp, prefix order as it is stored), each operator through
// code_of[kind]; gp_primitive_set fills code_of with the standard set's codes plus log_eps, the
// protected log of gp_eval below.
inline std::vector<gp::Node> gp_nodes(const GpTree& t, const int32_t (&code_of)[10]) {
  std::vector<gp::Node> nodes;
  nodes.reserve(t.size());
  for (const GpNode& n : t) {
    if (n.kind == GpNode::Var) {
      nodes.push_back(gp::Node::variable(n.var));
    } else if (n.kind == GpNode::Const) {
      nodes.push_back(gp::Node::constant(n.value));
    } else {
      nodes.push_back(gp::Node::primitive(code_of[n.kind]));
    }
  }
  return nodes;
}

inline gp::PrimitiveSet gp_primitive_set(int32_t (&code_of)[10]) {
  gp::PrimitiveSet s = gp::PrimitiveSet::standard();
  const int32_t log_eps = s.add("log_eps", "$0 abs 1e-06 add log");
  const int32_t codes[10] = {0,
                             0,
                             s.code("add"),
                             s.code("sub"),
                             s.code("mul"),
                             s.code("pdiv"),
                             s.code("sin"),
                             s.code("cos"),
                             s.code("tanh"),
                             log_eps};
  std::copy(std::begin(codes), std::end(codes), code_of);
  return s;
}

// Traces one tree over `num_vars` inputs of shape (cases,) float32.
inline Graph gp_trace(const GpTree& t, int num_vars, int64_t cases) {
  std::vector<TensorSpec> specs(static_cast<size_t>(num_vars), TensorSpec({cases}, f32));
  return trace(
      [&](const std::vector<SymbolicTensor>& vars) {
        size_t pos = 0;
        return gp_eval(t, pos, vars);
      },
      specs);
}

}  // namespace evoxc::bench
