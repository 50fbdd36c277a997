// jacfwd, jacrev and hessian (a basis of tangents or cotangents pushed through vectorized jvp/vjp), and the
// transforms over traceable functions.
#include "evoxc/transforms/transforms.h"
#include "transforms/driver.h"
#include "transforms/families.h"

namespace evoxc::transforms {

namespace {

// The leaves (flat input indices) of the arguments `argnums`, per argument.
std::vector<std::vector<size_t>> arg_leaves(const Graph& g, const ArgNums& argnums, const char* what) {
  const TreeDef& in = g.input_tree();
  if (in.kind() != TreeKind::Tuple)
    throw TransformError(std::string(what) + ": the graph's input tree is not a tuple of arguments");
  std::vector<size_t> off{0};
  for (const auto& c : in.children()) off.push_back(off.back() + c.num_leaves());
  std::vector<std::vector<size_t>> out;
  std::vector<TensorSpec> specs = g.input_specs();
  std::vector<std::string> paths = g.input_paths();
  if (argnums.nums.empty()) throw TransformError(std::string(what) + ": argnums is empty");
  for (int64_t a : argnums.nums) {
    int64_t r = a < 0 ? a + static_cast<int64_t>(in.size()) : a;
    if (r < 0 || r >= static_cast<int64_t>(in.size()))
      throw TransformError(std::string(what) + ": argnums " + std::to_string(a) + " is out of range for a graph of " +
                           std::to_string(in.size()) + " arguments");
    std::vector<size_t> leaves;
    for (size_t i = off[static_cast<size_t>(r)]; i < off[static_cast<size_t>(r) + 1]; ++i) {
      if (!has_tangent(specs[i].dtype))
        throw TransformError(std::string(what) + ": input " + paths[i] + " is " + specs[i].to_string() +
                             "; derivatives exist only for float inputs (take it out of argnums)");
      leaves.push_back(i);
    }
    out.push_back(std::move(leaves));
  }
  return out;
}

// An identity basis: [n] + shape, row k the k-th unit tensor of `shape` (n its element count).
SymbolicTensor basis(const Shape& shape, DType t) {
  DimExpr n = shape.num_elements();
  Shape sq{n, n};
  SymbolicTensor eye = convert(equal(iota(sq, 0), iota(sq, 1)), t);
  std::vector<DimExpr> d{n};
  d.insert(d.end(), shape.begin(), shape.end());
  return reshape(eye, Shape(std::move(d)));
}

// [n] + A  ->  A + B where n = |B| (moves the basis axis last, then splits it).
SymbolicTensor basis_last(const SymbolicTensor& x, const Shape& b) {
  SymbolicTensor y = x.rank() > 1 ? moveaxis(x, 0, -1) : x;
  std::vector<DimExpr> d(x.shape().begin() + 1, x.shape().end());
  d.insert(d.end(), b.begin(), b.end());
  return reshape(y, Shape(std::move(d)));
}

// [n] + B  ->  A + B where n = |A|.
SymbolicTensor basis_first(const SymbolicTensor& x, const Shape& a) {
  std::vector<DimExpr> d(a.begin(), a.end());
  d.insert(d.end(), x.shape().begin() + 1, x.shape().end());
  return reshape(x, Shape(std::move(d)));
}

// Assembles the result tree: each float output leaf becomes its Jacobian per argument (one
// tree per argnum, a tuple of them unless argnums is single); other output leaves are None.
Tree<SymbolicTensor> assemble(const Graph& g, const ArgNums& argnums, const std::vector<std::vector<size_t>>& leaves,
                              const std::function<SymbolicTensor(size_t out, size_t in)>& jac) {
  std::vector<TensorSpec> out_specs = g.output_specs();
  std::vector<Tree<SymbolicTensor>> per_out;
  for (size_t j = 0; j < out_specs.size(); ++j) {
    if (!has_tangent(out_specs[j].dtype)) {
      per_out.emplace_back();
      continue;
    }
    std::vector<Tree<SymbolicTensor>> per_arg;
    for (size_t a = 0; a < leaves.size(); ++a) {
      std::vector<SymbolicTensor> js;
      for (size_t i : leaves[a]) js.push_back(jac(j, i));
      int64_t r = argnums.nums[a] < 0 ? argnums.nums[a] + static_cast<int64_t>(g.input_tree().size()) : argnums.nums[a];
      per_arg.push_back(g.input_tree().children()[static_cast<size_t>(r)].unflatten(js));
    }
    per_out.push_back(argnums.single ? per_arg.front() : Tree<SymbolicTensor>::tuple(std::move(per_arg)));
  }
  // Rebuild the output structure with these subtrees at its leaves.
  size_t pos = 0;
  std::function<Tree<SymbolicTensor>(const TreeDef&)> walk = [&](const TreeDef& t) -> Tree<SymbolicTensor> {
    if (t.is_leaf()) return per_out.at(pos++);
    if (t.is_none()) return {};
    std::vector<Tree<SymbolicTensor>> kids;
    for (const auto& c : t.children()) kids.push_back(walk(c));
    return Tree<SymbolicTensor>::from_parts(t.kind(), std::move(kids), t.keys());
  };
  return walk(g.output_tree());
}

// What jacfwd and jacrev start from: the verified graph's differentiated leaves, its specs,
// and the new graph's trace with one input per input of `graph`.
struct JacobianBuild {
  std::vector<std::vector<size_t>> leaves;
  std::vector<TensorSpec> specs, out_specs;
  trace_detail::Tracer tracer;
  std::vector<SymbolicTensor> primals;
  JacobianBuild(const Graph& graph, const ArgNums& argnums, const char* what) {
    verify(graph);
    leaves = arg_leaves(graph, argnums, what);
    specs = graph.input_specs();
    out_specs = graph.output_specs();
    for (const auto& s : specs) primals.push_back(tracer.input(s));
  }
};

}  // namespace

Graph jacfwd_impl(const Graph& graph, const ArgNums& argnums) {
  JacobianBuild jb(graph, argnums, "jacfwd");
  auto& [leaves, specs, out_specs, tracer, primals] = jb;
  // jac[(out, in)] for every selected input leaf: one vectorized jvp each.
  std::map<std::pair<size_t, size_t>, SymbolicTensor> jac;
  for (const auto& arg : leaves)
    for (size_t i : arg) {
      if (jac.count({SIZE_MAX, i})) continue;
      jac[{SIZE_MAX, i}] = SymbolicTensor();
      std::vector<bool> mask(specs.size(), false);
      mask[i] = true;
      Graph j = jvp_raw(graph, &mask);
      AxisTree in_axes = AxisTree::tuple({AxisTree::none(), AxisTree(0)});
      // Every output mapped: the primal outputs are unused here (DCE drops them), and a
      // while_loop carries its primal beside the tangent, so they may come out batched.
      AxisTree out_axes = AxisTree(0);
      DimExpr n = specs[i].shape.num_elements();
      Graph vj = vectorize(finish_transform(j, {}), in_axes, out_axes, n);
      std::vector<SymbolicTensor> args = primals;
      args.push_back(basis(specs[i].shape, specs[i].dtype));
      std::vector<SymbolicTensor> outs = inline_graph(vj, args);
      size_t k = out_specs.size();
      for (size_t o = 0; o < out_specs.size(); ++o)
        if (has_tangent(out_specs[o].dtype)) jac[{o, i}] = basis_last(outs[k++], specs[i].shape);
    }
  Tree<SymbolicTensor> result = assemble(graph, argnums, leaves, [&](size_t o, size_t i) { return jac.at({o, i}); });
  Graph g = tracer.finish(result, graph.input_tree());
  return finish_transform(g, graph.static_values());
}

Graph jacrev_impl(const Graph& graph, const ArgNums& argnums) {
  JacobianBuild jb(graph, argnums, "jacrev");
  auto& [leaves, specs, out_specs, tracer, primals] = jb;
  // The float inputs, in leaf order: the outputs of vjp_seeded.
  std::vector<size_t> float_in;
  for (size_t i = 0; i < specs.size(); ++i)
    if (has_tangent(specs[i].dtype)) float_in.push_back(i);
  std::map<std::pair<size_t, size_t>, SymbolicTensor> jac;
  for (size_t o = 0; o < out_specs.size(); ++o) {
    if (!has_tangent(out_specs[o].dtype)) continue;
    std::vector<bool> seeded(out_specs.size(), false);
    seeded[o] = true;
    Graph h = vjp_seeded(graph, seeded);
    std::vector<AxisTree> in_kids(specs.size() + out_specs.size(), AxisTree::none());
    in_kids[specs.size() + o] = AxisTree(0);
    DimExpr m = out_specs[o].shape.num_elements();
    Graph vh = vectorize(h, AxisTree::tuple(std::move(in_kids)), AxisTree(0), m);
    std::vector<SymbolicTensor> args = primals;
    args.push_back(basis(out_specs[o].shape, out_specs[o].dtype));
    std::vector<SymbolicTensor> outs = inline_graph(vh, args);
    for (size_t k = 0; k < float_in.size(); ++k) jac[{o, float_in[k]}] = basis_first(outs[k], out_specs[o].shape);
  }
  Tree<SymbolicTensor> result = assemble(graph, argnums, leaves, [&](size_t o, size_t i) { return jac.at({o, i}); });
  Graph g = tracer.finish(result, graph.input_tree());
  return finish_transform(g, graph.static_values());
}

}  // namespace evoxc::transforms

