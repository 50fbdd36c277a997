// Interpreter sort, argsort, top_k and searchsorted on every dtype against std::stable_sort references.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <tuple>

#include "evoxc/evoxc.h"
#include "evoxc/trace/indexing.h"
#include "interp/graph_util.h"
#include "interp/thread_pool.h"

namespace evoxc::testing {
namespace {

// The documented order: ascending, NaN last.
bool nan_last(double a, double b) {
  if (std::isnan(b)) return !std::isnan(a);
  return a < b;
}

void expect_same(const std::vector<double>& got, const std::vector<double>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << what << " at " << i;
    } else {
      EXPECT_EQ(got[i], want[i]) << what << " at " << i;
    }
  }
}

// Stable argsort of every line along `axis` of a rank-2 (r, c) tensor.
std::vector<int64_t> ref_argsort(const std::vector<double>& v, int64_t r, int64_t c, int axis) {
  std::vector<int64_t> out(v.size());
  int64_t lines = axis == 0 ? c : r, n = axis == 0 ? r : c;
  for (int64_t l = 0; l < lines; ++l) {
    auto at = [&](int64_t k) { return axis == 0 ? k * c + l : l * c + k; };
    std::vector<int64_t> p(static_cast<size_t>(n));
    std::iota(p.begin(), p.end(), int64_t{0});
    std::stable_sort(p.begin(), p.end(), [&](int64_t a, int64_t b) {
      return nan_last(v[static_cast<size_t>(at(a))], v[static_cast<size_t>(at(b))]);
    });
    for (int64_t k = 0; k < n; ++k) out[static_cast<size_t>(at(k))] = p[static_cast<size_t>(k)];
  }
  return out;
}

std::vector<double> with_specials(DType t, std::vector<double> v) {
  if (is_float(t)) {
    v[1] = NAN;
    v[4] = INFINITY;
    v[6] = -INFINITY;
    v[9] = NAN;
    v[10] = -0.0;
    v[11] = 0.0;
  }
  return v;
}

TEST(InterpSort, SortAndArgsortEveryDtypeBothAxes) {
  int64_t r = 4, c = 6;
  for (DType t : all_dtypes()) {
    Tensor a = make_tensor(t, {r, c}, with_specials(t, sample_values(t, r * c, 21)));
    std::vector<double> av = to_doubles(a);
    for (int axis : {0, 1}) {
      GraphBuilder b;
      Value* x = b.input(t, S({r, c}));
      Value* s = b.op("sort", {x}, tt(t, S({r, c})), {{"dimension", int64_t{axis}}, {"num_keys", int64_t{1}}});
      Value* p = b.op("argsort", {x}, tt(DType::I64, S({r, c})), {{"dimension", int64_t{axis}}});
      auto out = run_graph(b.build({s, p}), {a});
      std::vector<int64_t> perm = ref_argsort(av, r, c, axis);
      std::vector<double> want_s, want_p;
      for (int64_t i = 0; i < r; ++i)
        for (int64_t j = 0; j < c; ++j) {
          int64_t k = perm[static_cast<size_t>(i * c + j)];
          want_p.push_back(static_cast<double>(k));
          want_s.push_back(av[static_cast<size_t>(axis == 0 ? k * c + j : i * c + k)]);
        }
      std::string what = std::string(dtype_name(t)) + " axis " + std::to_string(axis);
      expect_same(to_doubles(out[0]), want_s, what);
      expect_same(to_doubles(out[1]), want_p, what);
    }
  }
}

TEST(InterpSort, NaNLastAndSignedZerosKeepTheirOrder) {
  GraphBuilder b;
  Value* x = b.input(DType::F32, S({7}));
  Value* p = b.op("argsort", {x}, tt(DType::I64, S({7})), {{"dimension", int64_t{0}}});
  Tensor in = make_tensor(DType::F32, {7}, {NAN, 0.0, -1, -0.0, INFINITY, NAN, -INFINITY});
  expect_same(to_doubles(run_graph(b.build({p}), {in})[0]), {6, 2, 1, 3, 4, 0, 5}, "argsort");
}

