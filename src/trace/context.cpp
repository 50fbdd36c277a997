// The trace context: nesting and generations of traces, emission through the Builder, locations, warnings.
#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <cstring>

#include "emit.h"
#include "evoxc/core/error.h"
#include "evoxc/ops/op_def.h"
#include "evoxc/trace/symbolic_tensor.h"
#include "infer_cache.h"

namespace evoxc {

namespace {
// The innermost active trace of this thread; the others are reached through outer_.
thread_local TraceContext* g_current = nullptr;
// Generations start at 1, so a default SymbolicTensor (generation 0) matches no trace.
std::atomic<uint64_t> g_generation{0};

void default_warning(const std::string& m) { std::fprintf(stderr, "evoxc: warning: %s\n", m.c_str()); }
WarningHandler g_warning = default_warning;

const char* base_name(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash ? slash + 1 : path;
}
}  // namespace

void set_warning_handler(WarningHandler handler) { g_warning = handler ? handler : default_warning; }
void warn(const std::string& message) { g_warning(message); }

Location make_location(const std::source_location& loc) {
  return Location{base_name(loc.file_name()), static_cast<int>(loc.line()), static_cast<int>(loc.column())};
}

Value* SymbolicTensor::checked() const {
  const TraceContext* cur = g_current;
  if (value_ != nullptr && ctx_ == cur && cur->gen_ == gen_) return value_;
  TraceContext::misuse(*this, "");
}

SymbolicTensor::operator bool() const {
  throw TraceError(
      "SymbolicTensor cannot be used as a C++ boolean: its value is only known when the graph runs. "
      "Branch inside the graph with evoxc::cond or select/where instead of if/while/&&/||.");
}

Operand::Operand(const Tensor& t) : kind_(Kind::Tensor) {
  throw TraceError("a Tensor " + t.repr() +
                   " was used inside a traced function; a Tensor has storage and no graph identity. "
                   "Pass it as an input (give trace a TensorSpec) or embed it with evoxc::constant(...); "
                   "to run a function on Tensors use evoxc::evaluate.");
}

void TraceContext::misuse(const SymbolicTensor& t, const std::string& where) {
  std::string at = where.empty() ? std::string() : " (" + where + ")";
  if (t.value_ == nullptr) throw TraceError("use of an undefined (default-constructed) SymbolicTensor" + at);
  const TraceContext* cur = g_current;
  if (cur == nullptr)
    throw TraceError("a SymbolicTensor was used after its trace ended (no trace is active now)" + at +
                     "; a SymbolicTensor only exists while its function is traced: return it from the traced "
                     "function and run the Graph to get values");
  if (cur->gen_ != t.gen_)
    for (const TraceContext* c = cur->outer_; c != nullptr; c = c->outer_)
      if (c->gen_ == t.gen_)
        throw TraceError("a SymbolicTensor of an enclosing trace was used inside a nested trace" + at +
                         "; a nested trace cannot capture values of the trace around it: pass the value in as an "
                         "argument of the nested trace (a TensorSpec) instead");
  throw TraceError("a SymbolicTensor of a trace that has ended (or of another thread's trace) was used in this trace" +
                   at + "; SymbolicTensors cannot outlive their trace or move between traces: trace the code that " +
                   "makes the value inside this trace, or pass it in as an input (a TensorSpec)");
}

TraceContext::TraceContext()
    : gen_(g_generation.fetch_add(1, std::memory_order_relaxed) + 1),
      outer_(g_current),
      module_(std::make_shared<Module>("main", kIrVersion)),
      main_(&module_->add_function("main")),
      builder_(main_->entry()) {
  g_current = this;
}

TraceContext::~TraceContext() { g_current = outer_; }

TraceContext& TraceContext::current() {
  if (!g_current)
    throw TraceError("no active trace: op functions build graphs and only work inside evoxc::trace(fn, specs...)");
  return *g_current;
}
TraceContext* TraceContext::current_or_null() { return g_current; }

void TraceContext::push_block(Block& b) {
  blocks_.push_back(&b);
  scalar_begin_.push_back(scalars_.size());
  builder_.set_block(b);
}

void TraceContext::pop_block() {
  if (blocks_.empty()) throw InternalError("TraceContext::pop_block: no pushed block");
  blocks_.pop_back();
  scalars_.resize(scalar_begin_.back());
  scalar_begin_.pop_back();
  builder_.set_block(blocks_.empty() ? main_->entry() : *blocks_.back());
}

SymbolicTensor TraceContext::add_input(const TensorSpec& spec) {
  for (const auto& d : spec.shape)
    if (d.is_const() && d.value() < 0) throw ShapeError("TensorSpec " + spec.to_string() + " has a negative extent");
  return wrap(main_->entry().add_argument(TensorType(spec.dtype, spec.shape)));
}

TraceContext& TraceContext::of(const SymbolicTensor& t, const OpInfo& op, const std::source_location& loc) {
  TraceContext* cur = g_current;
  if (t.value_ != nullptr && t.ctx_ == cur && cur->gen_ == t.gen_) return *cur;
  misuse(t, "an operand of op '" + op.name + "' at " + (cur ? cur->location_of(loc) : make_location(loc)).to_string());
}

Value* TraceContext::use(const SymbolicTensor& t, const OpInfo& op) {
  if (t.value_ != nullptr && t.ctx_ == this && t.gen_ == gen_ && g_current == this) return t.value_;
  misuse(t, "an operand of op '" + op.name + "' at " + builder_.location().to_string());
}

const std::string& TraceContext::file_name(const char* path) {
  size_t n = std::min(num_files_, kFiles);
  for (size_t i = 0; i < n; ++i)
    if (files_[i].first == path) return files_[i].second;
  // Past kFiles distinct files, entries are reused round robin (correct, only slower).
  auto& slot = files_[num_files_++ % kFiles];
  slot.first = path;
  slot.second = base_name(path);
  return slot.second;
}

void TraceContext::locate(const std::source_location& src) {
  if (scope_ != nullptr) {
    if (located_ != Located::Scope) {
      builder_.set_location(*scope_);
      located_ = Located::Scope;
    }
    return;
  }
  if (located_ == Located::Source && src.file_name() == src_file_ && src.line() == src_line_ &&
      src.column() == src_column_)
    return;
  builder_.set_location(
      Location{file_name(src.file_name()), static_cast<int>(src.line()), static_cast<int>(src.column())});
  located_ = Located::Source;
  src_file_ = src.file_name();
  src_line_ = src.line();
  src_column_ = src.column();
}

void TraceContext::set_location(Location loc) {
  builder_.set_location(std::move(loc));
  located_ = Located::None;
}

Location TraceContext::location_of(const std::source_location& src) {
  if (scope_ != nullptr) return *scope_;
  return Location{file_name(src.file_name()), static_cast<int>(src.line()), static_cast<int>(src.column())};
}

Operation* TraceContext::create(const OpInfo& op, std::span<const SymbolicTensor> operands, AttrMap attrs,
                                const std::span<const TensorType>* result_types) {
  // Operand lists of up to four values (every elementwise op) are gathered on the stack.
  std::array<Value*, 4> small{};
  std::vector<Value*> large;
  std::span<Value* const> values;
  if (operands.size() <= small.size()) {
    for (size_t i = 0; i < operands.size(); ++i) small[i] = use(operands[i], op);
    values = std::span<Value* const>(small.data(), operands.size());
  } else {
    large.reserve(operands.size());
    for (const SymbolicTensor& o : operands) large.push_back(use(o, op));
    values = large;
  }
  if (result_types) return builder_.create_typed(op, values, *result_types, std::move(attrs));
  // Every registered OpInfo is an OpDef of the catalogue.
  if (attrs.empty()) return trace_internal::create_memoized(builder_, static_cast<const OpDef&>(op), values);
  return builder_.create(op, values, std::move(attrs));
}

SymbolicTensor TraceContext::emit1(const OpInfo& op, std::span<const SymbolicTensor> operands, AttrMap attrs,
                                   const std::source_location& loc) {
  locate(loc);
  Operation* r = create(op, operands, std::move(attrs));
  if (r->num_results() == 0) throw InternalError("emit1: op '" + op.name + "' has no results");
  return SymbolicTensor(this, gen_, r->result(0));
}

std::vector<SymbolicTensor> TraceContext::emit(const OpInfo& op, std::span<const SymbolicTensor> operands,
                                               AttrMap attrs, const std::source_location& loc) {
  locate(loc);
  Operation* r = create(op, operands, std::move(attrs));
  std::vector<SymbolicTensor> out;
  out.reserve(r->num_results());
  for (const auto& v : r->results()) out.push_back(SymbolicTensor(this, gen_, v.get()));
  return out;
}

std::vector<SymbolicTensor> TraceContext::emit_typed(const OpInfo& op, std::span<const SymbolicTensor> operands,
                                                     AttrMap attrs, std::span<const TensorType> result_types,
                                                     const std::source_location& loc) {
  locate(loc);
  Operation* r = create(op, operands, std::move(attrs), &result_types);
  std::vector<SymbolicTensor> out;
  out.reserve(r->num_results());
  for (const auto& v : r->results()) out.push_back(SymbolicTensor(this, gen_, v.get()));
  return out;
}

std::vector<SymbolicTensor> TraceContext::emit(std::string_view op, std::span<const SymbolicTensor> operands,
                                               AttrMap attrs, const std::source_location& loc) {
  return emit(get_op_info(op), operands, std::move(attrs), loc);
}

SymbolicTensor TraceContext::emit1(std::string_view op, std::initializer_list<SymbolicTensor> operands, AttrMap attrs,
                                   const std::source_location& loc) {
  return emit1(get_op_info(op), operands, std::move(attrs), loc);
}

SymbolicTensor TraceContext::scalar(const Attribute& value, DType t, const std::source_location& loc) {
  uint64_t bits = 0;
  if (const bool* b = std::get_if<bool>(&value)) {
    bits = *b ? 1 : 0;
  } else if (const int64_t* i = std::get_if<int64_t>(&value)) {
    bits = static_cast<uint64_t>(*i);
  } else if (const double* d = std::get_if<double>(&value)) {
    std::memcpy(&bits, d, sizeof bits);
  } else {
    throw InternalError("TraceContext::scalar: the value must be a bool, an int64 or a double");
  }
  auto kind = static_cast<uint8_t>(value.index());
  for (size_t i = scalar_begin_.empty() ? 0 : scalar_begin_.back(); i < scalars_.size(); ++i) {
    const Scalar& s = scalars_[i];
    if (s.dtype == t && s.kind == kind && s.bits == bits) return SymbolicTensor(this, gen_, s.value);
  }
  SymbolicTensor r =
      emit1(EVOXC_OP("full"), {}, trace_internal::make_attrs("dtype", t, "shape", Shape{}, "value", value), loc);
  scalars_.push_back(Scalar{t, kind, bits, r.value_});
  return r;
}

LocationScope::LocationScope(TraceContext& ctx, Location loc) : ctx_(ctx), loc_(std::move(loc)), outer_(ctx.scope_) {
  ctx_.scope_ = &loc_;
  ctx_.located_ = TraceContext::Located::None;
}

LocationScope::~LocationScope() {
  ctx_.scope_ = outer_;
  ctx_.located_ = TraceContext::Located::None;
}

void LocationScope::set(Location loc) {
  loc_ = std::move(loc);
  if (ctx_.scope_ == &loc_) ctx_.located_ = TraceContext::Located::None;
}

}  // namespace evoxc
