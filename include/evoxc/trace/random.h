// evoxc::random: key-based, stateless random numbers inside a traced function (JAX's model). A key is a value; the
// same key and operands give the same numbers in any process, on any backend and thread count. The algorithm is
// the key's type: splitmix64 (rank-0 int64, the default), threefry2x32 ((2,) uint32, JAX's bits), philox4x32_10
// ((4,) uint32). Leading axes of a key are a batch of keys, each its own stream; vmap over keys does the same.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "evoxc/core/tensor.h"
#include "evoxc/ops/random.h"
#include "evoxc/trace/ops.h"

namespace evoxc::random {

using Algorithm = random_alg::Algorithm;
// "splitmix64", "threefry2x32" or "philox4x32_10"; ValidationError naming the three otherwise.
Algorithm algorithm_from_name(std::string_view name);

// A concrete key from a seed (outside or inside a trace): splitmix64 int64 seed; threefry2x32 uint32
// [seed >> 32, seed & 0xffffffff] (jax.random.PRNGKey's data); philox4x32_10 uint32 [lo, hi, 0, 0].
Tensor key(int64_t seed, Algorithm algorithm = Algorithm::Splitmix64);
// The same from a traced integer seed (rank 0).
SymbolicTensor key(const SymbolicTensor& seed, Algorithm algorithm = Algorithm::Splitmix64,
                   SrcLoc loc = SrcLoc::current());

// `num` new keys: key batch + (num,) + key shape.
SymbolicTensor split(const SymbolicTensor& key, int64_t num = 2, SrcLoc loc = SrcLoc::current());
// A new key from a key and an int (fold_in(k, d) is split(k, n)[d], as JAX's partitionable threefry).
SymbolicTensor fold_in(const SymbolicTensor& key, const Operand& data, SrcLoc loc = SrcLoc::current());
// The key's raw bits: key batch + shape, uint8/16/32/64.
SymbolicTensor bits(const SymbolicTensor& key, const Shape& shape = Shape{}, DType dtype = DType::U32,
                    SrcLoc loc = SrcLoc::current());

// Samplers (JAX's formulas; float dtypes only where a float is drawn). `shape` is the sample shape per key.
SymbolicTensor uniform(const SymbolicTensor& key, const Shape& shape = Shape{}, DType dtype = DType::F32,
                       const Operand& minval = 0.0, const Operand& maxval = 1.0, SrcLoc loc = SrcLoc::current());
SymbolicTensor normal(const SymbolicTensor& key, const Shape& shape = Shape{}, DType dtype = DType::F32,
                      SrcLoc loc = SrcLoc::current());
// Integers in [minval, maxval) (maxval <= minval gives minval), nearly unbiased: a 64-bit draw reduced by a
// multiply-shift (bias below 2^-32 for every span of 32-bit dtypes).
SymbolicTensor randint(const SymbolicTensor& key, const Shape& shape, const Operand& minval, const Operand& maxval,
                       DType dtype = DType::I32, SrcLoc loc = SrcLoc::current());
// True with probability p (broadcast against `shape`; no shape: p's shape).
SymbolicTensor bernoulli(const SymbolicTensor& key, const Operand& p = 0.5, std::optional<Shape> shape = std::nullopt,
                         SrcLoc loc = SrcLoc::current());
// Standard Gumbel and exponential draws.
SymbolicTensor gumbel(const SymbolicTensor& key, const Shape& shape = Shape{}, DType dtype = DType::F32,
                      SrcLoc loc = SrcLoc::current());
SymbolicTensor exponential(const SymbolicTensor& key, const Shape& shape = Shape{}, DType dtype = DType::F32,
                           SrcLoc loc = SrcLoc::current());
// A class index per row of `logits` along `axis` (int64; the Gumbel-max trick). `shape` must end with the
// logits' shape without `axis` (default that shape).
SymbolicTensor categorical(const SymbolicTensor& key, const SymbolicTensor& logits, int64_t axis = -1,
                           std::optional<Shape> shape = std::nullopt, SrcLoc loc = SrcLoc::current());
// Normal draws conditioned on [lower, upper] (inverse CDF of the truncated distribution), broadcast to `shape`.
SymbolicTensor truncated_normal(const SymbolicTensor& key, const Operand& lower, const Operand& upper,
                                std::optional<Shape> shape = std::nullopt, DType dtype = DType::F32,
                                SrcLoc loc = SrcLoc::current());
// A random permutation of arange(n) (int64), or of x along `axis` (a sort by random keys).
SymbolicTensor permutation(const SymbolicTensor& key, int64_t n, SrcLoc loc = SrcLoc::current());
SymbolicTensor permutation(const SymbolicTensor& key, const SymbolicTensor& x, int64_t axis = 0,
                           SrcLoc loc = SrcLoc::current());

// Draws from `a` (arange(n) for an int n, else a's slices along `axis`): with replacement uniformly or by the
// probabilities p (inverse CDF: a search of p's running sum), without replacement a uniform prefix of a
// permutation or, with p, the Gumbel top-k (sampling without replacement in proportion to p). `shape` is the draw
// shape; without replacement its count must not exceed the population.
SymbolicTensor choice(const SymbolicTensor& key, int64_t n, const Shape& shape = Shape{}, bool replace = true,
                      std::optional<SymbolicTensor> p = std::nullopt, SrcLoc loc = SrcLoc::current());
SymbolicTensor choice(const SymbolicTensor& key, const SymbolicTensor& a, const Shape& shape = Shape{},
                      bool replace = true, std::optional<SymbolicTensor> p = std::nullopt, int64_t axis = 0,
                      SrcLoc loc = SrcLoc::current());
// Gamma(a, 1) draws (Marsaglia and Tsang's rejection method, a < 1 boosted by u^(1/a)), `a` broadcast to `shape`
// (default a's shape). A while_loop redraws the rejected elements from fold_in(key, round).
SymbolicTensor gamma(const SymbolicTensor& key, const Operand& a, std::optional<Shape> shape = std::nullopt,
                     DType dtype = DType::F32, SrcLoc loc = SrcLoc::current());
// Counts of `n` draws over the categories of p's last axis (p's leading axes broadcast against `shape`, which
// excludes the category axis); int64, each row sums to n. O(n x categories) work.
SymbolicTensor multinomial(const SymbolicTensor& key, int64_t n, const SymbolicTensor& p,
                           std::optional<Shape> shape = std::nullopt, SrcLoc loc = SrcLoc::current());

}  // namespace evoxc::random
