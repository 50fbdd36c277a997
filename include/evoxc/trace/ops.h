// The op functions users call inside a traced function: numpy names over SymbolicTensors.
#pragma once

#include <initializer_list>
#include <optional>
#include <source_location>
#include <type_traits>
#include <vector>

#include "evoxc/trace/symbolic_tensor.h"

namespace evoxc {

using SrcLoc = std::source_location;

// Reduction axes: Axes() or Axes::all() is every axis; {1}, 1, {0, -1} name axes
// (negative counts from the end).
class Axes {
 public:
  Axes() = default;
  Axes(std::initializer_list<int64_t> a) : axes_(std::vector<int64_t>(a)) {}  // NOLINT
  Axes(std::vector<int64_t> a) : axes_(std::move(a)) {}                       // NOLINT
  Axes(int a) : axes_(std::vector<int64_t>{a}) {}                             // NOLINT
  Axes(int64_t a) : axes_(std::vector<int64_t>{a}) {}                         // NOLINT
  static Axes all() { return Axes(); }
  bool is_all() const { return !axes_.has_value(); }
  size_t count() const { return axes_ ? axes_->size() : 0; }
  // Sorted, unique, non-negative axes for a value of the given rank; ShapeError on a bad axis.
  std::vector<int64_t> normalize(size_t rank, const std::string& what) const;

