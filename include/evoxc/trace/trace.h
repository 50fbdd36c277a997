// trace(): turns a C++ callable over SymbolicTensors into a Graph.
#pragma once

#include <map>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "evoxc/core/tree.h"
#include "evoxc/ir/graph.h"
#include "evoxc/trace/symbolic_tensor.h"

namespace evoxc {

namespace trace_detail {

template <typename T>
inline constexpr bool is_static_v = std::is_arithmetic_v<T> || std::is_same_v<T, std::string> ||
                                    std::is_same_v<T, const char*> || std::is_same_v<T, DType>;

// Maps one trace argument (spec, tree of specs, static value) to what the traced
// function receives, recording input leaves and static values in the context.
struct ArgBinder {
  TraceContext& ctx;
  AttrMap& statics;

  SymbolicTensor bind(const TensorSpec& s, TreeDef& tree, const std::string&) {
    tree = TreeDef(LeafMark{});
    return ctx.add_input(s);
  }
  Tree<SymbolicTensor> bind(const Tree<TensorSpec>& t, TreeDef& tree, const std::string&) {
    tree = tree_structure(t);
    return t.map([&](const TensorSpec& s) { return ctx.add_input(s); });
  }
  std::vector<SymbolicTensor> bind(const std::vector<TensorSpec>& v, TreeDef& tree, const std::string&) {
    std::vector<TreeDef> kids(v.size(), TreeDef(LeafMark{}));
    tree = TreeDef::list(std::move(kids));
    std::vector<SymbolicTensor> out;
    for (const auto& s : v) out.push_back(ctx.add_input(s));
    return out;
  }
  std::map<std::string, SymbolicTensor> bind(const std::map<std::string, TensorSpec>& m, TreeDef& tree,
                                             const std::string&) {
    std::map<std::string, TreeDef> kids;
    std::map<std::string, SymbolicTensor> out;
    for (const auto& [k, s] : m) {  // std::map iterates in key order, the flattening order
      kids.emplace(k, TreeDef(LeafMark{}));
      out.emplace(k, ctx.add_input(s));
    }
    tree = TreeDef::dict(std::move(kids));
    return out;
  }
  std::map<std::string, Tree<SymbolicTensor>> bind(const std::map<std::string, Tree<TensorSpec>>& m, TreeDef& tree,
                                                   const std::string&) {
    std::map<std::string, TreeDef> kids;
    std::map<std::string, Tree<SymbolicTensor>> out;
    for (const auto& [k, s] : m) {
      kids.emplace(k, tree_structure(s));
      out.emplace(k, s.map([&](const TensorSpec& x) { return ctx.add_input(x); }));
    }
    tree = TreeDef::dict(std::move(kids));
    return out;
  }
  [[noreturn]] SymbolicTensor bind(const Tensor&, TreeDef&, const std::string& path);
  template <typename T>
  requires is_static_v<T> T bind(const T& v, TreeDef& tree, const std::string& path) {
    tree = TreeDef();
    if constexpr (std::is_same_v<T, bool>) {
      statics[path] = v;
    } else if constexpr (std::is_integral_v<T>) {
      statics[path] = static_cast<int64_t>(v);
    } else if constexpr (std::is_floating_point_v<T>) {
      statics[path] = static_cast<double>(v);
    } else if constexpr (std::is_same_v<T, DType>) {
      statics[path] = v;
    } else {
      statics[path] = std::string(v);
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

// Appends the return op and builds the Graph.
Graph finish_trace(TraceContext& ctx, const Tree<SymbolicTensor>& outputs, TreeDef inputs, AttrMap statics);

}  // namespace trace_detail

// Traces `fn` over the given arguments and returns its Graph. Each argument is one of:
//  - TensorSpec → the function receives a SymbolicTensor;
//  - Tree<TensorSpec>, std::vector<TensorSpec>, std::map<std::string, TensorSpec>
//    (or of Tree<TensorSpec>) → the same structure of SymbolicTensors;
//  - a static value (bool, integer, floating point, std::string, DType) → passed through
//    unchanged and snapshotted into the graph (a new value means a new graph).
// The function returns a SymbolicTensor, a Tree<SymbolicTensor>, or tuples, pairs,
// vectors and string-keyed maps of those. Passing or returning a Tensor is a TraceError.
// The graph's input tree is a tuple with one entry per argument (None for statics).
template <typename F, typename... Args>
Graph trace(F&& fn, const Args&... args) {
  TraceContext ctx;
  AttrMap statics;
  trace_detail::ArgBinder binder{ctx, statics};
  std::vector<TreeDef> arg_trees(sizeof...(Args));
  size_t i = 0;
  auto bound = std::tuple{[&](const auto& a) {
    size_t k = i++;
    return binder.bind(a, arg_trees[k], "[" + std::to_string(k) + "]");
  }(args)...};
  auto result = std::apply(std::forward<F>(fn), std::move(bound));
  return trace_detail::finish_trace(ctx, trace_detail::to_tree(result), TreeDef::tuple(std::move(arg_trees)),
                                    std::move(statics));
}

}  // namespace evoxc
