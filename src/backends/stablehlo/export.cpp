// The StableHLO exporter and the `stablehlo` backend: module writer, Emitter helpers and the table of lowering rules.
#include <cstring>
#include <sstream>

#include "backends/common/mlir_literals.h"
#include "backends/stablehlo/emitter.h"
#include "evoxc/backends/stablehlo.h"
#include "evoxc/ops/op_def.h"
#include "evoxc/pipeline/pipeline.h"

namespace evoxc {
namespace stablehlo {

std::string element_type(DType t) {
  switch (t) {
    case DType::Bool: return "i1";
    case DType::I8: return "i8";
    case DType::I16: return "i16";
    case DType::I32: return "i32";
    case DType::I64: return "i64";
    case DType::U8: return "ui8";
    case DType::U16: return "ui16";
    case DType::U32: return "ui32";
    case DType::U64: return "ui64";
    case DType::F16: return "f16";
    case DType::BF16: return "bf16";
    case DType::F32: return "f32";
    case DType::F64: return "f64";
  }
  throw InternalError("stablehlo: unknown dtype");
}

std::string tensor_type(const TensorType& t) { return mlir_literals::tensor_type(t.shape, element_type(t.dtype)); }

std::string i64_array(std::span<const int64_t> v) {
  if (v.empty()) return "array<i64>";
  std::string s = "array<i64: ";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + ">";
}
std::string i64_array(std::initializer_list<int64_t> v) {
  return i64_array(std::span<const int64_t>(v.begin(), v.size()));
}

namespace {

std::string types_of(std::span<const Val> vals) {
  std::string s;
  for (size_t i = 0; i < vals.size(); ++i) s += (i ? ", " : "") + tensor_type(vals[i].type);
  return s;
}
std::string types_of(std::span<const TensorType> ts) {
  std::string s;
  for (size_t i = 0; i < ts.size(); ++i) s += (i ? ", " : "") + tensor_type(ts[i]);
  return s;
}
std::string names_of(std::span<const Val> vals) {
  std::string s;
  for (size_t i = 0; i < vals.size(); ++i) s += (i ? ", " : "") + vals[i].name;
  return s;
}

}  // namespace

std::string Emitter::fresh() { return "%v" + std::to_string(next_++); }

void Emitter::line(const std::string& text) {
  out_->append(static_cast<size_t>(depth_) * 2, ' ');
  *out_ += text;
  *out_ += '\n';
}

std::vector<Val> Emitter::op(const std::string& name, std::span<const Val> operands, const std::string& attrs,
                             std::span<const TensorType> results) {
  return op_with_regions(name, operands, attrs, results, 0, {});
}

Val Emitter::op1(const std::string& name, std::span<const Val> operands, const std::string& attrs,
                 const TensorType& result) {
  return op(name, operands, attrs, std::span<const TensorType>(&result, 1)).front();
}

std::vector<Val> Emitter::op_with_regions(const std::string& name, std::span<const Val> operands,
                                          const std::string& attrs, std::span<const TensorType> results,
                                          size_t num_regions, const std::function<void(size_t)>& body) {
  std::string id = fresh();
  std::string lhs = results.empty()       ? ""
                    : results.size() == 1 ? id + " = "
                                          : id + ":" + std::to_string(results.size()) + " = ";
  // A name with a dialect ("chlo.erf") stands as it is; a bare one is StableHLO's.
  std::string full = name.find('.') == std::string::npos ? "stablehlo." + name : name;
  std::string head = lhs + "\"" + full + "\"(" + names_of(operands) + ")";
  std::string tail = (attrs.empty() ? "" : " " + attrs) + " : (" + types_of(operands) + ") -> ";
  tail += results.size() == 1 ? tensor_type(results[0]) : "(" + types_of(results) + ")";
  if (num_regions == 0) {
    line(head + tail);
  } else {
    line(head + " (");
    for (size_t r = 0; r < num_regions; ++r) {
      ++depth_;
      line("{");
      body(r);
      line(r + 1 < num_regions ? "}," : "}");
      --depth_;
    }
    line(")" + tail);
  }
  std::vector<Val> out;
  for (size_t i = 0; i < results.size(); ++i)
    out.push_back({results.size() == 1 ? id : id + "#" + std::to_string(i), results[i]});
  return out;
}

void Emitter::region_block(std::span<const TensorType> arg_types,
                           const std::function<std::vector<Val>(std::span<const Val>)>& fill) {
  std::vector<Val> args;
  std::string head = "^bb0(";
  for (size_t i = 0; i < arg_types.size(); ++i) {
    args.push_back({"%b" + std::to_string(next_++), arg_types[i]});
    head += (i ? ", " : "") + args.back().name + ": " + tensor_type(arg_types[i]);
  }
  line(head + "):");
  ++depth_;
  std::vector<Val> ret = fill(args);
  line("\"stablehlo.return\"(" + names_of(ret) + ") : (" + types_of(ret) + ") -> ()");
  --depth_;
}

std::vector<Val> Emitter::lower_block(const Block& b, std::span<const Val> args) {
  for (size_t i = 0; i < b.arguments().size(); ++i) env_[b.argument(i)] = args[i];
  const Table& table = rules();
  for (const auto& op : b.operations()) {
    std::vector<Val> operands;
    for (const Value* v : op->operands()) {
      auto it = env_.find(v);
      if (it == env_.end()) throw InternalError("stablehlo: a value is used before it is defined");
      operands.push_back(it->second);
    }
    if (op->is_terminator()) return operands;
    const Operation* saved = current_;
    current_ = op.get();
    std::vector<Val> results = table.get(*op)(*this, *op, operands);
    current_ = saved;
    if (results.size() != op->num_results())
      throw InternalError("stablehlo: the rule of evoxc." + op->name() + " gave the wrong number of results");
    for (size_t i = 0; i < results.size(); ++i) {
      if (results[i].type != op->result(i)->type())
        throw InternalError("stablehlo: the rule of evoxc." + op->name() + " gave a " + tensor_type(results[i].type) +
                            " for a " + tensor_type(op->result(i)->type()));
      env_[op->result(i)] = results[i];
    }
  }
  throw InternalError("stablehlo: a block without a terminator");
}

Val Emitter::broadcast_to(const Val& x, const Shape& shape) {
  if (x.type.shape == shape) return x;
  size_t r = x.type.shape.rank(), R = shape.rank();
  if (r > R) throw InternalError("stablehlo: broadcast to a lower rank");
  std::vector<int64_t> dims;
  for (size_t i = 0; i < r; ++i) dims.push_back(static_cast<int64_t>(R - r + i));
  TensorType to(x.type.dtype, shape);
  bool dynamic = false;
  for (const DimExpr& d : shape) dynamic = dynamic || !d.is_const();
  if (!dynamic) return op1("broadcast_in_dim", {x}, "{broadcast_dimensions = " + i64_array(dims) + "}", to);
  Val s = shape_tensor(shape);
  return op1("dynamic_broadcast_in_dim", {x, s}, "{broadcast_dimensions = " + i64_array(dims) + "}", to);
}

Val Emitter::convert(const Val& x, DType to) {
  if (x.type.dtype == to) return x;
  return op1("convert", {x}, "", TensorType(to, x.type.shape));
}

Val Emitter::splat(const Attribute& value, DType t, const Shape& shape) {
  Tensor one = mlir_literals::full_scalar(value, t);
  Shape scalar{};
  bool dynamic = false;
  for (const DimExpr& d : shape) dynamic = dynamic || !d.is_const();
  if (dynamic) return broadcast_to(splat(value, t, scalar), shape);
  std::string dense = mlir_literals::dense(one);  // a 0-d literal splats over the shape
  int64_t n = 1;
  for (const DimExpr& d : shape) n *= d.value();
  if (n == 0) dense = "dense<>";
  return op1("constant", std::span<const Val>(), "{value = " + dense + " : " + tensor_type(TensorType(t, shape)) + "}",
             TensorType(t, shape));
}

Val Emitter::constant(const Tensor& t) {
  TensorType ty(t.dtype(), Shape::from_ints(t.shape()));
  return op1("constant", std::span<const Val>(), "{value = " + mlir_literals::dense(t) + " : " + tensor_type(ty) + "}",
             ty);
}

void Emitter::bind_symbol(const std::string& name, const Val& input, size_t axis) {
  symbols_.emplace(name, SymbolSource{input, axis});
}

Val Emitter::extent(const DimExpr& d, DType t) {
  TensorType st = scalar_type(t);
  if (auto c = d.as_const()) return splat(Attribute(*c), t, Shape{});
  switch (d.kind()) {
    case DimExpr::Kind::Sym: {
      auto it = symbols_.find(d.name());
      if (it == symbols_.end())
        throw BackendError("stablehlo: the extent " + d.name() + " is not an extent of any input");
      Val n = op1("get_dimension_size", {it->second.input},
                  "{dimension = " + std::to_string(it->second.axis) + " : i64}", scalar_type(DType::I32));
      return convert(n, t);
    }
    case DimExpr::Kind::Add: return op1("add", {extent(d.lhs(), t), extent(d.rhs(), t)}, "", st);
    case DimExpr::Kind::Sub: return op1("subtract", {extent(d.lhs(), t), extent(d.rhs(), t)}, "", st);
    case DimExpr::Kind::Mul: return op1("multiply", {extent(d.lhs(), t), extent(d.rhs(), t)}, "", st);
    case DimExpr::Kind::Min: return op1("minimum", {extent(d.lhs(), t), extent(d.rhs(), t)}, "", st);
    case DimExpr::Kind::Max: return op1("maximum", {extent(d.lhs(), t), extent(d.rhs(), t)}, "", st);
    case DimExpr::Kind::FloorDiv:
    case DimExpr::Kind::Mod: {
      // Python's floor division and modulo; extents are non-negative and divisors positive, so
      // StableHLO's truncating divide and remainder agree.
      const char* name = d.kind() == DimExpr::Kind::FloorDiv ? "divide" : "remainder";
      return op1(name, {extent(d.lhs(), t), extent(d.rhs(), t)}, "", st);
    }
    case DimExpr::Kind::Const: break;
  }
  throw InternalError("stablehlo: unknown extent expression");
}

Val Emitter::shape_tensor(const Shape& shape) {
  std::vector<Val> parts;
  TensorType one(DType::I64, Shape{1});
  for (const DimExpr& d : shape) parts.push_back(op1("reshape", {extent(d)}, "", one));
  TensorType all(DType::I64, Shape{static_cast<int64_t>(shape.rank())});
  if (parts.empty()) return constant(Tensor::empty({0}, DType::I64));
  if (parts.size() == 1) return parts.front();
  return op1("concatenate", parts, "{dimension = 0 : i64}", all);
}

std::string Emitter::embed(const std::string& key, const EmbedFn& make) {
  if (auto it = embedded_.find(key); it != embedded_.end()) return it->second;
  std::string prefix = "evoxc_m" + std::to_string(embedded_.size()) + "_";
  std::string callee = make(prefix, &functions_, &aliases_before_, &aliases_after_);
  embedded_.emplace(key, callee);
  return callee;
}

void Emitter::fail(const Operation& op, const std::string& why) {
  throw BackendError("stablehlo: evoxc." + op.name() + " at " + op.location().to_string() + ": " + why);
}

const Table& rules() {
  static const Table* table = [] {
    auto* t = new Table("stablehlo");
    add_elementwise_rules(*t);
    add_reduce_linalg_rules(*t);
    add_structure_rules(*t);
    add_layout_rules(*t);
    add_control_rules(*t);
    add_extension_rules(*t);
    return t;
  }();
  return *table;
}

}  // namespace stablehlo

namespace stablehlo {
namespace {

std::string write_module(const Graph& graph) {
  const Function& main = graph.main();
  const Block& entry = main.entry();
  std::string body;
  Emitter e(&body);
  std::vector<Val> args;
  std::string sig;
  for (size_t i = 0; i < entry.arguments().size(); ++i) {
    const TensorType& t = entry.argument(i)->type();
    args.push_back({"%arg" + std::to_string(i), t});
    sig += (i ? ", " : "") + args.back().name + ": " + tensor_type(t);
    for (size_t a = 0; a < t.shape.rank(); ++a)
      if (t.shape[a].is_symbol()) e.bind_symbol(t.shape[a].name(), args.back(), a);
  }
  std::vector<Val> outs = e.lower_block(entry, args);
  std::string ret_types;
  for (size_t i = 0; i < outs.size(); ++i) ret_types += (i ? ", " : "") + tensor_type(outs[i].type);
  std::string text =
      e.aliases_before() + "module @evoxc {\n  func.func public @main(" + sig + ") -> (" + ret_types + ") {\n" + body;
  text += "    \"func.return\"(";
  for (size_t i = 0; i < outs.size(); ++i) text += (i ? ", " : "") + outs[i].name;
  text += ") : (" + ret_types + ") -> ()\n  }\n" + e.embedded_functions() + "}\n" + e.aliases_after();
  return text;
}

}  // namespace
}  // namespace stablehlo

std::string export_stablehlo(const Graph& graph) { return lower(graph, "stablehlo").text(); }

namespace {

// The stablehlo backend lowers to text and stops there: running it is a consumer's job (XLA,
// IREE), checked in tests through jaxlib.
Capabilities stablehlo_capabilities() {
  Capabilities c;
  c.backend = "stablehlo";
  c.device_kinds = {};
  c.symbolic_shapes = true;
  c.regions = true;
  c.serializable_artifact = false;
  c.dtypes = all_dtypes();
  c.rules = &stablehlo::rules();
  return c;
}

class StablehloBackend final : public Backend {
 public:
  StablehloBackend() : Backend(stablehlo_capabilities()) {}
  CompiledArtifact deserialize(const ArtifactHeader&, std::string) const override {
    throw PersistenceError("stablehlo: an export target has no artifacts");
  }

 protected:
  LoweredProgram lower_verified(const Graph& graph) const override {
    return LoweredProgram(name(), graph, stablehlo::write_module(graph));
  }
  CompiledArtifact compile_lowered(const LoweredProgram&, const CompileOptions&) const override {
    throw BackendError(
        "stablehlo: an export target, not an executable backend; hand lower(graph, \"stablehlo\").text() to a "
        "StableHLO compiler (XLA, IREE), or compile with the interp backend");
  }
  Executable load_artifact(const CompiledArtifact&, Device) const override {
    throw BackendError("stablehlo: an export target, not an executable backend");
  }
};

[[maybe_unused]] const bool registered =
    register_backend("stablehlo", [] { return std::make_unique<StablehloBackend>(); });

}  // namespace
}  // namespace evoxc
