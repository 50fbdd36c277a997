// DimExpr: construction with simplification, evaluation, printing and parsing.
#include "evoxc/core/dim.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <limits>

#include "evoxc/core/error.h"
#include "evoxc/core/limits.h"

namespace evoxc {

struct DimExpr::Node {
  Kind kind;
  int64_t value = 0;
  std::string name;
  DimExpr a, b;  // children for binary kinds; unused (zero constants) otherwise
  size_t hash = 0;
  uint32_t depth = 1;  // nesting levels, bounded by kMaxNestingDepth
  uint32_t nodes = 1;  // tree size, bounded by kMaxExtentNodes
  Node(Kind k, int64_t v, std::string n) : kind(k), value(v), name(std::move(n)) {}
  Node(Kind k, DimExpr x, DimExpr y) : kind(k), a(std::move(x)), b(std::move(y)) {}
};

namespace {
size_t mix(size_t h, size_t v) { return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)); }
}  // namespace

int64_t floordiv_i64(int64_t a, int64_t b) {
  if (b == -1) {
    if (a == INT64_MIN) throw ShapeError("DimExpr: int64 overflow in a floordiv of extents");
    return -a;
  }
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
int64_t mod_i64(int64_t a, int64_t b) {
  if (b == -1) return 0;  // INT64_MIN % -1 overflows in C++
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

DimExpr DimExpr::symbol(std::string name) {
  if (name.empty()) throw ShapeError("Dim: a symbol needs a non-empty name");
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
      throw ShapeError("Dim: symbol name '" + name + "' must use only letters, digits and '_'");
  }
  if (std::isdigit(static_cast<unsigned char>(name[0])))
    throw ShapeError("Dim: symbol name '" + name + "' must not start with a digit");
  auto n = std::make_shared<Node>(Kind::Sym, 0, name);
  n->hash = mix(2, std::hash<std::string>{}(name));
  return DimExpr(std::shared_ptr<const Node>(std::move(n)));
}

DimExpr::Kind DimExpr::kind() const { return node_ ? node_->kind : Kind::Const; }
int64_t DimExpr::value() const {
  if (node_) throw InternalError("DimExpr::value on a non-constant " + to_string());
  return value_;
}
std::optional<int64_t> DimExpr::as_const() const {
  if (!node_) return value_;
  return std::nullopt;
}
const std::string& DimExpr::name() const {
  if (kind() != Kind::Sym) throw InternalError("DimExpr::name on a non-symbol " + to_string());
  return node_->name;
}
namespace {
const DimExpr kNoChild;
}  // namespace
const DimExpr& DimExpr::lhs() const { return node_ ? node_->a : kNoChild; }
const DimExpr& DimExpr::rhs() const { return node_ ? node_->b : kNoChild; }
int DimExpr::depth() const { return node_ ? static_cast<int>(node_->depth) : 0; }
uint32_t DimExpr::num_nodes() const { return node_ ? node_->nodes : 1; }
size_t DimExpr::hash() const { return node_ ? node_->hash : mix(1, static_cast<size_t>(value_)); }

bool operator==(const DimExpr& x, const DimExpr& y) {
  if (!x.node_ || !y.node_) return !x.node_ && !y.node_ && x.value_ == y.value_;
  if (x.node_ == y.node_) return true;
  const auto& a = *x.node_;
  const auto& b = *y.node_;
  if (a.kind != b.kind || a.hash != b.hash) return false;
  switch (a.kind) {
    case DimExpr::Kind::Const: return a.value == b.value;
    case DimExpr::Kind::Sym: return a.name == b.name;
    default: return a.a == b.a && a.b == b.b;
  }
}

DimExpr DimExpr::make(Kind k, const DimExpr& a, const DimExpr& b) {
  // The one place a deeper or larger tree could appear: refuse it here, so no walker needs a limit.
  uint32_t depth = 1 + static_cast<uint32_t>(std::max(a.depth(), b.depth()));
  uint32_t nodes = 1 + a.num_nodes() + b.num_nodes();  // both <= kMaxExtentNodes: no overflow
  if (depth > static_cast<uint32_t>(kMaxNestingDepth))
    throw ShapeError("DimExpr: an extent expression nested more than " + std::to_string(kMaxNestingDepth) +
                     " levels deep");
  if (nodes > kMaxExtentNodes)
    throw ShapeError("DimExpr: an extent expression with more than " + std::to_string(kMaxExtentNodes) + " nodes");
  auto n = std::make_shared<Node>(k, a, b);
  n->depth = depth;
  n->nodes = nodes;
  n->hash = mix(mix(static_cast<size_t>(k) + 10, a.hash()), b.hash());
  return DimExpr(std::shared_ptr<const Node>(std::move(n)));
}

namespace {
[[noreturn]] void overflow(const char* what) {
  throw ShapeError(std::string("DimExpr: int64 overflow in ") + what + " of extents");
}
int64_t add_i64(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) overflow("a sum");
  return r;
}
int64_t sub_i64(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_sub_overflow(a, b, &r)) overflow("a difference");
  return r;
}
int64_t mul_i64(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) overflow("a product");
  return r;
}
// Splits c*x into (c, x); anything else is (1, e).
std::pair<int64_t, DimExpr> coefficient(const DimExpr& e) {
  if (e.kind() == DimExpr::Kind::Mul && e.lhs().is_const()) return {e.lhs().value(), e.rhs()};
  return {1, e};
}
}  // namespace