TEST(InterpSort, MultiOperandStableWithSecondaryKey) {
  // Keys with repeats, a secondary key, and payloads that record the original position.
  std::vector<double> k1 = {2, 1, 2, 1, 0, 2, 1, 0};
  std::vector<double> k2 = {5, 5, 3, 9, 1, 3, 5, 1};
  std::vector<double> pay = {0, 1, 2, 3, 4, 5, 6, 7};
  Tensor a = make_tensor(DType::I32, {8}, k1), c = make_tensor(DType::F64, {8}, k2),
         d = make_tensor(DType::U8, {8}, pay);
  for (int64_t nk : {1, 2, 3}) {
    auto f = [nk](SymbolicTensor x, SymbolicTensor y, SymbolicTensor z) { return sort({x, y, z}, 0, nk); };
    Tree<Tensor> out = evaluate(f, a, c, d);
    std::vector<int64_t> p(8);
    std::iota(p.begin(), p.end(), int64_t{0});
    std::stable_sort(p.begin(), p.end(), [&](int64_t x, int64_t y) {
      auto ux = static_cast<size_t>(x), uy = static_cast<size_t>(y);
      if (k1[ux] != k1[uy]) return k1[ux] < k1[uy];
      return nk > 1 && k2[ux] < k2[uy];
    });
    std::vector<double> w1, w2, w3;
    for (int64_t i : p) {
      w1.push_back(k1[static_cast<size_t>(i)]);
      w2.push_back(k2[static_cast<size_t>(i)]);
      w3.push_back(pay[static_cast<size_t>(i)]);
    }
    std::string what = "num_keys " + std::to_string(nk);
    expect_same(to_doubles(out.children()[0].leaf()), w1, what);
    expect_same(to_doubles(out.children()[1].leaf()), w2, what);
    expect_same(to_doubles(out.children()[2].leaf()), w3, what);
    EXPECT_EQ(out.children()[2].leaf().dtype(), DType::U8);
  }
}

TEST(InterpSort, LargeAndEmptyAndSingleThreadAgree) {
  int64_t r = 64, c = 1500;
  std::vector<double> v = sample_values(DType::F32, r * c, 77);
  Tensor a = make_tensor(DType::F32, {r, c}, v);
  auto f = [](SymbolicTensor x) { return argsort(x, 1); };
  std::vector<double> many = to_doubles(evaluate(f, a).leaf());
  interp::set_num_threads(1);
  std::vector<double> one = to_doubles(evaluate(f, a).leaf());
  interp::set_num_threads(0);
  expect_same(many, one, "threads");
  std::vector<int64_t> want = ref_argsort(to_doubles(a), r, c, 1);
  for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(many[i], static_cast<double>(want[i]));
  Tensor e = Tensor::zeros({3, 0}, DType::F32);
  EXPECT_EQ(evaluate([](SymbolicTensor x) { return sort(x, 1); }, e).leaf().numel(), 0);
  EXPECT_EQ(evaluate([](SymbolicTensor x) { return sort(x, 0); }, e).leaf().numel(), 0);
}

