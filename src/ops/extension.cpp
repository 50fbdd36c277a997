// The extension ops (OpCategory::Extension): stablehlo_call, whose result types come from the signature of the
// StableHLO module it carries, read here by a small scanner of MLIR text; external_call, an opaque kernel named by
// its `kernel` attribute, whose result types the graph states (include/evoxc/ops/external.h).
#include "evoxc/ops/extension.h"

#include <cctype>
#include <optional>
#include <string>

#include "evoxc/core/error.h"
#include "evoxc/ops/external.h"
#include "evoxc/ops/op_def.h"
#include "ops/registry.h"

namespace evoxc {
namespace {

// A cursor over MLIR text that skips what a signature may carry besides types: attribute dictionaries, locations,
// string literals (with escapes), nested brackets.
class Scanner {
 public:
  Scanner(std::string_view text, std::string_view what) : s_(text), what_(what) {}

  [[noreturn]] void fail(const std::string& why) const {
    throw TypeError(std::string(what_) + ": the module's @main signature, at offset " + std::to_string(i_) + ": " +
                    why);
  }
  void spaces() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool at(std::string_view t) {
    spaces();
    return s_.substr(i_, t.size()) == t;
  }
  bool eat(std::string_view t) {
    if (!at(t)) return false;
    i_ += t.size();
    return true;
  }
  void expect(std::string_view t) {
    if (!eat(t)) fail("expected '" + std::string(t) + "', got '" + std::string(s_.substr(i_, 16)) + "'");
  }
  // Skips a balanced group opened by s_[i_] ('(', '{', '<', '['), string literals inside included.
  void skip_group() {
    int depth = 0;
    do {
      if (i_ >= s_.size()) fail("an unclosed bracket");
      char c = s_[i_];
      if (c == '"') {
        for (++i_; i_ < s_.size() && s_[i_] != '"'; ++i_)
          if (s_[i_] == '\\') ++i_;
      } else if (c == '(' || c == '{' || c == '[' || c == '<') {
        ++depth;
      } else if (c == ')' || c == '}' || c == ']' || c == '>') {
        --depth;
      }
      ++i_;
    } while (depth > 0);
  }
  // Attribute dictionaries and locations that may follow a type in a signature.
  void skip_decorations() {
    for (;;) {
      if (at("{")) {
        skip_group();
      } else if (at("loc(")) {
        i_ += 3;
        skip_group();
      } else {
        return;
      }
    }
  }
  std::string_view word() {
    spaces();
    size_t b = i_;
    while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_')) ++i_;
    return s_.substr(b, i_ - b);
  }
  // tensor<2x3xf32>, tensor<f32>.
  TensorType tensor_type() {
    expect("tensor<");
    std::vector<int64_t> dims;
    for (;;) {
      spaces();
      if (i_ < s_.size() && s_[i_] == '?')
        fail("a dynamic extent ('?'): evoxc runs StableHLO programs of static shapes (export with concrete shapes)");
      if (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) {
        size_t b = i_;
        while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
        dims.push_back(std::stoll(std::string(s_.substr(b, i_ - b))));
        expect("x");
        continue;
      }
      break;
    }
    size_t at_elem = i_;
    std::string_view elem = word();
    std::optional<DType> t = element(elem);
    if (!t) {
      i_ = at_elem;
      fail("element type '" + std::string(elem.empty() ? s_.substr(i_, 12) : elem) +
           "' is not one of evoxc's dtypes (bool i1, int8-64, uint8-64, float16, bfloat16, float32, float64)");
    }
    if (at(",")) fail("a tensor type with an encoding; evoxc takes plain dense tensors");
    expect(">");
    return TensorType(*t, Shape::from_ints(dims));
  }
  static std::optional<DType> element(std::string_view e) {
    static constexpr std::pair<std::string_view, DType> kTypes[] = {
        {"i1", DType::Bool},   {"i8", DType::I8},    {"i16", DType::I16},  {"i32", DType::I32},  {"i64", DType::I64},
        {"ui8", DType::U8},    {"ui16", DType::U16}, {"ui32", DType::U32}, {"ui64", DType::U64}, {"f16", DType::F16},
        {"bf16", DType::BF16}, {"f32", DType::F32},  {"f64", DType::F64}};
    for (const auto& [name, t] : kTypes)
      if (name == e) return t;
    return std::nullopt;
  }
  size_t pos() const { return i_; }
  void seek(size_t i) { i_ = i; }