DimExpr operator+(const DimExpr& a, const DimExpr& b) {
  if (a.is_const() && b.is_const()) return DimExpr(add_i64(a.value(), b.value()));
  if (a.is_const()) return b + a;  // canonical: constant on the right
  if (b.is_const() && b.value() == 0) return a;
  // (x + c1) + c2 -> x + (c1 + c2)
  if (b.is_const() && a.kind() == DimExpr::Kind::Add && a.rhs().is_const())
    return a.lhs() + DimExpr(add_i64(a.rhs().value(), b.value()));
  // x + (y + c) -> (x + y) + c, so constants gather at the top
  if (b.kind() == DimExpr::Kind::Add && b.rhs().is_const()) return (a + b.lhs()) + b.rhs();
  if (a.kind() == DimExpr::Kind::Add && a.rhs().is_const()) return (a.lhs() + b) + a.rhs();
  // c1*x + c2*x -> (c1+c2)*x, so B + B + 1 and 2*B + 1 agree.
  auto [ca, ta] = coefficient(a);
  auto [cb, tb] = coefficient(b);
  if (ta == tb) return DimExpr(add_i64(ca, cb)) * ta;
  return DimExpr::make(DimExpr::Kind::Add, a, b);
}

DimExpr operator-(const DimExpr& a, const DimExpr& b) {
  if (a.is_const() && b.is_const()) return DimExpr(sub_i64(a.value(), b.value()));
  if (b.is_const()) return a + DimExpr(sub_i64(0, b.value()));
  if (a == b) return DimExpr(0);
  // (x + y) - y -> x
  if (a.kind() == DimExpr::Kind::Add && a.rhs() == b) return a.lhs();
  if (a.kind() == DimExpr::Kind::Add && a.lhs() == b) return a.rhs();
  if (a.kind() == DimExpr::Kind::Add && a.rhs().is_const()) return (a.lhs() - b) + a.rhs();
  return DimExpr::make(DimExpr::Kind::Sub, a, b);
}

DimExpr operator*(const DimExpr& a, const DimExpr& b) {
  if (a.is_const() && b.is_const()) return DimExpr(mul_i64(a.value(), b.value()));
  if (b.is_const()) return b * a;  // canonical: constant on the left
  if (a.is_const()) {
    if (a.value() == 0) return DimExpr(0);
    if (a.value() == 1) return b;
    if (b.kind() == DimExpr::Kind::Mul && b.lhs().is_const())
      return DimExpr(mul_i64(a.value(), b.lhs().value())) * b.rhs();
  }
  return DimExpr::make(DimExpr::Kind::Mul, a, b);
}

