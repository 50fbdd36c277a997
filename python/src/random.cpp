// Bindings of evoxc::random (include/evoxc/trace/random.h) as the submodule evoxc._core._random; python/evoxc/random.py
// gives them the seed's Python names and defaults.
#include "evoxc/trace/random.h"

#include <optional>
#include <string>

#include "bind.h"

namespace evoxc::py {

void bind_random(nb::module_& core) {
  nb::module_ m = core.def_submodule("_random", "evoxc.random's C++ functions (use evoxc.random)");
  namespace r = evoxc::random;
  m.def(
      "key", [](int64_t seed, const std::string& algorithm) { return r::key(seed, r::algorithm_from_name(algorithm)); },
      nb::arg("seed"), nb::arg("algorithm") = "splitmix64");
  def_op(
      m, "key_traced",
      [](const SymbolicTensor& seed, const std::string& algorithm) {
        return r::key(seed, r::algorithm_from_name(algorithm));
      },
      nb::arg("seed"), nb::arg("algorithm") = "splitmix64");
  def_op(
      m, "split", [](const SymbolicTensor& key, int64_t num) { return r::split(key, num); }, nb::arg("key"),
      nb::arg("num") = 2);
  def_op(
      m, "fold_in", [](const SymbolicTensor& key, const Operand& data) { return r::fold_in(key, data); },
      nb::arg("key"), nb::arg("data"));
  def_op(
      m, "bits", [](const SymbolicTensor& key, const Shape& shape, DType dtype) { return r::bits(key, shape, dtype); },
      nb::arg("key"), nb::arg("shape"), nb::arg("dtype"));
  def_op(
      m, "uniform",
      [](const SymbolicTensor& key, const Shape& shape, DType dtype, const Operand& lo, const Operand& hi) {
        return r::uniform(key, shape, dtype, lo, hi);
      },
      nb::arg("key"), nb::arg("shape"), nb::arg("dtype"), nb::arg("minval"), nb::arg("maxval"));
  def_op(
      m, "normal",
      [](const SymbolicTensor& key, const Shape& shape, DType dtype) { return r::normal(key, shape, dtype); },
      nb::arg("key"), nb::arg("shape"), nb::arg("dtype"));
  def_op(
      m, "randint",
      [](const SymbolicTensor& key, const Shape& shape, const Operand& lo, const Operand& hi, DType dtype) {
        return r::randint(key, shape, lo, hi, dtype);
      },
      nb::arg("key"), nb::arg("shape"), nb::arg("minval"), nb::arg("maxval"), nb::arg("dtype"));
  def_op(
      m, "bernoulli",
      [](const SymbolicTensor& key, const Operand& p, std::optional<Shape> shape) {
        return r::bernoulli(key, p, shape);
      },
      nb::arg("key"), nb::arg("p"), nb::arg("shape").none());
  def_op(
      m, "gumbel",
      [](const SymbolicTensor& key, const Shape& shape, DType dtype) { return r::gumbel(key, shape, dtype); },
      nb::arg("key"), nb::arg("shape"), nb::arg("dtype"));
  def_op(
      m, "exponential",
      [](const SymbolicTensor& key, const Shape& shape, DType dtype) { return r::exponential(key, shape, dtype); },
      nb::arg("key"), nb::arg("shape"), nb::arg("dtype"));
  def_op(
      m, "categorical",
      [](const SymbolicTensor& key, const SymbolicTensor& logits, int64_t axis, std::optional<Shape> shape) {
        return r::categorical(key, logits, axis, shape);
      },
      nb::arg("key"), nb::arg("logits"), nb::arg("axis"), nb::arg("shape").none());
  def_op(
      m, "truncated_normal",
      [](const SymbolicTensor& key, const Operand& lo, const Operand& hi, std::optional<Shape> shape, DType dtype) {
        return r::truncated_normal(key, lo, hi, shape, dtype);
      },
      nb::arg("key"), nb::arg("lower"), nb::arg("upper"), nb::arg("shape").none(), nb::arg("dtype"));
  def_op(
      m, "permutation", [](const SymbolicTensor& key, int64_t n) { return r::permutation(key, n); }, nb::arg("key"),
      nb::arg("n"));
  def_op(
      m, "permutation",
      [](const SymbolicTensor& key, const SymbolicTensor& x, int64_t axis) { return r::permutation(key, x, axis); },
      nb::arg("key"), nb::arg("x"), nb::arg("axis") = 0);
  def_op(
      m, "choice",
      [](const SymbolicTensor& key, int64_t n, const Shape& shape, bool replace, std::optional<SymbolicTensor> p) {
        return r::choice(key, n, shape, replace, p);
      },
      nb::arg("key"), nb::arg("n"), nb::arg("shape"), nb::arg("replace"), nb::arg("p").none());
  def_op(
      m, "choice",
      [](const SymbolicTensor& key, const SymbolicTensor& a, const Shape& shape, bool replace,
         std::optional<SymbolicTensor> p, int64_t axis) { return r::choice(key, a, shape, replace, p, axis); },
      nb::arg("key"), nb::arg("a"), nb::arg("shape"), nb::arg("replace"), nb::arg("p").none(), nb::arg("axis"));
  def_op(
      m, "gamma",
      [](const SymbolicTensor& key, const Operand& a, std::optional<Shape> shape, DType dtype) {
        return r::gamma(key, a, shape, dtype);
      },
      nb::arg("key"), nb::arg("a"), nb::arg("shape").none(), nb::arg("dtype"));
  def_op(
      m, "multinomial",
      [](const SymbolicTensor& key, int64_t n, const SymbolicTensor& p, std::optional<Shape> shape) {
        return r::multinomial(key, n, p, shape);
      },
      nb::arg("key"), nb::arg("n"), nb::arg("p"), nb::arg("shape").none());
}

}  // namespace evoxc::py
