// prepare(): turns a Graph into a flat plan — kernels per op and dtype, compiled shapes, checks, buffer reuse.
#include "program.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "elementwise.h"
#include "evoxc/core/error.h"

namespace evoxc::interp {

// ---------------------------------------------------------------------------------------------
// DimCode

int32_t DimCode::add(const DimExpr& e, const std::map<std::string, int32_t>& sym_slot) {
  uint32_t start = static_cast<uint32_t>(code_.size());
  int max_depth = 0;
  emit(e, sym_slot, 1, max_depth);
  // eval() keeps its stack in a fixed array; expressions this deep do not come from real programs.
  if (max_depth > 64) throw BackendError("symbolic dim expression " + e.to_string() + " is nested too deeply");
  ranges_.emplace_back(start, static_cast<uint32_t>(code_.size()));
  exprs_.push_back(e);
  return static_cast<int32_t>(exprs_.size() - 1);
}

void DimCode::emit(const DimExpr& e, const std::map<std::string, int32_t>& sym_slot, int depth, int& max_depth) {
  max_depth = std::max(max_depth, depth);
  switch (e.kind()) {
    case DimExpr::Kind::Const: code_.push_back({e.kind(), e.value()}); return;
    case DimExpr::Kind::Sym: {
      auto it = sym_slot.find(e.name());
      if (it == sym_slot.end()) throw InternalError("DimCode: symbol " + e.name() + " has no slot");
      code_.push_back({e.kind(), it->second});
      return;
    }
    default:
      emit(e.lhs(), sym_slot, depth, max_depth);
      emit(e.rhs(), sym_slot, depth + 1, max_depth);
      code_.push_back({e.kind(), 0});
  }
}

int64_t DimCode::eval(int32_t id, const int64_t* syms) const {
  int64_t st[66];
  int sp = 0;
  auto [b, e] = ranges_[static_cast<size_t>(id)];
  for (uint32_t pc = b; pc < e; ++pc) {
    const Ins& in = code_[pc];
    if (in.kind == DimExpr::Kind::Const) {
      st[sp++] = in.arg;
      continue;
    }
    if (in.kind == DimExpr::Kind::Sym) {
      st[sp++] = syms[in.arg];
      continue;
    }
    int64_t y = st[--sp];
    int64_t x = st[sp - 1];
    int64_t r = 0;
    bool overflow = false;
    switch (in.kind) {
      case DimExpr::Kind::Add: overflow = __builtin_add_overflow(x, y, &r); break;
      case DimExpr::Kind::Sub: overflow = __builtin_sub_overflow(x, y, &r); break;
      case DimExpr::Kind::Mul: overflow = __builtin_mul_overflow(x, y, &r); break;
      case DimExpr::Kind::FloorDiv:
      case DimExpr::Kind::Mod:
        if (y == 0)
          throw ValidationError("symbolic dim expression " + exprs_[static_cast<size_t>(id)].to_string() +
                                " divides by zero for these inputs");
        if (x == INT64_MIN && y == -1) {
          overflow = in.kind == DimExpr::Kind::FloorDiv;
          r = 0;
        } else {
          r = in.kind == DimExpr::Kind::FloorDiv ? floordiv_i64(x, y) : mod_i64(x, y);
        }
        break;
      case DimExpr::Kind::Min: r = std::min(x, y); break;
      case DimExpr::Kind::Max: r = std::max(x, y); break;
      default: break;
    }
    if (overflow)
      throw ValidationError("symbolic dim expression " + exprs_[static_cast<size_t>(id)].to_string() +
                            " overflows int64 for these inputs");
    st[sp - 1] = r;
  }
  return st[0];
}

// ---------------------------------------------------------------------------------------------
// PrepareCtx

bool PrepareCtx::all_static() const {
  for (uint32_t v : in)
    if (!values_[v].is_static) return false;
  for (uint32_t v : out)
    if (!values_[v].is_static) return false;
  return true;
}

void PrepareCtx::require_equal(const DimExpr& a, const DimExpr& b, const std::string& what) {
  if (a == b) return;
  checks.push_back({Check::Kind::Equal, a, b, what});
}
void PrepareCtx::require_broadcast(const DimExpr& operand, const DimExpr& result, const std::string& what) {
  if (operand == result || (operand.is_const() && operand.value() == 1)) return;
  checks.push_back({Check::Kind::BroadcastTo, operand, result, what});
}
void PrepareCtx::require_less_equal(const DimExpr& a, const DimExpr& b, const std::string& what) {
  if (a == b) return;
  checks.push_back({Check::Kind::LessEqual, a, b, what});
}
void PrepareCtx::fail(const std::string& why) const { throw BackendError(where + ": " + why); }

// ---------------------------------------------------------------------------------------------
// Helpers shared by the layer

std::string shape_text(const int64_t* dims, size_t rank) {
  std::string s = "(";
  for (size_t i = 0; i < rank; ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  if (rank == 1) s += ",";
  return s + ")";
}

Program::Program() = default;
Program::~Program() = default;

Program::FrameData::~FrameData() { std::free(arena); }

void Program::FrameData::reserve_arena(size_t bytes) {
  if (bytes <= arena_cap && arena) return;
  size_t n = std::max<size_t>(64, (bytes + 63) / 64 * 64);
  void* p = std::aligned_alloc(64, n);
  if (!p) throw ValidationError("interp: cannot allocate " + std::to_string(bytes) + " bytes of scratch");
  std::free(arena);
  arena = p;
  arena_cap = n;
}

std::unique_ptr<Program::FrameData> Program::acquire_frame() const {
  {
    std::lock_guard<std::mutex> lk(pool_mu_);
    if (!pool_.empty()) {
      auto f = std::move(pool_.back());
      pool_.pop_back();
      return f;
    }
  }
  auto f = std::make_unique<FrameData>();
  f->ptr.assign(values.size(), nullptr);
  f->syms.assign(sym_names.size(), 0);
  f->offsets.assign(buffers.size(), 0);
  f->staged.resize(output_value.size());
  if (all_static) {
    f->reserve_arena(static_arena);
    for (size_t v = 0; v < values.size(); ++v) {
      const Storage& s = storage[v];
      if (s.kind == StorageKind::Temp) f->ptr[v] = static_cast<char*>(f->arena) + static_offsets[s.index];
      if (s.kind == StorageKind::Constant) f->ptr[v] = constants[s.index].raw_data();
    }
  } else {
    f->dims = dims_template;
    f->numel.assign(values.size(), 0);
    f->expr_vals.assign(code.size(), 0);
  }
  return f;
}

void Program::release_frame(std::unique_ptr<FrameData> f) const {
  for (auto& t : f->staged) t = Tensor();
  std::lock_guard<std::mutex> lk(pool_mu_);
  pool_.push_back(std::move(f));
}

namespace {

enum class Family : uint8_t { Elementwise, Reduce, ArgReduce, Dot, Structure, Creation, Alias, Extension };

// The families of the full catalogue, each in its own file; asked in order.
struct ExtensionFamily {
  bool (*handles)(std::string_view op);
  KernelPtr (*make)(PrepareCtx& ctx);
};
constexpr ExtensionFamily kExtensions[] = {
    {is_scan_op, make_scan_kernel},         {is_decomposition_op, make_decomposition_kernel},
    {is_conv_op, make_conv_kernel},         {is_layout_op, make_layout_kernel},
    {is_indexing_op, make_indexing_kernel}, {is_sort_op, make_sort_kernel},
    {is_control_op, make_control_kernel},
};

const ExtensionFamily* extension_of(std::string_view op) {
  for (const auto& e : kExtensions)
    if (e.handles(op)) return &e;
  return nullptr;
}

std::optional<Family> family_of(std::string_view op) {
  if (op == "reshape" || op == "expand_dims" || op == "squeeze" || op == "bitcast_convert") return Family::Alias;
  if (op == "argmax" || op == "argmin") return Family::ArgReduce;
  if (op == "dot") return Family::Dot;
  if (is_reduce_op(op)) return Family::Reduce;
  if (is_structure_op(op)) return Family::Structure;
  if (is_creation_op(op)) return Family::Creation;
  if (is_elementwise_op(op)) return Family::Elementwise;
  if (extension_of(op)) return Family::Extension;
  return std::nullopt;
}

std::string op_where(const Operation& op) {
  std::string s = "evoxc." + op.name();
  if (op.location().known()) s += " at " + op.location().to_string();
  return s;
}

// Zero-copy ops (reshape, expand_dims, squeeze, bitcast_convert): check what the kernel would have relied on.
KernelPtr prepare_alias(PrepareCtx& ctx) {
  const Operation& op = ctx.op;
  if (op.num_operands() != 1 || op.num_results() != 1) ctx.fail("expects one operand and one result");
  const ValueDesc& a = ctx.operand(0);
  const ValueDesc& r = ctx.result(0);
  if (op.name() == "bitcast_convert") {
    if (size_of(a.dtype()) != size_of(r.dtype()) || is_bool(a.dtype()) || is_bool(r.dtype()))
      ctx.fail("bitcast_convert needs two non-bool types of one width, got " + std::string(dtype_name(a.dtype())) +
               " and " + std::string(dtype_name(r.dtype())));
    if (a.rank() != r.rank()) ctx.fail("bitcast_convert keeps the shape");
    for (size_t i = 0; i < a.rank(); ++i)
      ctx.require_equal(a.type.shape[i], r.type.shape[i], "extent of axis " + std::to_string(i));
  } else {
    if (a.dtype() != r.dtype()) ctx.fail("the result dtype must equal the operand's");
    if (op.name() == "reshape" && op.attributes().count("shape")) {
      const Shape& want = attr_shape(op.attributes(), "shape", ctx.where);
      if (want.rank() != r.rank()) ctx.fail("the result type differs from the shape attribute");
      for (size_t i = 0; i < r.rank(); ++i)
        ctx.require_equal(want[i], r.type.shape[i], "extent of result axis " + std::to_string(i));
    }
    ctx.require_equal(a.type.shape.num_elements(), r.type.shape.num_elements(), "element count of operand and result");
  }
  ctx.alias_operand0 = true;
  return nullptr;
}

KernelPtr make_kernel(Family fam, PrepareCtx& ctx) {
  switch (fam) {
    case Family::Elementwise: return make_elementwise_kernel(ctx);
    case Family::Reduce: return make_reduce_kernel(ctx);
    case Family::ArgReduce: return make_argreduce_kernel(ctx);
    case Family::Dot: return make_dot_kernel(ctx);
    case Family::Structure: return make_structure_kernel(ctx);
    case Family::Creation: return make_creation_kernel(ctx);
    case Family::Alias: return prepare_alias(ctx);
    case Family::Extension: return extension_of(ctx.op.name())->make(ctx);
  }
  return nullptr;
}

// Collects everything prepare() needs while walking the graph.
class Planner {
 public:
  explicit Planner(Program& p) : p_(p) {}

  void run(const Graph& graph);
  // Plans `block` with inputs = its arguments then `captures` (see prepare_block).
  void run_block(const Block& block, const std::vector<const Value*>& captures,
                 const std::vector<std::string>& outer_syms, const std::string& what);

 private:
  uint32_t add_value(const Value* v, std::string name, std::string producer);
  void add_check(const PrepareCtx::PendingCheck& c, const std::string& where);
  int32_t expr_id(const DimExpr& e);
  void plan_storage(const std::vector<const Operation*>& ops, const std::vector<std::vector<size_t>>& in_place,
                    const std::vector<bool>& alias, const std::vector<uint32_t>& outputs);

  Program& p_;
  std::unordered_map<const Value*, uint32_t> vid_;
  std::map<std::string, int32_t> sym_slot_;
  std::unordered_map<DimExpr, int32_t> expr_ids_;
  std::vector<std::vector<uint32_t>> op_in_, op_out_;
};

int32_t Planner::expr_id(const DimExpr& e) {
  auto it = expr_ids_.find(e);
  if (it != expr_ids_.end()) return it->second;
  std::vector<std::string> syms;
  e.collect_symbols(syms);
  for (const auto& s : syms)
    if (!sym_slot_.count(s))
      throw BackendError("symbolic dim '" + s + "' (in " + e.to_string() +
                         ") is not bound by any input extent; give some input a dim that is exactly '" + s + "'");
  int32_t id = p_.code.add(e, sym_slot_);
  expr_ids_.emplace(e, id);
  return id;
}

uint32_t Planner::add_value(const Value* v, std::string name, std::string producer) {
  ValueDesc d;
  d.type = v->type();
  d.dim_off = static_cast<uint32_t>(p_.dims_template.size());
  d.is_static = v->shape().is_static();
  d.name = std::move(name);
  for (const DimExpr& e : v->shape()) {
    if (e.is_const()) {
      if (e.value() < 0)
        throw BackendError(producer + ": " + d.name + " has a negative extent in its type " + v->type().to_string());
      p_.dims_template.push_back(e.value());
      p_.dim_expr.push_back(-1);
    } else {
      p_.all_static = false;
      p_.dims_template.push_back(0);
      p_.dim_expr.push_back(-2);  // resolved once every symbol has a slot
    }
  }
  uint32_t id = static_cast<uint32_t>(p_.values.size());
  p_.values.push_back(std::move(d));
  p_.producer.push_back(std::move(producer));
  vid_[v] = id;
  return id;
}

void Planner::add_check(const PrepareCtx::PendingCheck& c, const std::string& where) {
  auto a = c.a.as_const();
  auto b = c.b.as_const();
  if (a && b) {
    bool ok = true;
    switch (c.kind) {
      case Check::Kind::Equal: ok = *a == *b; break;
      case Check::Kind::BroadcastTo: ok = *a == *b || *a == 1; break;
      case Check::Kind::LessEqual: ok = *a <= *b; break;
      case Check::Kind::NonNegative: ok = *a >= 0; break;
    }
    if (!ok)
      throw BackendError(where + ": " + c.what + " does not hold (" + std::to_string(*a) + " vs " + std::to_string(*b) +
                         "); the graph's types are inconsistent");
    return;
  }
  p_.checks.push_back({c.kind, expr_id(c.a), expr_id(c.b), where + ": " + c.what});
}

void Planner::run(const Graph& graph) {
  if (!graph.defined()) throw BackendError("interp::prepare: the graph is empty (default-constructed)");
  const Block& entry = graph.main().entry();
  p_.input_paths = graph.input_paths();
  if (p_.input_paths.size() != entry.num_arguments()) {
    p_.input_paths.clear();
    for (size_t i = 0; i < entry.num_arguments(); ++i) p_.input_paths.push_back("[" + std::to_string(i) + "]");
  }
  run_block(entry, {}, {}, "main's entry block");
}

void Planner::run_block(const Block& entry, const std::vector<const Value*>& captures,
                        const std::vector<std::string>& outer_syms, const std::string& what) {
  p_.num_inputs = entry.num_arguments() + captures.size();
  if (p_.input_paths.size() != p_.num_inputs) {
    p_.input_paths.clear();
    for (size_t i = 0; i < entry.num_arguments(); ++i)
      p_.input_paths.push_back("block argument " + std::to_string(i) + " of " + what);
    for (size_t i = 0; i < captures.size(); ++i)
      p_.input_paths.push_back("captured value " + std::to_string(i) + " of " + what);
  }
  // Symbols of the enclosing plan come first; inputs are checked against them.
  for (const std::string& s : outer_syms) {
    sym_slot_[s] = static_cast<int32_t>(p_.sym_names.size());
    p_.sym_names.push_back(s);
  }
  p_.num_outer_syms = outer_syms.size();

  // Inputs: every bare-symbol extent binds (first occurrence) or is compared (later ones).
  std::map<std::string, std::pair<uint32_t, uint32_t>> bound_at;
  std::vector<std::tuple<uint32_t, uint32_t, DimExpr>> expr_rules;
  for (uint32_t i = 0; i < p_.num_inputs; ++i) {
    const Value* a = i < entry.num_arguments() ? entry.argument(i) : captures[i - entry.num_arguments()];
    add_value(a, "input " + p_.input_paths[i], "input " + p_.input_paths[i]);
    for (uint32_t d = 0; d < a->shape().rank(); ++d) {
      const DimExpr& e = a->shape()[d];
      Program::InputRule r{Program::InputRule::Kind::Const, i, d};
      if (e.is_const()) {
        r.value = e.value();
      } else if (e.is_symbol() && !(sym_slot_.count(e.name()) && !bound_at.count(e.name()))) {
        auto it = bound_at.find(e.name());
        if (it == bound_at.end()) {
          int32_t slot = static_cast<int32_t>(p_.sym_names.size());
          p_.sym_names.push_back(e.name());
          sym_slot_[e.name()] = slot;
          bound_at[e.name()] = {i, d};
          r.kind = Program::InputRule::Kind::Bind;
          r.slot = slot;
        } else {
          r.kind = Program::InputRule::Kind::SameSym;
          r.slot = sym_slot_[e.name()];
          r.first_input = it->second.first;
          r.first_axis = it->second.second;
        }
      } else {
        expr_rules.emplace_back(i, d, e);
        continue;
      }
      p_.input_rules.push_back(r);
    }
  }
  for (auto& [i, axis, e] : expr_rules) {
    Program::InputRule r{Program::InputRule::Kind::Expr, i, axis};
    r.slot = expr_id(e);
    p_.input_rules.push_back(r);
  }

  // Ops.
  const auto& ops_owned = entry.operations();
  if (ops_owned.empty() || ops_owned.back()->name() != "return")
    throw BackendError("interp::prepare: " + what + " does not end in evoxc.return");
  std::vector<const Operation*> ops;
  for (size_t k = 0; k + 1 < ops_owned.size(); ++k) ops.push_back(ops_owned[k].get());
  std::vector<std::vector<size_t>> in_place(ops.size());
  std::vector<bool> alias(ops.size(), false);
  p_.kernels.resize(ops.size());
  for (size_t k = 0; k < ops.size(); ++k) {
    const Operation& op = *ops[k];
    std::string where = op_where(op);
    if (!op.regions().empty() && !is_control_op(op.name()))
      throw BackendError(where + ": ops with regions are not supported by the interpreter yet");
    auto fam = family_of(op.name());
    if (!fam)
      throw BackendError(where + ": the interpreter has no kernel for this op; use another backend or rewrite it");
    std::vector<uint32_t> in, out;
    for (const Value* v : op.operands()) {
      auto it = vid_.find(v);
      if (it == vid_.end()) throw BackendError(where + ": an operand is not defined earlier in the entry block");
      in.push_back(it->second);
    }
    // Values a region reads from outside it travel as extra inputs, so their buffers live
    // until the op has run.
    if (!op.regions().empty())
      for (const Value* v : captured_values(op)) {
        auto it = vid_.find(v);
        if (it == vid_.end()) throw BackendError(where + ": a region uses a value that is not defined before the op");
        in.push_back(it->second);
      }
    for (size_t r = 0; r < op.num_results(); ++r)
      out.push_back(add_value(op.result(r), "%" + std::to_string(p_.values.size()), where));
    PrepareCtx ctx(op, where, p_.values, p_.dims_template, in, out);
    ctx.sym_names = &p_.sym_names;
    try {
      p_.kernels[k] = make_kernel(*fam, ctx);
    } catch (const TypeError& e) {
      throw BackendError(where + ": " + e.what());
    } catch (const ShapeError& e) {
      throw BackendError(where + ": " + e.what());
    }
    if (!p_.kernels[k] && !ctx.alias_operand0 && op.name() != "constant")
      throw InternalError(where + ": kernel factory returned nothing");
    in_place[k] = ctx.in_place_operands;
    alias[k] = ctx.alias_operand0;
    op_in_.push_back(in);
    op_out_.push_back(out);
    if (op.name() == "constant") {
      const Tensor& t = attr_tensor(op.attributes(), "value", where);
      p_.constants.push_back(t);
    }
    for (const auto& c : ctx.checks) add_check(c, where);
    for (uint32_t r : out) {
      const Shape& s = p_.values[r].type.shape;
      for (size_t d = 0; d < s.rank(); ++d)
        if (!s[d].is_const())
          add_check({Check::Kind::NonNegative, s[d], DimExpr(0), "extent " + s[d].to_string() + " of the result"},
                    where);
    }
  }

  // Dims of every value, now that every symbol has a slot.
  for (size_t v = 0; v < p_.values.size(); ++v) {
    const ValueDesc& d = p_.values[v];
    for (uint32_t i = 0; i < d.rank(); ++i)
      if (p_.dim_expr[d.dim_off + i] == -2) p_.dim_expr[d.dim_off + i] = expr_id(d.type.shape[i]);
  }
  if (p_.all_static) {
    for (const ValueDesc& d : p_.values)
      p_.static_numel.push_back(shape_numel(
          std::vector<int64_t>(p_.dims_template.begin() + d.dim_off, p_.dims_template.begin() + d.dim_off + d.rank())));
  }

  // Outputs.
  const Operation& ret = *ops_owned.back();
  std::vector<uint32_t> outs;
  for (const Value* v : ret.operands()) outs.push_back(vid_.at(v));
  p_.output_value = outs;
  plan_storage(ops, in_place, alias, outs);
  fuse_elementwise_runs(p_.kernels);
}

void Planner::plan_storage(const std::vector<const Operation*>& ops, const std::vector<std::vector<size_t>>& in_place,
                           const std::vector<bool>& alias, const std::vector<uint32_t>& outputs) {
  size_t nv = p_.values.size();
  const size_t kEnd = ops.size();
  std::vector<uint32_t> root(nv);
  for (size_t v = 0; v < nv; ++v) root[v] = static_cast<uint32_t>(v);
  p_.storage.assign(nv, {});
  for (uint32_t i = 0; i < p_.num_inputs; ++i) p_.storage[i] = {Program::StorageKind::Input, i};

  // Which values are written straight into an output buffer.
  p_.output_direct.assign(outputs.size(), false);
  std::vector<bool> value_is_direct(nv, false);
  std::vector<const Operation*> def(nv, nullptr);
  std::vector<size_t> def_index(nv, 0);
  for (size_t k = 0; k < ops.size(); ++k)
    for (uint32_t r : op_out_[k]) {
      def[r] = ops[k];
      def_index[r] = k;
    }
  for (size_t j = 0; j < outputs.size(); ++j) {
    uint32_t v = outputs[j];
    if (value_is_direct[v] || def[v] == nullptr || alias[def_index[v]] || def[v]->name() == "constant") continue;
    value_is_direct[v] = true;
    p_.output_direct[j] = true;
    p_.storage[v] = {Program::StorageKind::Output, static_cast<uint32_t>(j)};
  }
  size_t nconst = 0;
  for (size_t k = 0; k < ops.size(); ++k) {
    if (ops[k]->name() == "constant")
      p_.storage[op_out_[k][0]] = {Program::StorageKind::Constant, static_cast<uint32_t>(nconst++)};
    if (alias[k]) root[op_out_[k][0]] = root[op_in_[k][0]];
  }

  // Last use of each root's storage (the return counts as a use at the end).
  std::vector<size_t> last_use(nv, 0);
  for (size_t v = 0; v < nv; ++v) last_use[v] = def[v] ? def_index[v] : 0;
  for (size_t k = 0; k < ops.size(); ++k)
    for (uint32_t o : op_in_[k]) last_use[root[o]] = std::max(last_use[root[o]], k);
  for (uint32_t o : outputs) last_use[root[o]] = kEnd;

  std::vector<int32_t> buf_of(nv, -1);
  std::vector<uint32_t> owner;  // per buffer: the root currently holding it
  std::vector<int32_t> free_bufs;
  std::vector<std::vector<uint32_t>> dies_at(ops.size() + 1);
  for (size_t v = 0; v < nv; ++v)
    if (root[v] == v) dies_at[last_use[v]].push_back(static_cast<uint32_t>(v));

  auto bytes_expr = [&](uint32_t v) {
    return p_.values[v].type.shape.num_elements() * DimExpr(static_cast<int64_t>(size_of(p_.values[v].dtype())));
  };
  auto static_bytes = [&](uint32_t v) {
    return static_cast<size_t>(p_.static_numel[v]) * size_of(p_.values[v].dtype());
  };

  for (size_t k = 0; k < ops.size(); ++k) {
    for (uint32_t r : op_out_[k]) {
      if (root[r] != r || p_.storage[r].kind != Program::StorageKind::Temp) continue;
      int32_t chosen = -1;
      for (size_t oi : in_place[k]) {
        uint32_t o = op_in_[k][oi];
        uint32_t ro = root[o];
        if (p_.storage[ro].kind != Program::StorageKind::Temp || last_use[ro] != k || buf_of[ro] < 0) continue;
        if (owner[static_cast<size_t>(buf_of[ro])] != ro) continue;
        if (p_.values[o].type.shape != p_.values[r].type.shape) continue;
        if (size_of(p_.values[o].dtype()) != size_of(p_.values[r].dtype())) continue;
        chosen = buf_of[ro];
        break;
      }
      if (chosen < 0 && !free_bufs.empty()) {
        // Best fit among free buffers: the smallest that holds the value (static), or one
        // sized by the same expression (symbolic).
        size_t best = SIZE_MAX;
        for (size_t fi = 0; fi < free_bufs.size(); ++fi) {
          const Program::Buffer& b = p_.buffers[static_cast<size_t>(free_bufs[fi])];
          bool fits;
          size_t cap = 0;
          if (p_.all_static) {
            cap = b.static_bytes;
            fits = cap >= static_bytes(r);
          } else {
            fits = bytes_expr(b.values.front()) == bytes_expr(r);
          }
          if (fits && (best == SIZE_MAX || cap < p_.buffers[static_cast<size_t>(free_bufs[best])].static_bytes))
            best = fi;
        }
        if (best != SIZE_MAX) {
          chosen = free_bufs[best];
          free_bufs.erase(free_bufs.begin() + static_cast<std::ptrdiff_t>(best));
        }
      }
      if (chosen < 0) {
        chosen = static_cast<int32_t>(p_.buffers.size());
        p_.buffers.emplace_back();
        owner.push_back(r);
      }
      Program::Buffer& b = p_.buffers[static_cast<size_t>(chosen)];
      b.values.push_back(r);
      if (p_.all_static) b.static_bytes = std::max(b.static_bytes, static_bytes(r));
      owner[static_cast<size_t>(chosen)] = r;
      buf_of[r] = chosen;
      p_.storage[r] = {Program::StorageKind::Temp, static_cast<uint32_t>(chosen)};
    }
    for (uint32_t dead : dies_at[k]) {
      int32_t b = buf_of[dead];
      if (b >= 0 && owner[static_cast<size_t>(b)] == dead) free_bufs.push_back(b);
    }
  }
  // Aliases read through their root's storage.
  for (size_t v = 0; v < nv; ++v)
    if (root[v] != v) p_.storage[v] = p_.storage[root[v]];
  for (size_t v = 0; v < nv; ++v)
    if (p_.storage[v].kind == Program::StorageKind::Input || p_.storage[v].kind == Program::StorageKind::Output)
      p_.patch_values.push_back(static_cast<uint32_t>(v));

  if (p_.all_static) {
    size_t off = 0;
    for (const auto& b : p_.buffers) {
      p_.static_offsets.push_back(off);
      off += (b.static_bytes + 63) / 64 * 64;
    }
    p_.static_arena = off;
  }
}

}  // namespace

std::vector<const Value*> captured_values(const Operation& op) {
  std::unordered_set<const Value*> inside;
  std::vector<const Operation*> stack{&op};
  while (!stack.empty()) {
    const Operation* o = stack.back();
    stack.pop_back();
    for (const auto& r : o->regions()) {
      const Block& b = r->block();
      for (const auto& a : b.arguments()) inside.insert(a.get());
      for (const auto& inner : b.operations()) {
        for (const auto& res : inner->results()) inside.insert(res.get());
        stack.push_back(inner.get());
      }
    }
  }
  // Deterministic order: walk the regions in program order.
  std::vector<const Value*> out;
  std::unordered_set<const Value*> seen;
  auto walk = [&](auto&& self, const Operation& o) -> void {
    for (const auto& r : o.regions())
      for (const auto& inner : r->block().operations()) {
        for (const Value* v : inner->operands())
          if (!inside.count(v) && seen.insert(v).second) out.push_back(v);
        self(self, *inner);
      }
  };
  walk(walk, op);
  return out;
}

std::shared_ptr<const Program> prepare_block(const Block& block, const std::vector<const Value*>& captures,
                                             const std::vector<std::string>& outer_syms, const std::string& where) {
  auto p = std::make_shared<Program>();
  Planner(*p).run_block(block, captures, outer_syms, where);
  return p;
}

std::shared_ptr<const Program> prepare(const Graph& graph) {
  auto p = std::make_shared<Program>();
  Planner(*p).run(graph);
  return p;
}

bool has_kernel(std::string_view op) { return family_of(op).has_value(); }

}  // namespace evoxc::interp
