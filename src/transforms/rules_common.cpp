// The rule tables (built once from the family installers) and the helpers every rule shares.
#include <numeric>

#include "evoxc/trace/call.h"
#include "evoxc/trace/trace.h"
#include "evoxc/transforms/transforms.h"
#include "transforms/families.h"

namespace evoxc::transforms {

namespace {

struct Tables {
  BatchTable batch{"vmap"};
  JvpTable jvp{"jvp"};
  TransposeTable transpose{"transpose"};
  LinearityTable linearity{"linearity"};
  Tables() {
    RuleTables t{batch, jvp, transpose, linearity};
    install_elementwise_rules(t);
    install_reduce_rules(t);
    install_structure_rules(t);
    install_layout_rules(t);
    install_indexing_rules(t);
    install_linalg_rules(t);
    install_decomposition_rules(t);
    install_control_rules(t);
    install_random_rules(t);
    install_extension_rules(t);
    install_sparse_rules(t);
  }
};

const Tables& tables() {
  static const Tables t;
  return t;
}

}  // namespace

const BatchTable& batch_rules() { return tables().batch; }
const JvpTable& jvp_rules() { return tables().jvp; }
const TransposeTable& transpose_rules() { return tables().transpose; }
const LinearityTable& linearity_rules() { return tables().linearity; }

namespace {

class VjpCoverage final : public RuleTableBase {
 public:
  VjpCoverage() : RuleTableBase("vjp") {}
  bool has(uint32_t id) const override {
    return jvp_rules().has(id) && (!needs_transpose(id) || transpose_rules().has(id));
  }
  const std::string* deferral(uint32_t id) const override {
    if (const std::string* why = jvp_rules().deferral(id)) return why;
    return transpose_rules().deferral(id);
  }

 private:
  static bool needs_transpose(uint32_t id) {
    const OpDef& d = op_def(id);
    return transpose_rules().has(id) || transpose_rules().deferral(id) || !d.linear_operands.empty() ||
           !d.linear_each.empty() || linearity_rules().has(id);
  }
};

}  // namespace

const RuleTableBase& vjp_coverage() {
  static const VjpCoverage c;
  return c;
}

std::vector<SymbolicTensor> emit_op(const OpDef& def, std::span<const SymbolicTensor> operands, AttrMap attrs) {
  TraceContext& ctx = TraceContext::current();
  return ctx.emit(def, operands, std::move(attrs), std::source_location::current());
}

SymbolicTensor emit_op1(const OpDef& def, std::span<const SymbolicTensor> operands, AttrMap attrs) {
  TraceContext& ctx = TraceContext::current();
  return ctx.emit1(def, operands, std::move(attrs), std::source_location::current());
}

std::vector<SymbolicTensor> emit_like(const Operation& op, std::span<const SymbolicTensor> operands,
                                      const AttrMap& attrs) {
  if (!op.regions().empty())
    throw InternalError("transforms::emit_like: evoxc." + op.name() + " has regions; its rule builds them");
  return emit_op(op_def(op), operands, attrs);
}

SymbolicTensor zeros(const TensorType& t) {
  // A fresh op, not the trace's shared scalar: a zero tangent must not be the same value as a
  // constant the primal computation uses (the control-flow split tells them apart by value).
  AttrMap attrs{{"dtype", t.dtype}, {"shape", t.shape}};
  if (is_float(t.dtype)) {
    attrs.emplace("value", 0.0);
  } else if (is_bool(t.dtype)) {
    attrs.emplace("value", false);
  } else {
    attrs.emplace("value", int64_t{0});
  }
  return emit_op1(EVOXC_TOP("full"), {}, std::move(attrs));
}

SymbolicTensor scalar_like(double v, DType t) {
  return TraceContext::current().scalar(Attribute(v), t, std::source_location::current());
}

bool has_tangent(DType t) { return is_float(t); }

int64_t normalize_axis(int64_t axis, int64_t rank, const char* what) {
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    throw TransformError(std::string(what) + ": axis " + std::to_string(axis) + " is out of range for rank " +
                         std::to_string(rank));
  return a;
}

SymbolicTensor reduce_sum_keep(const SymbolicTensor& x, const std::vector<int64_t>& axes, bool keepdims) {
  if (axes.empty()) return x;
  return emit_op1(EVOXC_TOP("reduce_sum"), {x}, {{"axes", axes}, {"keepdims", keepdims}});
}

SymbolicTensor unbroadcast(const SymbolicTensor& ct, const TensorType& target) {
  const Shape& s = ct.shape();
  size_t lead = s.rank() - target.rank();
  std::vector<int64_t> gone, kept_unit;
  for (size_t i = 0; i < lead; ++i) gone.push_back(static_cast<int64_t>(i));
  for (size_t i = 0; i < target.rank(); ++i) {
    const DimExpr& t = target.shape[i];
    if (t.is_const() && t.value() == 1 && !(s[lead + i].is_const() && s[lead + i].value() == 1))
      kept_unit.push_back(static_cast<int64_t>(lead + i));
  }
  if (gone.empty() && kept_unit.empty()) return ct;
  std::vector<int64_t> all = gone;
  all.insert(all.end(), kept_unit.begin(), kept_unit.end());
  SymbolicTensor r = reduce_sum_keep(ct, all, /*keepdims=*/true);
  if (r.shape() != target.shape) r = reshape(r, target.shape);
  return r;
}

SymbolicTensor add_tangents(const SymbolicTensor& a, const SymbolicTensor& b) {
  if (!a.defined()) return b;
  if (!b.defined()) return a;
  return emit_op1(EVOXC_TOP("add"), {a, b});
}

SymbolicTensor moveaxis(const SymbolicTensor& x, int64_t from, int64_t to) {
  auto r = static_cast<int64_t>(x.rank());
  from = normalize_axis(from, r, "moveaxis");
  to = normalize_axis(to, r, "moveaxis");
  if (from == to) return x;
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < r; ++i)
    if (i != from) perm.push_back(i);
  perm.insert(perm.begin() + to, from);
  return emit_op1(EVOXC_TOP("transpose"), {x}, {{"permutation", perm}});
}

