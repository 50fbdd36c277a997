// numpy-shaped composites (einsum, softmax, var/std, stack, average, isclose, ...) built from the op functions of
// ops.h.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "evoxc/trace/ops.h"

namespace evoxc {

// ---- contraction ----

// numpy.einsum. Subscripts are letters (a-z, A-Z) per axis, operands separated by ','
// and an optional "->output". Without "->" the output is every label that appears
// exactly once, in ASCII order (numpy's implicit mode). "..." stands for the leading
// axes not named by letters; they broadcast across operands (right-aligned) and come
// first in an implicit output. A label repeated inside one operand takes its diagonal
// ("ii->i"). Two operands contract through transpose/reshape/matmul when their shared
// extents are equal; otherwise (and for bool) through a broadcast multiply and a sum.
// More than two operands contract left to right. The result dtype is the promoted
// operand dtype (integers keep their width, as numpy). TraceError for malformed
// subscripts, ShapeError when one label has two different extents.
SymbolicTensor einsum(std::string_view subscripts, const std::vector<SymbolicTensor>& operands,
                      SrcLoc loc = SrcLoc::current());
SymbolicTensor einsum(std::string_view subscripts, const SymbolicTensor& a, SrcLoc loc = SrcLoc::current());
SymbolicTensor einsum(std::string_view subscripts, const SymbolicTensor& a, const SymbolicTensor& b,
                      SrcLoc loc = SrcLoc::current());

// numpy.outer: the flattened operands, a[i] * b[j] (promoted as multiply).
SymbolicTensor outer(const SymbolicTensor& a, const SymbolicTensor& b, SrcLoc loc = SrcLoc::current());
// numpy.inner: a sum over the last axis of both; the result shape is
// a.shape[:-1] + b.shape[:-1]. A rank-0 operand multiplies.
SymbolicTensor inner(const SymbolicTensor& a, const SymbolicTensor& b, SrcLoc loc = SrcLoc::current());

// ---- normalisation (integer and bool input is converted to float32 first) ----

// exp(x - max) / sum(exp(x - max)) over `axes` (default: the last axis), so large inputs
// do not overflow.
SymbolicTensor softmax(const SymbolicTensor& x, Axes axes = -1, SrcLoc loc = SrcLoc::current());
// (x - max) - log(sum(exp(x - max))) over `axes`, stable for large and very negative inputs.
SymbolicTensor log_softmax(const SymbolicTensor& x, Axes axes = -1, SrcLoc loc = SrcLoc::current());

// ---- statistics (integer and bool input is converted to float32 first, as mean) ----

// numpy.var: mean(|x - mean(x)|^2) with the divisor N - ddof (N: the number of reduced
// elements). N - ddof <= 0 gives inf or NaN, as numpy (without its warning).
SymbolicTensor var(const SymbolicTensor& x, Axes axes = {}, int64_t ddof = 0, bool keepdims = false,
                   SrcLoc loc = SrcLoc::current());
// numpy.std: sqrt(var(x, axes, ddof, keepdims)).
SymbolicTensor std(const SymbolicTensor& x, Axes axes = {}, int64_t ddof = 0, bool keepdims = false,
                   SrcLoc loc = SrcLoc::current());
// numpy.average: mean without weights; with weights sum(x * w) / sum(w) over `axes`.
// `weights` has x's shape, or (numpy's 1-D form) is 1-D with the extent of the single
// reduced axis named in `axes`.
SymbolicTensor average(const SymbolicTensor& x, Axes axes = {},
                       const std::optional<SymbolicTensor>& weights = std::nullopt, bool keepdims = false,
                       SrcLoc loc = SrcLoc::current());

// ---- joining ----

// numpy.stack: the operands (same shape) joined along a new axis (negative counts from
// the end of the result).
SymbolicTensor stack(const std::vector<SymbolicTensor>& xs, int64_t axis = 0, SrcLoc loc = SrcLoc::current());
// numpy.hstack: concatenate along axis 1, or axis 0 when the operands are 1-D (rank-0
// operands become 1-D first).
SymbolicTensor hstack(const std::vector<SymbolicTensor>& xs, SrcLoc loc = SrcLoc::current());
// numpy.vstack: concatenate along axis 0 after making each operand at least 2-D
// (a 1-D (N) becomes (1, N)).
SymbolicTensor vstack(const std::vector<SymbolicTensor>& xs, SrcLoc loc = SrcLoc::current());

// ---- comparison with tolerance ----

// numpy.isclose: |a - b| <= atol + rtol * |b| for finite values, a == b for infinities;
// NaN is close to NaN only with equal_nan. Operands are promoted; integer and bool
// operands are compared in float32. The result is bool with the broadcast shape.
SymbolicTensor isclose(const Operand& a, const Operand& b, double rtol = 1e-5, double atol = 1e-8,
                       bool equal_nan = false, SrcLoc loc = SrcLoc::current());
// numpy.allclose: all(isclose(...)) as a rank-0 bool tensor.
SymbolicTensor allclose(const Operand& a, const Operand& b, double rtol = 1e-5, double atol = 1e-8,
                        bool equal_nan = false, SrcLoc loc = SrcLoc::current());

}  // namespace evoxc
