// User functions for convolution and layout ops (numpy names): conv, pad, tril, triu, diagonal, flip, roll, tile,
// repeat, one_hot, arange, linspace, split, array_split.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "evoxc/trace/ops.h"

namespace evoxc {

// Convolution padding: "SAME" or "VALID" (XLA's rules), or one explicit (low, high) pair per spatial dim;
// negative entries crop.
class ConvPadding {
 public:
  ConvPadding(const char* mode) : mode_(mode) {}               // NOLINT
  ConvPadding(std::string mode) : mode_(std::move(mode)) {}    // NOLINT
  ConvPadding(std::vector<std::pair<int64_t, int64_t>> pairs)  // NOLINT
      : pairs_(std::move(pairs)) {}
  ConvPadding(std::initializer_list<std::pair<int64_t, int64_t>> pairs)  // NOLINT
      : pairs_(pairs) {}
  const std::string& mode() const { return mode_; }
  const std::vector<std::pair<int64_t, int64_t>>& pairs() const { return pairs_; }

 private:
  std::string mode_;  // empty: explicit pairs
  std::vector<std::pair<int64_t, int64_t>> pairs_;
};

// XLA conv_general_dilated with lhs (N, C, spatial...) and rhs (O, C / feature_group_count, window...):
// result (N, O, out...) where out = floor((dilated_in + low + high - dilated_window) / stride) + 1 (0 when the
// window does not fit). Empty stride or dilation lists mean 1 for every spatial dim. SAME gives
// out = ceil(dilated_in / stride) with the extra padding on the high side; it needs a static spatial extent
// unless the stride is 1. Operands are promoted to one dtype first.
SymbolicTensor conv_general(const Operand& lhs, const Operand& rhs, std::vector<int64_t> window_strides = {},
                            const ConvPadding& padding = "VALID", std::vector<int64_t> lhs_dilation = {},
                            std::vector<int64_t> rhs_dilation = {}, int64_t feature_group_count = 1,
                            SrcLoc loc = SrcLoc::current());
// conv_general without lhs dilation: strides, padding, rhs dilation (`dilation`) and groups; any spatial rank.
SymbolicTensor conv(const Operand& x, const Operand& w, std::vector<int64_t> strides = {},
                    const ConvPadding& padding = "VALID", std::vector<int64_t> dilation = {}, int64_t groups = 1,
                    SrcLoc loc = SrcLoc::current());
// conv with a rank check: x is (N, C, W), (N, C, H, W) or (N, C, D, H, W).
SymbolicTensor conv1d(const Operand& x, const Operand& w, std::vector<int64_t> strides = {},
                      const ConvPadding& padding = "VALID", std::vector<int64_t> dilation = {}, int64_t groups = 1,
                      SrcLoc loc = SrcLoc::current());
SymbolicTensor conv2d(const Operand& x, const Operand& w, std::vector<int64_t> strides = {},
                      const ConvPadding& padding = "VALID", std::vector<int64_t> dilation = {}, int64_t groups = 1,
                      SrcLoc loc = SrcLoc::current());
SymbolicTensor conv3d(const Operand& x, const Operand& w, std::vector<int64_t> strides = {},
                      const ConvPadding& padding = "VALID", std::vector<int64_t> dilation = {}, int64_t groups = 1,
                      SrcLoc loc = SrcLoc::current());

// numpy.pad. pad_width holds one (before, after) pair per axis, or one pair for every axis; negative widths crop
// (numpy refuses them). mode: "constant" (constant_value, converted to x's dtype), "edge", "reflect",
// "symmetric". reflect/symmetric repeat periodically when the pad exceeds the axis (numpy's result); an empty
// axis can only be extended with "constant".
SymbolicTensor pad(const SymbolicTensor& x, std::vector<std::pair<int64_t, int64_t>> pad_width,
                   const std::string& mode = "constant", const Operand& constant_value = 0,
                   SrcLoc loc = SrcLoc::current());
SymbolicTensor pad(const SymbolicTensor& x, int64_t pad_width, const std::string& mode = "constant",
                   const Operand& constant_value = 0, SrcLoc loc = SrcLoc::current());
// XLA's lax.pad: low/high (negative crops) and interior padding per axis with a scalar value.
SymbolicTensor pad_general(const SymbolicTensor& x, const Operand& value, std::vector<int64_t> low,
                           std::vector<int64_t> high, std::vector<int64_t> interior = {},
                           SrcLoc loc = SrcLoc::current());

// numpy.tril/triu over the last two axes (a 1-D x is first broadcast to (n, n), as numpy).
SymbolicTensor tril(const SymbolicTensor& x, int64_t k = 0, SrcLoc loc = SrcLoc::current());
SymbolicTensor triu(const SymbolicTensor& x, int64_t k = 0, SrcLoc loc = SrcLoc::current());
// numpy.diagonal: removes axis1 and axis2 (negative count from the end) and appends the diagonal.
SymbolicTensor diagonal(const SymbolicTensor& x, int64_t offset = 0, int64_t axis1 = 0, int64_t axis2 = 1,
                        SrcLoc loc = SrcLoc::current());
// numpy.flip; no axes: every axis.
SymbolicTensor flip(const SymbolicTensor& x, Axes axes = {}, SrcLoc loc = SrcLoc::current());
// numpy.roll. No axis: over the flattened array, reshaped back. Repeated axes add their shifts.
SymbolicTensor roll(const SymbolicTensor& x, int64_t shift, std::optional<int64_t> axis = std::nullopt,
                    SrcLoc loc = SrcLoc::current());
SymbolicTensor roll(const SymbolicTensor& x, const std::vector<int64_t>& shifts, const std::vector<int64_t>& axes,
                    SrcLoc loc = SrcLoc::current());
// numpy.tile: reps shorter than the rank gain leading ones; a longer reps gives x leading unit axes.
SymbolicTensor tile(const SymbolicTensor& x, std::vector<int64_t> reps, SrcLoc loc = SrcLoc::current());
// numpy.repeat: one count for every element, or one per element of the (static) axis. No axis: flattened first.
SymbolicTensor repeat(const SymbolicTensor& x, int64_t repeats, std::optional<int64_t> axis = std::nullopt,
                      SrcLoc loc = SrcLoc::current());
SymbolicTensor repeat(const SymbolicTensor& x, const std::vector<int64_t>& repeats,
                      std::optional<int64_t> axis = std::nullopt, SrcLoc loc = SrcLoc::current());
// jax.nn.one_hot on the last axis: int indices -> x.shape + (num_classes,); out-of-range indices give a zero row.
SymbolicTensor one_hot(const SymbolicTensor& x, int64_t num_classes, DType dtype = kDefaultFloat,
                       SrcLoc loc = SrcLoc::current());
// numpy.arange with static bounds: ceil((stop - start) / step) values start + i * step. The dtype defaults to
// int64 when start, stop and step are all ints, float32 otherwise (no silent float64).
SymbolicTensor arange(const Operand& stop, std::optional<DType> dtype = std::nullopt, SrcLoc loc = SrcLoc::current());
SymbolicTensor arange(const Operand& start, const Operand& stop, const Operand& step = 1,
                      std::optional<DType> dtype = std::nullopt, SrcLoc loc = SrcLoc::current());
// numpy.eye: an n x m (m: n when absent) matrix with ones on diagonal k (k > 0 above the main one, k < 0 below) and
// zeros elsewhere; numpy.identity(n) is eye(n). Built from iota and a compare (no op of its own).
SymbolicTensor eye(int64_t n, std::optional<int64_t> m = std::nullopt, int64_t k = 0, DType dtype = kDefaultFloat,
                   SrcLoc loc = SrcLoc::current());
inline SymbolicTensor identity(int64_t n, DType dtype = kDefaultFloat, SrcLoc loc = SrcLoc::current()) {
  return eye(n, std::nullopt, 0, dtype, loc);
}
// numpy.linspace; an int dtype floors the values (numpy >= 1.20).
SymbolicTensor linspace(double start, double stop, int64_t num = 50, bool endpoint = true, DType dtype = kDefaultFloat,
                        SrcLoc loc = SrcLoc::current());
// numpy.split into equal sections (ShapeError when the static extent does not divide) or at indices (python
// slice rules: clamped, negative counts from the end); numpy.array_split gives the first n % sections parts one
// more element. Built from slice ops.
std::vector<SymbolicTensor> split(const SymbolicTensor& x, int64_t sections, int64_t axis = 0,
                                  SrcLoc loc = SrcLoc::current());
std::vector<SymbolicTensor> split(const SymbolicTensor& x, const std::vector<int64_t>& indices, int64_t axis = 0,
                                  SrcLoc loc = SrcLoc::current());
std::vector<SymbolicTensor> array_split(const SymbolicTensor& x, int64_t sections, int64_t axis = 0,
                                        SrcLoc loc = SrcLoc::current());

}  // namespace evoxc