std::vector<int64_t> attr_ints(const Operation& op, const char* name) {
  return evoxc::attr_ints(op.attributes(), name, op.name());
}
int64_t attr_int(const Operation& op, const char* name) { return evoxc::attr_int(op.attributes(), name, op.name()); }
bool attr_flag(const Operation& op, const char* name, bool fallback) {
  if (!op.attributes().count(name)) return fallback;
  return evoxc::attr_bool(op.attributes(), name, op.name());
}

SymbolicTensor BatchContext::materialize(const BatchArg& a) const {
  if (a.batched) return a.v;
  std::vector<DimExpr> dims{size()};
  dims.insert(dims.end(), a.v.shape().begin(), a.v.shape().end());
  std::vector<int64_t> bd(a.v.rank());
  std::iota(bd.begin(), bd.end(), 1);
  return broadcast_in_dim(a.v, Shape(std::move(dims)), std::move(bd));
}

SymbolicTensor BatchContext::align_rank(const BatchArg& a, size_t rank) const {
  if (!a.batched || a.v.rank() >= rank + 1) return a.v;
  std::vector<int64_t> axes;
  for (size_t i = 0; i < rank + 1 - a.v.rank(); ++i) axes.push_back(static_cast<int64_t>(i + 1));
  return emit_op1(EVOXC_TOP("expand_dims"), {a.v}, {{"axes", axes}});
}

JvpResult zero_jvp(JvpContext& ctx, const Operation& op, std::span<const SymbolicTensor> p,
                   std::span<const SymbolicTensor>) {
  std::vector<SymbolicTensor> y = ctx.primal(op, p);
  return JvpResult{y, std::vector<SymbolicTensor>(y.size())};
}

JvpResult linear_jvp(JvpContext& ctx, const Operation& op, std::span<const SymbolicTensor> p,
                     std::span<const SymbolicTensor> t) {
  std::vector<SymbolicTensor> y = ctx.primal(op, p);
  std::vector<SymbolicTensor> ts;
  for (size_t i = 0; i < t.size(); ++i) ts.push_back(JvpContext::instantiate(t[i], op.operand(i)->type()));
  return JvpResult{y, emit_like(op, ts)};
}

SymbolicTensor JvpContext::instantiate(const SymbolicTensor& tangent, const TensorType& type) {
  return tangent.defined() ? tangent : zeros(type);
}

std::vector<SymbolicTensor> call_vmapped(const TracedFn& fn, const std::vector<TensorType>& row,
                                         std::vector<Tree<int64_t>> axes, const DimExpr& size,
                                         const std::vector<SymbolicTensor>& args) {
  std::vector<TraceArg> specs;
  for (const TensorType& t : row) specs.push_back(arg_leaf(TensorSpec(t.shape, t.dtype)));
  Graph one = trace_dynamic(
      [&](const std::vector<TracedArg>& in) {
        std::vector<SymbolicTensor> xs;
        for (const TracedArg& x : in) xs.push_back(std::get<SymbolicTensor>(x.leaf()));
        std::vector<Tree<SymbolicTensor>> outs;
        for (const SymbolicTensor& r : fn(xs)) outs.emplace_back(r);
        return Tree<SymbolicTensor>::tuple(std::move(outs));
      },
      specs);
  Graph batched = vectorize(one, AxisTree::tuple(std::move(axes)), AxisTree(0), size);
  std::vector<Tree<SymbolicTensor>> in;
  for (const SymbolicTensor& a : args) in.emplace_back(a);
  return call(batched, Tree<SymbolicTensor>::tuple(std::move(in))).flatten();
}

}  // namespace evoxc::transforms
