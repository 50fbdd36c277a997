// prepare(): turns a Graph into a flat plan — kernels per op and dtype, compiled shapes, checks, buffer reuse.
#include "program.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "evoxc/core/error.h"
#include "evoxc/core/flat_table.h"
#include "evoxc/ir/builder.h"
#include "kernel_table.h"
#include "thread_pool.h"

namespace evoxc::interp {

// ---------------------------------------------------------------------------------------------
// DimCode

namespace {

// A program has few symbols: a scan of their names beats a map.
int32_t find_symbol(const std::vector<std::string>& sym_names, const std::string& name) {
  for (size_t i = 0; i < sym_names.size(); ++i)
    if (sym_names[i] == name) return static_cast<int32_t>(i);
  return -1;
}

}  // namespace

int32_t DimCode::add(const DimExpr& e, const std::vector<std::string>& sym_names) {
  uint32_t start = static_cast<uint32_t>(code_.size());
  int max_depth = 0;
  emit(e, sym_names, 1, max_depth);
  // eval() keeps its stack in a fixed array; expressions this deep do not come from real programs.
  if (max_depth > 64) throw BackendError("symbolic dim expression " + e.to_string() + " is nested too deeply");
  ranges_.emplace_back(start, static_cast<uint32_t>(code_.size()));
  exprs_.push_back(e);
  return static_cast<int32_t>(exprs_.size() - 1);
}

void DimCode::emit(const DimExpr& e, const std::vector<std::string>& sym_names, int depth, int& max_depth) {
  max_depth = std::max(max_depth, depth);
  switch (e.kind()) {
    case DimExpr::Kind::Const: code_.push_back({e.kind(), e.value()}); return;
    case DimExpr::Kind::Sym: {
      int32_t slot = find_symbol(sym_names, e.name());
      if (slot < 0) throw InternalError("DimCode: symbol " + e.name() + " has no slot");
      code_.push_back({e.kind(), slot});
      return;
    }
    default:
      emit(e.lhs(), sym_names, depth, max_depth);
      emit(e.rhs(), sym_names, depth + 1, max_depth);
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

std::string op_where(const Operation& op) {
  std::string s = "evoxc." + op.name();
  if (op.location().known()) s += " at " + op.location().to_string();
  return s;
}

PrepareCtx::PrepareCtx(const Operation& op, const Program& plan, std::span<const uint32_t> in,
                       std::span<const uint32_t> out)
    : op(op), in(in), out(out), plan_(plan), values_(plan.values), static_dims_(plan.dims_template) {}

std::string PrepareCtx::value_name(uint32_t id) const { return plan_.value_name(id); }
const std::vector<std::string>& PrepareCtx::sym_names() const { return plan_.sym_names; }

bool PrepareCtx::all_static() const {
  for (uint32_t v : in)
    if (!values_[v].is_static) return false;
  for (uint32_t v : out)
    if (!values_[v].is_static) return false;
  return true;
}

void PrepareCtx::fail(const std::string& why) const { throw BackendError(where() + ": " + why); }

namespace {

// The attribute `name` when present with type T; otherwise nullptr, and the caller lets the
// attribute helper raise its message (or convert, as attr_float does for ints).
template <typename T>
const T* typed_attr(const AttrMap& m, const std::string& name) {
  auto it = m.find(name);
  return it == m.end() ? nullptr : std::get_if<T>(&it->second);
}

}  // namespace

int64_t PrepareCtx::attr_int(const std::string& name) const {
  if (const auto* v = typed_attr<int64_t>(attrs(), name)) return *v;
  return evoxc::attr_int(attrs(), name, where());
}
double PrepareCtx::attr_float(const std::string& name) const {
  if (const auto* v = typed_attr<double>(attrs(), name)) return *v;
  return evoxc::attr_float(attrs(), name, where());
}
bool PrepareCtx::attr_bool(const std::string& name) const {
  if (const auto* v = typed_attr<bool>(attrs(), name)) return *v;
  return evoxc::attr_bool(attrs(), name, where());
}
const std::string& PrepareCtx::attr_string(const std::string& name) const {
  if (const auto* v = typed_attr<std::string>(attrs(), name)) return *v;
  return evoxc::attr_string(attrs(), name, where());
}
const std::vector<int64_t>& PrepareCtx::attr_ints(const std::string& name) const {
  if (const auto* v = typed_attr<std::vector<int64_t>>(attrs(), name)) return *v;
  return evoxc::attr_ints(attrs(), name, where());
}
DType PrepareCtx::attr_dtype(const std::string& name) const {
  if (const auto* v = typed_attr<DType>(attrs(), name)) return *v;
  return evoxc::attr_dtype(attrs(), name, where());
}
const Shape& PrepareCtx::attr_shape(const std::string& name) const {
  if (const auto* v = typed_attr<Shape>(attrs(), name)) return *v;
  return evoxc::attr_shape(attrs(), name, where());
}
const Tensor& PrepareCtx::attr_tensor(const std::string& name) const {
  if (const auto* v = typed_attr<Tensor>(attrs(), name)) return *v;
  return evoxc::attr_tensor(attrs(), name, where());
}

// ---------------------------------------------------------------------------------------------
// Helpers shared by the layer

std::string shape_text(const int64_t* dims, size_t rank) {
  std::string s = "(";
  for (size_t i = 0; i < rank; ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  if (rank == 1) s += ",";
  return s + ")";
}

std::string Program::value_name(uint32_t v) const {
  if (producer_op[v] == nullptr) return "input " + input_paths[v];
  return "%" + std::to_string(v);
}

std::string Program::producer(uint32_t v) const {
  if (producer_op[v] == nullptr) return "input " + input_paths[v];
  return op_where(*producer_op[v]);
}

Program::Program() = default;
Program::~Program() = default;

Program::FrameData::~FrameData() { std::free(arena); }

size_t host_memory_bytes() {
  static const size_t bytes = [] {
    long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(page) : SIZE_MAX;
  }();
  return bytes;
}

void check_host_memory(size_t bytes, const std::string& what) {
  if (bytes > host_memory_bytes())
    throw ValidationError(what + ": cannot allocate " + std::to_string(bytes) + " bytes: more than this host's " +
                          std::to_string(host_memory_bytes()) + " bytes of memory");
}

void Program::FrameData::reserve_arena(size_t bytes) {
  if (bytes <= arena_cap && arena) return;
  check_host_memory(bytes, "interp: scratch");
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
    try {
      f->reserve_arena(static_arena);
    } catch (const ValidationError& e) {
      throw ValidationError(std::string(e.what()) + " (" + largest_temp() + ")");
    }
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

std::string Program::largest_temp() const {
  uint32_t best = UINT32_MAX;
  size_t best_bytes = 0;
  for (size_t v = 0; v < values.size(); ++v) {
    if (storage[v].kind != StorageKind::Temp || !all_static) continue;
    size_t b = static_cast<size_t>(static_numel[v]) * size_of(values[v].dtype());
    if (best == UINT32_MAX || b > best_bytes) best = static_cast<uint32_t>(v), best_bytes = b;
  }
  if (best == UINT32_MAX) return "the plan's temporaries";
  return "the largest: " + value_name(best) + " of " + producer(best) + ", " + values[best].type().to_string() + ", " +
         std::to_string(best_bytes) + " bytes";
}

void Program::release_frame(std::unique_ptr<FrameData> f) const {
  for (auto& t : f->staged) t = Tensor();
  std::lock_guard<std::mutex> lk(pool_mu_);
  pool_.push_back(std::move(f));
}

namespace {

// Value -> id in the plan (a flat map: planning a graph costs one allocation here rather than
// one per value).
class ValueIds {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;
  void reserve(size_t n) { ids_.reserve(n); }
  void insert(const Value* v, uint32_t id) { ids_[v] = id; }
  uint32_t find(const Value* v) const {
    const uint32_t* id = ids_.find(v);
    return id != nullptr ? *id : kNone;
  }

 private:
  PtrMap<const Value*, uint32_t> ids_;
};

// What the storage plan needs of one op: where its operand and result ids lie in the
// planner's flat id list, and what its factory declared.
struct OpSlot {
  uint32_t in_begin = 0, out_begin = 0, out_end = 0;
  uint32_t in_place = 0;  // PrepareCtx::in_place_operands
  bool alias = false, constant = false;
};

// What the storage plan needs of a stream schedule: the order to walk the kernels' ops in (a
// topological order that lists every lane's steps in lane order) and where each op runs, so it
// can tell whether two accesses to a buffer are ordered at run time.
struct StreamOrder {
  uint32_t lanes = 0;               // clock entries per op: the most lanes of a segment
  std::vector<uint32_t> walk;       // op indices
  std::vector<uint32_t> at;         // per op: its index in `walk` (0 for ops without a kernel)
  std::vector<uint32_t> seg, lane;  // per op in `walk`: its segment, and its lane there
  // Per op in `walk`, `lanes` entries: how many steps of each lane of its segment are sure to
  // have completed when it starts (its own lane's entry: its position there).
  std::vector<int32_t> clock;
};

// Collects everything prepare() needs while walking the graph.
class Planner {
 public:
  explicit Planner(Program& p) : p_(p) {}

  void run(const Graph& graph);
  // Plans `block` with inputs = its arguments then `captures` (see prepare_block).
  void run_block(const Block& block, std::span<const Value* const> captures, const std::vector<std::string>& outer_syms,
                 std::string_view what);

 private:
  uint32_t add_value(const Value* v, const Operation* producer);
  void add_check(const PrepareCtx::PendingCheck& c, const Operation& op);
  int32_t expr_id(const DimExpr& e);
  // Each value's storage root (a view reads its operand's storage) and defining op.
  void roots(std::span<uint32_t> root, std::span<uint32_t> def_index) const;
  bool plan_streams(StreamOrder& so);
  void plan_storage(const std::vector<uint32_t>& outputs, const StreamOrder* so);
  std::span<const uint32_t> ins(size_t k) const {
    return {io_.data() + slots_[k].in_begin, slots_[k].out_begin - slots_[k].in_begin};
  }
  std::span<const uint32_t> outs(size_t k) const {
    return {io_.data() + slots_[k].out_begin, slots_[k].out_end - slots_[k].out_begin};
  }

  Program& p_;
  ValueIds vid_;
  std::unordered_map<DimExpr, int32_t> expr_ids_;
  std::vector<uint32_t> io_;  // every op's operand ids then result ids, in op order
  std::vector<OpSlot> slots_;
  bool top_level_ = false;    // main's entry block, not a region's
  bool has_regions_ = false;  // some op has regions (control flow)
};

int32_t Planner::expr_id(const DimExpr& e) {
  auto it = expr_ids_.find(e);
  if (it != expr_ids_.end()) return it->second;
  std::vector<std::string> syms;
  e.collect_symbols(syms);
  for (const auto& s : syms)
    if (find_symbol(p_.sym_names, s) < 0)
      throw BackendError("symbolic dim '" + s + "' (in " + e.to_string() +
                         ") is not bound by any input extent; give some input a dim that is exactly '" + s + "'");
  int32_t id = p_.code.add(e, p_.sym_names);
  expr_ids_.emplace(e, id);
  return id;
}

uint32_t Planner::add_value(const Value* v, const Operation* producer) {
  uint32_t id = static_cast<uint32_t>(p_.values.size());
  ValueDesc d;
  d.ty = &v->type();
  d.dim_off = static_cast<uint32_t>(p_.dims_template.size());
  d.is_static = true;
  p_.values.push_back(d);
  p_.producer_op.push_back(producer);
  for (const DimExpr& e : v->shape()) {
    if (e.is_const()) {
      if (e.value() < 0)
        throw BackendError(p_.producer(id) + ": " + p_.value_name(id) + " has a negative extent in its type " +
                           v->type().to_string());
      p_.dims_template.push_back(e.value());
      p_.dim_expr.push_back(-1);
    } else {
      p_.values.back().is_static = false;
      p_.all_static = false;
      p_.dims_template.push_back(0);
      p_.dim_expr.push_back(-2);  // resolved once every symbol has a slot
    }
  }
  vid_.insert(v, id);
  return id;
}

void Planner::add_check(const PrepareCtx::PendingCheck& c, const Operation& op) {
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
      throw BackendError(op_where(op) + ": " + c.what + " does not hold (" + std::to_string(*a) + " vs " +
                         std::to_string(*b) + "); the graph's types are inconsistent");
    return;
  }
  p_.checks.push_back({c.kind, expr_id(c.a), expr_id(c.b), op_where(op) + ": " + c.what});
}

void Planner::run(const Graph& graph) {
  if (!graph.defined()) throw BackendError("interp::prepare: the graph is empty (default-constructed)");
  const Block& entry = graph.main().entry();
  p_.module = graph.module_ptr();
  p_.input_paths = graph.input_paths();
  if (p_.input_paths.size() != entry.num_arguments()) {
    p_.input_paths.clear();
    for (size_t i = 0; i < entry.num_arguments(); ++i) p_.input_paths.push_back("[" + std::to_string(i) + "]");
  }
  top_level_ = true;
  run_block(entry, {}, {}, "main's entry block");
}

void Planner::run_block(const Block& entry, std::span<const Value* const> captures,
                        const std::vector<std::string>& outer_syms, std::string_view what) {
  p_.num_inputs = entry.num_arguments() + captures.size();
  if (p_.input_paths.size() != p_.num_inputs) {
    p_.input_paths.clear();
    for (size_t i = 0; i < entry.num_arguments(); ++i)
      p_.input_paths.push_back("block argument " + std::to_string(i) + " of " + std::string(what));
    for (size_t i = 0; i < captures.size(); ++i)
      p_.input_paths.push_back("captured value " + std::to_string(i) + " of " + std::string(what));
  }
  // Sizes known up front, so the plan's tables are allocated once.
  const auto& ops_owned = entry.operations();
  size_t num_values = p_.num_inputs, input_dims = 0, num_io = 0;
  for (const auto& a : entry.arguments()) input_dims += a->shape().rank();
  for (const Value* c : captures) input_dims += c->shape().rank();
  size_t num_dims = input_dims;
  for (const auto& op : ops_owned) {
    num_values += op->num_results();
    num_io += op->num_operands() + op->num_results();
    for (const auto& r : op->results()) num_dims += r->shape().rank();
  }
  vid_.reserve(num_values);
  p_.values.reserve(num_values);
  p_.producer_op.reserve(num_values);
  p_.dims_template.reserve(num_dims);
  p_.dim_expr.reserve(num_dims);
  io_.reserve(num_io);

  // Symbols of the enclosing plan come first (slots 0..); inputs are checked against them.
  p_.sym_names = outer_syms;
  p_.num_outer_syms = outer_syms.size();

  // Inputs: every bare-symbol extent binds (first occurrence) or is compared (later ones).
  // bound_at[slot]: the input and axis that bound the symbol (symbols after the outer ones).
  std::vector<std::pair<uint32_t, uint32_t>> bound_at;
  std::vector<std::tuple<uint32_t, uint32_t, DimExpr>> expr_rules;
  p_.input_rules.reserve(input_dims);
  for (uint32_t i = 0; i < p_.num_inputs; ++i) {
    const Value* a = i < entry.num_arguments() ? entry.argument(i) : captures[i - entry.num_arguments()];
    add_value(a, nullptr);
    for (uint32_t d = 0; d < a->shape().rank(); ++d) {
      const DimExpr& e = a->shape()[d];
      Program::InputRule r{Program::InputRule::Kind::Const, i, d};
      int32_t slot = e.is_symbol() ? find_symbol(p_.sym_names, e.name()) : -1;
      if (e.is_const()) {
        r.value = e.value();
      } else if (e.is_symbol() && !(slot >= 0 && static_cast<size_t>(slot) < p_.num_outer_syms)) {
        if (slot < 0) {
          r.kind = Program::InputRule::Kind::Bind;
          r.slot = static_cast<int32_t>(p_.sym_names.size());
          p_.sym_names.push_back(e.name());
          bound_at.emplace_back(i, d);
        } else {
          r.kind = Program::InputRule::Kind::SameSym;
          r.slot = slot;
          std::tie(r.first_input, r.first_axis) = bound_at[static_cast<size_t>(slot) - p_.num_outer_syms];
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
  if (ops_owned.empty() || !ops_owned.back()->is_terminator())
    throw BackendError("interp::prepare: " + std::string(what) + " does not end in evoxc.return");
  const size_t nops = ops_owned.size() - 1;
  p_.kernels.resize(nops);
  slots_.resize(nops);
  const KernelTable& table = kernel_table();
  for (size_t k = 0; k < nops; ++k) {
    const Operation& op = *ops_owned[k];
    has_regions_ = has_regions_ || !op.regions().empty();
    // Only ops defined with regions (control flow) get their regions planned.
    if (!op.regions().empty() && op_def(op).num_regions == 0)
      throw BackendError(op_where(op) + ": ops with regions are not supported by the interpreter yet");
    KernelFactory make = table.get(op);
    OpSlot& s = slots_[k];
    s.in_begin = static_cast<uint32_t>(io_.size());
    for (const Value* v : op.operands()) {
      uint32_t id = vid_.find(v);
      if (id == ValueIds::kNone)
        throw BackendError(op_where(op) + ": an operand is not defined earlier in the entry block");
      io_.push_back(id);
    }
    // Values a region reads from outside it travel as extra inputs, so their buffers live
    // until the op has run.
    std::vector<const Value*> caps;
    if (!op.regions().empty()) {
      caps = captured_values(op);
      for (const Value* v : caps) {
        uint32_t id = vid_.find(v);
        if (id == ValueIds::kNone)
          throw BackendError(op_where(op) + ": a region uses a value that is not defined before the op");
        io_.push_back(id);
      }
    }
    s.out_begin = static_cast<uint32_t>(io_.size());
    for (size_t r = 0; r < op.num_results(); ++r) io_.push_back(add_value(op.result(r), &op));
    s.out_end = static_cast<uint32_t>(io_.size());
    PrepareCtx ctx(op, p_, ins(k), outs(k));
    ctx.captures = caps;
    try {
      p_.kernels[k] = make(ctx);
    } catch (const TypeError& e) {
      throw BackendError(op_where(op) + ": " + e.what());
    } catch (const ShapeError& e) {
      throw BackendError(op_where(op) + ": " + e.what());
    }
    if (!p_.kernels[k] && !ctx.alias_operand0 && ctx.constant == nullptr)
      throw InternalError(op_where(op) + ": kernel factory returned nothing");
    s.in_place = ctx.in_place_operands;
    s.alias = ctx.alias_operand0;
    s.constant = ctx.constant != nullptr;
    if (ctx.constant != nullptr) p_.constants.push_back(*ctx.constant);
    for (const auto& c : ctx.checks) add_check(c, op);
    for (uint32_t r : outs(k)) {
      if (p_.values[r].is_static) continue;
      const Shape& sh = p_.values[r].type().shape;
      for (size_t d = 0; d < sh.rank(); ++d)
        if (!sh[d].is_const())
          add_check({Check::Kind::NonNegative, sh[d], DimExpr(0), "extent " + sh[d].to_string() + " of the result"},
                    op);
    }
  }

  // Dims of every value, now that every symbol has a slot.
  if (!p_.all_static)
    for (size_t v = 0; v < p_.values.size(); ++v) {
      const ValueDesc& d = p_.values[v];
      for (uint32_t i = 0; i < d.rank(); ++i)
        if (p_.dim_expr[d.dim_off + i] == -2) p_.dim_expr[d.dim_off + i] = expr_id(d.type().shape[i]);
    }
  if (p_.all_static) {
    p_.static_numel.reserve(p_.values.size());
    for (size_t v = 0; v < p_.values.size(); ++v) {
      const ValueDesc& d = p_.values[v];
      int64_t n = 1;
      for (uint32_t i = 0; i < d.rank(); ++i) {
        int64_t x = p_.dims_template[d.dim_off + i];
        if (x != 0 && n > INT64_MAX / x) throw ShapeError("tensor shape has too many elements (int64 overflow)");
        n *= x;
      }
      // The bound symbolic shapes get at run time (execute.cpp), here at load: byte counts
      // then never overflow, and the op that asks for such a value is named before any
      // allocation is tried.
      if (n > kMaxElements)
        throw BackendError(p_.producer(static_cast<uint32_t>(v)) + ": " + p_.value_name(static_cast<uint32_t>(v)) +
                           " of type " + d.type().to_string() + " has " + std::to_string(n) +
                           " elements, more than the interpreter holds in one tensor (2^48); make it smaller");
      p_.static_numel.push_back(n);
    }
  }

  // Outputs.
  const Operation& ret = *ops_owned.back();
  p_.output_value.reserve(ret.num_operands());
  for (const Value* v : ret.operands()) {
    uint32_t id = vid_.find(v);
    if (id == ValueIds::kNone)
      throw BackendError(op_where(ret) + ": returns a value not defined in " + std::string(what));
    p_.output_value.push_back(id);
  }
  // Fusion first: a fused run is one kernel, so one step of a stream schedule.
  fuse_elementwise_runs(p_.kernels);
  StreamOrder so;
  bool streamed = top_level_ && plan_streams(so);
  plan_storage(p_.output_value, streamed ? &so : nullptr);
}

void Planner::roots(std::span<uint32_t> root, std::span<uint32_t> def_index) const {
  constexpr uint32_t kNone = UINT32_MAX;
  for (size_t v = 0; v < root.size(); ++v) {
    root[v] = static_cast<uint32_t>(v);
    def_index[v] = kNone;
  }
  for (size_t k = 0; k < slots_.size(); ++k) {
    for (uint32_t r : outs(k)) def_index[r] = static_cast<uint32_t>(k);
    // Op order: an alias of an alias finds its operand's root already set.
    if (slots_[k].alias) root[io_[slots_[k].out_begin]] = root[io_[slots_[k].in_begin]];
  }
}

// The stream schedule's cost model, in nanoseconds: the interpreter's dispatch and per-element
// costs (as BatchCostModel measures them), what a step pays to wait for another lane's result
// (a cache line travelling between cores), and what a concurrent segment costs the caller
// (handing the lanes to the pool and joining them).
constexpr double kDispatchNs = 20, kElementNs = 0.4, kWaitNs = 100, kSegmentNs = 5000;
// A schedule is used only when its concurrent segments' estimated time is under this share of
// their sequential estimate, and they hold at least kMinStreamedNs of work: a small or mostly
// serial graph keeps the plain op-order loop and pays nothing.
constexpr double kMinGain = 0.8, kMinStreamedNs = 20000;

// A static schedule of the kernels over up to num_threads() lanes, or false to keep op order.
//
// Kernels large enough to split themselves into tiles over every thread (fused runs, kernels
// touching >= 2 x kParallelGrain elements) are "barriers": they run alone on the caller, in
// sequential segments. The rest go to concurrent segments: phase by phase, every non-barrier
// kernel whose operands are ready, then every barrier kernel that became ready, and so on.
// Within a concurrent segment kernels are list-scheduled in op order (traced programs keep a
// program's ops together, so this keeps their intermediates in cache), each on its home lane
// (that of its last-made operand, else the previous kernel's) unless that lane is loaded more
// than a slack beyond the least loaded one; then on the lane where it can start first,
// counting kWaitNs for an operand made on another lane. So a program's ops stay on one lane
// (each spread is a wait) while the lanes stay balanced. A concurrent segment whose estimated
// gain does not pay for its own cost runs sequentially.
//
// Only top-level, all-static plans without control flow qualify: a loop kernel ticks the
// call's single-threaded RunBudget and may throw RunLimitError mid-iteration.
bool Planner::plan_streams(StreamOrder& so) {
  const int threads = num_threads();
  if (threads < 2 || !p_.all_static || has_regions_) return false;
  constexpr uint32_t kNone = UINT32_MAX;
  const size_t nv = p_.values.size(), nops = slots_.size();
  const auto S = static_cast<uint32_t>(std::min<int>(threads, static_cast<int>(StreamSchedule::kMaxLanes)));
  constexpr int64_t kBarrierNumel = 2 * kParallelGrain;

  // One pass in op order builds the nodes (one per kernel; the members of a fused run, which
  // have no kernel of their own yet are neither views nor constants, belong to the run's
  // kernel, the nearest one before them), their costs, their dependencies (the producers of the
  // storage they read; CSR, deduplicated) and their phases. Phases: concurrent ones even,
  // sequential (barrier) ones odd; a node goes to the first phase of its kind not before any of
  // its operands' phases, and within a phase nodes keep op order (a topological order). This is
  // list scheduling's "take every ready node of one kind, then switch", in the same pass.
  std::vector<uint32_t> root(nv), def_index(nv, kNone), node_of(nops, kNone), node_op, dep_begin, deps, phase;
  std::vector<double> cost;
  std::vector<uint8_t> barrier;
  std::vector<uint32_t> stamp;  // per node: the last node that recorded it as a dependency
  node_op.reserve(nops);
  dep_begin.reserve(nops + 1);
  deps.reserve(2 * nops);
  cost.reserve(nops);
  barrier.reserve(nops);
  phase.reserve(nops);
  stamp.reserve(nops);
  for (size_t v = 0; v < nv; ++v) root[v] = static_cast<uint32_t>(v);
  auto close_node = [&]() {  // the phase of the last node, now that all its members are in
    if (node_op.empty()) return;
    const size_t i = node_op.size() - 1;
    uint32_t lb = 0;
    for (uint32_t j = dep_begin[i]; j < deps.size(); ++j) lb = std::max(lb, phase[deps[j]]);
    phase.push_back(lb + ((lb & 1u) != barrier[i]));
  };
  double streamable = 0;
  for (size_t k = 0; k < nops; ++k) {
    const OpSlot& s = slots_[k];
    for (uint32_t r : outs(k)) def_index[r] = static_cast<uint32_t>(k);
    if (s.alias) root[io_[s.out_begin]] = root[io_[s.in_begin]];
    if (!p_.kernels[k] && (s.alias || s.constant)) continue;
    int64_t produced = 0, largest = 0;
    for (uint32_t r : outs(k)) produced += p_.static_numel[r], largest = std::max(largest, p_.static_numel[r]);
    for (uint32_t o : ins(k)) largest = std::max(largest, p_.static_numel[o]);
    // A reduction reads more than it writes: its time goes with the larger side. (A kernel
    // that tiles itself over every thread, tile_numel() >= kBarrierNumel, has a result that
    // large, so `largest` covers it.)
    double c = kDispatchNs + kElementNs * static_cast<double>(std::max(produced, largest));
    bool big = largest >= kBarrierNumel;
    if (p_.kernels[k]) {
      close_node();
      dep_begin.push_back(static_cast<uint32_t>(deps.size()));
      node_op.push_back(static_cast<uint32_t>(k));
      cost.push_back(c);
      barrier.push_back(big);
      stamp.push_back(kNone);
    } else {
      if (node_op.empty()) throw InternalError("interp: an op without a kernel precedes every kernel");
      cost.back() += c;
      barrier.back() = 1;  // a fused run splits into tiles over every thread
    }
    const auto i = static_cast<uint32_t>(node_op.size() - 1);
    node_of[k] = i;
    for (uint32_t o : ins(k)) {
      uint32_t d = def_index[root[o]];
      uint32_t dn = d == kNone ? kNone : node_of[d];
      if (dn == kNone || dn == i || stamp[dn] == i) continue;
      stamp[dn] = i;
      deps.push_back(dn);
    }
  }
  close_node();
  const size_t n = node_op.size();
  dep_begin.push_back(static_cast<uint32_t>(deps.size()));
  for (size_t i = 0; i < n; ++i)
    if (!barrier[i]) streamable += cost[i];
  if (n < 2 || streamable < kMinStreamedNs) return false;

  std::vector<uint32_t> phase_begin(1, 0), emitted(n);
  for (size_t i = 0; i < n; ++i) {
    if (phase_begin.size() < phase[i] + 2) phase_begin.resize(phase[i] + 2, 0);
    ++phase_begin[phase[i] + 1];
  }
  for (size_t ph = 1; ph < phase_begin.size(); ++ph) phase_begin[ph] += phase_begin[ph - 1];
  {
    std::vector<uint32_t> fill(phase_begin.begin(), phase_begin.end() - 1);
    for (size_t i = 0; i < n; ++i) emitted[fill[phase[i]]++] = static_cast<uint32_t>(i);
  }

  // Segments: the phases that hold nodes. Concurrent ones are list-scheduled in op order.
  struct Seg {
    uint32_t begin, end;  // in `emitted`
    bool concurrent;
    double work, makespan;
  };
  std::vector<Seg> segs;
  std::vector<uint32_t> seg_of(n, kNone), lane_of(n, 0);
  std::vector<double> finish(n, 0), lane_free(S), est(S);
  // How much more loaded than the least loaded lane a kernel's home lane may be before the
  // kernel leaves it: an eighth of a lane's share of the streamable work, at most 20 us.
  const double slack = std::min(20000.0, streamable / S / 8);
  for (size_t ph = 0; ph + 1 < phase_begin.size(); ++ph) {
    if (phase_begin[ph] == phase_begin[ph + 1]) continue;
    const auto g = static_cast<uint32_t>(segs.size());
    Seg sg{phase_begin[ph], phase_begin[ph + 1], ph % 2 == 0, 0, 0};
    for (uint32_t e = sg.begin; e < sg.end; ++e) {
      seg_of[emitted[e]] = g;
      sg.work += cost[emitted[e]];
    }
    if (sg.concurrent) {
      std::fill(lane_free.begin(), lane_free.end(), 0.0);
      uint32_t prev = 0;
      for (uint32_t e = sg.begin; e < sg.end; ++e) {
        uint32_t i = emitted[e];
        // Home: the lane of the operand made last in this segment, else the previous kernel's.
        uint32_t home = prev;
        double home_finish = -1;
        for (uint32_t l = 0; l < S; ++l) est[l] = lane_free[l];
        for (uint32_t j = dep_begin[i]; j < dep_begin[i + 1]; ++j) {
          uint32_t d = deps[j];
          if (seg_of[d] != g) continue;
          if (finish[d] > home_finish) home = lane_of[d], home_finish = finish[d];
          for (uint32_t l = 0; l < S; ++l) est[l] = std::max(est[l], finish[d] + (lane_of[d] == l ? 0 : kWaitNs));
        }
        uint32_t best = 0, least = 0;
        for (uint32_t l = 1; l < S; ++l) {
          if (est[l] < est[best]) best = l;
          if (lane_free[l] < lane_free[least]) least = l;
        }
        if (lane_free[home] - lane_free[least] <= slack) best = home;
        lane_of[i] = best;
        finish[i] = est[best] + cost[i];
        lane_free[best] = finish[i];
        prev = best;
      }
      sg.makespan = *std::max_element(lane_free.begin(), lane_free.end());
      // Not worth a concurrent segment: run it in op order on the caller.
      if (sg.work - sg.makespan < kSegmentNs) sg.concurrent = false;
    }
    segs.push_back(sg);
  }

  // Worth it? Only the concurrent segments change (the rest runs as in op order): their
  // makespans plus their own cost must beat their sequential time by the margin.
  double seq = 0, par = 0;
  for (const Seg& sg : segs)
    if (sg.concurrent) seq += sg.work, par += sg.makespan + kSegmentNs;
  if (seq < kMinStreamedNs || par >= kMinGain * seq) return false;

  // Adjacent sequential segments merge into one, in op order (any order of a set of nodes
  // by index is topological: a node's operands come before it in op order).
  std::vector<Seg> merged;
  for (const Seg& sg : segs) {
    if (!merged.empty() && !sg.concurrent && !merged.back().concurrent)
      merged.back().end = sg.end;
    else
      merged.push_back(sg);
  }
  for (const Seg& sg : merged)
    if (!sg.concurrent) std::sort(emitted.begin() + sg.begin, emitted.begin() + sg.end);  // op order

  // The schedule, and per op its place and clock (vector clocks over the segment's lanes: a
  // step's clock is the lane-wise maximum of its lane predecessor's and those of the steps it
  // waits for, so a wait already implied by an earlier one is dropped).
  StreamSchedule& st = p_.streams;
  so.lanes = S;
  so.walk.reserve(nops);
  so.at.assign(nops, 0);
  so.seg.assign(nops, 0);
  so.lane.assign(nops, 0);
  so.clock.assign(nops * S, 0);
  std::vector<uint32_t> pos_of(n, 0), lane_map(S);
  std::vector<int32_t> clock_end(n * S, 0), need(S), clock(S);
  std::vector<std::vector<uint32_t>> lane_nodes(S);
  for (size_t g = 0; g < merged.size(); ++g) {
    const Seg& sg = merged[g];
    auto add_op = [&](uint32_t k, uint32_t lane, const int32_t* clock) {
      so.at[k] = static_cast<uint32_t>(so.walk.size());
      so.walk.push_back(k);
      so.seg[k] = static_cast<uint32_t>(g);
      so.lane[k] = lane;
      std::copy(clock, clock + S, so.clock.begin() + static_cast<ptrdiff_t>(k) * S);
    };
    auto members = [&](uint32_t i, auto&& fn) {
      for (size_t k = node_op[i]; k < nops && node_of[k] == i; ++k) fn(static_cast<uint32_t>(k));
    };
    StreamSchedule::Segment out{static_cast<uint32_t>(st.lanes.size()), 0};
    if (!sg.concurrent) {
      StreamSchedule::Lane lane{static_cast<uint32_t>(st.steps.size()), 0};
      int32_t pos = 0;
      for (uint32_t e = sg.begin; e < sg.end; ++e) {
        uint32_t i = emitted[e];
        st.steps.push_back(
            {node_op[i], static_cast<uint32_t>(st.waits.size()), static_cast<uint32_t>(st.waits.size())});
        // Sequential: each op (a fused run's members too) after the previous one.
        members(i, [&](uint32_t k) {
          std::fill(clock.begin(), clock.end(), 0);
          clock[0] = pos++;
          add_op(k, 0, clock.data());
        });
      }
      lane.step_end = static_cast<uint32_t>(st.steps.size());
      st.lanes.push_back(lane);
    } else {
      // Lanes that got no kernel are dropped; the rest are numbered densely.
      for (auto& v : lane_nodes) v.clear();
      for (uint32_t e = sg.begin; e < sg.end; ++e) {
        uint32_t i = emitted[e];
        pos_of[i] = static_cast<uint32_t>(lane_nodes[lane_of[i]].size());
        lane_nodes[lane_of[i]].push_back(i);
      }
      uint32_t used = 0;
      for (uint32_t l = 0; l < S; ++l) lane_map[l] = lane_nodes[l].empty() ? kNone : used++;
      // Steps per lane, waits computed in emission order (a topological order).
      std::vector<std::vector<StreamSchedule::Step>> steps(used);
      std::vector<std::vector<StreamSchedule::Wait>> waits(used);
      for (uint32_t e = sg.begin; e < sg.end; ++e) {
        uint32_t i = emitted[e];
        uint32_t l = lane_map[lane_of[i]];
        auto p = static_cast<int32_t>(pos_of[i]);
        int32_t* c = clock_end.data() + static_cast<size_t>(i) * S;
        if (p > 0) {
          const int32_t* prev = clock_end.data() + static_cast<size_t>(lane_nodes[lane_of[i]][p - 1]) * S;
          std::copy(prev, prev + S, c);
        }
        c[l] = p;
        std::fill(need.begin(), need.end(), 0);
        for (uint32_t j = dep_begin[i]; j < dep_begin[i + 1]; ++j) {
          uint32_t d = deps[j];
          if (seg_of[d] != seg_of[i] || lane_of[d] == lane_of[i]) continue;
          uint32_t t = lane_map[lane_of[d]];
          need[t] = std::max(need[t], static_cast<int32_t>(pos_of[d]) + 1);
        }
        uint32_t wait_begin = static_cast<uint32_t>(waits[l].size());
        for (uint32_t t = 0; t < used; ++t) {
          if (need[t] <= c[t]) continue;
          waits[l].push_back({t, need[t]});
          uint32_t d = 0;
          for (uint32_t lo = 0; lo < S; ++lo)
            if (lane_map[lo] == t) d = lane_nodes[lo][static_cast<size_t>(need[t] - 1)];
          const int32_t* dc = clock_end.data() + static_cast<size_t>(d) * S;
          for (uint32_t u = 0; u < S; ++u) c[u] = std::max(c[u], dc[u]);
          c[t] = std::max(c[t], need[t]);
        }
        steps[l].push_back({node_op[i], wait_begin, static_cast<uint32_t>(waits[l].size())});
        add_op(node_op[i], l, c);  // concurrent nodes are single ops (fused runs are barriers)
        c[l] = p + 1;              // now: the clock at its end
      }
      for (uint32_t l = 0; l < used; ++l) {
        StreamSchedule::Lane lane{static_cast<uint32_t>(st.steps.size()), 0};
        auto base = static_cast<uint32_t>(st.waits.size());
        for (StreamSchedule::Step s : steps[l]) {
          s.wait_begin += base;
          s.wait_end += base;
          st.steps.push_back(s);
        }
        st.waits.insert(st.waits.end(), waits[l].begin(), waits[l].end());
        lane.step_end = static_cast<uint32_t>(st.steps.size());
        st.lanes.push_back(lane);
      }
      st.max_lanes = std::max(st.max_lanes, used);
    }
    out.lane_end = static_cast<uint32_t>(st.lanes.size());
    st.segments.push_back(out);
  }
  return true;
}

// Buffer reuse. Sequentially (so == nullptr) ops are walked in op order; a value's buffer is
// free after its last reader, for any later value, and an elementwise result may overwrite an
// operand that dies at its op. With a stream schedule, ops are walked in the schedule's
// topological order, and a buffer passes from its values to a new one only when every access
// to it so far (the producer and every reader of each earlier value) is ordered before the new
// value's producer at run time: in an earlier segment, or, in the same segment, completed by
// the time the producer starts as far as the producer's clock knows (its own lane's earlier
// steps, and what its waits imply). The same rule decides in-place results: an operand read
// by a step of another lane that the writer does not wait for is never overwritten. A reused
// buffer is then never written while a concurrent step may still read or write it.
void Planner::plan_storage(const std::vector<uint32_t>& outputs, const StreamOrder* so) {
  const size_t nv = p_.values.size();
  const size_t nops = slots_.size();
  const bool streamed = so != nullptr;
  const size_t nw = streamed ? so->walk.size() : nops;  // ops walked
  const auto kEnd = static_cast<uint32_t>(nw);
  constexpr uint32_t kNone = UINT32_MAX;
  // Every table below is a slice of one allocation: a plan of a small graph is made in a
  // few microseconds, and an allocation per table would be a good part of that.
  std::vector<uint32_t> scratch(8 * nv + 2 * nw + 3);
  uint32_t* next = scratch.data();
  auto table = [&](size_t n) {
    std::span<uint32_t> t(next, n);
    next += n;
    return t;
  };
  std::span<uint32_t> root = table(nv), def_index = table(nv), last_use = table(nv), buf_of = table(nv);
  std::span<uint32_t> die_begin = table(nw + 2), fill = table(nw + 1), dying = table(nv);
  std::span<uint32_t> owner = table(nv), first_value = table(nv);  // per buffer
  std::span<uint32_t> free_bufs = table(nv);                       // free buffers, in the order they were freed
  size_t num_free = 0;
  auto walk_op = [&](size_t w) { return streamed ? so->walk[w] : static_cast<uint32_t>(w); };

  // Streamed: per buffer, the segment of its latest accesses and, per lane of that segment,
  // one past the latest position accessing it.
  const uint32_t S = streamed ? so->lanes : 0;
  std::vector<uint32_t> acc_seg;
  std::vector<int32_t> acc;
  auto ordered = [&](uint32_t b, uint32_t k) {
    if (!streamed || acc_seg[b] == kNone || acc_seg[b] < so->seg[k]) return true;
    const int32_t* c = so->clock.data() + static_cast<size_t>(k) * S;
    const int32_t* r = acc.data() + static_cast<size_t>(b) * S;
    for (uint32_t t = 0; t < S; ++t)
      if (c[t] < r[t]) return false;
    return true;
  };
  auto record = [&](uint32_t b, uint32_t k) {
    int32_t* r = acc.data() + static_cast<size_t>(b) * S;
    if (acc_seg[b] != so->seg[k]) {
      acc_seg[b] = so->seg[k];
      std::fill(r, r + S, 0);
    }
    uint32_t l = so->lane[k];
    r[l] = std::max(r[l], so->clock[static_cast<size_t>(k) * S + l] + 1);
  };

  roots(root, def_index);
  for (size_t v = 0; v < nv; ++v) buf_of[v] = kNone;
  p_.storage.assign(nv, {});
  p_.buffers.reserve(std::min<size_t>(nv, 16));
  p_.patch_values.reserve(p_.num_inputs + outputs.size());
  for (uint32_t i = 0; i < p_.num_inputs; ++i) p_.storage[i] = {Program::StorageKind::Input, i};

  // Which values are written straight into an output buffer.
  p_.output_direct.assign(outputs.size(), false);
  for (size_t j = 0; j < outputs.size(); ++j) {
    uint32_t v = outputs[j];
    uint32_t k = def_index[v];
    if (k == kNone || slots_[k].alias || slots_[k].constant) continue;
    if (p_.storage[v].kind == Program::StorageKind::Output) continue;  // already direct for an earlier leaf
    p_.output_direct[j] = true;
    p_.storage[v] = {Program::StorageKind::Output, static_cast<uint32_t>(j)};
  }
  uint32_t nconst = 0;
  for (size_t k = 0; k < nops; ++k)
    if (slots_[k].constant) p_.storage[io_[slots_[k].out_begin]] = {Program::StorageKind::Constant, nconst++};

  // Last use of each root's storage, as a walk position (the return counts as a use at the
  // end). Streamed, views and constants are not walked: they run nothing.
  for (size_t v = 0; v < nv; ++v)
    last_use[v] = def_index[v] == kNone ? 0 : (streamed ? so->at[def_index[v]] : def_index[v]);
  for (size_t w = 0; w < nw; ++w)
    for (uint32_t o : ins(walk_op(w))) last_use[root[o]] = std::max(last_use[root[o]], static_cast<uint32_t>(w));
  for (uint32_t o : outputs) last_use[root[o]] = kEnd;

  // Roots by the walk position after which they die (a counting sort into one flat list).
  for (uint32_t& d : die_begin) d = 0;
  for (size_t v = 0; v < nv; ++v)
    if (root[v] == v) ++die_begin[last_use[v] + 1];
  for (size_t k = 1; k < die_begin.size(); ++k) die_begin[k] += die_begin[k - 1];
  for (size_t k = 0; k < fill.size(); ++k) fill[k] = die_begin[k];
  for (size_t v = 0; v < nv; ++v)
    if (root[v] == v) dying[fill[last_use[v]]++] = static_cast<uint32_t>(v);

  auto bytes_expr = [&](uint32_t v) {
    return p_.values[v].type().shape.num_elements() * DimExpr(static_cast<int64_t>(size_of(p_.values[v].dtype())));
  };
  auto static_bytes = [&](uint32_t v) {
    return static_cast<size_t>(p_.static_numel[v]) * size_of(p_.values[v].dtype());
  };

  for (size_t w = 0; w < nw; ++w) {
    const uint32_t k = walk_op(w);
    for (uint32_t r : outs(k)) {
      if (root[r] != r || p_.storage[r].kind != Program::StorageKind::Temp) continue;
      uint32_t chosen = kNone;
      std::span<const uint32_t> in = ins(k);
      for (size_t oi = 0; oi < in.size() && oi < 32; ++oi) {
        if (!(slots_[k].in_place >> oi & 1u)) continue;
        uint32_t o = in[oi];
        uint32_t ro = root[o];
        if (p_.storage[ro].kind != Program::StorageKind::Temp || last_use[ro] != w || buf_of[ro] == kNone) continue;
        if (owner[buf_of[ro]] != ro || !ordered(buf_of[ro], k)) continue;
        if (p_.values[o].type().shape != p_.values[r].type().shape) continue;
        if (size_of(p_.values[o].dtype()) != size_of(p_.values[r].dtype())) continue;
        chosen = buf_of[ro];
        break;
      }
      if (chosen == kNone && num_free > 0) {
        // Best fit among free buffers: the smallest that holds the value (static), or one
        // sized by the same expression (symbolic).
        size_t best = SIZE_MAX, best_cap = 0;
        const size_t need = p_.all_static ? static_bytes(r) : 0;
        for (size_t fi = 0; fi < num_free; ++fi) {
          uint32_t b = free_bufs[fi];
          bool fits;
          size_t cap = 0;
          if (p_.all_static) {
            cap = p_.buffers[b].static_bytes;
            fits = cap >= need;
          } else {
            fits = bytes_expr(first_value[b]) == bytes_expr(r);
          }
          if (fits && (best == SIZE_MAX || cap < best_cap) && ordered(b, k)) {
            best = fi;
            best_cap = cap;
            // Nothing fits better than exactly (static; symbolic fits are all alike).
            if (cap == need) break;
          }
        }
        if (best != SIZE_MAX) {
          chosen = free_bufs[best];
          for (size_t fi = best; fi + 1 < num_free; ++fi) free_bufs[fi] = free_bufs[fi + 1];
          --num_free;
        }
      }
      if (chosen == kNone) {
        chosen = static_cast<uint32_t>(p_.buffers.size());
        p_.buffers.emplace_back();
        first_value[chosen] = r;
        if (streamed) {
          acc_seg.push_back(kNone);
          acc.resize(acc.size() + S, 0);
        }
      }
      Program::Buffer& b = p_.buffers[chosen];
      if (p_.all_static)
        b.static_bytes = std::max(b.static_bytes, static_bytes(r));
      else
        b.values.push_back(r);
      owner[chosen] = r;
      buf_of[r] = chosen;
      p_.storage[r] = {Program::StorageKind::Temp, chosen};
    }
    if (streamed) {
      for (uint32_t r : outs(k))
        if (root[r] == r && buf_of[r] != kNone) record(buf_of[r], k);
      for (uint32_t o : ins(k))
        if (buf_of[root[o]] != kNone) record(buf_of[root[o]], k);
    }
    for (uint32_t i = die_begin[w]; i < die_begin[w + 1]; ++i) {
      uint32_t dead = dying[i];
      uint32_t b = buf_of[dead];
      if (b != kNone && owner[b] == dead) free_bufs[num_free++] = b;
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
    p_.static_offsets.reserve(p_.buffers.size());
    for (const auto& b : p_.buffers) {
      p_.static_offsets.push_back(off);
      off += (b.static_bytes + 63) / 64 * 64;
    }
    p_.static_arena = off;
  }
}

}  // namespace

std::shared_ptr<const Program> prepare_block(const Block& block, std::span<const Value* const> captures,
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

}  // namespace evoxc::interp
