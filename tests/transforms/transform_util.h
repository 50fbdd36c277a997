// Helpers shared by the transform tests: running graphs on tensors, random inputs, and the three generic checks
// (vmap against a loop over the batch, jvp against finite differences, vjp against jvp by duality).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "evoxc/evoxc.h"

namespace evoxc::testing {

// Runs `g` on the interpreter with `inputs` (one per input leaf) and returns the output leaves.
std::vector<Tensor> run_flat(const Graph& g, const std::vector<Tensor>& inputs);

// A tensor of `shape` and `dtype` from doubles (converted like a C++ cast; bool: v != 0).
Tensor make_tensor(const std::vector<double>& values, const std::vector<int64_t>& shape, DType dtype);
// Values of `t` as doubles.
std::vector<double> values_of(const Tensor& t);
// Uniform random values in [lo, hi) (ints: integers in [lo, hi); bool: fair coin), seeded.
Tensor random_tensor(const std::vector<int64_t>& shape, DType dtype, uint64_t seed, double lo = -1.0, double hi = 1.0);
// One random tensor per input spec of `g` (symbolic extents bound to `sym`).
std::vector<Tensor> random_inputs(const Graph& g, uint64_t seed, double lo = -1.0, double hi = 1.0, int64_t sym = 3);

// Stacks tensors of one shape and dtype on a new leading axis (bytes, any dtype).
Tensor stack(const std::vector<Tensor>& ts);
// Row i of a stacked tensor (a copy).
Tensor row(const Tensor& t, int64_t i);

// Max |a - b| / (atol + rtol |b|) <= 1 elementwise (NaNs must agree); gtest failure naming `what` otherwise.
void expect_close(const Tensor& a, const Tensor& b, double rtol, double atol, const std::string& what);

// vmap check: vectorize(g) over batch `n` with every input mapped at axis 0 (unmapped where
// `mapped[i]` is false), run on stacked random inputs, equals running g on each batch element.
void expect_vmap_matches_loop(const Graph& g, const std::vector<Tensor>& example, const std::vector<bool>& mapped,
                              int64_t n = 3, double rtol = 1e-6, double atol = 1e-6);

// jvp check at `primals`: the tangent outputs of jvp(g) for a random tangent equal the central
// finite difference (step h) of g along that tangent. Meaningful on float64 graphs.
void expect_jvp_matches_fd(const Graph& g, const std::vector<Tensor>& primals, double rtol = 1e-5, double atol = 1e-6,
                           double h = 1e-6);

// vjp check: for random tangents t and cotangents c, <c, J t> (from jvp) equals <J^T c, t>
// (from vjp), and vjp's primal outputs equal g's.
void expect_vjp_matches_jvp(const Graph& g, const std::vector<Tensor>& primals, double rtol = 1e-9);

}  // namespace evoxc::testing
