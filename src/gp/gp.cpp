// Programs as data: primitive sets, populations packed into postfix arrays, their graphs, and the evaluator.
#include "evoxc/gp/gp.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "evoxc/core/error.h"
#include "evoxc/core/half.h"
#include "evoxc/trace/call.h"
#include "evoxc/trace/ops.h"
#include "evoxc/trace/postfix.h"
#include "evoxc/trace/trace.h"
#include "evoxc/transforms/batch.h"
#include "evoxc/transforms/transforms.h"

namespace evoxc::gp {
namespace {

constexpr const char* kOp = "postfix_eval";

std::string node_where(size_t program, size_t node) {
  return "program " + std::to_string(program) + ", node " + std::to_string(node);
}

}  // namespace

// ------------------------------------------------------------------------------------------------ PrimitiveSet

PrimitiveSet PrimitiveSet::standard() {
  PrimitiveSet s;
  // Binary first, in the order DEAP's and Operon's examples list them.
  s.add("add", "$0 $1 add");
  s.add("sub", "$0 $1 subtract");
  s.add("mul", "$0 $1 multiply");
  s.add("div", "$0 $1 divide");
  s.add("pdiv", "$1 abs 1e-06 greater $0 $1 divide 1 select");
  s.add("aq", "$0 1 $1 square add sqrt divide");
  s.add("max", "$0 $1 maximum");
  s.add("min", "$0 $1 minimum");
  s.add("pow", "$0 $1 power");
  s.add("neg", "$0 neg");
  s.add("abs", "$0 abs");
  s.add("square", "$0 square");
  s.add("cube", "$0 $0 square multiply");
  s.add("sqrt", "$0 sqrt");
  s.add("sqrtabs", "$0 abs sqrt");
  s.add("exp", "$0 exp");
  s.add("log", "$0 log");
  s.add("logabs", "$0 abs log");
  s.add("plog", "$0 abs 1e-06 greater $0 abs log 0 select");
  s.add("sin", "$0 sin");
  s.add("cos", "$0 cos");
  s.add("tan", "$0 tan");
  s.add("tanh", "$0 tanh");
  s.add("sigmoid", "$0 sigmoid");
  return s;
}

int32_t PrimitiveSet::add(const std::string& name, const std::string& body) {
  if (name.empty() || name.find_first_of("=; ()") != std::string::npos)
    throw TypeError("PrimitiveSet.add: primitive name '" + name +
                    "' must be non-empty and free of '=', ';', spaces and parentheses");
  if (find(name) >= 0) throw TypeError("PrimitiveSet.add: primitive '" + name + "' is defined already");
  std::string entry = name + "=" + body;
  std::vector<PostfixPrimitive> parsed = parse_postfix_primitives(entry, kOp);
  prims_.push_back({name, body, std::move(parsed.at(0))});
  attr_ += (attr_.empty() ? "" : ";") + entry;
  return kPostfixFirstPrimitive + static_cast<int32_t>(prims_.size() - 1);
}

int32_t PrimitiveSet::find(std::string_view name) const {
  for (size_t i = 0; i < prims_.size(); ++i)
    if (prims_[i].name == name) return kPostfixFirstPrimitive + static_cast<int32_t>(i);
  return -1;
}

int32_t PrimitiveSet::code(std::string_view name) const {
  int32_t c = find(name);
  if (c >= 0) return c;
  std::string known;
  for (const Primitive& p : prims_) known += (known.empty() ? "" : ", ") + p.name;
  throw TypeError("unknown primitive '" + std::string(name) + "'; this set has: " + known +
                  " (add one with PrimitiveSet.add(name, body))");
}

int PrimitiveSet::arity(int32_t code) const {
  const int64_t k = code - kPostfixFirstPrimitive;
  if (k < 0 || k >= static_cast<int64_t>(prims_.size()))
    throw TypeError("PrimitiveSet: code " + std::to_string(code) + " names no primitive");
  return prims_[static_cast<size_t>(k)].parsed.arity;
}

// ------------------------------------------------------------------------------------------------ Population

Population::Population(PrimitiveSet set, int64_t num_vars) : set_(std::move(set)), num_vars_(num_vars) {
  if (num_vars < 1) throw ValidationError("Population: num_vars must be >= 1, got " + std::to_string(num_vars));
}

size_t Population::finish(int64_t length) {
  const size_t p = size();
  offsets_.push_back(codes_.size());
  const_offsets_.push_back(consts_.size());
  max_len_ = std::max(max_len_, length);
  max_consts_ = std::max(max_consts_, static_cast<int64_t>(const_offsets_[p + 1] - const_offsets_[p]));
  return p;
}

size_t Population::add_postfix(std::span<const Node> nodes) {
  const size_t p = size();
  const size_t c0 = codes_.size(), k0 = consts_.size();
  try {
    int64_t depth = 0;
    for (size_t i = 0; i < nodes.size(); ++i) {
      const Node& n = nodes[i];
      if (n.code == kPostfixVar) {
        if (n.arg < 0 || n.arg >= num_vars_)
          throw ValidationError("Population: " + node_where(p, i) + ": variable " + std::to_string(n.arg) +
                                " is outside [0, " + std::to_string(num_vars_) + ")");
        codes_.push_back(kPostfixVar);
        args_.push_back(n.arg);
        ++depth;
      } else if (n.code == kPostfixConst) {
        codes_.push_back(kPostfixConst);
        args_.push_back(static_cast<int32_t>(consts_.size() - k0));
        consts_.push_back(n.value);
        ++depth;
      } else {
        int arity = 0;
        try {
          arity = set_.arity(n.code);
        } catch (const TypeError&) {
          throw ValidationError("Population: " + node_where(p, i) + ": code " + std::to_string(n.code) +
                                " is neither a variable, a constant nor a primitive of the set");
        }
        if (depth < arity)
          throw ValidationError("Population: " + node_where(p, i) + ": '" +
                                set_.primitives()[static_cast<size_t>(n.code - kPostfixFirstPrimitive)].name +
                                "' takes " + std::to_string(arity) + " values, the program has " +
                                std::to_string(depth) + " before it");
        codes_.push_back(n.code);
        args_.push_back(0);
        depth -= arity - 1;
      }
    }
    if (depth != 1)
      throw ValidationError("Population: program " + std::to_string(p) + " leaves " + std::to_string(depth) +
                            " values; a program is one whole expression");
  } catch (...) {
    codes_.resize(c0);
    args_.resize(c0);
    consts_.resize(k0);
    throw;
  }
  return finish(static_cast<int64_t>(codes_.size() - c0));
}

size_t Population::add_prefix(std::span<const Node> nodes) {
  // Prefix to postfix: each node's subtree ends where its operands' do; emit a primitive after its
  // operands, which are consecutive subtrees in order.
  const size_t p = size();
  std::vector<Node>& post = scratch_post_;
  post.clear();
  // Pending primitives with how many operands they still wait for.
  std::vector<std::pair<Node, int>>& pending = scratch_pending_;
  pending.clear();
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    int arity = 0;
    if (n.code != kPostfixVar && n.code != kPostfixConst) {
      try {
        arity = set_.arity(n.code);
      } catch (const TypeError&) {
        throw ValidationError("Population: " + node_where(p, i) + ": code " + std::to_string(n.code) +
                              " is neither a variable, a constant nor a primitive of the set");
      }
    }
    if (i > 0 && pending.empty())
      throw ValidationError("Population: program " + std::to_string(p) + " is whole after " + std::to_string(i) +
                            " of its " + std::to_string(nodes.size()) + " prefix nodes");
    if (arity > 0) {
      pending.emplace_back(n, arity);
      continue;
    }
    post.push_back(n);
    // A finished operand completes the pending primitives whose last operand it was.
    while (!pending.empty() && --pending.back().second == 0) {
      post.push_back(pending.back().first);
      pending.pop_back();
    }
  }
  if (!pending.empty() || nodes.empty())
    throw ValidationError("Population: program " + std::to_string(p) + " ends with " + std::to_string(pending.size()) +
                          " primitives missing operands");
  return add_postfix(post);
}

