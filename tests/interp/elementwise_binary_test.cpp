// Tests of the binary, select, clamp and convert kernels: every integer rule of
// docs/semantics.md, NaN handling, broadcasting steps, in place, tails and unsupported combos.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "evoxc/ops/op_def.h"
#include "interp/elementwise.h"

namespace evoxc::interp {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

template <typename T, typename R = T>
std::vector<R> bin(const char* op, const std::vector<T>& a, const std::vector<T>& b) {
  BinaryFn f = binary_kernel(get_op(op), dtype_of_v<T>);
  EXPECT_NE(f, nullptr) << op;
  std::vector<R> out(a.size());
  if (f) f(a.data(), 1, b.data(), 1, out.data(), static_cast<int64_t>(a.size()));
  return out;
}

template <typename T>
void check_int_rules() {
  using L = std::numeric_limits<T>;
  const T mn = L::min(), mx = L::max();
  const T all_ones = static_cast<T>(~std::make_unsigned_t<T>(0));
  EXPECT_EQ(bin<T>("add", {mx, T(1)}, {T(1), T(2)}), (std::vector<T>{mn, T(3)}));
  EXPECT_EQ(bin<T>("subtract", {mn}, {T(1)}), (std::vector<T>{mx}));
  EXPECT_EQ(bin<T>("multiply", {mx}, {T(2)}), (std::vector<T>{static_cast<T>(std::make_unsigned_t<T>(mx) * 2u)}));
  EXPECT_EQ(bin<T>("divide", {T(7), T(7)}, {T(0), T(2)}), (std::vector<T>{all_ones, T(3)}));
  EXPECT_EQ(bin<T>("floor_divide", {T(7)}, {T(0)}), (std::vector<T>{all_ones}));
  EXPECT_EQ(bin<T>("remainder", {T(7), mx}, {T(0), T(0)}), (std::vector<T>{T(7), mx}));
  EXPECT_EQ(bin<T>("fmod", {T(7)}, {T(0)}), (std::vector<T>{T(7)}));
  EXPECT_EQ(bin<T>("power", {T(3), T(2), T(0), T(5)}, {T(4), T(sizeof(T) * 8), T(0), T(1)}),
            (std::vector<T>{T(81), T(0), T(1), T(5)}));
  const T w = static_cast<T>(sizeof(T) * 8);
  EXPECT_EQ(bin<T>("shift_left", {T(1), T(1), T(3)}, {w, T(w - 1), T(1)}),
            (std::vector<T>{T(0), static_cast<T>(std::make_unsigned_t<T>(1) << (w - 1)), T(6)}));
  EXPECT_EQ(bin<T>("shift_right_logical", {mx, T(8)}, {w, T(2)}), (std::vector<T>{T(0), T(2)}));
  EXPECT_EQ(bin<T>("maximum", {mn, T(3)}, {mx, T(2)}), (std::vector<T>{mx, T(3)}));
  EXPECT_EQ(bin<T>("minimum", {mn, T(3)}, {mx, T(2)}), (std::vector<T>{mn, T(2)}));
  EXPECT_EQ(bin<T>("bitwise_xor", {T(6)}, {T(3)}), (std::vector<T>{T(5)}));
  EXPECT_EQ((bin<T, uint8_t>("less", {mn, T(3)}, {mx, T(3)})), (std::vector<uint8_t>{1, 0}));
  if constexpr (std::is_signed_v<T>) {
    EXPECT_EQ(bin<T>("divide", {mn, T(-7), T(7)}, {T(-1), T(2), T(-2)}), (std::vector<T>{mn, T(-3), T(-3)}));
    EXPECT_EQ(bin<T>("floor_divide", {mn, T(-7), T(7), T(-6)}, {T(-1), T(2), T(-2), T(3)}),
              (std::vector<T>{mn, T(-4), T(-4), T(-2)}));
    EXPECT_EQ(bin<T>("remainder", {mn, T(-7), T(7), T(-6)}, {T(-1), T(2), T(-2), T(3)}),
              (std::vector<T>{T(0), T(1), T(-1), T(0)}));
    EXPECT_EQ(bin<T>("fmod", {mn, T(-7), T(7)}, {T(-1), T(2), T(-2)}), (std::vector<T>{T(0), T(-1), T(1)}));
    EXPECT_EQ(bin<T>("power", {T(1), T(-1), T(-1), T(2), T(-2)}, {T(-5), T(-3), T(-4), T(-1), T(3)}),
              (std::vector<T>{T(1), T(-1), T(1), T(0), T(-8)}));
    EXPECT_EQ(bin<T>("shift_right_arithmetic", {T(-8), T(-8), T(8), T(-1)}, {T(1), w, w, T(-1)}),
              (std::vector<T>{T(-4), T(-1), T(0), T(-1)}));
    EXPECT_EQ(bin<T>("shift_left", {T(1)}, {T(-1)}), (std::vector<T>{T(0)}));
    EXPECT_EQ(bin<T>("shift_right_logical", {T(-1)}, {T(w - 1)}), (std::vector<T>{T(1)}));
  }
  DType t = dtype_of_v<T>;
  for (const char* op : {"atan2", "hypot", "nextafter", "copysign", "logical_and"})
    EXPECT_EQ(binary_kernel(get_op(op), t), nullptr) << op;
}

TEST(ElementwiseBinary, IntegerRulesEveryWidth) {
  check_int_rules<int8_t>();
  check_int_rules<int16_t>();
  check_int_rules<int32_t>();
  check_int_rules<int64_t>();
  check_int_rules<uint8_t>();
  check_int_rules<uint16_t>();
  check_int_rules<uint32_t>();
  check_int_rules<uint64_t>();
}

TEST(ElementwiseBinary, FloatRemainderFloorDivideAndNaN) {
  for (int k = 0; k < 2; ++k) {
    std::vector<double> a = {7.0, -7.0, 7.0, -7.0, 6.0, 1.0, 1.0, -1.0, kInf, 5.0, -0.0};
    std::vector<double> b = {2.0, 2.0, -2.0, -2.0, 3.0, 0.0, kInf, kInf, 3.0, kNaN, 3.0};
    auto rem = bin<double>("remainder", a, b);
    auto fm = bin<double>("fmod", a, b);
    auto fd = bin<double>("floor_divide", a, b);
    std::vector<double> want_rem = {1.0, 1.0, -1.0, -1.0, 0.0, kNaN, 1.0, kInf, kNaN, kNaN, 0.0};
    std::vector<double> want_fm = {1.0, -1.0, 1.0, -1.0, 0.0, kNaN, 1.0, -1.0, kNaN, kNaN, -0.0};
    std::vector<double> want_fd = {3.0, -4.0, -4.0, 3.0, 2.0, kInf, 0.0, -1.0, kNaN, kNaN, -0.0};
    for (size_t i = 0; i < a.size(); ++i) {
      auto same = [](double x, double y) {
        return (std::isnan(x) && std::isnan(y)) || (x == y && std::signbit(x) == std::signbit(y));
      };
      EXPECT_TRUE(same(rem[i], want_rem[i])) << a[i] << " % " << b[i] << " = " << rem[i];
      EXPECT_TRUE(same(fm[i], want_fm[i])) << a[i] << " fmod " << b[i] << " = " << fm[i];
      EXPECT_TRUE(same(fd[i], want_fd[i])) << a[i] << " // " << b[i] << " = " << fd[i];
    }
    auto remf = bin<float>("remainder", {-7.0f, 6.0f}, {2.0f, -3.0f});
    EXPECT_EQ(remf[0], 1.0f);
    EXPECT_TRUE(remf[1] == 0 && std::signbit(remf[1])) << "a zero remainder takes the divisor's sign";
  }
  auto mx = bin<float>("maximum", {NAN, 1.0f, -0.0f, 0.0f}, {1.0f, NAN, 0.0f, -0.0f});
  auto mn = bin<float>("minimum", {NAN, 1.0f, -0.0f, 0.0f}, {1.0f, NAN, 0.0f, -0.0f});
  EXPECT_TRUE(std::isnan(mx[0]) && std::isnan(mx[1]) && std::isnan(mn[0]) && std::isnan(mn[1]));
  EXPECT_FALSE(std::signbit(mx[2]) || std::signbit(mx[3]));
  EXPECT_TRUE(std::signbit(mn[2]) && std::signbit(mn[3]));
  auto pw = bin<double>("power", {2.0, -8.0, 1.0, kNaN, 0.0}, {10.0, 1.0 / 3, kNaN, 0.0, -1.0});
  EXPECT_EQ(pw[0], 1024.0);
  EXPECT_TRUE(std::isnan(pw[1]));
  EXPECT_EQ(pw[2], 1.0);
  EXPECT_EQ(pw[3], 1.0);
  EXPECT_EQ(pw[4], kInf);
  auto eq = bin<double, uint8_t>("equal", {kNaN, 1.0, 0.0}, {kNaN, 1.0, -0.0});
  EXPECT_EQ(eq, (std::vector<uint8_t>{0, 1, 1}));
  auto ne = bin<double, uint8_t>("not_equal", {kNaN}, {kNaN});
  EXPECT_EQ(ne[0], 1);
}

TEST(ElementwiseBinary, FloatOnlyOpsMatchCmath) {
  std::vector<double> a = {1.0, -1.0, 0.0, -0.0, 3.0, kInf, kNaN, 1e-310};
  std::vector<double> b = {2.0, -2.0, -1.0, 1.0, 4.0, 1.0, 1.0, 0.0};
  auto at = bin<double>("atan2", a, b);
  auto hy = bin<double>("hypot", a, b);
  auto cs = bin<double>("copysign", a, b);
  auto na = bin<double>("nextafter", a, b);
  for (size_t i = 0; i < a.size(); ++i) {
    auto near = [](double got, double want, double rel) {
      return (std::isnan(got) && std::isnan(want)) || got == want || std::fabs(got - want) <= rel * std::fabs(want);
    };
    EXPECT_TRUE(near(at[i], std::atan2(a[i], b[i]), 3e-16)) << i;
    EXPECT_TRUE(near(hy[i], std::hypot(a[i], b[i]), 2e-16)) << i;
    EXPECT_TRUE(near(cs[i], std::copysign(a[i], b[i]), 0)) << i;
    EXPECT_TRUE(near(na[i], std::nextafter(a[i], b[i]), 0)) << i;
  }
  // nextafter on 16-bit floats steps one unit of that format.
  std::vector<float16> h1 = {float16(1.0f), float16(0.0f), float16(-0.0f)},
                       h2 = {float16(2.0f), float16(-1.0f), float16(1.0f)};
  std::vector<float16> ho(3);
  binary_kernel(get_op("nextafter"), DType::F16)(h1.data(), 1, h2.data(), 1, ho.data(), 3);
  EXPECT_EQ(ho[0].bits, 0x3c01);
  EXPECT_EQ(ho[1].bits, 0x8001);
  EXPECT_EQ(ho[2].bits, 0x0001);
  std::vector<bfloat16> b1 = {bfloat16(1.0f)}, b2 = {bfloat16(0.0f)}, bo(1);
  binary_kernel(get_op("nextafter"), DType::BF16)(b1.data(), 1, b2.data(), 1, bo.data(), 1);
  EXPECT_EQ(bo[0].bits, 0x3f7f);
}

TEST(ElementwiseBinary, BroadcastStepsInPlaceTailsAndEmpty) {
  for (DType t : {DType::F32, DType::I32}) {
    BinaryFn sub = binary_kernel(get_op("subtract"), t);
    ASSERT_NE(sub, nullptr);
    for (int n : {0, 1, 5, 16, 17, 33}) {
      std::vector<int32_t> ai(n + 1), bi(n + 1);
      std::vector<float> af(n + 1), bf(n + 1);
      for (int i = 0; i < n + 1; ++i) ai[i] = i * 3, bi[i] = i, af[i] = i * 3.0f, bf[i] = static_cast<float>(i);
      void* a = t == DType::F32 ? static_cast<void*>(af.data()) : ai.data();
      void* b = t == DType::F32 ? static_cast<void*>(bf.data()) : bi.data();
      auto get = [&](const void* p, int i) {
        return t == DType::F32 ? static_cast<double>(static_cast<const float*>(p)[i])
                               : static_cast<const int32_t*>(p)[i];
      };
      std::vector<char> out((n + 1) * 4, 0x11);
      for (int as = 0; as < 2; ++as)
        for (int bs = 0; bs < 2; ++bs) {
          sub(a, as, b, bs, out.data(), n);
          for (int i = 0; i < n; ++i) EXPECT_EQ(get(out.data(), i), get(a, as * i) - get(b, bs * i)) << n << as << bs;
          EXPECT_EQ(out[n * 4], 0x11) << "wrote past n";
        }
      sub(a, 1, b, 0, a, n);  // in place: a -= b[0]
      for (int i = 0; i < n; ++i) EXPECT_EQ(get(a, i), 3.0 * i) << "b[0] is 0";
      sub(b, 0, a, 1, a, n);  // a = b[0] - a
      for (int i = 0; i < n; ++i) EXPECT_EQ(get(a, i), -3.0 * i);
    }
  }
}

TEST(ElementwiseBinary, LogicalAndBitwiseOnBool) {
  std::vector<uint8_t> a = {0, 0, 1, 1}, b = {0, 1, 0, 1}, o(4);
  auto run = [&](const char* op) {
    BinaryFn f = binary_kernel(get_op(op), DType::Bool);
    EXPECT_NE(f, nullptr) << op;
    f(a.data(), 1, b.data(), 1, o.data(), 4);
    return o;
  };
  EXPECT_EQ(run("logical_and"), (std::vector<uint8_t>{0, 0, 0, 1}));
  EXPECT_EQ(run("logical_or"), (std::vector<uint8_t>{0, 1, 1, 1}));
  EXPECT_EQ(run("logical_xor"), (std::vector<uint8_t>{0, 1, 1, 0}));
  EXPECT_EQ(run("bitwise_and"), (std::vector<uint8_t>{0, 0, 0, 1}));
  EXPECT_EQ(run("less"), (std::vector<uint8_t>{0, 1, 0, 0}));
  for (const char* op : {"logical_and", "logical_or", "logical_xor"})
    EXPECT_EQ(binary_kernel(get_op(op), DType::F32), nullptr);
  for (const char* op : {"add", "shift_left", "power", "maximum"})
    EXPECT_EQ(binary_kernel(get_op(op), DType::Bool), nullptr) << op;
  EXPECT_EQ(binary_kernel(get_op("bitwise_and"), DType::F32), nullptr);
  EXPECT_EQ(binary_kernel(get_op("shift_left"), DType::F64), nullptr);
}

TEST(ElementwiseBinary, HalfArithmeticRoundsOnce) {
  std::vector<float16> a = {float16(1.0f), float16(65504.0f), float16(0.1f)};
  std::vector<float16> b = {float16(0.000976562f), float16(65504.0f), float16(0.2f)};
  std::vector<float16> o(3);
  binary_kernel(get_op("add"), DType::F16)(a.data(), 1, b.data(), 1, o.data(), 3);
  for (int i = 0; i < 3; ++i) {
    float16 want(static_cast<float>(a[i]) + static_cast<float>(b[i]));
    EXPECT_EQ(o[i].bits, want.bits) << i;
  }
  EXPECT_EQ(o[1].bits, 0x7c00);
}

TEST(ElementwiseTernary, SelectAndClamp) {
  std::vector<uint8_t> p = {1, 0, 1, 0, 1};
  std::vector<double> x = {1, 2, 3, 4, 5}, y = {-1, -2, -3, -4, -5}, o(5);
  TernaryFn sel = select_kernel(DType::F64);
  sel(p.data(), 1, x.data(), 1, y.data(), 1, o.data(), 5);
  EXPECT_EQ(o, (std::vector<double>{1, -2, 3, -4, 5}));
  sel(p.data(), 1, x.data(), 0, y.data(), 1, o.data(), 5);
  EXPECT_EQ(o, (std::vector<double>{1, -2, 1, -4, 1}));
  sel(p.data(), 0, x.data(), 1, y.data(), 0, o.data(), 5);
  EXPECT_EQ(o, (std::vector<double>{1, 2, 3, 4, 5}));
  for (DType t : {DType::Bool, DType::I8, DType::F16, DType::BF16, DType::U64}) EXPECT_NE(select_kernel(t), nullptr);

  TernaryFn cl = clamp_kernel(DType::F32);
  std::vector<float> cx = {-5, 0.5f, 5, NAN, 1}, lo = {0, 0, 0, 0, NAN}, hi = {1}, co(5);
  cl(cx.data(), 1, lo.data(), 1, hi.data(), 0, co.data(), 5);
  EXPECT_EQ(co[0], 0.0f);
  EXPECT_EQ(co[1], 0.5f);
  EXPECT_EQ(co[2], 1.0f);
  EXPECT_TRUE(std::isnan(co[3]));
  EXPECT_TRUE(std::isnan(co[4]));
  std::vector<int8_t> ix = {-128, 0, 127}, ilo = {-10}, ihi = {10}, io(3);
  clamp_kernel(DType::I8)(ix.data(), 1, ilo.data(), 0, ihi.data(), 0, io.data(), 3);
  EXPECT_EQ(io, (std::vector<int8_t>{-10, 0, 10}));
  EXPECT_EQ(clamp_kernel(DType::Bool), nullptr);
}

template <typename F, typename T>
std::vector<T> cvt(const std::vector<F>& in) {
  UnaryFn f = convert_kernel(dtype_of_v<F>, dtype_of_v<T>);
  std::vector<T> out(in.size());
  f(in.data(), out.data(), static_cast<int64_t>(in.size()), {});
  return out;
}

TEST(ElementwiseConvert, SaturationRoundingAndBool) {
  std::vector<float> f = {NAN, INFINITY, -INFINITY, 1e10f, -1e10f, 2.9f, -2.9f, 127.5f, -128.9f};
  EXPECT_EQ((cvt<float, int8_t>(f)), (std::vector<int8_t>{0, 127, -128, 127, -128, 2, -2, 127, -128}));
  EXPECT_EQ((cvt<float, uint8_t>(f)), (std::vector<uint8_t>{0, 255, 0, 255, 0, 2, 0, 127, 0}));
  EXPECT_EQ((cvt<float, int32_t>({2147483648.0f, -2147483648.0f, 2147483520.0f})),
            (std::vector<int32_t>{2147483647, -2147483647 - 1, 2147483520}));
  EXPECT_EQ((cvt<double, uint64_t>({1.8446744073709552e19, 1.8446744073709550e19, -1.0, kNaN})),
            (std::vector<uint64_t>{18446744073709551615ull, 18446744073709549568ull, 0, 0}));
  EXPECT_EQ((cvt<double, int64_t>({9.3e18, -9.3e18})),
            (std::vector<int64_t>{std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()}));
  EXPECT_EQ((cvt<int32_t, int8_t>({300, -129, 255})), (std::vector<int8_t>{44, 127, -1}));
  EXPECT_EQ((cvt<int64_t, uint16_t>({-1, 65536})), (std::vector<uint16_t>{65535, 0}));
  {
    double d[4] = {kNaN, -0.0, 1e-320, -kInf};
    uint8_t o[4];
    convert_kernel(DType::F64, DType::Bool)(d, o, 4, {});
    EXPECT_EQ(std::vector<uint8_t>(o, o + 4), (std::vector<uint8_t>{1, 0, 1, 1}));
    float16 h2[2] = {float16(0.0f), float16(NAN)};
    convert_kernel(DType::F16, DType::Bool)(h2, o, 2, {});
    EXPECT_EQ(o[0], 0);
    EXPECT_EQ(o[1], 1);
    uint8_t bools[2] = {1, 0};
    float fo[2];
    int64_t io[2];
    convert_kernel(DType::Bool, DType::F32)(bools, fo, 2, {});
    convert_kernel(DType::Bool, DType::I64)(bools, io, 2, {});
    EXPECT_EQ(fo[0], 1.0f);
    EXPECT_EQ(fo[1], 0.0f);
    EXPECT_EQ(io[0], 1);
    EXPECT_EQ(io[1], 0);
  }
  // double -> float16 must round once: 1 + 2^-11 + 2^-40 is just above a tie, so it rounds up,
  // while a float intermediate would make it an exact tie and round to even (down).
  auto h = cvt<double, float16>({1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40), 1e6, -1e-10, 65520.0, 65519.0});
  EXPECT_EQ(h[0].bits, 0x3c01);
  EXPECT_EQ(h[1].bits, 0x7c00);
  EXPECT_EQ(h[2].bits, 0x8000);
  EXPECT_EQ(h[3].bits, 0x7c00);
  EXPECT_EQ(h[4].bits, 0x7bff);
  auto bf = cvt<double, bfloat16>({1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40), 1e300});
  EXPECT_EQ(bf[0].bits, 0x3f81);
  EXPECT_EQ(bf[1].bits, 0x7f80);
  // int -> bfloat16 in one rounding: 2^24 + 2^16 + 1 is above the tie at 2^24 + 2^16.
  auto bi = cvt<int32_t, bfloat16>({(1 << 24) + (1 << 16) + 1, -3, 0});
  EXPECT_EQ(static_cast<float>(bi[0]), 16908288.0f);
  EXPECT_EQ(static_cast<float>(bi[1]), -3.0f);
  auto hi = cvt<int64_t, float16>({2049, 2051, 70000, std::numeric_limits<int64_t>::min()});
  EXPECT_EQ(static_cast<float>(hi[0]), 2048.0f);
  EXPECT_EQ(static_cast<float>(hi[1]), 2052.0f);
  EXPECT_EQ(hi[2].bits, 0x7c00);
  EXPECT_EQ(hi[3].bits, 0xfc00);
  auto df = cvt<double, float>({1e300, -1e300, 3.4028235e38, 3.4028235677973366e38, 0.1});
  EXPECT_EQ(df[0], INFINITY);
  EXPECT_EQ(df[1], -INFINITY);
  EXPECT_EQ(df[2], std::numeric_limits<float>::max());
  EXPECT_EQ(df[3], INFINITY) << "an exact tie above the largest float rounds to even: inf";
  EXPECT_EQ(df[4], 0.1f);
  auto u64 = cvt<uint64_t, float>({18446744073709551615ull});
  EXPECT_EQ(u64[0], 18446744073709551616.0f);
  // Every float16 survives a trip through float32 and float64.
  std::vector<float16> all(65536);
  for (int i = 0; i < 65536; ++i) all[i] = float16::from_bits(static_cast<uint16_t>(i));
  auto back = cvt<double, float16>(cvt<float16, double>(all));
  for (int i = 0; i < 65536; ++i) {
    bool nan = (i & 0x7c00) == 0x7c00 && (i & 0x3ff);
    if (!nan) {
      EXPECT_EQ(back[i].bits, i) << i;
    }
  }
  auto same = cvt<int16_t, int16_t>({1, -2});
  EXPECT_EQ(same, (std::vector<int16_t>{1, -2}));
  for (DType a : {DType::Bool, DType::I8, DType::U64, DType::F16, DType::BF16, DType::F64}) {
    for (DType b : {DType::Bool, DType::I32, DType::U8, DType::F16, DType::BF16, DType::F32})
      EXPECT_NE(convert_kernel(a, b), nullptr);
  }
}

}  // namespace
}  // namespace evoxc::interp
