// trace(): turns a C++ callable over SymbolicTensors into a Graph; trace_dynamic() is the type-erased entry bindings
// use.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "evoxc/core/tree.h"
#include "evoxc/ir/graph.h"
#include "evoxc/trace/symbolic_tensor.h"

namespace evoxc {

// ---- the type-erased entry ----

// A leaf of a trace argument: a TensorSpec (a graph input) or a static value (bool,
// int64, double, string, DType) that is evaluated at trace time and snapshotted into the
// graph, so a different static value means a different graph.
using ArgLeaf = std::variant<TensorSpec, bool, int64_t, double, std::string, DType>;
// One trace argument: a pytree (tuples, lists, string-keyed dicts, None) of ArgLeafs.
// Statics may sit at any position, e.g. ({"lr": 0.1, "w": TensorSpec(...)}, 3).
using TraceArg = Tree<ArgLeaf>;
// What the traced function receives for an ArgLeaf: the SymbolicTensor of the input made
// from a TensorSpec, or the static value itself, at the same position.
using TracedLeaf = std::variant<SymbolicTensor, bool, int64_t, double, std::string, DType>;
using TracedArg = Tree<TracedLeaf>;
// A type-erased traced function: one TracedArg per TraceArg, in order; returns the
// outputs as a pytree of SymbolicTensors of this trace.
using TraceFunction = std::function<Tree<SymbolicTensor>(const std::vector<TracedArg>& args)>;

// A TraceArg leaf (Tree's converting constructor takes an ArgLeaf, not a TensorSpec or a double).
inline TraceArg arg_leaf(ArgLeaf v) { return TraceArg(std::move(v)); }

// Traces `fn` over `args` and returns its Graph:
//  - every TensorSpec leaf becomes a graph input, in flattening order (depth first, dict
//    keys sorted), and fn receives its SymbolicTensor at that position;
//  - every static leaf is passed to fn unchanged and stored in Graph::static_values()
//    under its path: "[i]" for argument i itself, then "[k]" per tuple/list child and
//    "['key']" per dict child, e.g. "[1]['lr']";
//  - the graph's input tree is a tuple with one entry per argument, in which static leaves
//    are None (so its leaves are exactly the inputs);
//  - the output tree is the structure fn returned.
// A SymbolicTensor that fn returns must belong to this trace (TraceError otherwise).
// LocationScope(TraceContext::current(), ...) inside fn sets the location ops are recorded at.
Graph trace_dynamic(const TraceFunction& fn, const std::vector<TraceArg>& args);

namespace trace_detail {

// What every trace entry shares: the trace context, the statics snapshotted so far, and
// finishing the module into a Graph.
class Tracer {
 public:
  TraceContext& context() { return ctx_; }
  SymbolicTensor input(const TensorSpec& s) { return ctx_.add_input(s); }
  void snapshot(std::string path, Attribute value) { statics_[std::move(path)] = std::move(value); }
  // Appends main's return of the output leaves and builds the Graph.
  Graph finish(const Tree<SymbolicTensor>& outputs, TreeDef inputs);

 private:
  TraceContext ctx_;
  AttrMap statics_;
};

template <typename T>
inline constexpr bool is_static_v = std::is_arithmetic_v<T> || std::is_same_v<T, std::string> ||
                                    std::is_same_v<T, const char*> || std::is_same_v<T, DType>;

inline std::string arg_path(size_t k) { return "[" + std::to_string(k) + "]"; }

// Maps argument k of trace() (spec, tree of specs, static value) to what the traced
// function receives, recording input leaves and static values in the tracer.
struct ArgBinder {
  Tracer& tracer;