size_t Population::add_prefix_text(std::string_view text, const std::vector<std::string>& var_names) {
  std::vector<Node> nodes;
  size_t i = 0;
  while (i < text.size()) {
    const char ch = text[i];
    if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '(' || ch == ')' || ch == ',') {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < text.size() && std::string_view(" \t\n(),").find(text[j]) == std::string_view::npos) ++j;
    const std::string tok(text.substr(i, j - i));
    i = j;
    if (int32_t c = set_.find(tok); c >= 0) {
      nodes.push_back(Node::primitive(c));
      continue;
    }
    auto v = std::find(var_names.begin(), var_names.end(), tok);
    if (v != var_names.end()) {
      nodes.push_back(Node::variable(static_cast<int32_t>(v - var_names.begin())));
      continue;
    }
    if (var_names.empty() && tok.size() > 1 && tok[0] == 'x' &&
        tok.find_first_not_of("0123456789", 1) == std::string::npos) {
      nodes.push_back(Node::variable(std::stoi(tok.substr(1))));
      continue;
    }
    char* end = nullptr;
    double value = std::strtod(tok.c_str(), &end);
    if (end != tok.c_str() && *end == '\0') {
      nodes.push_back(Node::constant(value));
      continue;
    }
    throw ValidationError("Population: token '" + tok + "' of program " + std::to_string(size()) +
                          " is neither a primitive of the set, a variable nor a number");
  }
  return add_prefix(nodes);
}