 private:
  std::optional<std::vector<int64_t>> axes_;
};

// ---- elementwise unary (float-only functions convert int/bool operands to float32) ----
#define EVOXC_UNARY_OP(name, op) SymbolicTensor name(const Operand& x, SrcLoc loc = SrcLoc::current());
#include "evoxc/trace/unary_ops.inc"
#undef EVOXC_UNARY_OP
SymbolicTensor logical_not(const Operand& x, SrcLoc loc = SrcLoc::current());
inline SymbolicTensor neg(const Operand& x, SrcLoc loc = SrcLoc::current()) { return negative(x, loc); }
SymbolicTensor gelu(const Operand& x, bool approximate = false, SrcLoc loc = SrcLoc::current());
// numpy defaults: nan → 0, ±inf → the largest/lowest finite value of the dtype.
SymbolicTensor nan_to_num(const Operand& x, double nan = 0.0, std::optional<double> posinf = std::nullopt,
                          std::optional<double> neginf = std::nullopt, SrcLoc loc = SrcLoc::current());

// ---- elementwise binary (promotion per docs/semantics.md; numpy broadcasting) ----
#define EVOXC_BINARY_OP(name, op, rule) \
  SymbolicTensor name(const Operand& a, const Operand& b, SrcLoc loc = SrcLoc::current());
#include "evoxc/trace/binary_ops.inc"
#undef EVOXC_BINARY_OP
// numpy: arithmetic for signed, logical for unsigned
SymbolicTensor right_shift(const Operand& a, const Operand& b, SrcLoc loc = SrcLoc::current());
inline SymbolicTensor mod(const Operand& a, const Operand& b, SrcLoc loc = SrcLoc::current()) {
  return remainder(a, b, loc);
}
inline SymbolicTensor pow(const Operand& a, const Operand& b, SrcLoc loc = SrcLoc::current()) {
  return power(a, b, loc);
}

// ---- other elementwise ----
SymbolicTensor where(const Operand& cond, const Operand& on_true, const Operand& on_false,
                     SrcLoc loc = SrcLoc::current());
SymbolicTensor select(const Operand& cond, const Operand& on_true, const Operand& on_false,
                      SrcLoc loc = SrcLoc::current());
SymbolicTensor clip(const Operand& x, const Operand& lo, const Operand& hi, SrcLoc loc = SrcLoc::current());
SymbolicTensor clamp(const Operand& x, const Operand& lo, const Operand& hi, SrcLoc loc = SrcLoc::current());
SymbolicTensor astype(const Operand& x, DType dtype, SrcLoc loc = SrcLoc::current());
SymbolicTensor convert(const Operand& x, DType dtype, SrcLoc loc = SrcLoc::current());
SymbolicTensor bitcast_convert(const SymbolicTensor& x, DType dtype, SrcLoc loc = SrcLoc::current());

// ---- reductions (numpy accumulators: sum/prod of bool and ints use int64/uint64) ----
SymbolicTensor sum(const SymbolicTensor& x, Axes axes = {}, bool keepdims = false, SrcLoc loc = SrcLoc::current());
SymbolicTensor prod(const SymbolicTensor& x, Axes axes = {}, bool keepdims = false, SrcLoc loc = SrcLoc::current());
SymbolicTensor max(const SymbolicTensor& x, Axes axes = {}, bool keepdims = false, SrcLoc loc = SrcLoc::current());
SymbolicTensor min(const SymbolicTensor& x, Axes axes = {}, bool keepdims = false, SrcLoc loc = SrcLoc::current());
SymbolicTensor mean(const SymbolicTensor& x, Axes axes = {}, bool keepdims = false, SrcLoc loc = SrcLoc::current());
SymbolicTensor any(const SymbolicTensor& x, Axes axes = {}, bool keepdims = false, SrcLoc loc = SrcLoc::current());
SymbolicTensor all(const SymbolicTensor& x, Axes axes = {}, bool keepdims = false, SrcLoc loc = SrcLoc::current());
// Index of the extreme value along `axis` (nullopt: over the flattened tensor), int64.
SymbolicTensor argmax(const SymbolicTensor& x, std::optional<int64_t> axis = std::nullopt, bool keepdims = false,
                      SrcLoc loc = SrcLoc::current());
SymbolicTensor argmin(const SymbolicTensor& x, std::optional<int64_t> axis = std::nullopt, bool keepdims = false,
                      SrcLoc loc = SrcLoc::current());

// ---- linear algebra ----
// numpy.matmul: batch dims broadcast, 1-D operands gain and lose a unit dim.
SymbolicTensor matmul(const Operand& a, const Operand& b, SrcLoc loc = SrcLoc::current());
// numpy.dot: matmul for ranks <= 2; for N-D, a sum over the last axis of a and the
// second-to-last of b, with the outer product of the remaining axes.
SymbolicTensor dot(const Operand& a, const Operand& b, SrcLoc loc = SrcLoc::current());

// ---- structure ----
// A -1 extent is inferred from the element count (at most one).
SymbolicTensor reshape(const SymbolicTensor& x, const Shape& shape, SrcLoc loc = SrcLoc::current());
// No permutation: reverse the axes, as numpy.
SymbolicTensor transpose(const SymbolicTensor& x, std::optional<std::vector<int64_t>> perm = std::nullopt,
                         SrcLoc loc = SrcLoc::current());
SymbolicTensor broadcast_to(const Operand& x, const Shape& shape, SrcLoc loc = SrcLoc::current());
SymbolicTensor broadcast_in_dim(const SymbolicTensor& x, const Shape& shape, std::vector<int64_t> dims,
                                SrcLoc loc = SrcLoc::current());
SymbolicTensor expand_dims(const SymbolicTensor& x, Axes axes, SrcLoc loc = SrcLoc::current());
// No axes: every extent that is the constant 1.
SymbolicTensor squeeze(const SymbolicTensor& x, Axes axes = {}, SrcLoc loc = SrcLoc::current());
// Static slice x[start:limit:stride] per axis; missing trailing axes are taken whole.
// Negative start/limit count from the end of a static extent, as numpy.
SymbolicTensor slice(const SymbolicTensor& x, const std::vector<int64_t>& start, const std::vector<int64_t>& limit,
                     const std::vector<int64_t>& strides = {}, SrcLoc loc = SrcLoc::current());
SymbolicTensor concatenate(const std::vector<SymbolicTensor>& xs, int64_t axis = 0, SrcLoc loc = SrcLoc::current());

// ---- creation (inside a trace) ----
SymbolicTensor iota(const Shape& shape, int64_t dimension, DType dtype = kIndexType, SrcLoc loc = SrcLoc::current());
// A tensor of `shape` filled with `value` (numpy.full inside a graph).
SymbolicTensor fill(const Shape& shape, const Operand& value, std::optional<DType> dtype = std::nullopt,
                    SrcLoc loc = SrcLoc::current());
SymbolicTensor zeros_like(const SymbolicTensor& x, SrcLoc loc = SrcLoc::current());
SymbolicTensor ones_like(const SymbolicTensor& x, SrcLoc loc = SrcLoc::current());
// Embeds host data into the graph (copied now) and reports a warning: the one explicit
// way for data to enter a graph other than as an input.
SymbolicTensor constant(const Tensor& value, SrcLoc loc = SrcLoc::current());

// ---- operators ----
// Operators record the location of the expression through the default argument of these
// converting constructors (an operator cannot take a defaulted location itself).
struct LocatedTensor {
  SymbolicTensor t;
  SrcLoc loc;
  LocatedTensor(const SymbolicTensor& x, SrcLoc l = SrcLoc::current()) : t(x), loc(l) {}  // NOLINT
};
struct LocatedScalar {
  Operand v;
  SrcLoc loc;
  template <typename T>
  requires std::is_arithmetic_v<T> LocatedScalar(T x, SrcLoc l = SrcLoc::current()) : v(make(x)), loc(l) {}  // NOLINT