DimExpr floordiv(const DimExpr& a, const DimExpr& b) {
  if (b.is_const() && b.value() == 0) throw ShapeError("DimExpr: floordiv by zero in " + a.to_string() + "//0");
  if (a.is_const() && b.is_const()) return DimExpr(floordiv_i64(a.value(), b.value()));
  if (b.is_const() && b.value() == 1) return a;
  if (b.is_const() && b.value() == -1) return DimExpr(-1) * a;
  if (a == b) return DimExpr(1);
  // (x // c1) // c2 -> x // (c1*c2) for positive constants, so halving chains stay flat.
  int64_t c12 = 0;
  if (b.is_const() && b.value() > 0 && a.kind() == DimExpr::Kind::FloorDiv && a.rhs().is_const() &&
      a.rhs().value() > 0 && !__builtin_mul_overflow(a.rhs().value(), b.value(), &c12))
    return floordiv(a.lhs(), DimExpr(c12));
  if (b.is_const() && a.kind() == DimExpr::Kind::Mul && a.lhs().is_const() && a.lhs().value() % b.value() == 0)
    return DimExpr(a.lhs().value() / b.value()) * a.rhs();
  return DimExpr::make(DimExpr::Kind::FloorDiv, a, b);
}

DimExpr operator%(const DimExpr& a, const DimExpr& b) {
  if (b.is_const() && b.value() == 0) throw ShapeError("DimExpr: mod by zero in " + a.to_string() + "%0");
  if (a.is_const() && b.is_const()) return DimExpr(mod_i64(a.value(), b.value()));
  if (b.is_const() && (b.value() == 1 || b.value() == -1)) return DimExpr(0);
  if (a == b) return DimExpr(0);
  if (b.is_const() && a.kind() == DimExpr::Kind::Mul && a.lhs().is_const() && a.lhs().value() % b.value() == 0)
    return DimExpr(0);
  // (x % c1) % c2 -> x % c2 when c2 divides c1 (both positive): x % c1 keeps x's residue mod c2.
  if (b.is_const() && b.value() > 0 && a.kind() == DimExpr::Kind::Mod && a.rhs().is_const() && a.rhs().value() > 0 &&
      a.rhs().value() % b.value() == 0)
    return a.lhs() % b;
  return DimExpr::make(DimExpr::Kind::Mod, a, b);
}

DimExpr min(const DimExpr& a, const DimExpr& b) {
  if (a.is_const() && b.is_const()) return DimExpr(std::min(a.value(), b.value()));
  if (a == b) return a;
  return DimExpr::make(DimExpr::Kind::Min, a, b);
}

DimExpr max(const DimExpr& a, const DimExpr& b) {
  if (a.is_const() && b.is_const()) return DimExpr(std::max(a.value(), b.value()));
  if (a == b) return a;
  return DimExpr::make(DimExpr::Kind::Max, a, b);
}