 private:
  std::string_view s_;
  std::string_view what_;
  size_t i_ = 0;
};

}  // namespace

StablehloSignature parse_stablehlo_signature(std::string_view text, std::string_view what) {
  Scanner sc(text, what);
  size_t at = text.find("@main(");
  // The definition, not a call: `func.func [public] @main(`.
  while (at != std::string_view::npos) {
    std::string_view before = text.substr(0, at);
    size_t end = before.find_last_not_of(" \t\n");
    std::string_view head = end == std::string_view::npos ? before : before.substr(0, end + 1);
    if (head.ends_with("func.func") || head.ends_with("public")) break;
    at = text.find("@main(", at + 1);
  }
  if (at == std::string_view::npos)
    throw TypeError(std::string(what) + ": the module has no `func.func public @main(...)`");
  sc.seek(at + 5);
  sc.expect("(");
  StablehloSignature sig;
  if (!sc.eat(")")) {
    for (;;) {
      sc.expect("%");
      (void)sc.word();
      sc.expect(":");
      sig.inputs.push_back(sc.tensor_type());
      sc.skip_decorations();
      if (sc.eat(")")) break;
      sc.expect(",");
    }
  }
  if (sc.eat("->")) {
    if (sc.eat("(")) {
      if (!sc.eat(")")) {
        for (;;) {
          sig.outputs.push_back(sc.tensor_type());
          sc.skip_decorations();
          if (sc.eat(")")) break;
          sc.expect(",");
        }
      }
    } else {
      sig.outputs.push_back(sc.tensor_type());
    }
  }
  return sig;
}

namespace ops_detail {
namespace {

constexpr const char* kOp = "stablehlo_call";

std::vector<TensorType> infer(std::span<const TensorType> ops, const AttrMap& attrs) {
  StablehloSignature sig = parse_stablehlo_signature(attr_string(attrs, "module", kOp), op_label(kOp));
  if (ops.size() != sig.inputs.size())
    throw TypeError(op_label(kOp) + ": the module's @main takes " + std::to_string(sig.inputs.size()) +
                    " arguments, the op has " + std::to_string(ops.size()) + " operands");
  for (size_t i = 0; i < ops.size(); ++i)
    if (ops[i] != sig.inputs[i])
      throw TypeError(op_label(kOp) + ": operand " + std::to_string(i) + " is " + ops[i].to_string() +
                      ", the module's @main takes " + sig.inputs[i].to_string());
  return sig.outputs;
}

// @main(x) = x + x on tensor<2xT> (x or x for bool), in the pretty form JAX prints.
std::string sample_module(DType t) {
  static const char* kElem[] = {"i1",   "i8",   "i16", "i32",  "i64", "ui8", "ui16",
                                "ui32", "ui64", "f16", "bf16", "f32", "f64"};
  std::string ty = std::string("tensor<2x") + kElem[static_cast<size_t>(t)] + ">";
  std::string op = t == DType::Bool ? "stablehlo.or" : "stablehlo.add";
  return "module @sample {\n  func.func public @main(%arg0: " + ty + " {mhlo.layout_mode = \"default\"}) -> (" + ty +
         " {jax.result_info = \"result\"}) {\n    %0 = " + op + " %arg0, %arg0 : " + ty + "\n    return %0 : " + ty +
         "\n  }\n}\n";
}

constexpr const char* kExternal = "external_call";

// external_call: `batch_dims` leading batch levels (each operand's extent there 1 or the level's extent), then the
// result types of the `results` attribute.
std::vector<TensorType> infer_external(std::span<const TensorType> ops, const AttrMap& attrs) {
  const std::string& kernel = attr_string(attrs, "kernel", kExternal);
  if (kernel.empty()) throw TypeError(op_label(kExternal) + ": the kernel's name must not be empty");
  std::vector<TensorType> results =
      parse_external_results(attr_string(attrs, "results", kExternal), op_label(kExternal) + " '" + kernel + "'");
  int64_t levels = 0;
  if (attrs.count("batch_dims")) levels = attr_int(attrs, "batch_dims", kExternal);
  if (levels < 0)
    throw ShapeError(op_label(kExternal) + " '" + kernel + "': batch_dims is " + std::to_string(levels) +
                     ", it must be >= 0");
  if (levels > 0 && ops.empty())
    throw ShapeError(op_label(kExternal) + " '" + kernel + "': a batched call needs an operand to carry the batch");
  std::vector<DimExpr> batch;
  for (int64_t l = 0; l < levels; ++l) {
    std::optional<DimExpr> b;
    for (size_t i = 0; i < ops.size(); ++i) {
      if (static_cast<int64_t>(ops[i].rank()) <= l)
        throw ShapeError(op_label(kExternal) + " '" + kernel + "': operand " + std::to_string(i) + " " +
                         ops[i].to_string() + " has fewer than batch_dims = " + std::to_string(levels) + " axes");
      const DimExpr& e = ops[i].shape[static_cast<size_t>(l)];
      if (e.as_const() == 1) continue;
      if (b && *b != e)
        throw ShapeError(op_label(kExternal) + " '" + kernel + "': batch level " + std::to_string(l) + " has extents " +
                         b->to_string() + " and " + e.to_string() + " (each operand's must be 1 or the level's)");
      b = e;
    }
    batch.push_back(b ? *b : DimExpr(1));
  }
  for (TensorType& r : results) {
    std::vector<DimExpr> dims = batch;
    dims.insert(dims.end(), r.shape.begin(), r.shape.end());
    r.shape = Shape(std::move(dims));
  }
  return results;
}

}  // namespace

void register_extension_ops(OpTable& t) {
  {
    OpDef d;
    d.name = kOp;
    d.category = OpCategory::Extension;
    d.min_operands = 0;
    d.max_operands = -1;
    d.operand_dtypes = DTypeClass::Any;
    d.attrs = {{"module", AttrKind::String}};
    d.infer = infer;
    d.doc =
        "the @main function of the StableHLO module `module` (text: a JAX export, say) applied to the operands, "
        "which must have its argument types; its result types are the results. Runs where StableHLO runs (the xla "
        "backend); opaque to the interpreter and the transforms";
    d.sample = [](DType t) { return OpSample{{TensorType(t, Shape{2})}, {{"module", sample_module(t)}}}; };
    t.add(std::move(d));
  }
  {
    OpDef d;
    d.name = kExternal;
    d.category = OpCategory::Extension;
    d.min_operands = 0;
    d.max_operands = -1;
    d.operand_dtypes = DTypeClass::Any;
    d.attrs = {{"kernel", AttrKind::String}, {"results", AttrKind::String}, {"batch_dims", AttrKind::Int, false}};
    d.infer = infer_external;
    d.doc =
        "the opaque kernel `kernel` applied to the operands, giving results of the types `results` lists (\"tensor<4x"
        "8xf32>, ...\"); with `batch_dims` = k, k leading batch levels (each operand's extent there 1 or the level's). "
        "Its implementation is registered out of band per backend (evoxc.register_external_kernel) and resolved at "
        "load; no derivative";
    d.sample = [](DType t) {
      TensorType x(t, Shape{2});
      return OpSample{{x}, {{"kernel", std::string("evoxc.test.copy")}, {"results", x.to_string()}}};
    };
    t.add(std::move(d));
  }
}

}  // namespace ops_detail
}  // namespace evoxc
