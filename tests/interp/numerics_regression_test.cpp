// Regression cases of issue 7's wrong answers (fmod family, power, domain limits, erf_inv, gelu, shifts, iota).
// Every expected value is exact: numpy's result where numpy has the op (its float16 and
// bfloat16 arithmetic runs in float32, as ours), else mpmath at 200 bits rounded once to the
// dtype. Each float case runs on every instruction set the machine has.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "evoxc/core/half.h"
#include "evoxc/ops/op_def.h"
#include "interp/elementwise.h"
#include "interp/graph_util.h"
#include "interp/vecmath.h"

namespace evoxc::interp {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr float kInfF = std::numeric_limits<float>::infinity();

template <typename T>
constexpr int slot() {
  if constexpr (std::is_same_v<T, float>) return 0;
  if constexpr (std::is_same_v<T, double>) return 1;
  if constexpr (std::is_same_v<T, float16>) return 2;
  return 3;
}

// Runs a binary function with `a` and `b` repeated to 37 elements (full vectors and a tail on
// every ISA), checking every copy gives the same bits.
template <typename T>
std::vector<T> bin(const vecmath::Table& t, vecmath::Fn2 fn, std::vector<T> a, std::vector<T> b) {
  size_t m = a.size();
  std::vector<T> ra, rb;
  for (int k = 0; k < 37; ++k) {
    ra.push_back(a[k % m]);
    rb.push_back(b[k % m]);
  }
  std::vector<T> out(ra.size());
  t.binary[static_cast<int>(fn)][slot<T>()](ra.data(), 1, rb.data(), 1, out.data(), static_cast<int64_t>(out.size()));
  for (size_t k = m; k < out.size(); ++k) {
    EXPECT_EQ(std::memcmp(&out[k], &out[k % m], sizeof(T)), 0) << "lane " << k;
  }
  out.resize(m);
  return out;
}
template <typename T>
std::vector<T> un(const vecmath::Table& t, vecmath::Fn1 fn, std::vector<T> x) {
  size_t m = x.size();
  std::vector<T> rx;
  for (int k = 0; k < 37; ++k) rx.push_back(x[k % m]);
  std::vector<T> out(rx.size());
  t.unary[static_cast<int>(fn)][slot<T>()](rx.data(), out.data(), static_cast<int64_t>(out.size()), UnaryParams{});
  for (size_t k = m; k < out.size(); ++k) EXPECT_EQ(std::memcmp(&out[k], &out[k % m], sizeof(T)), 0) << "lane " << k;
  out.resize(m);
  return out;
}

template <typename T>
std::vector<double> d(const std::vector<T>& v) {
  std::vector<double> r;
  for (T x : v) r.push_back(static_cast<double>(static_cast<float>(x)));
  return r;
}

// Bitwise equality that also tells +0 from -0.
#define EXPECT_SAME(got, want)                                                                                    \
  do {                                                                                                            \
    std::vector<double> g_ = (got), w_ = (want);                                                                  \
    ASSERT_EQ(g_.size(), w_.size());                                                                              \
    for (size_t i_ = 0; i_ < g_.size(); ++i_)                                                                     \
      EXPECT_TRUE(std::bit_cast<uint64_t>(g_[i_]) == std::bit_cast<uint64_t>(w_[i_]) ||                           \
                  (g_[i_] != g_[i_] && w_[i_] != w_[i_]))                                                         \
          << isa << " [" << i_ << "] got " << std::hexfloat << g_[i_] << " want " << w_[i_] << std::defaultfloat; \
  } while (0)

// Within `ulps` ULP of the exact result rounded to a format of `prec` significand bits (both
// infinities of the same sign count as equal): the functions are not correctly rounded.
#define EXPECT_NEAR_ULPS(got, want, prec, ulps)                                                                   \
  do {                                                                                                            \
    std::vector<double> g_ = (got), w_ = (want);                                                                  \
    ASSERT_EQ(g_.size(), w_.size());                                                                              \
    for (size_t i_ = 0; i_ < g_.size(); ++i_) {                                                                   \
      if (std::isinf(w_[i_])) {                                                                                   \
        EXPECT_EQ(g_[i_], w_[i_]) << isa << " [" << i_ << "]";                                                    \
        continue;                                                                                                 \
      }                                                                                                           \
      double ulp_ = std::ldexp(1.0, std::ilogb(w_[i_]) - (prec) + 1);                                             \
      EXPECT_LE(std::fabs(g_[i_] - w_[i_]) / ulp_, (ulps))                                                        \
          << isa << " [" << i_ << "] got " << std::hexfloat << g_[i_] << " want " << w_[i_] << std::defaultfloat; \
    }                                                                                                             \
  } while (0)

using vecmath::Fn1;
using vecmath::Fn2;

// numpy: np.fmod / np.remainder / np.floor_divide on float32 scalars.
TEST(NumericsRegression, FmodFamilyWhenTheQuotientOverflowsFloat32) {
  std::vector<float> a = {3.4028235e38f, 1.0f, -3e38f, 1e-40f, 7.5f};
  std::vector<float> b = {-0.1f, 1e-45f, 1e-30f, 3e-45f, -2.0f};
  for (auto& [isa, t] : testing::vecmath_tables()) {
    EXPECT_SAME(d(bin(*t, Fn2::Fmod, a, b)), (std::vector<double>{0.05000002f, 0.0, -6.1401355e-31f, 0.0, 1.5}));
    EXPECT_SAME(d(bin(*t, Fn2::Remainder, a, b)), (std::vector<double>{-0.049999982f, 0.0, 3.8598645e-31f, 0.0, -0.5}));
    EXPECT_SAME(d(bin(*t, Fn2::FloorDivide, a, b)), (std::vector<double>{-kInf, kInf, -kInf, 35681.0, -4.0}));
  }
}

// numpy on float64; hex values from float.hex() of numpy's results.
TEST(NumericsRegression, FmodFamilyWhenTheQuotientOverflowsFloat64) {
  std::vector<double> a = {1e300, -1.7976931348623157e308, 1.0, 1e308};
  std::vector<double> b = {1e-10, 3.0, 5e-324, -1e-300};
  for (auto& [isa, t] : testing::vecmath_tables()) {
    EXPECT_SAME(bin(*t, Fn2::Fmod, a, b),
                (std::vector<double>{0x1.e1bb03961d662p-35, -2.0, 0.0, 0x1.9e2240f9c9620p-999}));
    EXPECT_SAME(bin(*t, Fn2::Remainder, a, b),
                (std::vector<double>{0x1.e1bb03961d662p-35, 1.0, 0.0, -0x1.deb2d7e239ba2p-998}));
    EXPECT_SAME(bin(*t, Fn2::FloorDivide, a, b), (std::vector<double>{kInf, -5.992310449541053e+307, kInf, -kInf}));
  }
}

// numpy float16 (computed in float32 and rounded, as ours); bfloat16 from float32 numpy
// results rounded to nearest even bfloat16.
TEST(NumericsRegression, FmodFamilyOn16BitFloats) {
  std::vector<float16> a = {float16(65504.0f), float16(-1000.0f)};
  std::vector<float16> b = {float16(6e-8f), float16(0.1f)};
  std::vector<bfloat16> ab = {bfloat16(3.3895314e38f)};
  std::vector<bfloat16> bb = {bfloat16(-0.1f)};
  for (auto& [isa, t] : testing::vecmath_tables()) {
    EXPECT_SAME(d(bin(*t, Fn2::Fmod, a, b)), (std::vector<double>{0.0, static_cast<float>(float16(-0.0442f))}));
    EXPECT_SAME(d(bin(*t, Fn2::Remainder, a, b)), (std::vector<double>{0.0, static_cast<float>(float16(0.0558f))}));
    EXPECT_SAME(d(bin(*t, Fn2::FloorDivide, a, b)), (std::vector<double>{kInf, -10000.0}));
    EXPECT_SAME(d(bin(*t, Fn2::Fmod, ab, bb)), (std::vector<double>{0.05126953125}));
    EXPECT_SAME(d(bin(*t, Fn2::Remainder, ab, bb)), (std::vector<double>{-0.048828125}));
    EXPECT_SAME(d(bin(*t, Fn2::FloorDivide, ab, bb)), (std::vector<double>{-kInf}));
  }
}

// numpy: np.power at the top of the range stays finite.
TEST(NumericsRegression, PowerJustBelowTheLargestFiniteValue) {
  for (auto& [isa, t] : testing::vecmath_tables()) {
    EXPECT_SAME(bin(*t, Fn2::Pow, std::vector<double>{1.7976931348623157e308, 2.0, 10.0},
                    std::vector<double>{1.0, 1023.9999, 309.0}),
                (std::vector<double>{1.7976931348623157e308, 0x1.fff6ea43bd988p+1023, kInf}));
    EXPECT_SAME(d(bin(*t, Fn2::Pow, std::vector<float>{3.4028235e38f, 2.0f}, std::vector<float>{1.0f, 128.0f})),
                (std::vector<double>{3.4028235e38f, kInf}));
  }
}

// mpmath at 200 bits, rounded once; within the accuracy table's bound for these tails (2 ULP).
TEST(NumericsRegression, ExpFamilyUpToTheResultsOwnOverflow) {
  for (auto& [isa, t] : testing::vecmath_tables()) {
    std::vector<float> xf = {89.4f, -89.4f, 89.5f};
    EXPECT_NEAR_ULPS(d(un(*t, Fn1::Sinh, xf)), (std::vector<double>{3.3488627e38f, -3.3488627e38f, kInfF}), 24, 2);
    EXPECT_NEAR_ULPS(d(un(*t, Fn1::Cosh, xf)), (std::vector<double>{3.3488627e38f, 3.3488627e38f, kInfF}), 24, 2);
    std::vector<double> xd = {710.4, -710.4, 710.5};
    EXPECT_NEAR_ULPS(un(*t, Fn1::Sinh, xd),
                     (std::vector<double>{0x1.da98a7371610bp+1023, -0x1.da98a7371610bp+1023, kInf}), 53, 2);
    EXPECT_NEAR_ULPS(un(*t, Fn1::Cosh, xd),
                     (std::vector<double>{0x1.da98a7371610bp+1023, 0x1.da98a7371610bp+1023, kInf}), 53, 2);
  }
}

// mpmath at 200 bits, rounded once; within 2 ULP (the docs' accuracy table).
TEST(NumericsRegression, LogFamilyOfHugeArguments) {
  for (auto& [isa, t] : testing::vecmath_tables()) {
    EXPECT_NEAR_ULPS(d(un(*t, Fn1::Log1p, std::vector<float>{3e38f, kInfF})), (std::vector<double>{88.59685f, kInf}),
                     24, 2);
    EXPECT_NEAR_ULPS(un(*t, Fn1::Log1p, std::vector<double>{1.7e308}), (std::vector<double>{0x1.62dd08fdc6f88p+9}), 53,
                     2);
    EXPECT_NEAR_ULPS(d(un(*t, Fn1::Asinh, std::vector<float>{0x1p64f, -3e38f, -kInfF})),
                     (std::vector<double>{45.054565f, -89.28999f, -kInf}), 24, 2);
    EXPECT_NEAR_ULPS(un(*t, Fn1::Asinh, std::vector<double>{0x1p512, -1.7e308}),
                     (std::vector<double>{0x1.6395a2079b70cp+8, -0x1.6335c209c2e17p+9}), 53, 2);
    EXPECT_NEAR_ULPS(d(un(*t, Fn1::Acosh, std::vector<float>{0x1p64f})), (std::vector<double>{45.054565f}), 24, 2);
    EXPECT_NEAR_ULPS(un(*t, Fn1::Acosh, std::vector<double>{1.7e308}), (std::vector<double>{0x1.6335c209c2e17p+9}), 53,
                     2);
  }
}

// mpmath: erfinv(1 - 2^-53) = 5.8635847487551676 (0x1.7744f8f74e94ap+2).
TEST(NumericsRegression, ErfInvNearOne) {
  UnaryParams p;
  UnaryFn f = unary_kernel(get_op("erf_inv"), DType::F64, {}, &p);
  ASSERT_NE(f, nullptr);
  std::vector<double> x = {1 - 0x1p-53, -1 + 0x1p-53}, y(2);
  f(x.data(), y.data(), 2, p);
  EXPECT_EQ(y[0], 0x1.7744f8f74e94ap+2);
  EXPECT_EQ(y[1], -0x1.7744f8f74e94ap+2);
}

// mpmath at 300 bits: digamma next to its positive zero 1.46163214496836234126... keeps
// relative accuracy (it was off by ~1e16 ULP there); within 3 ULP (the accuracy table).
TEST(NumericsRegression, DigammaNearItsPositiveZero) {
  const std::string isa = "scalar";
  UnaryParams p;
  UnaryFn f = unary_kernel(get_op("digamma"), DType::F64, {}, &p);
  ASSERT_NE(f, nullptr);
  std::vector<double> x = {1.4616321449683622, 1.4616321449683625, 1.0, 2.0316958243360492}, y(4);
  f(x.data(), y.data(), 4, p);
  EXPECT_NEAR_ULPS(
      y,
      (std::vector<double>{-0x1.aa2d9b3ce29e0p-54, 0x1.1a5beef0723bbp-53, -0x1.2788cfc6fb619p-1, 0x1.c5a883c5152efp-2}),
      53, 3);
}

// mpmath: gelu(-12) = -6 erfc(12/sqrt2) = -2.1317785e-32 rounded to float32; within 4 ULP.
TEST(NumericsRegression, GeluNegativeTailFloat32) {
  const float want = -2.1317785e-32f;
  for (auto& [isa, t] : testing::vecmath_tables()) {
    for (Fn1 fn : {Fn1::GeluErf}) {
      float got = un(*t, fn, std::vector<float>{-12.0f})[0];
      int64_t ulps = std::abs(static_cast<int64_t>(std::bit_cast<int32_t>(got)) - std::bit_cast<int32_t>(want));
      EXPECT_LE(ulps, 4) << isa << " got " << got;
    }
  }
}

// StableHLO/JAX: an unsigned operand's bits are shifted as the signed type of its width.
TEST(NumericsRegression, ShiftRightArithmeticSignFillsUnsigned) {
  auto run = [](auto a, auto b) {
    using T = decltype(a);
    BinaryFn f = binary_kernel(get_op("shift_right_arithmetic"), dtype_of_v<T>);
    T out{};
    f(&a, 1, &b, 1, &out, 1);
    return out;
  };
  EXPECT_EQ(run(uint8_t{0x80}, uint8_t{1}), uint8_t{0xC0});
  EXPECT_EQ(run(uint8_t{0x80}, uint8_t{8}), uint8_t{0xFF});
  EXPECT_EQ(run(uint8_t{0x40}, uint8_t{8}), uint8_t{0});
  EXPECT_EQ(run(uint16_t{0x8001}, uint16_t{4}), uint16_t{0xF800});
  EXPECT_EQ(run(uint32_t{0xF0000000u}, uint32_t{28}), uint32_t{0xFFFFFFFFu});
  EXPECT_EQ(run(uint64_t{1} << 63, uint64_t{63}), ~uint64_t{0});
  EXPECT_EQ(run(uint64_t{0x7FFF}, uint64_t{3}), uint64_t{0xFFF});
}

// numpy: np.arange(5).astype(bool) = [False, True, True, True, True].
TEST(NumericsRegression, IotaOfBoolIsTheCountConverted) {
  using namespace evoxc::testing;
  GraphBuilder b;
  AttrMap attrs = {{"shape", Shape{5}}, {"dimension", int64_t{0}}, {"dtype", DType::Bool}};
  Value* v = b.op("iota", {}, tt(DType::Bool, S({5})), attrs);
  Graph g = b.build({v});
  std::vector<Tensor> out = run_graph(g, {});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(to_doubles(out[0]), (std::vector<double>{0, 1, 1, 1, 1}));
}

}  // namespace
}  // namespace evoxc::interp