  SymbolicTensor bind(const TensorSpec& s, TreeDef& tree, size_t) {
    tree = TreeDef(LeafMark{});
    return tracer.input(s);
  }
  Tree<SymbolicTensor> bind(const Tree<TensorSpec>& t, TreeDef& tree, size_t) {
    tree = tree_structure(t);
    return t.map([&](const TensorSpec& s) { return tracer.input(s); });
  }
  std::vector<SymbolicTensor> bind(const std::vector<TensorSpec>& v, TreeDef& tree, size_t) {
    std::vector<TreeDef> kids(v.size(), TreeDef(LeafMark{}));
    tree = TreeDef::list(std::move(kids));
    std::vector<SymbolicTensor> out;
    out.reserve(v.size());
    for (const auto& s : v) out.push_back(tracer.input(s));
    return out;
  }
  std::map<std::string, SymbolicTensor> bind(const std::map<std::string, TensorSpec>& m, TreeDef& tree, size_t) {
    std::map<std::string, TreeDef> kids;
    std::map<std::string, SymbolicTensor> out;
    for (const auto& [k, s] : m) {  // std::map iterates in key order, the flattening order
      kids.emplace(k, TreeDef(LeafMark{}));
      out.emplace(k, tracer.input(s));
    }
    tree = TreeDef::dict(std::move(kids));
    return out;
  }
  std::map<std::string, Tree<SymbolicTensor>> bind(const std::map<std::string, Tree<TensorSpec>>& m, TreeDef& tree,
                                                   size_t) {
    std::map<std::string, TreeDef> kids;
    std::map<std::string, Tree<SymbolicTensor>> out;
    for (const auto& [k, s] : m) {
      kids.emplace(k, tree_structure(s));
      out.emplace(k, s.map([&](const TensorSpec& x) { return tracer.input(x); }));
    }
    tree = TreeDef::dict(std::move(kids));
    return out;
  }
  [[noreturn]] SymbolicTensor bind(const Tensor&, TreeDef&, size_t k);
  template <typename T>
  requires is_static_v<T> T bind(const T& v, TreeDef& tree, size_t k) {
    tree = TreeDef();
    if constexpr (std::is_same_v<T, bool>) {
      tracer.snapshot(arg_path(k), v);
    } else if constexpr (std::is_integral_v<T>) {
      tracer.snapshot(arg_path(k), static_cast<int64_t>(v));
    } else if constexpr (std::is_floating_point_v<T>) {
      tracer.snapshot(arg_path(k), static_cast<double>(v));
    } else if constexpr (std::is_same_v<T, DType>) {
      tracer.snapshot(arg_path(k), v);
    } else {
      tracer.snapshot(arg_path(k), std::string(v));
    }
    return v;
  }
};

// Converts what the traced function returned into a tree of values.
inline Tree<SymbolicTensor> to_tree(const SymbolicTensor& t) { return Tree<SymbolicTensor>(t); }
inline Tree<SymbolicTensor> to_tree(const Tree<SymbolicTensor>& t) { return t; }
[[noreturn]] Tree<SymbolicTensor> to_tree(const Tensor& t);
template <typename T>
Tree<SymbolicTensor> to_tree(const std::vector<T>& v) {
  std::vector<Tree<SymbolicTensor>> kids;
  for (const auto& x : v) kids.push_back(to_tree(x));
  return Tree<SymbolicTensor>::list(std::move(kids));
}
template <typename T>
Tree<SymbolicTensor> to_tree(const std::map<std::string, T>& m) {
  std::map<std::string, Tree<SymbolicTensor>> kids;
  for (const auto& [k, x] : m) kids.emplace(k, to_tree(x));
  return Tree<SymbolicTensor>::dict(std::move(kids));
}
template <typename... Ts>
Tree<SymbolicTensor> to_tree(const std::tuple<Ts...>& t) {
  std::vector<Tree<SymbolicTensor>> kids;
  std::apply([&](const auto&... x) { (kids.push_back(to_tree(x)), ...); }, t);
  return Tree<SymbolicTensor>::tuple(std::move(kids));
}
template <typename A, typename B>
Tree<SymbolicTensor> to_tree(const std::pair<A, B>& p) {
  return Tree<SymbolicTensor>::tuple({to_tree(p.first), to_tree(p.second)});
}

}  // namespace trace_detail

// Traces `fn` over the given arguments and returns its Graph. Each argument is one of:
//  - TensorSpec → the function receives a SymbolicTensor;
//  - Tree<TensorSpec>, std::vector<TensorSpec>, std::map<std::string, TensorSpec>
//    (or of Tree<TensorSpec>) → the same structure of SymbolicTensors;
//  - a static value (bool, integer, floating point, std::string, DType) → passed through
//    unchanged and snapshotted into the graph under its path "[i]" (a new value means a
//    new graph).
// The function returns a SymbolicTensor, a Tree<SymbolicTensor>, or tuples, pairs,
// vectors and string-keyed maps of those. Passing or returning a Tensor is a TraceError.
// The graph's input tree is a tuple with one entry per argument (None for statics), as
// trace_dynamic's, which this is the compile-time form of.
template <typename F, typename... Args>
Graph trace(F&& fn, const Args&... args) {
  trace_detail::Tracer tracer;
  trace_detail::ArgBinder binder{tracer};
  std::vector<TreeDef> arg_trees(sizeof...(Args));
  size_t i = 0;
  // Braced initialisation binds the arguments left to right, the input order.
  auto bound = std::tuple{[&](const auto& a) {
    size_t k = i++;
    return binder.bind(a, arg_trees[k], k);
  }(args)...};
  auto result = std::apply(std::forward<F>(fn), std::move(bound));
  return tracer.finish(trace_detail::to_tree(result), TreeDef::tuple(std::move(arg_trees)));
}

}  // namespace evoxc
