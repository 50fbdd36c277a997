// Checks the catalogue's linearity traits numerically on the interpreter: every listed operand
// set is linear (f(x + 2y) = f(x) + 2 f(y), the other operands fixed), and every float operand
// left unlisted is not linear on its own, so a missing entry fails too.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <set>

#include "evoxc/evoxc.h"
#include "ops/ops_util.h"

namespace evoxc {
namespace {

// Ops that look linear on random finite inputs but are deliberately not listed, and why.
const std::map<std::string, std::string>& exempt() {
  static const std::map<std::string, std::string> m = {
      {"nan_to_num", "the identity on finite values; its jvp at a non-finite x is 0 (JAX), not a linear map"},
      {"bitcast_convert", "the identity only when the target is the operand's own dtype"},
      {"nextafter", "within one ulp of its first operand"},
      {"postfix_eval",
       "linear in x or consts for some programs (one that only reads a variable) and not others: "
       "the codes, which are data, decide"},
  };
  return m;
}

Tensor random_tensor(const TensorType& t, std::mt19937_64& rng) {
  std::vector<int64_t> shape = t.shape.to_ints();
  if (t.dtype == DType::F64) {
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<double> v(static_cast<size_t>(shape_numel(shape)));
    for (double& x : v) x = u(rng);
    return Tensor::from_vector(v, shape);
  }
  if (t.dtype == DType::Bool) {
    std::vector<uint8_t> v(static_cast<size_t>(shape_numel(shape)));
    for (uint8_t& x : v) x = static_cast<uint8_t>(rng() % 2);
    Tensor r = Tensor::zeros(shape, DType::Bool);
    std::copy(v.begin(), v.end(), static_cast<uint8_t*>(r.raw_data()));
    return r;
  }
  // Indices and starts: ones, which are in range for every sample.
  return Tensor::full(shape, 1.0, t.dtype);
}

// x + 2 y, elementwise, for float64 tensors.
Tensor axpy(const Tensor& x, const Tensor& y) {
  std::vector<double> v = x.to_vector<double>();
  std::vector<double> w = y.to_vector<double>();
  for (size_t i = 0; i < v.size(); ++i) v[i] += 2 * w[i];
  return Tensor::from_vector(v, x.shape());
}

struct Runner {
  const OpDef& def;
  OpSample sample;
  Executable exe;
  std::vector<TensorType> out;

  Runner(const OpDef& d, OpSample s)
      : def(d), sample(std::move(s)), exe(load(compile(lower(testing::one_op_graph(d, sample))))) {
    out = infer_result_types(def, sample.operands, sample.attrs);
  }
  std::vector<Tensor> run(const std::vector<Tensor>& in) {
    std::vector<Tensor> r(out.size());
    exe.execute(in, r);
    return r;
  }
  bool has_float_result() const {
    for (const TensorType& t : out)
      if (is_float(t.dtype)) return true;
    return false;
  }
};

// Whether f(x + 2y) == f(x) + 2 f(y) on every float result, where x and y differ from `base`
// in the operands `vary` only, for one random draw.
bool linear_once(Runner& r, const std::vector<Tensor>& base, const std::set<size_t>& vary, std::mt19937_64& rng) {
  std::vector<Tensor> x = base, y = base, xy = base;
  for (size_t i : vary) {
    x[i] = random_tensor(r.sample.operands[i], rng);
    y[i] = random_tensor(r.sample.operands[i], rng);
    xy[i] = axpy(x[i], y[i]);
  }
  std::vector<Tensor> fx = r.run(x), fy = r.run(y), fxy = r.run(xy);
  for (size_t k = 0; k < fx.size(); ++k) {
    if (!is_float(fx[k].dtype())) continue;
    double tol = fx[k].dtype() == DType::F64 ? 1e-9 : 1e-5;
    for (int64_t e = 0; e < fx[k].numel(); ++e) {
      double want = fx[k].get_as_double(e) + 2 * fy[k].get_as_double(e);
      double have = fxy[k].get_as_double(e);
      if (!(std::fabs(have - want) <= tol * (1 + std::fabs(have) + std::fabs(want)))) return false;
    }
  }
  return true;
}

// The samples are small (a few elements), so a nonlinear op can pass one draw by chance
// (abs when x and y share their signs); it passes all of them with negligible odds.
bool linear_in_operands(Runner& r, const std::vector<Tensor>& base, const std::set<size_t>& vary,
                        std::mt19937_64& rng) {
  for (int draw = 0; draw < 12; ++draw)
    if (!linear_once(r, base, vary, rng)) return false;
  return true;
}

std::set<size_t> expand(const std::vector<int>& list, size_t n) {
  std::set<size_t> s;
  for (size_t i = 0; i < n; ++i)
    if (linear_in(list, static_cast<int>(i))) s.insert(i);
  return s;
}

TEST(Linearity, ListedOperandsAreLinearAndUnlistedFloatOperandsAreNot) {
  std::mt19937_64 rng(20240611);
  int listed = 0, unlisted = 0;
  for (const OpDef* d : all_ops()) {
    if (d->max_operands == 0 || d->category == OpCategory::ControlFlow || d->category == OpCategory::Terminator ||
        d->category == OpCategory::Extension)  // runs on the interpreter, which runs no extension op
      continue;
    if (!dtype_in_class(DType::F64, d->operand_dtypes)) continue;
    SCOPED_TRACE(d->name);
    Runner r(*d, d->sample(DType::F64));
    if (!r.has_float_result()) continue;
    size_t n = r.sample.operands.size();
    std::vector<Tensor> base;
    for (const TensorType& t : r.sample.operands) base.push_back(random_tensor(t, rng));

    std::set<size_t> joint = expand(d->linear_operands, n);
    for (size_t i : joint)
      EXPECT_EQ(r.sample.operands[i].dtype, DType::F64) << "linear operand " << i << " is not float";
    if (!joint.empty()) {
      EXPECT_TRUE(linear_in_operands(r, base, joint, rng)) << "not jointly linear in linear_operands";
      ++listed;
    }
    std::set<size_t> each = expand(d->linear_each, n);
    for (size_t i = 0; i < n; ++i) {
      if (r.sample.operands[i].dtype != DType::F64) continue;
      if (joint.count(i)) continue;  // linear jointly with the others, not alone (add(x, c) is affine)
      bool linear = linear_in_operands(r, base, {i}, rng);
      if (each.count(i)) {
        EXPECT_TRUE(linear) << "listed in linear_each but not linear in operand " << i;
        ++listed;
      } else if (!exempt().count(d->name)) {
        EXPECT_FALSE(linear) << "linear in operand " << i << " but not listed in linear_each";
        ++unlisted;
      }
    }
  }
  EXPECT_GT(listed, 25);
  EXPECT_GT(unlisted, 60);
}

}  // namespace
}  // namespace evoxc