TEST(InterpTopK, EveryDtypeWithTiesAndNaN) {
  int64_t r = 3, n = 7, k = 4;
  for (DType t : all_dtypes()) {
    std::vector<double> v = sample_values(t, r * n, 31);
    v[2] = v[5];  // a tie in row 0
    if (is_float(t)) v[8] = NAN;
    Tensor a = make_tensor(t, {r, n}, v);
    std::vector<double> av = to_doubles(a);
    Tree<Tensor> out = evaluate([k](SymbolicTensor x) { return top_k(x, k); }, a);
    std::vector<double> wv, wi;
    // Reference: descending, NaN largest, ties by lower index (a stable sort on "greater").
    for (int64_t row = 0; row < r; ++row) {
      std::vector<int64_t> p(static_cast<size_t>(n));
      std::iota(p.begin(), p.end(), int64_t{0});
      std::stable_sort(p.begin(), p.end(), [&](int64_t i, int64_t j) {
        return nan_last(av[static_cast<size_t>(row * n + j)], av[static_cast<size_t>(row * n + i)]);
      });
      for (int64_t j = 0; j < k; ++j) {
        wi.push_back(static_cast<double>(p[static_cast<size_t>(j)]));
        wv.push_back(av[static_cast<size_t>(row * n + p[static_cast<size_t>(j)])]);
      }
    }
    expect_same(to_doubles(out.children()[0].leaf()), wv, std::string(dtype_name(t)));
    expect_same(to_doubles(out.children()[1].leaf()), wi, std::string(dtype_name(t)));
    EXPECT_EQ(out.children()[1].leaf().dtype(), DType::I64);
  }
  Tree<Tensor> z =
      evaluate([](SymbolicTensor x) { return top_k(x, 0); }, make_tensor(DType::F32, {2, 3}, {1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(z.children()[0].leaf().shape(), (std::vector<int64_t>{2, 0}));
}

TEST(InterpSearchsorted, LeftAndRightEveryDtype) {
  for (DType t : all_dtypes()) {
    std::vector<double> sv = sample_values(t, 9, 41);
    Tensor st = make_tensor(t, {9}, sv);
    std::vector<double> sorted = to_doubles(st);
    std::stable_sort(sorted.begin(), sorted.end(), nan_last);
    if (is_float(t)) sorted.back() = NAN;
    Tensor s = make_tensor(t, {9}, sorted);
    std::vector<double> vals = sample_values(t, 6, 42);
    vals.push_back(sorted[3]);  // an exact hit
    if (is_float(t)) vals.push_back(NAN);
    auto m = static_cast<int64_t>(vals.size());
    Tensor v = make_tensor(t, {m}, vals);
    std::vector<double> sd = to_doubles(s), vd = to_doubles(v);
    for (std::string side : {"left", "right"}) {
      Tensor r = evaluate([side](SymbolicTensor a, SymbolicTensor x) { return searchsorted(a, x, side); }, s, v).leaf();
      std::vector<double> want;
      for (double x : vd) {
        auto it = side == "left" ? std::lower_bound(sd.begin(), sd.end(), x, nan_last)
                                 : std::upper_bound(sd.begin(), sd.end(), x, nan_last);
        want.push_back(static_cast<double>(it - sd.begin()));
      }
      expect_same(to_doubles(r), want, std::string(dtype_name(t)) + " " + side);
    }
  }
  Tensor e = Tensor::zeros({0}, DType::F32);
  Tensor r = evaluate([](SymbolicTensor a, SymbolicTensor x) { return searchsorted(a, x); }, e,
                      make_tensor(DType::F32, {2}, {1, 2}))
                 .leaf();
  expect_same(to_doubles(r), {0, 0}, "empty sorted operand");
}

}  // namespace
}  // namespace evoxc::testing

namespace evoxc {
namespace {

// Long lines take the radix path; its order must equal a stable comparison sort with NaN last and -0 == +0.
template <typename T>
void check_long_argsort(std::vector<T> values) {
  int64_t n = static_cast<int64_t>(values.size());
  Tensor x = Tensor::from_vector<T>(values, {n});
  Tree<Tensor> out = evaluate([](SymbolicTensor a) { return std::make_tuple(argsort(a), sort(a)); }, x);
  std::vector<int64_t> want(static_cast<size_t>(n));
  std::iota(want.begin(), want.end(), int64_t{0});
  std::stable_sort(want.begin(), want.end(), [&](int64_t a, int64_t b) {
    T va = values[static_cast<size_t>(a)], vb = values[static_cast<size_t>(b)];
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(vb)) return !std::isnan(va);
      if (std::isnan(va)) return false;
    }
    return va < vb;
  });
  const int64_t* got = out[0].leaf().template data<int64_t>();
  const T* sorted = out[1].leaf().template data<T>();
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(got[i], want[static_cast<size_t>(i)]) << "position " << i;
    T w = values[static_cast<size_t>(want[static_cast<size_t>(i)])];
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(w)) {
        EXPECT_TRUE(std::isnan(sorted[i]));
        continue;
      }
      EXPECT_EQ(std::signbit(sorted[i]), std::signbit(w)) << i;
    }
    EXPECT_EQ(sorted[i], w) << i;
  }
}

TEST(SortRadix, LongLinesMatchAStableComparisonSort) {
  uint32_t s = 7;
  auto next = [&] { return s = s * 1664525u + 1013904223u; };
  std::vector<float> f;
  std::vector<double> d;
  std::vector<int32_t> i32;
  std::vector<int64_t> i64;
  std::vector<uint32_t> u32;
  for (int i = 0; i < 3000; ++i) {
    uint32_t r = next();
    float v = static_cast<float>(static_cast<int>(r % 200) - 100) / 8.0f;  // many duplicates
    if (r % 97 == 0) v = std::numeric_limits<float>::quiet_NaN();
    if (r % 89 == 0) v = -0.0f;
    if (r % 83 == 0) v = 0.0f;
    if (r % 79 == 0) v = -std::numeric_limits<float>::infinity();
    f.push_back(v);
    d.push_back(r % 101 == 0 ? -std::numeric_limits<double>::quiet_NaN() : static_cast<double>(v) * 1e-300);
    i32.push_back(static_cast<int32_t>(r % 1000) - 500);
    i64.push_back(static_cast<int64_t>(r) * (r % 2 ? -1 : 1) * 1000000LL);
    u32.push_back(r % 300);
  }
  check_long_argsort(f);
  check_long_argsort(d);
  check_long_argsort(i32);
  check_long_argsort(i64);
  check_long_argsort(u32);
}

}  // namespace
}  // namespace evoxc