int64_t DimExpr::evaluate(const DimBindings& bindings) const {
  if (!node_) return value_;
  const Node& n = *node_;
  switch (n.kind) {
    case Kind::Const: return n.value;
    case Kind::Sym: {
      auto it = bindings.find(n.name);
      if (it == bindings.end()) throw ValidationError("symbolic dim '" + n.name + "' is not bound by any input");
      return it->second;
    }
    default: break;
  }
  int64_t x = n.a.evaluate(bindings);
  int64_t y = n.b.evaluate(bindings);
  int64_t r = 0;
  auto overflow = [&]() -> ValidationError {
    return ValidationError("symbolic dim expression " + to_string() + " overflows int64 with the bound values");
  };
  switch (n.kind) {
    case Kind::Add:
      if (__builtin_add_overflow(x, y, &r)) throw overflow();
      return r;
    case Kind::Sub:
      if (__builtin_sub_overflow(x, y, &r)) throw overflow();
      return r;
    case Kind::Mul:
      if (__builtin_mul_overflow(x, y, &r)) throw overflow();
      return r;
    case Kind::FloorDiv:
    case Kind::Mod:
      if (y == 0) throw ValidationError("symbolic dim expression " + to_string() + " divides by zero");
      if (n.kind == Kind::FloorDiv && x == INT64_MIN && y == -1) throw overflow();
      return n.kind == Kind::FloorDiv ? floordiv_i64(x, y) : mod_i64(x, y);
    case Kind::Min: return std::min(x, y);
    case Kind::Max: return std::max(x, y);
    default: break;
  }
  throw InternalError("DimExpr::evaluate: bad kind");
}

void DimExpr::collect_symbols(std::vector<std::string>& out) const {
  if (!node_) return;
  const Node& n = *node_;
  if (n.kind == Kind::Const) return;
  if (n.kind == Kind::Sym) {
    for (const auto& s : out)
      if (s == n.name) return;
    out.push_back(n.name);
    return;
  }
  n.a.collect_symbols(out);
  n.b.collect_symbols(out);
}

namespace {
// Precedence: 1 for + -, 2 for * // %, 3 for atoms and calls.
int precedence(DimExpr::Kind k) {
  switch (k) {
    case DimExpr::Kind::Add:
    case DimExpr::Kind::Sub: return 1;
    case DimExpr::Kind::Mul:
    case DimExpr::Kind::FloorDiv:
    case DimExpr::Kind::Mod: return 2;
    default: return 3;
  }
}

void print(const DimExpr& e, std::string& out, int parent_prec, bool right) {
  using K = DimExpr::Kind;
  K k = e.kind();
  if (k == K::Const) {
    if (e.value() < 0 && parent_prec > 0) {
      out += "(" + std::to_string(e.value()) + ")";
    } else {
      out += std::to_string(e.value());
    }
    return;
  }
  if (k == K::Sym) {
    out += e.name();
    return;
  }
  if (k == K::Min || k == K::Max) {
    out += k == K::Min ? "min(" : "max(";
    print(e.lhs(), out, 0, false);
    out += ",";
    print(e.rhs(), out, 0, false);
    out += ")";
    return;
  }
  int p = precedence(k);
  bool paren = p < parent_prec || (p == parent_prec && right);
  if (paren) out += "(";
  print(e.lhs(), out, p, false);
  // INT64_MIN has no positive counterpart: it keeps the `+(-c)` form.
  if (k == K::Add && e.rhs().is_const() && e.rhs().value() < 0 &&
      e.rhs().value() != std::numeric_limits<int64_t>::min()) {
    out += "-" + std::to_string(-e.rhs().value());
  } else {
    out += k == K::Add ? "+" : k == K::Sub ? "-" : k == K::Mul ? "*" : k == K::FloorDiv ? "//" : "%";
    print(e.rhs(), out, p, true);
  }
  if (paren) out += ")";
}

bool needs_outer_parens(const DimExpr& e) {
  if (e.is_const()) return e.value() < 0;
  if (e.is_symbol()) return e.name().find('x') != std::string::npos;
  return true;
}

class DimParser {
 public:
  explicit DimParser(std::string_view s) : s_(s) {}
  std::optional<DimExpr> parse_all() {
    auto e = parse_sum();
    skip_ws();
    if (!e || pos_ != s_.size()) return std::nullopt;
    return e;
  }
  // Why parsing stopped, when it was more than malformed text.
  const std::string& why() const { return why_; }

