// Tracing of control flow: a detached op per call, each region traced into it once through the Builder, then inserted.
#include "evoxc/trace/control.h"

#include <memory>

#include "emit.h"
#include "evoxc/core/error.h"
#include "evoxc/ops/op_def.h"

namespace evoxc {

namespace control_detail {

namespace {

// Pops the pushed block however the traced function leaves.
class BlockScope {
 public:
  BlockScope(TraceContext& ctx, Block& b) : ctx_(ctx) { ctx_.push_block(b); }
  ~BlockScope() { ctx_.pop_block(); }
  BlockScope(const BlockScope&) = delete;
  BlockScope& operator=(const BlockScope&) = delete;

 private:
  TraceContext& ctx_;
};

// Traces every region of the detached `op` once and ends each block with a return;
// returns the output trees.
std::vector<Tree<SymbolicTensor>> trace_regions(TraceContext& ctx, Operation& op,
                                                const std::vector<RegionSpec>& regions) {
  std::vector<Tree<SymbolicTensor>> outs;
  outs.reserve(regions.size());
  for (size_t r = 0; r < regions.size(); ++r) {
    Block& b = op.region(r).block();
    std::vector<SymbolicTensor> args;
    args.reserve(regions[r].arg_types.size());
    for (const TensorType& t : regions[r].arg_types) args.push_back(ctx.wrap(b.add_argument(t)));
    BlockScope scope(ctx, b);
    Tree<SymbolicTensor> out = regions[r].fn(args);
    std::vector<Value*> values;
    for (const SymbolicTensor& l : out.flatten()) {
      if (!l.defined())
        throw TraceError(op.name() + ": region " + std::to_string(r) + " returned an undefined SymbolicTensor");
      if (l.generation() != ctx.generation())
        throw TraceError(op.name() + ": region " + std::to_string(r) + " returned a value of another trace");
      values.push_back(l.value());
    }
    // Region terminators carry no location, as main's.
    ctx.set_location({});
    ctx.builder().create_return(std::move(values));
    outs.push_back(std::move(out));
  }
  return outs;
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

const OpDef& cond_op() { return EVOXC_OP("cond"); }
const OpDef& while_loop_op() { return EVOXC_OP("while_loop"); }
const OpDef& scan_op() { return EVOXC_OP("scan"); }

std::vector<SymbolicTensor> emit_control(const OpDef& def, const std::vector<SymbolicTensor>& operands, AttrMap attrs,
                                         const std::vector<RegionSpec>& regions, const OutputCheck& check,
                                         const std::source_location& src) {
  TraceContext* ctx = nullptr;
  for (const auto& o : operands)
    if (o.defined()) {
      ctx = o.context();  // checked: the operand belongs to the innermost active trace
      break;
    }
  if (!ctx) ctx = &TraceContext::current();
  ctx->locate(src);
  Builder& b = ctx->builder();
  std::vector<Value*> values;
  std::vector<TensorType> types;
  values.reserve(operands.size());
  types.reserve(operands.size());
  for (const auto& o : operands) {
    values.push_back(ctx->use(o, def));
    types.push_back(values.back()->type());
  }
  // Operand checks first, so a bad predicate is reported before any branch is traced.
  try {
    infer_result_types(def, types, attrs);
  } catch (const ShapeError& e) {
    throw ShapeError(std::string(e.what()) + " (at " + b.location().to_string() + ")");
  } catch (const TypeError& e) {
    throw TypeError(std::string(e.what()) + " (at " + b.location().to_string() + ")");
  }
  // One pass: the op is built detached, each region traced into it once (so a region
  // function's side effects run once per trace), then inserting it infers its result
  // types from operands, attributes and regions.
  OpPtr op = b.create_detached(def, std::move(values), std::move(attrs), regions.size());
  std::vector<Tree<SymbolicTensor>> outs = trace_regions(*ctx, *op, regions);
  check(outs);
  ctx->locate(src);  // the regions moved the location; inference errors name the control op
  Operation* real = b.insert(std::move(op));
  std::vector<SymbolicTensor> out;
  out.reserve(real->num_results());
  for (const auto& r : real->results()) out.push_back(ctx->wrap(r.get()));
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
