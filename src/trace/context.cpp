// The trace context: the module under construction, emission through the op registry, warnings.
#include <cstdio>

#include "evoxc/core/error.h"
#include "evoxc/ops/op_def.h"
#include "evoxc/trace/symbolic_tensor.h"
#include "evoxc/trace/trace.h"

namespace evoxc {

namespace {
thread_local TraceContext* g_current = nullptr;

void default_warning(const std::string& m) { std::fprintf(stderr, "evoxc: warning: %s\n", m.c_str()); }
WarningHandler g_warning = default_warning;
}  // namespace

void set_warning_handler(WarningHandler handler) { g_warning = handler ? handler : default_warning; }
void warn(const std::string& message) { g_warning(message); }

Location make_location(const std::source_location& loc) {
  std::string file = loc.file_name();
  if (auto slash = file.find_last_of('/'); slash != std::string::npos) file = file.substr(slash + 1);
  return Location{file, static_cast<int>(loc.line()), static_cast<int>(loc.column())};
}

const TensorType& SymbolicTensor::type() const {
  if (!value_) throw TraceError("SymbolicTensor: use of an undefined (default-constructed) SymbolicTensor");
  return value_->type();
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

TraceContext::TraceContext() : module_(std::make_shared<Module>("main", kIrVersion)), outer_(g_current) {
  main_ = &module_->add_function("main");
  blocks_.push_back(&main_->entry());
  g_current = this;
}

TraceContext::~TraceContext() { g_current = outer_; }

TraceContext& TraceContext::current() {
  if (!g_current)
    throw TraceError("no active trace: op functions build graphs and only work inside evoxc::trace(fn, specs...)");
  return *g_current;
}
TraceContext* TraceContext::current_or_null() { return g_current; }

SymbolicTensor TraceContext::add_input(const TensorSpec& spec) {
  for (const auto& d : spec.shape)
    if (d.is_const() && d.value() < 0) throw ShapeError("TensorSpec " + spec.to_string() + " has a negative extent");
  return SymbolicTensor(this, main_->entry().add_argument(TensorType(spec.dtype, spec.shape)));
}

std::vector<SymbolicTensor> TraceContext::emit(std::string_view op, const std::vector<SymbolicTensor>& operands,
                                               AttrMap attrs, const std::source_location& src) {
  const OpDef& def = get_op(op);
  Location loc = make_location(src);
  std::vector<TensorType> types;
  std::vector<Value*> values;
  types.reserve(operands.size());
  values.reserve(operands.size());
  for (const auto& o : operands) {
    if (o.context() != this)
      throw TraceError("op '" + std::string(op) + "' at " + loc.to_string() +
                       ": an operand belongs to another trace (a SymbolicTensor escaped its trace)");
    types.push_back(o.type());
    values.push_back(o.value());
  }
  std::vector<TensorType> results;
  try {
    results = infer_result_types(def, types, attrs);
  } catch (const ShapeError& e) {
    throw ShapeError(std::string(e.what()) + " (at " + loc.to_string() + ")");
  } catch (const TypeError& e) {
    throw TypeError(std::string(e.what()) + " (at " + loc.to_string() + ")");
  }
  Operation* o = block().append(std::string(op), std::move(values), results, std::move(attrs), loc);
  std::vector<SymbolicTensor> out;
  out.reserve(o->num_results());
  for (const auto& r : o->results()) out.emplace_back(this, r.get());
  return out;
}

namespace trace_detail {

SymbolicTensor ArgBinder::bind(const Tensor& t, TreeDef&, const std::string& path) {
  throw TraceError("trace: argument " + path + " is a Tensor " + t.repr() +
                   "; trace takes TensorSpecs (and static values). Use TensorSpec(shape, dtype), "
                   "or evoxc::evaluate(fn, tensors...) to trace and run in one call.");
}

Tree<SymbolicTensor> to_tree(const Tensor& t) {
  throw TraceError("the traced function returned a Tensor " + t.repr() +
                   "; return SymbolicTensors (embed host data with evoxc::constant)");
}

Graph finish_trace(TraceContext& ctx, const Tree<SymbolicTensor>& outputs, TreeDef inputs, AttrMap statics) {
  std::vector<SymbolicTensor> leaves = outputs.flatten();
  std::vector<Value*> values;
  for (const auto& l : leaves) {
    if (!l.defined()) throw TraceError("the traced function returned an undefined SymbolicTensor");
    if (l.context() != &ctx) throw TraceError("the traced function returned a value of another trace");
    values.push_back(l.value());
    ctx.main().result_types().push_back(l.type());
  }
  ctx.main().entry().append("return", std::move(values), {}, {}, {});
  return Graph(ctx.module_ptr(), std::move(inputs), tree_structure(outputs), std::move(statics));
}

}  // namespace trace_detail
}  // namespace evoxc