void Population::clear() {
  codes_.clear();
  args_.clear();
  consts_.clear();
  offsets_.assign(1, 0);
  const_offsets_.assign(1, 0);
  max_len_ = max_consts_ = 0;
}

std::vector<Node> Population::program(size_t p) const {
  if (p >= size()) throw ValidationError("Population: no program " + std::to_string(p));
  std::vector<Node> out;
  for (size_t i = offsets_[p]; i < offsets_[p + 1]; ++i) {
    Node n{codes_[i], args_[i], 0};
    if (n.code == kPostfixConst) n.value = consts_[const_offsets_[p] + static_cast<size_t>(n.arg)];
    out.push_back(n);
  }
  return out;
}

std::span<double> Population::constants(size_t p) {
  if (p >= size()) throw ValidationError("Population: no program " + std::to_string(p));
  return {consts_.data() + const_offsets_[p], const_offsets_[p + 1] - const_offsets_[p]};
}

std::span<const double> Population::constants(size_t p) const {
  if (p >= size()) throw ValidationError("Population: no program " + std::to_string(p));
  return {consts_.data() + const_offsets_[p], const_offsets_[p + 1] - const_offsets_[p]};
}

Tensor Population::rows(const std::vector<int32_t>& flat) const {
  Tensor t = Tensor::zeros({static_cast<int64_t>(size()), max_len_}, DType::I32);
  auto* d = t.data<int32_t>();
  for (size_t p = 0; p < size(); ++p)
    std::copy(flat.begin() + static_cast<ptrdiff_t>(offsets_[p]),
              flat.begin() + static_cast<ptrdiff_t>(offsets_[p + 1]), d + static_cast<int64_t>(p) * max_len_);
  return t;
}

Tensor Population::codes() const { return rows(codes_); }

Tensor Population::args() const { return rows(args_); }

Tensor Population::consts(DType dtype) const {
  if (!is_float(dtype))
    throw ValidationError("Population.consts: constants are float values; got dtype " + std::string(dtype_name(dtype)));
  const int64_t c = std::max<int64_t>(1, max_consts_);
  Tensor t = Tensor::zeros({static_cast<int64_t>(size()), c}, dtype);
  visit_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      T* d = t.data<T>();
      for (size_t p = 0; p < size(); ++p)
        for (size_t k = const_offsets_[p]; k < const_offsets_[p + 1]; ++k)
          d[static_cast<int64_t>(p) * c + static_cast<int64_t>(k - const_offsets_[p])] = static_cast<T>(consts_[k]);
    } else if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
      T* d = t.data<T>();
      for (size_t p = 0; p < size(); ++p)
        for (size_t k = const_offsets_[p]; k < const_offsets_[p + 1]; ++k)
          d[static_cast<int64_t>(p) * c + static_cast<int64_t>(k - const_offsets_[p])] =
              T(static_cast<float>(consts_[k]));
    }
  });
  return t;
}

Graph Population::to_graph(size_t p, const DimExpr& cases, DType dtype) const {
  const std::vector<Node> nodes = program(p);
  const int64_t c = std::max<int64_t>(1, max_consts_);
  std::vector<TensorSpec> specs(static_cast<size_t>(num_vars_), TensorSpec(Shape{cases}, dtype));
  return trace(
      [&](const std::vector<SymbolicTensor>& in, const SymbolicTensor& k) {
        TraceContext& ctx = *k.context();
        std::vector<SymbolicTensor> stack;
        for (const Node& n : nodes) {
          if (n.code == kPostfixVar) {
            stack.push_back(in[static_cast<size_t>(n.arg)]);
          } else if (n.code == kPostfixConst) {
            stack.push_back(reshape(slice(k, {n.arg}, {n.arg + 1}), Shape{}));
          } else {
            const PostfixPrimitive& prim =
                set_.primitives()[static_cast<size_t>(n.code - kPostfixFirstPrimitive)].parsed;
            const size_t base = stack.size() - static_cast<size_t>(prim.arity);
            std::vector<SymbolicTensor> local;
            for (const PostfixToken& tok : prim.body) {
              if (tok.kind == PostfixToken::Kind::Arg) {
                local.push_back(stack[base + static_cast<size_t>(tok.arg)]);
              } else if (tok.kind == PostfixToken::Kind::Literal) {
                local.push_back(ctx.scalar(Attribute(tok.literal), dtype, SrcLoc::current()));
              } else {
                const auto m = static_cast<size_t>(tok.op->min_operands);
                std::vector<SymbolicTensor> operands(local.end() - static_cast<ptrdiff_t>(m), local.end());
                local.resize(local.size() - m);
                local.push_back(ctx.emit1(*tok.op, operands, {}, SrcLoc::current()));
              }
            }
            stack.resize(base);
            stack.push_back(local.back());
          }
        }
        // A program of constants only is one value for every case.
        SymbolicTensor r = stack.back();
        if (r.rank() == 0) r = broadcast_to(r, Shape{cases});
        return r;
      },
      specs, TensorSpec(Shape{c}, dtype));
}