 private:
  void skip_ws() {
    while (pos_ < s_.size() && s_[pos_] == ' ') ++pos_;
  }
  bool eat(std::string_view t) {
    skip_ws();
    if (s_.substr(pos_, t.size()) == t) {
      pos_ += t.size();
      return true;
    }
    return false;
  }
  std::optional<DimExpr> parse_sum() {
    auto lhs = parse_product();
    while (lhs) {
      if (eat("+")) {
        auto r = parse_product();
        if (!r) return std::nullopt;
        lhs = *lhs + *r;
      } else if (eat("-")) {
        auto r = parse_product();
        if (!r) return std::nullopt;
        lhs = *lhs - *r;
      } else {
        break;
      }
    }
    return lhs;
  }
  std::optional<DimExpr> parse_product() {
    auto lhs = parse_atom();
    while (lhs) {
      if (eat("*")) {
        auto r = parse_atom();
        if (!r) return std::nullopt;
        lhs = *lhs * *r;
      } else if (eat("//")) {
        auto r = parse_atom();
        if (!r || (r->is_const() && r->value() == 0)) return std::nullopt;
        lhs = floordiv(*lhs, *r);
      } else if (eat("%")) {
        auto r = parse_atom();
        if (!r || (r->is_const() && r->value() == 0)) return std::nullopt;
        lhs = *lhs % *r;
      } else {
        break;
      }
    }
    return lhs;
  }
  std::optional<DimExpr> parse_atom() {
    skip_ws();
    if (pos_ >= s_.size()) return std::nullopt;
    // The parser recurses per parenthesis: a hostile text must not exhaust the stack.
    bool opens = s_.substr(pos_, 1) == "(" || s_.substr(pos_, 4) == "min(" || s_.substr(pos_, 4) == "max(";
    if (opens && depth_ >= kMaxExtentParens) {
      why_ = "parentheses nested more than " + std::to_string(kMaxExtentParens) + " deep";
      return std::nullopt;
    }
    if (eat("(")) {
      ++depth_;
      auto e = parse_sum();
      --depth_;
      if (!e || !eat(")")) return std::nullopt;
      return e;
    }
    if (eat("min(")) return parse_call(true);
    if (eat("max(")) return parse_call(false);
    bool neg = eat("-");
    skip_ws();
    if (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
      // Every int64 reads back, INT64_MIN included (its magnitude is 2^63).
      uint64_t v = 0;
      const uint64_t limit = neg ? uint64_t{1} << 63 : static_cast<uint64_t>(INT64_MAX);
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
        auto digit = static_cast<uint64_t>(s_[pos_++] - '0');
        if (v > (limit - digit) / 10) {
          why_ = "integer out of range for int64";
          return std::nullopt;
        }
        v = v * 10 + digit;
      }
      return DimExpr(neg ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v));
    }
    if (neg) return std::nullopt;
    size_t start = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) ++pos_;
    if (start == pos_) return std::nullopt;
    return DimExpr::symbol(std::string(s_.substr(start, pos_ - start)));
  }
  std::optional<DimExpr> parse_call(bool is_min) {
    ++depth_;
    auto a = parse_sum();
    if (!a || !eat(",")) return std::nullopt;
    auto b = parse_sum();
    --depth_;
    if (!b || !eat(")")) return std::nullopt;
    return is_min ? min(*a, *b) : max(*a, *b);
  }
  std::string_view s_;
  size_t pos_ = 0;
  int depth_ = 0;
  std::string why_;
};
}  // namespace

std::string DimExpr::to_string() const {
  std::string body;
  print(*this, body, 0, false);
  if (needs_outer_parens(*this)) return "(" + body + ")";
  return body;
}

std::optional<DimExpr> parse_dim_expr(std::string_view s, std::string* err) {
  DimParser p(s);
  try {
    auto e = p.parse_all();
    if (!e && err) *err = p.why().empty() ? "malformed extent expression" : p.why();
    return e;
  } catch (const Error& e) {  // a bad symbol name, a division by zero, an overflow, a too-large expression
    if (err) *err = e.what();
    return std::nullopt;
  }
}

}  // namespace evoxc
