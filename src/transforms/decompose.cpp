// The decomposition table and the rewrite that expands, before lowering, the ops a backend does not lower itself.
#include "evoxc/transforms/decompose.h"

#include <memory>
#include <string>

#include "evoxc/ir/builder.h"
#include "evoxc/ops/op_def.h"
#include "evoxc/trace/trace.h"
#include "transforms/families.h"

namespace evoxc {

namespace {

// An expansion emits ops that may have decompositions of their own (matrix_exp solves with LU); a decomposition
// that led back to its own op would never end, so nesting deeper than this is a bug.
constexpr int kMaxDepth = 8;

bool expands(const Operation& op, const RuleTableBase& native) {
  return !op.is_terminator() && op.regions().empty() && !native.has(op.op_id()) && decompositions().has(op.op_id());
}

// A custom op (block_call) the backend has no rule for: its portable body, inlined.
bool inlines(const Operation& op, const RuleTableBase& native) {
  return !op.regions().empty() && op_def(op).inline_region && !native.has(op.op_id());
}

bool any_expands(const Block& b, const RuleTableBase& native) {
  for (const auto& op : b.operations()) {
    if (expands(*op, native) || inlines(*op, native)) return true;
    for (const auto& r : op->regions())
      if (any_expands(r->block(), native)) return true;
  }
  return false;
}

Graph decompose_at(const Graph& graph, const RuleTableBase& native, int depth);

// The op's decomposition as a graph of its own over its operand types, itself decomposed, every op at the op's
// location.
Graph expansion(const Operation& op, const RuleTableBase& native, int depth) {
  if (depth >= kMaxDepth)
    throw InternalError("decompose: evoxc." + op.name() + " at " + op.location().to_string() + " still expands after " +
                        std::to_string(kMaxDepth) + " nested decompositions (a decomposition that emits its own op)");
  const DecomposeRule& rule = decompositions().get(op);
  std::vector<TraceArg> args;
  args.reserve(op.num_operands());
  for (const Value* v : op.operands()) args.push_back(arg_leaf(TensorSpec(v->type().shape, v->type().dtype)));
  Graph g = trace_dynamic(
      [&](const std::vector<TracedArg>& in) {
        LocationScope scope(TraceContext::current(), op.location());
        std::vector<SymbolicTensor> operands;
        operands.reserve(in.size());
        for (const TracedArg& a : in) operands.push_back(std::get<SymbolicTensor>(a.leaf()));
        std::vector<SymbolicTensor> outs = rule(op, operands);
        if (outs.size() != op.num_results())
          throw InternalError("decompose: evoxc." + op.name() + "'s decomposition returned " +
                              std::to_string(outs.size()) + " values for its " + std::to_string(op.num_results()) +
                              " results");
        std::vector<Tree<SymbolicTensor>> kids;
        for (size_t i = 0; i < outs.size(); ++i) {
          if (outs[i].type() != op.result(i)->type())
            throw InternalError("decompose: evoxc." + op.name() + "'s decomposition returned " +
                                outs[i].type().to_string() + " for its result " + std::to_string(i) + " of type " +
                                op.result(i)->type().to_string());
          kids.emplace_back(outs[i]);
        }
        return Tree<SymbolicTensor>::tuple(std::move(kids));
      },
      args);
  return decompose_at(g, native, depth + 1);
}

std::vector<Value*> rewrite_ops(const Block& src, Block& dst, ValueMap& map, const RuleTableBase& native, int depth,
                                bool inline_body);

void rewrite_block(const Block& src, Block& dst, ValueMap& map, const RuleTableBase& native, int depth) {
  rewrite_ops(src, dst, map, native, depth, false);
}

// Clones `src` into `dst` (whose arguments are mapped), expanding what the backend does not lower. With
// `inline_body` the terminator is not cloned: its operands, mapped, are returned (the values an inlined region
// gives its op's results).
std::vector<Value*> rewrite_ops(const Block& src, Block& dst, ValueMap& map, const RuleTableBase& native, int depth,
                                bool inline_body) {
  Builder b(dst);
  for (const auto& op : src.operations()) {
    if (inline_body && op->is_terminator()) {
      std::vector<Value*> outs;
      for (const Value* v : op->operands()) outs.push_back(map.lookup_or_self(v));
      return outs;
    }
    if (inlines(*op, native)) {
      const Block& body = op->region(0).block();
      for (size_t i = 0; i < op->num_operands(); ++i) map.map(body.argument(i), map.lookup_or_self(op->operand(i)));
      std::vector<Value*> outs = rewrite_ops(body, dst, map, native, depth, true);
      for (size_t i = 0; i < op->num_results(); ++i) map.map(op->result(i), outs[i]);
      continue;
    }
    if (expands(*op, native)) {
      Graph g = expansion(*op, native, depth);
      if (g.module().functions().size() != 1)
        throw InternalError("decompose: evoxc." + op->name() + "'s decomposition made functions besides main");
      std::vector<Value*> args;
      args.reserve(op->num_operands());
      for (const Value* v : op->operands()) args.push_back(map.lookup_or_self(v));
      ValueMap inner;
      std::vector<Value*> outs = inline_block(b, g.main().entry(), args, inner);
      for (size_t i = 0; i < op->num_results(); ++i) map.map(op->result(i), outs[i]);
      continue;
    }
    Operation* c =
        clone_shell(b, *op, map, [&](const Block& rb, Block& cb) { rewrite_block(rb, cb, map, native, depth); });
    for (size_t i = 0; i < op->num_results(); ++i) map.map(op->result(i), c->result(i));
  }
  if (inline_body) throw InternalError("decompose: an inlined region does not end with evoxc.return");
  return {};
}

Graph decompose_at(const Graph& graph, const RuleTableBase& native, int depth) {
  const Module& m = graph.module();
  bool any = false;
  for (const auto& f : m.functions()) any = any || any_expands(f->entry(), native);
  if (!any) return graph;
  auto out = std::make_shared<Module>(m.name(), m.version());
  for (const auto& f : m.functions()) {
    Function& nf = out->add_function(f->name());
    nf.result_types() = f->result_types();
    ValueMap map;
    for (const auto& a : f->entry().arguments()) map.map(a.get(), nf.entry().add_argument(a->type()));
    rewrite_block(f->entry(), nf.entry(), map, native, depth);
  }
  Graph g(std::move(out), graph.input_tree(), graph.output_tree(), graph.static_values());
  try {
    verify(g);
  } catch (const VerifyError& e) {
    throw InternalError(std::string("decompose built an invalid graph (a decomposition bug): ") + e.what());
  }
  return g;
}

}  // namespace

const DecomposeTable& decompositions() {
  static const std::unique_ptr<DecomposeTable> table = [] {
    auto t = std::make_unique<DecomposeTable>("decompose");
    transforms::install_linalg_decompositions(*t);
    transforms::install_random_decompositions(*t);
    transforms::install_extension_decompositions(*t);
    transforms::install_sparse_decompositions(*t);
    return t;
  }();
  return *table;
}

Graph decompose(const Graph& graph, const RuleTableBase& native) { return decompose_at(graph, native, 0); }

bool DecomposedCoverage::has(uint32_t id) const {
  return native_.has(id) || decompositions().has(id) || op_def(id).inline_region;
}

const std::string* DecomposedCoverage::deferral(uint32_t id) const { return has(id) ? nullptr : native_.deferral(id); }

}  // namespace evoxc