 private:
  template <typename T>
  static Operand make(T x) {
    if constexpr (std::is_same_v<T, bool>) {
      return Operand(x);
    } else if constexpr (std::is_integral_v<T>) {
      return Operand(static_cast<long long>(x));
    } else {
      return Operand(static_cast<double>(x));
    }
  }
};

inline SymbolicTensor operator-(LocatedTensor x) { return negative(x.t, x.loc); }
inline SymbolicTensor operator~(LocatedTensor x) { return bitwise_not(x.t, x.loc); }
inline SymbolicTensor operator!(LocatedTensor x) { return logical_not(x.t, x.loc); }

#define EVOXC_OPERATOR_RIGHT(op, fn)                                                                                 \
  inline SymbolicTensor operator op(const SymbolicTensor& a, LocatedTensor b) { return ::evoxc::fn(a, b.t, b.loc); } \
  inline SymbolicTensor operator op(const SymbolicTensor& a, LocatedScalar b) { return ::evoxc::fn(a, b.v, b.loc); }
#define EVOXC_OPERATOR(op, fn) \
  EVOXC_OPERATOR_RIGHT(op, fn) \
  inline SymbolicTensor operator op(LocatedScalar a, const SymbolicTensor& b) { return ::evoxc::fn(a.v, b, a.loc); }
EVOXC_OPERATOR(+, add)
EVOXC_OPERATOR(-, subtract)
EVOXC_OPERATOR(*, multiply)
EVOXC_OPERATOR(/, divide)
EVOXC_OPERATOR(%, remainder)
EVOXC_OPERATOR(<, less)
EVOXC_OPERATOR(<=, less_equal)
EVOXC_OPERATOR(>, greater)
EVOXC_OPERATOR(>=, greater_equal)
EVOXC_OPERATOR(&, bitwise_and)
EVOXC_OPERATOR(|, bitwise_or)
EVOXC_OPERATOR(^, bitwise_xor)
// == and != exist only with the tensor on the left: C++20 also tries the reversed form,
// which would make `1 == x` ambiguous.
EVOXC_OPERATOR_RIGHT(==, equal)
EVOXC_OPERATOR_RIGHT(!=, not_equal)
#undef EVOXC_OPERATOR
#undef EVOXC_OPERATOR_RIGHT

}  // namespace evoxc