namespace evoxc {

Graph jacfwd(const Graph& graph, const ArgNums& argnums) { return transforms::jacfwd_impl(graph, argnums); }
Graph jacrev(const Graph& graph, const ArgNums& argnums) { return transforms::jacrev_impl(graph, argnums); }
Graph hessian(const Graph& graph, const ArgNums& argnums) {
  return transforms::jacfwd_impl(transforms::jacrev_impl(graph, argnums), argnums);
}

namespace transforms {

// Strips the mapped axis from every TensorSpec leaf of the arguments; returns the batch
// extent all mapped leaves agree on.
DimExpr strip_batch(std::vector<TraceArg>& args, const AxisTree& in_axes, const char* what) {
  std::optional<DimExpr> size;
  std::string first;
  std::function<void(TraceArg&, const AxisTree&, const std::string&)> walk = [&](TraceArg& t, const AxisTree& a,
                                                                                 const std::string& path) {
    if (t.is_leaf()) {
      if (a.is_none()) return;
      if (!a.is_leaf())
        throw TransformError(std::string(what) + ": in_axes has a container where argument " + path + " is a leaf");
      auto* spec = std::get_if<TensorSpec>(&t.leaf());
      if (!spec) return;  // a static value is never mapped
      auto r = static_cast<int64_t>(spec->shape.rank());
      int64_t ax = a.leaf() < 0 ? a.leaf() + r : a.leaf();
      if (ax < 0 || ax >= r)
        throw TransformError(std::string(what) + ": in_axes " + std::to_string(a.leaf()) + " for argument " + path +
                             " (" + spec->to_string() + ") is out of range");
      DimExpr n = spec->shape[static_cast<size_t>(ax)];
      if (!size) {
        size = n;
        first = path;
      } else if (*size != n) {
        throw TransformError(std::string(what) + ": argument " + path + " has batch extent " + n.to_string() +
                             " on its mapped axis, but " + first + " has " + size->to_string() +
                             "; every mapped input must have the same batch extent");
      }
      spec->shape.dims().erase(spec->shape.dims().begin() + ax);
      return;
    }
    if (a.is_none() || t.is_none()) return;
    if (a.is_leaf()) {
      std::vector<TraceArg> kids(t.children().begin(), t.children().end());
      for (size_t i = 0; i < kids.size(); ++i) walk(kids[i], a, path + "[" + std::to_string(i) + "]");
      t = TraceArg::from_parts(t.kind(), std::move(kids), t.keys());
      return;
    }
    if (a.kind() != t.kind() || a.size() != t.size())
      throw TransformError(std::string(what) + ": in_axes " + a.structure_string() + " does not match argument " +
                           path + " " + t.structure_string());
    std::vector<TraceArg> kids(t.children().begin(), t.children().end());
    for (size_t i = 0; i < kids.size(); ++i) walk(kids[i], a.children()[i], path + "[" + std::to_string(i) + "]");
    t = TraceArg::from_parts(t.kind(), std::move(kids), t.keys());
  };
  std::vector<TraceArg> kids(args.begin(), args.end());
  TraceArg whole = TraceArg::tuple(std::move(kids));
  walk(whole, in_axes, "");
  args.assign(whole.children().begin(), whole.children().end());
  if (!size)
    throw TransformError(std::string(what) + ": no input is mapped (every in_axes is None); nothing to vectorize over");
  return *size;
}

}  // namespace transforms

GraphFunction vmap(TraceFunction fn, AxisTree in_axes, AxisTree out_axes) {
  return [fn = std::move(fn), in_axes = std::move(in_axes),
          out_axes = std::move(out_axes)](const std::vector<TraceArg>& args) {
    std::vector<TraceArg> stripped = args;
    DimExpr size = transforms::strip_batch(stripped, in_axes, "vmap");
    return vectorize(trace_dynamic(fn, stripped), in_axes, out_axes, size);
  };
}

GraphFunction grad(TraceFunction fn, ArgNums argnums, bool has_aux) {
  return [fn = std::move(fn), argnums = std::move(argnums), has_aux](const std::vector<TraceArg>& args) {
    return grad(trace_dynamic(fn, args), argnums, has_aux);
  };
}

GraphFunction value_and_grad(TraceFunction fn, ArgNums argnums, bool has_aux) {
  return [fn = std::move(fn), argnums = std::move(argnums), has_aux](const std::vector<TraceArg>& args) {
    return value_and_grad(trace_dynamic(fn, args), argnums, has_aux);
  };
}

GraphFunction jvp(TraceFunction fn) {
  return [fn = std::move(fn)](const std::vector<TraceArg>& args) { return jvp(trace_dynamic(fn, args)); };
}
GraphFunction vjp(TraceFunction fn) {
  return [fn = std::move(fn)](const std::vector<TraceArg>& args) { return vjp(trace_dynamic(fn, args)); };
}
GraphFunction jacfwd(TraceFunction fn, ArgNums argnums) {
  return [fn = std::move(fn), argnums = std::move(argnums)](const std::vector<TraceArg>& args) {
    return jacfwd(trace_dynamic(fn, args), argnums);
  };
}
GraphFunction jacrev(TraceFunction fn, ArgNums argnums) {
  return [fn = std::move(fn), argnums = std::move(argnums)](const std::vector<TraceArg>& args) {
    return jacrev(trace_dynamic(fn, args), argnums);
  };
}
GraphFunction hessian(TraceFunction fn, ArgNums argnums) {
  return [fn = std::move(fn), argnums = std::move(argnums)](const std::vector<TraceArg>& args) {
    return hessian(trace_dynamic(fn, args), argnums);
  };
}

}  // namespace evoxc
