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
//
// Size is bounded at construction: an expression nested more than kMaxNestingDepth levels
// or with more than kMaxExtentNodes nodes (core/limits.h) is refused with a ShapeError, so
// the recursive printer, comparison, hash, evaluation and destructor never meet a deep tree.
// Chains of floordiv and mod by positive constants fold (B//2//2 is B//4, B%4%2 is B%2), and
// integer overflow in folding or evaluation is a typed error, never wrap-around.
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

  // Evaluates with the given bindings; ValidationError naming the symbol when one is unbound,
  // or when the value overflows int64 or divides by zero.
  int64_t evaluate(const DimBindings& b) const;
  // Symbols appearing in the expression, each once, in order of first appearance.
  void collect_symbols(std::vector<std::string>& out) const;

  // Nesting levels (0 for constants, 1 for symbols) and node count of the expression.
  int depth() const;
  uint32_t num_nodes() const;

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

// Parses the text form produced by to_string(); nullopt on bad text, with *err (when given)
// saying why: parentheses nested more than kMaxNestingDepth deep, an expression too large,
// an overflowing constant, or simply malformed text.
std::optional<DimExpr> parse_dim_expr(std::string_view s, std::string* err = nullptr);

// Python-rule floor division and modulo on int64 (division by zero is the caller's check).
// floordiv_i64(INT64_MIN, -1) overflows: ShapeError; mod_i64(x, -1) is 0.
int64_t floordiv_i64(int64_t a, int64_t b);
int64_t mod_i64(int64_t a, int64_t b);

}  // namespace evoxc

template <>
struct std::hash<evoxc::DimExpr> {
  size_t operator()(const evoxc::DimExpr& d) const { return d.hash(); }
};