std::vector<Graph> Population::to_graphs(const DimExpr& cases, DType dtype) const {
  std::vector<Graph> out;
  out.reserve(size());
  for (size_t p = 0; p < size(); ++p) out.push_back(to_graph(p, cases, dtype));
  return out;
}

Graph jacobian_graph(const Population& pop, const std::vector<size_t>& programs, const DimExpr& cases, DType dtype) {
  if (programs.empty()) throw ValidationError("gp::jacobian_graph: give at least one program");
  std::vector<Graph> each;
  each.reserve(programs.size());
  for (size_t p : programs) {
    Graph g = pop.to_graph(p, cases, dtype);
    Graph j = jacfwd(g, ArgNums(1));
    std::vector<TensorSpec> vars(static_cast<size_t>(pop.num_vars()), TensorSpec(Shape{cases}, dtype));
    each.push_back(trace(
        [&](const std::vector<SymbolicTensor>& xs, const SymbolicTensor& k) {
          Tree<SymbolicTensor> in = Tree<SymbolicTensor>::tuple(
              {Tree<SymbolicTensor>::list(std::vector<Tree<SymbolicTensor>>(xs.begin(), xs.end())),
               Tree<SymbolicTensor>(k)});
          return std::pair<SymbolicTensor, SymbolicTensor>{call(g, in).leaf(), call(j, in).leaf()};
        },
        vars, TensorSpec(Shape{std::max<int64_t>(1, pop.max_constants())}, dtype)));
  }
  BatchOptions bo;
  std::vector<AxisTree> shared(static_cast<size_t>(pop.num_vars()), AxisTree());
  bo.axes = AxisTree::tuple({AxisTree::list(std::move(shared)), AxisTree(0)});
  return batch_functions(each, bo).graph;
}

// ------------------------------------------------------------------------------------------------ Evaluator

Graph evaluator_graph(const PrimitiveSet& set, int64_t num_vars, Loss loss, DType dtype) {
  const DimExpr P = Dim("P"), L = Dim("L"), C = Dim("C"), N = Dim("N");
  std::vector<TensorSpec> specs{TensorSpec(Shape{P, L}, DType::I32), TensorSpec(Shape{P, L}, DType::I32),
                                TensorSpec(Shape{P, C}, dtype), TensorSpec(Shape{num_vars, N}, dtype)};
  if (loss == Loss::MSE) specs.emplace_back(Shape{N}, dtype);
  const std::string attr = set.attribute();
  return trace(
      [&](const std::vector<SymbolicTensor>& in) {
        SymbolicTensor pred = postfix_eval(in[0], in[1], in[2], in[3], attr);
        if (loss == Loss::None) return pred;
        SymbolicTensor d = pred - in[4];
        return mean(d * d, {1});
      },
      specs);
}

Evaluator::Evaluator(const PrimitiveSet& set, int64_t num_vars, Loss loss, DType dtype, const std::string& backend)
    : attr_(set.attribute()),
      num_vars_(num_vars),
      loss_(loss),
      dtype_(dtype),
      graph_(evaluator_graph(set, num_vars, loss, dtype)),
      exe_(load(compile(lower(graph_, backend)))) {}

Tensor Evaluator::evaluate(const Population& pop, const Tensor& x, const Tensor& y) const {
  if (pop.primitive_set().attribute() != attr_)
    throw ValidationError("Evaluator.evaluate: the population's primitive set differs from this evaluator's");
  if (pop.num_vars() != num_vars_)
    throw ValidationError("Evaluator.evaluate: the population has " + std::to_string(pop.num_vars()) +
                          " variables, this evaluator " + std::to_string(num_vars_));
  std::vector<Tensor> in{pop.codes(), pop.args(), pop.consts(dtype_), x};
  if (loss_ == Loss::MSE) {
    if (!y.defined()) throw ValidationError("Evaluator.evaluate: the MSE loss needs the targets y");
    in.push_back(y);
  }
  std::vector<Tensor> out(1);
  exe_.execute(in, out);
  return out[0];
}

}  // namespace evoxc::gp
