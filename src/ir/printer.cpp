// The EvoXIR text printer: Graph::to_string (grammar in docs/ir.md).
#include <string>
#include <variant>

#include "evoxc/core/error.h"
#include "evoxc/ir/graph.h"
#include "ir_text.h"

namespace evoxc {
namespace {

using irtext::quote;

std::string key_text(const std::string& k) { return irtext::is_identifier(k) ? k : quote(k); }

// Op names are printed bare when the lexer reads them back as one token.
bool is_op_name_token(const std::string& s) {
  if (!irtext::is_identifier(s.substr(0, 1))) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.')) return false;
  return true;
}

}  // namespace

std::string irtext::attr_text(const Attribute& a) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return "none";
        } else if constexpr (std::is_same_v<T, bool>) {
          return v ? "true" : "false";
        } else if constexpr (std::is_same_v<T, int64_t>) {
          return std::to_string(v);
        } else if constexpr (std::is_same_v<T, double>) {
          return irtext::format_float(v);
        } else if constexpr (std::is_same_v<T, std::string>) {
          return quote(v);
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          std::string s = "[";
          for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
          return s + "]";
        } else if constexpr (std::is_same_v<T, std::vector<double>>) {
          // An empty list carries its kind in a prefix, since "[]" already means an empty int list.
          if (v.empty()) return "f64[]";
          std::string s = "[";
          for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + irtext::format_float(v[i]);
          return s + "]";
        } else if constexpr (std::is_same_v<T, DType>) {
          return std::string(dtype_short_name(v));
        } else if constexpr (std::is_same_v<T, Shape>) {
          return "shape<" + v.to_string() + ">";
        } else {
          static_assert(std::is_same_v<T, Tensor>);
          std::string type = tensor_type_string(Shape::from_ints(v.shape()), v.dtype());
          std::string hex = v.nbytes() == 0 ? "0x" : irtext::hex_encode(v.raw_data(), v.nbytes());
          return "dense<" + type + ", \"" + hex + "\">";
        }
      },
      a);
}

namespace {

using irtext::attr_text;

std::string dict_text(const AttrMap& m) {
  std::string s = "{";
  bool first = true;
  for (const auto& [k, v] : m) {
    s += (first ? "" : ", ") + key_text(k) + " = " + attr_text(v);
    first = false;
  }
  return s + "}";
}

std::string types_text(const std::vector<TensorType>& ts) {
  if (ts.size() == 1) return ts[0].to_string();
  std::string s = "(";
  for (size_t i = 0; i < ts.size(); ++i) s += (i ? ", " : "") + ts[i].to_string();
  return s + ")";
}

class Printer {
 public:
  std::string out;

  void function(const Function& f) {
    names_.clear();
    irtext::name_function_values(f, names_);
    out += "  func @" + (irtext::is_identifier(f.name()) ? f.name() : quote(f.name())) + "(";
    args(f.entry());
    out += ") -> ";
    out += types_text(f.result_types());
    out += " {\n";
    block_ops(f.entry(), 4);
    out += "  }\n";
  }

 private:
  void args(const Block& b) {
    for (size_t i = 0; i < b.num_arguments(); ++i) {
      const Value* a = b.argument(i);
      out += (i ? ", " : "") + irtext::value_name(names_, a) + ": " + a->type().to_string();
    }
  }

  void block_ops(const Block& b, int indent) {
    for (const auto& op : b.operations()) operation(*op, indent);
  }

  void operation(const Operation& op, int indent) {
    out += std::string(static_cast<size_t>(indent), ' ');
    if (op.num_results() > 0) {
      for (size_t i = 0; i < op.num_results(); ++i) out += (i ? ", " : "") + irtext::value_name(names_, op.result(i));
      out += " = ";
    }
    out += "evoxc." + (is_op_name_token(op.name()) ? op.name() : quote(op.name())) + "(";
    for (size_t i = 0; i < op.num_operands(); ++i) out += (i ? ", " : "") + irtext::value_name(names_, op.operand(i));
    out += ")";
    if (!op.attributes().empty()) out += " attributes " + dict_text(op.attributes());
    if (!op.regions().empty()) {
      std::string pad(static_cast<size_t>(indent), ' ');
      out += " regions {\n";
      for (const auto& r : op.regions()) {
        out += pad + "  (";
        args(r->block());
        out += ") {\n";
        block_ops(r->block(), indent + 4);
        out += pad + "  }\n";
      }
      out += pad + "}";
    }
    if (op.num_results() > 0) {
      std::vector<TensorType> types;
      for (const auto& r : op.results()) types.push_back(r->type());
      out += " : " + types_text(types);
    }
    const Location& loc = op.location();
    if (loc.known())
      out += " loc(" + quote(loc.file) + ":" + std::to_string(loc.line) + ":" + std::to_string(loc.column) + ")";
    out += "\n";
  }

  irtext::ValueNames names_;
};

}  // namespace

std::string Graph::to_string() const {
  const Module& m = module();
  Printer p;
  p.out = "module @" + quote(m.name()) + " version " + std::to_string(m.version()) + " attributes {";
  p.out += "inputs = " + quote(inputs_.structure_string()) + ", outputs = " + quote(outputs_.structure_string());
  if (!statics_.empty()) p.out += ", statics = " + dict_text(statics_);
  p.out += "} {\n";
  for (const auto& f : m.functions()) p.function(*f);
  p.out += "}\n";
  return p.out;
}

}  // namespace evoxc
