// Interpreter conv kernel against a direct double-precision loop written here: every numeric dtype, 1-d/2-d/3-d,
// strides, padding (negative too), lhs and rhs dilation, feature groups, zero-size dims and symbolic extents.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <iostream>

#include "evoxc/interp/interp.h"
#include "evoxc/ops/op_def.h"
#include "interp/graph_util.h"

namespace evoxc::testing {
namespace {

using Ints = std::vector<int64_t>;

struct ConvCase {
  Ints xs, ws;  // (N, C, spatial...), (O, C/G, window...)
  Ints strides, padding, ld, rd;
  int64_t groups = 1;
};

AttrMap conv_attrs(const ConvCase& c) {
  return {{"window_strides", c.strides},
          {"padding", c.padding},
          {"lhs_dilation", c.ld},
          {"rhs_dilation", c.rd},
          {"feature_group_count", c.groups}};
}

int64_t numel(const Ints& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// The result shape by XLA's formula, written out independently of the op's inference.
Ints out_shape(const ConvCase& c) {
  Ints o = {c.xs[0], c.ws[0]};
  for (size_t d = 0; d + 2 < c.xs.size(); ++d) {
    int64_t in = c.xs[d + 2] == 0 ? 0 : (c.xs[d + 2] - 1) * c.ld[d] + 1;
    int64_t k = c.ws[d + 2] == 0 ? 0 : (c.ws[d + 2] - 1) * c.rd[d] + 1;
    int64_t b = in + c.padding[2 * d] + c.padding[2 * d + 1];
    o.push_back(k > b ? 0 : (b - k) / c.strides[d] + 1);
  }
  return o;
}

// out[n, o, p...] = sum over c < C/G and window positions k of x[n, g*C/G + c, i...] * w[o, c, k...], where
// the lhs-dilated, padded coordinate p*s + k*rd - low must land on a real lhs element (a multiple of ld).
std::vector<double> reference(const ConvCase& c, const std::vector<double>& x, const std::vector<double>& w) {
  Ints os = out_shape(c);
  size_t n = c.xs.size() - 2;
  int64_t cg = c.ws[1], og = c.ws[0] / c.groups;
  std::vector<double> out(static_cast<size_t>(numel(os)), 0.0);
  Ints oidx(os.size()), kidx(n);
  for (int64_t e = 0; e < numel(os); ++e) {
    int64_t q = e;
    for (size_t d = os.size(); d-- > 0;) {
      oidx[d] = q % os[d];
      q /= os[d];
    }
    int64_t g = oidx[1] / og;
    double acc = 0;
    for (int64_t ch = 0; ch < cg; ++ch)
      for (int64_t kk = 0; kk < numel(Ints(c.ws.begin() + 2, c.ws.end())); ++kk) {
        int64_t r = kk;
        for (size_t d = n; d-- > 0;) {
          kidx[d] = r % c.ws[d + 2];
          r /= c.ws[d + 2];
        }
        int64_t xoff = c.xs[0] == 0 ? 0 : oidx[0] * c.xs[1] + g * cg + ch;
        bool ok = true;
        for (size_t d = 0; d < n && ok; ++d) {
          int64_t p = oidx[d + 2] * c.strides[d] + kidx[d] * c.rd[d] - c.padding[2 * d];
          ok = p >= 0 && p % c.ld[d] == 0 && p / c.ld[d] < c.xs[d + 2];
          xoff = xoff * c.xs[d + 2] + (ok ? p / c.ld[d] : 0);
        }
        if (!ok) continue;
        int64_t woff = oidx[1] * cg + ch;
        for (size_t d = 0; d < n; ++d) woff = woff * c.ws[d + 2] + kidx[d];
        acc += x[static_cast<size_t>(xoff)] * w[static_cast<size_t>(woff)];
      }
    out[static_cast<size_t>(e)] = acc;
  }
  return out;
}

Tensor run_conv(const ConvCase& c, const Tensor& x, const Tensor& w) {
  GraphBuilder b;
  Value* xi = b.input(x.dtype(), S(x.shape()));
  Value* wi = b.input(w.dtype(), S(w.shape()));
  Value* r = b.op("conv", {xi, wi}, tt(x.dtype(), S(out_shape(c))), conv_attrs(c));
  return run_graph(b.build({r}), {x, w})[0];
}

void check_case(const ConvCase& c, const std::string& what) {
  for (DType t : numeric_dtypes()) {
    SCOPED_TRACE(what + " on " + std::string(dtype_name(t)));
    Tensor x = make_tensor(t, c.xs, sample_values(t, numel(c.xs), 11));
    Tensor w = make_tensor(t, c.ws, sample_values(t, numel(c.ws), 23));
    std::vector<double> want = reference(c, to_doubles(x), to_doubles(w));
    Tensor r = run_conv(c, x, w);
    ASSERT_EQ(r.shape(), out_shape(c));
    std::vector<double> got = to_doubles(r);
    if (is_float(t)) {
      for (size_t i = 0; i < want.size(); ++i)
        ASSERT_NEAR(got[i], want[i], tolerance(t, std::fabs(want[i]) + 16.0)) << "element " << i;
    } else {
      // Integer sums wrap in the dtype: convert the exact sum the same way make_tensor does.
      EXPECT_EQ(got, to_doubles(make_tensor(t, out_shape(c), want)));
    }
  }
}

TEST(InterpConv, TwoDimensionalPlainStridedPaddedAndDilated) {
  check_case({{2, 3, 6, 5}, {4, 3, 3, 2}, {1, 1}, {0, 0, 0, 0}, {1, 1}, {1, 1}}, "valid");
  check_case({{2, 3, 6, 5}, {4, 3, 3, 3}, {2, 1}, {1, 1, 1, 1}, {1, 1}, {1, 1}}, "strided same-ish");
  check_case({{1, 2, 7, 7}, {3, 2, 3, 3}, {1, 2}, {2, 0, 1, 3}, {1, 1}, {2, 2}}, "rhs dilated");
  check_case({{1, 2, 4, 3}, {2, 2, 2, 2}, {1, 1}, {1, 1, 0, 1}, {2, 3}, {1, 1}}, "lhs dilated");
  check_case({{1, 2, 6, 6}, {2, 2, 2, 2}, {3, 3}, {0, 0, 0, 0}, {1, 1}, {1, 1}}, "stride larger than window");
}

TEST(InterpConv, NegativePaddingCrops) {
  check_case({{1, 2, 6, 7}, {3, 2, 2, 3}, {1, 1}, {-1, 2, 1, -2}, {1, 1}, {1, 1}}, "negative pads");
  check_case({{1, 1, 8}, {1, 1, 3}, {2}, {-2, -1}, {1}, {2}}, "negative pads 1-d");
}

TEST(InterpConv, GroupedAndDepthwise) {
  check_case({{2, 6, 5, 5}, {4, 3, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, {1, 1}, 2}, "two groups");
  check_case({{1, 4, 5, 4}, {8, 1, 3, 2}, {1, 2}, {0, 0, 1, 0}, {1, 1}, {2, 1}, 4}, "depthwise x2");
}

TEST(InterpConv, OneAndThreeDimensional) {
  check_case({{3, 2, 9}, {4, 2, 3}, {2}, {1, 2}, {1}, {1}}, "1-d");
  check_case({{2, 4, 10}, {2, 2, 4}, {1}, {0, 0}, {1}, {2}, 2}, "1-d grouped dilated");
  check_case({{1, 2, 4, 5, 3}, {3, 2, 2, 3, 2}, {1, 2, 1}, {1, 0, 1, 1, 0, 1}, {1, 1, 1}, {1, 1, 2}}, "3-d");
  check_case({{2, 3, 1, 1}, {5, 3, 1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, {1, 1}}, "1x1 reads the input directly");
}

TEST(InterpConv, ZeroSizeDims) {
  check_case({{0, 2, 4, 4}, {3, 2, 2, 2}, {1, 1}, {0, 0, 0, 0}, {1, 1}, {1, 1}}, "empty batch");
  check_case({{1, 0, 4, 4}, {3, 0, 2, 2}, {1, 1}, {0, 0, 0, 0}, {1, 1}, {1, 1}}, "no features: zeros");
  check_case({{1, 2, 4, 4}, {0, 2, 2, 2}, {1, 1}, {0, 0, 0, 0}, {1, 1}, {1, 1}}, "no outputs");
  check_case({{1, 2, 2, 4}, {3, 2, 3, 2}, {1, 1}, {0, 0, 0, 0}, {1, 1}, {1, 1}}, "window larger than input");
  check_case({{1, 2, 0, 3}, {2, 2, 1, 1}, {1, 1}, {1, 1, 0, 0}, {1, 1}, {1, 1}}, "empty spatial, padded");
}

TEST(InterpConv, NanAndInfPropagate) {
  for (DType t : float_dtypes()) {
    Tensor x = make_tensor(t, {1, 1, 4}, {1, NAN, 2, INFINITY});
    Tensor w = make_tensor(t, {1, 1, 2}, {1, 1});
    ConvCase c{{1, 1, 4}, {1, 1, 2}, {1}, {0, 0}, {1}, {1}};
    auto got = to_doubles(run_conv(c, x, w));
    ASSERT_EQ(got.size(), 3u);
    EXPECT_TRUE(std::isnan(got[0]));
    EXPECT_TRUE(std::isnan(got[1]));
    EXPECT_EQ(got[2], INFINITY);
  }
}

TEST(InterpConv, IntegerSumsWrap) {
  // int8: 100 * 2 + 100 * 2 = 400 wraps to -112; uint8 the same bits, 144.
  for (DType t : {DType::I8, DType::U8}) {
    Tensor x = make_tensor(t, {1, 1, 2}, {100, 100});
    Tensor w = make_tensor(t, {1, 1, 2}, {2, 2});
    auto got = to_doubles(run_conv({{1, 1, 2}, {1, 1, 2}, {1}, {0, 0}, {1}, {1}}, x, w));
    EXPECT_EQ(got[0], t == DType::I8 ? -112.0 : 144.0);
  }
}

TEST(InterpConv, SymbolicBatchAndSpatialExtents) {
  DimExpr B = Dim("B"), H = Dim("H");
  std::vector<TensorType> ins = {tt(f32, Shape{B, 2, H, 5}), tt(f32, S({3, 2, 3, 3}))};
  ConvCase proto{{0, 2, 0, 5}, {3, 2, 3, 3}, {1, 2}, {1, 1, 0, 1}, {1, 1}, {1, 1}};
  AttrMap attrs = conv_attrs(proto);
  TensorType rt = infer_result_types(get_op("conv"), ins, attrs).at(0);
  GraphBuilder b;
  Value* x = b.input(f32, ins[0].shape);
  Value* w = b.input(f32, ins[1].shape);
  Graph g = b.build({b.op("conv", {x, w}, rt, attrs)});
  for (int64_t bn : {1, 3})
    for (int64_t h : {1, 6}) {
      ConvCase c = proto;
      c.xs = {bn, 2, h, 5};
      Tensor xt = make_tensor(f32, c.xs, sample_values(f32, numel(c.xs), 5));
      Tensor wt = make_tensor(f32, c.ws, sample_values(f32, numel(c.ws), 6));
      Tensor r = run_graph(g, {xt, wt})[0];
      ASSERT_EQ(r.shape(), out_shape(c));
      auto want = reference(c, to_doubles(xt), to_doubles(wt));
      auto got = to_doubles(r);
      for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4);
    }
  // H = 0 padded by 1 + 1 is narrower than the 3-wide window: refused per call, by execute and by
  // check_shapes (what compiled backends run first) with one message.
  Tensor xt = make_tensor(f32, {1, 2, 0, 5}, {});
  Tensor wt = make_tensor(f32, {3, 2, 3, 3}, sample_values(f32, 54, 1));
  auto message = [&](const std::function<void()>& f) {
    try {
      f();
    } catch (const ValidationError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  std::string ran = message([&] { run_graph(g, {xt, wt}); });
  EXPECT_NE(ran.find("window of spatial dim 0"), std::string::npos) << ran;
  auto plan = interp::prepare(g);
  std::vector<Tensor> bad = {xt, wt};
  EXPECT_EQ(message([&] { interp::check_shapes(*plan, bad); }), ran);
  std::vector<Tensor> good = {make_tensor(f32, {1, 2, 1, 5}, sample_values(f32, 10, 2)), wt};
  EXPECT_EQ(message([&] { interp::check_shapes(*plan, good); }), "no error");
}

// The benchmark shape of the brief: N=8, C=64, 56x56, 3x3, SAME. Spot-checked; the time is printed, never asserted.
TEST(InterpConv, ResNetSizedConvRunsThroughBlas) {
  ConvCase c{{8, 64, 56, 56}, {64, 64, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, {1, 1}};
  Tensor x = make_tensor(f32, c.xs, sample_values(f32, numel(c.xs), 3));
  Tensor w = make_tensor(f32, c.ws, sample_values(f32, numel(c.ws), 4));
  GraphBuilder b;
  Value* xi = b.input(f32, S(c.xs));
  Value* wi = b.input(f32, S(c.ws));
  Graph g = b.build({b.op("conv", {xi, wi}, tt(f32, S(out_shape(c))), conv_attrs(c))});
  Tensor r = run_graph(g, {x, w})[0];
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 3; ++i) r = run_graph(g, {x, w})[0];
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / 3;
  std::cout << "conv2d 8x64x56x56 * 64x64x3x3 SAME: " << ms << " ms per call (incl. prepare)\n";
  auto xv = to_doubles(x), wv = to_doubles(w), got = to_doubles(r);
  for (int64_t n : {0, 7})
    for (int64_t o : {0, 63})
      for (int64_t i : {0, 27, 55})
        for (int64_t j : {0, 55}) {
          double acc = 0;
          for (int64_t ch = 0; ch < 64; ++ch)
            for (int64_t ki = 0; ki < 3; ++ki)
              for (int64_t kj = 0; kj < 3; ++kj) {
                int64_t ii = i + ki - 1, jj = j + kj - 1;
                if (ii < 0 || jj < 0 || ii >= 56 || jj >= 56) continue;
                acc += xv[static_cast<size_t>(((n * 64 + ch) * 56 + ii) * 56 + jj)] *
                       wv[static_cast<size_t>(((o * 64 + ch) * 3 + ki) * 3 + kj)];
              }
          EXPECT_NEAR(got[static_cast<size_t>(((n * 64 + o) * 56 + i) * 56 + j)], acc, 1e-3);
        }
}

TEST(InterpConv, BadResultTypeFailsAtPrepare) {
  GraphBuilder b;
  Value* x = b.input(f32, S({1, 2, 4}));
  Value* w = b.input(f32, S({1, 2, 3}));
  ConvCase c{{1, 2, 4}, {1, 2, 3}, {1}, {0, 0}, {1}, {1}};
  Value* r = b.op("conv", {x, w}, tt(f32, S({1, 1, 3})), conv_attrs(c));
  try {
    run_graph(b.build({r}), {make_tensor(f32, {1, 2, 4}, sample_values(f32, 8, 1)),
                             make_tensor(f32, {1, 2, 3}, sample_values(f32, 6, 2))});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("conv"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace evoxc::testing
