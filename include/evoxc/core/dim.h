// Symbolic extents: Dim("B") and DimExpr arithmetic (+ - * floordiv mod min max) over them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace evoxc {

// Values bound to symbol names at run time.
using DimBindings = std::unordered_map<std::string, int64_t>;

// An immutable integer expression over named symbols. Constructors fold constants
// and apply simple identities (x+0, x*1, x*0, x-x, min(x,x), constant reassociation),
// so equal-by-construction expressions compare equal. Comparison is structural on
// the simplified form: two expressions that are equal only by algebra beyond these
// rules compare unequal, and shape inference then reports a ShapeError.
class DimExpr {
 public:
  enum class Kind : uint8_t { Const, Sym, Add, Sub, Mul, FloorDiv, Mod, Min, Max };

  DimExpr() = default;
  // Constants are stored inline (no allocation): most extents are constants, and shapes are
  // built and compared on every traced op.
  DimExpr(int64_t v) : value_(v) {}  // NOLINT(google-explicit-constructor): literal extents read naturally
  DimExpr(int v) : DimExpr(static_cast<int64_t>(v)) {}  // NOLINT(google-explicit-constructor)
  static DimExpr symbol(std::string name);

  Kind kind() const;
  bool is_const() const { return node_ == nullptr; }
  bool is_symbol() const { return kind() == Kind::Sym; }
  // The constant value; InternalError when not constant.
  int64_t value() const;
  std::optional<int64_t> as_const() const;
  // The symbol name; InternalError when not a symbol.
  const std::string& name() const;
  const DimExpr& lhs() const;
  const DimExpr& rhs() const;

  // Evaluates with the given bindings; ValidationError naming the symbol when one is unbound.
  int64_t evaluate(const DimBindings& b) const;
  // Symbols appearing in the expression, each once, in order of first appearance.
  void collect_symbols(std::vector<std::string>& out) const;

  // Text form: "4", "B", "(2*B+1)"; non-atomic expressions are parenthesised so the
  // form can stand inside a type like tensor<(2*B+1)x4xf32>.
  std::string to_string() const;

  friend bool operator==(const DimExpr& a, const DimExpr& b);
  friend bool operator!=(const DimExpr& a, const DimExpr& b) { return !(a == b); }
  size_t hash() const;

  friend DimExpr operator+(const DimExpr& a, const DimExpr& b);
  friend DimExpr operator-(const DimExpr& a, const DimExpr& b);
  friend DimExpr operator*(const DimExpr& a, const DimExpr& b);
  // floordiv and mod follow Python: the quotient rounds toward -inf, the remainder takes the divisor's sign.
  friend DimExpr floordiv(const DimExpr& a, const DimExpr& b);
  friend DimExpr operator%(const DimExpr& a, const DimExpr& b);
  friend DimExpr min(const DimExpr& a, const DimExpr& b);
  friend DimExpr max(const DimExpr& a, const DimExpr& b);

  struct Node;

 private:
  explicit DimExpr(std::shared_ptr<const Node> n) : node_(std::move(n)) {}
  static DimExpr make(Kind k, const DimExpr& a, const DimExpr& b);
  std::shared_ptr<const Node> node_;  // nullptr: the constant value_
  int64_t value_ = 0;
};

// A named symbolic extent: Dim("B") is DimExpr::symbol("B").
inline DimExpr Dim(std::string name) { return DimExpr::symbol(std::move(name)); }

// Parses the text form produced by to_string(); nullopt on bad text.
std::optional<DimExpr> parse_dim_expr(std::string_view s);

// Python-rule floor division and modulo on int64 (division by zero is the caller's check).
int64_t floordiv_i64(int64_t a, int64_t b);
int64_t mod_i64(int64_t a, int64_t b);

}  // namespace evoxc

template <>
struct std::hash<evoxc::DimExpr> {
  size_t operator()(const evoxc::DimExpr& d) const { return d.hash(); }
};
