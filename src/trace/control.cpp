// Tracing of control flow: regions are traced by pushing their blocks on the trace context.
#include "evoxc/trace/control.h"

#include <memory>

#include "evoxc/core/error.h"
#include "evoxc/ops/op_def.h"

namespace evoxc {

namespace control_detail {

namespace {

// Pops the pushed block however the traced function leaves.
class BlockScope {
 public:
  BlockScope(TraceContext& ctx, Block* b) : ctx_(ctx) { ctx_.push_block(b); }
  ~BlockScope() { ctx_.pop_block(); }
  BlockScope(const BlockScope&) = delete;
  BlockScope& operator=(const BlockScope&) = delete;

 private:
  TraceContext& ctx_;
};

// Traces every region of `op` and ends each block with a return; returns the output trees.
std::vector<Tree<SymbolicTensor>> trace_regions(TraceContext& ctx, Operation& op, const std::string& name,
                                                const std::vector<RegionSpec>& regions) {
  std::vector<Tree<SymbolicTensor>> outs;
  for (size_t r = 0; r < regions.size(); ++r) {
    Block& b = op.region(r).block();
    std::vector<SymbolicTensor> args;
    for (const TensorType& t : regions[r].arg_types) args.emplace_back(&ctx, b.add_argument(t));
    Tree<SymbolicTensor> out;
    {
      BlockScope scope(ctx, &b);
      out = regions[r].fn(args);
    }
    std::vector<Value*> values;
    for (const SymbolicTensor& l : out.flatten()) {
      if (!l.defined())
        throw TraceError(name + ": region " + std::to_string(r) + " returned an undefined SymbolicTensor");
      if (l.context() != &ctx)
        throw TraceError(name + ": region " + std::to_string(r) + " returned a value of another trace");
      values.push_back(l.value());
    }
    b.append("return", std::move(values), {}, {}, {});
    outs.push_back(std::move(out));
  }
  return outs;
}

std::vector<TensorType> infer_with_regions(const std::string& name, const std::vector<TensorType>& operand_types,
                                           const AttrMap& attrs, const Operation& op, const Location& loc) {
  const OpDef& def = get_op(name);
  try {
    infer_result_types(def, operand_types, attrs);
    return def.infer_regions(operand_types, attrs, op);
  } catch (const ShapeError& e) {
    throw ShapeError(std::string(e.what()) + " (at " + loc.to_string() + ")");
  } catch (const TypeError& e) {
    throw TypeError(std::string(e.what()) + " (at " + loc.to_string() + ")");
  }
}

void leaf_paths(const Tree<SymbolicTensor>& t, const std::string& path, std::vector<std::string>& out) {
  switch (t.kind()) {
    case TreeKind::Leaf: out.push_back(path.empty() ? "the root" : path); return;
    case TreeKind::None: return;
    case TreeKind::Dict:
      for (size_t i = 0; i < t.size(); ++i) leaf_paths(t.children()[i], path + "['" + t.keys()[i] + "']", out);
      return;
    default:
      for (size_t i = 0; i < t.size(); ++i) leaf_paths(t.children()[i], path + "[" + std::to_string(i) + "]", out);
  }
}

}  // namespace

std::vector<TensorType> types_of(const std::vector<SymbolicTensor>& v) {
  std::vector<TensorType> t;
  for (const auto& x : v) t.push_back(x.type());
  return t;
}

std::vector<TensorType> slice_types(const std::string& op, const std::vector<SymbolicTensor>& xs) {
  std::vector<TensorType> t;
  for (size_t i = 0; i < xs.size(); ++i) {
    const TensorType& x = xs[i].type();
    if (x.rank() == 0)
      throw TraceError(op + ": xs leaf " + std::to_string(i) + " is " + x.to_string() +
                       "; every xs leaf must have rank >= 1 (it is scanned along axis 0)");
    t.emplace_back(x.dtype, Shape(std::vector<DimExpr>(x.shape.begin() + 1, x.shape.end())));
  }
  return t;
}

void require_same_tree(const std::string& op, const Tree<SymbolicTensor>& want, const std::string& want_what,
                       const Tree<SymbolicTensor>& got, const std::string& got_what) {
  std::string why;
  if (auto path = want.first_mismatch(got, &why))
    throw TraceError(op + ": " + got_what + " returns a different structure than " + want_what + " at " +
                     (path->empty() ? std::string("the root") : *path) + ": " + why + " (" + got.structure_string() +
                     " vs " + want.structure_string() + ")");
  std::vector<SymbolicTensor> a = want.flatten(), b = got.flatten();
  std::vector<std::string> paths;
  leaf_paths(want, "", paths);
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (!a[i].defined() || !b[i].defined()) throw TraceError(op + ": an undefined SymbolicTensor at " + paths[i]);
    if (a[i].type() != b[i].type())
      throw TraceError(op + ": " + got_what + " returns " + b[i].type().to_string() + " at " + paths[i] + " where " +
                       want_what + " returns " + a[i].type().to_string());
  }
}

std::vector<SymbolicTensor> emit_control(const std::string& op, const std::vector<SymbolicTensor>& operands,
                                         AttrMap attrs, const std::vector<RegionSpec>& regions,
                                         const OutputCheck& check, const std::source_location& src) {
  TraceContext* ctx = nullptr;
  for (const auto& o : operands)
    if (o.context()) ctx = o.context();
  if (!ctx) ctx = &TraceContext::current();
  Location loc = make_location(src);
  std::vector<Value*> values;
  std::vector<TensorType> types;
  for (const auto& o : operands) {
    if (!o.defined()) throw TraceError(op + " at " + loc.to_string() + ": an operand is an undefined SymbolicTensor");
    if (o.context() != ctx) throw TraceError(op + " at " + loc.to_string() + ": an operand belongs to another trace");
    values.push_back(o.value());
    types.push_back(o.type());
  }
  // Operand checks first, so a bad predicate is reported before any branch is traced.
  try {
    infer_result_types(get_op(op), types, attrs);
  } catch (const ShapeError& e) {
    throw ShapeError(std::string(e.what()) + " (at " + loc.to_string() + ")");
  } catch (const TypeError& e) {
    throw TypeError(std::string(e.what()) + " (at " + loc.to_string() + ")");
  }
  // One pass: the op is built detached, its regions traced into it once (so a region
  // function's side effects run once per trace), then its result types are inferred from
  // the regions and it is inserted.
  auto detached = Operation::create(get_op(op), values, {}, attrs, loc, regions.size());
  std::vector<Tree<SymbolicTensor>> outs = trace_regions(*ctx, *detached, op, regions);
  check(outs);
  detached->set_result_types(infer_with_regions(op, types, attrs, *detached, loc));
  Operation* real = ctx->block().push_back(std::move(detached));
  std::vector<SymbolicTensor> out;
  for (const auto& r : real->results()) out.emplace_back(ctx, r.get());
  return out;
}

}  // namespace control_detail

DType fori_index_dtype(const Operand& lower, const Operand& upper) {
  for (const Operand* o : {&lower, &upper}) {
    if (o->is_tensor()) {
      const TensorType& t = o->tensor().type();
      if (t.rank() != 0 || !(t.dtype == DType::I32 || t.dtype == DType::I64))
        throw TraceError("fori_loop: a bound must be a rank-0 int32 or int64 SymbolicTensor or a host integer, got " +
                         t.to_string());
      return t.dtype;
    }
    if (o->kind() != Operand::Kind::Int) throw TraceError("fori_loop: bounds must be integers");
  }
  return DType::I32;
}

SymbolicTensor fori_index(const Operand& v, DType dtype, const std::source_location& loc) {
  if (v.is_tensor()) return v.tensor().dtype() == dtype ? v.tensor() : convert(v.tensor(), dtype, loc);
  return fill(Shape(), v, dtype, loc);
}

}  // namespace evoxc
