// Interpreter structure and creation ops on every dtype: reshape, transpose, broadcast, slice, concat, iota, full,
// constant.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "interp/graph_util.h"

namespace evoxc::testing {
namespace {

std::vector<double> iota_values(int64_t n) {
  std::vector<double> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i % 7);  // exact and distinct enough in every dtype
  return v;
}

Tensor typed_iota(DType t, const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return make_tensor(t, shape, iota_values(n));
}

Tensor run1(const std::string& op, const Tensor& x, const std::vector<int64_t>& out_shape, AttrMap attrs) {
  GraphBuilder b;
  Value* in = b.input(x.dtype(), S(x.shape()));
  Value* r = b.op(op, {in}, tt(x.dtype(), S(out_shape)), std::move(attrs));
  return run_graph(b.build({r}), {x})[0];
}

TEST(InterpStructure, ReshapeExpandSqueezeKeepElementsAndNeverAliasInputs) {
  for (DType t : all_dtypes()) {
    Tensor x = typed_iota(t, {2, 3, 4});
    Tensor r = run1("reshape", x, {4, 6}, {{"shape", S({4, 6})}});
    EXPECT_EQ(r.shape(), (std::vector<int64_t>{4, 6}));
    EXPECT_EQ(to_doubles(r), to_doubles(x)) << dtype_name(t);
    EXPECT_NE(r.raw_data(), x.raw_data());
    Tensor e = run1("expand_dims", x, {2, 1, 3, 4, 1}, {{"axes", std::vector<int64_t>{1, 4}}});
    EXPECT_EQ(to_doubles(e), to_doubles(x));
    Tensor s = run1("squeeze", e, {2, 3, 4}, {{"axes", std::vector<int64_t>{1, 4}}});
    EXPECT_EQ(s.shape(), (std::vector<int64_t>{2, 3, 4}));
    EXPECT_EQ(to_doubles(s), to_doubles(x));
  }
}

TEST(InterpStructure, ViewsFeedingLaterOpsStayCorrect) {
  // exp-free chain: reshape an intermediate, transpose the view, reshape back.
  GraphBuilder b;
  Value* x = b.input(DType::I32, S({2, 6}));
  Value* t = b.op("transpose", {x}, tt(DType::I32, S({6, 2})), {{"permutation", std::vector<int64_t>{1, 0}}});
  Value* r = b.op("reshape", {t}, tt(DType::I32, S({3, 4})), {{"shape", S({3, 4})}});
  Value* u = b.op("transpose", {r}, tt(DType::I32, S({4, 3})), {{"permutation", std::vector<int64_t>{1, 0}}});
  Graph g = b.build({u, r});
  std::vector<int32_t> v(12);
  std::iota(v.begin(), v.end(), 0);
  auto outs = run_graph(g, {Tensor::from_vector(v, {2, 6})});
  // t[i][j] = x[j][i] = j*6+i; flattened t = 0,6,1,7,2,8,3,9,4,10,5,11.
  std::vector<int32_t> tf = {0, 6, 1, 7, 2, 8, 3, 9, 4, 10, 5, 11};
  EXPECT_EQ(outs[1].to_vector<int32_t>(), tf);
  std::vector<int32_t> want(12);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j) want[static_cast<size_t>(i * 3 + j)] = tf[static_cast<size_t>(j * 4 + i)];
  EXPECT_EQ(outs[0].to_vector<int32_t>(), want);
}

TEST(InterpStructure, TransposeEveryPermutationAndDtype) {
  std::vector<int64_t> shape = {2, 3, 4};
  std::vector<std::vector<int64_t>> perms = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  for (DType t : all_dtypes()) {
    Tensor x = typed_iota(t, shape);
    std::vector<double> xv = to_doubles(x);
    for (const auto& p : perms) {
      std::vector<int64_t> os = {shape[static_cast<size_t>(p[0])], shape[static_cast<size_t>(p[1])],
                                 shape[static_cast<size_t>(p[2])]};
      std::vector<double> got = to_doubles(run1("transpose", x, os, {{"permutation", p}}));
      for (int64_t i = 0; i < os[0]; ++i)
        for (int64_t j = 0; j < os[1]; ++j)
          for (int64_t k = 0; k < os[2]; ++k) {
            int64_t src[3];
            src[p[0]] = i;
            src[p[1]] = j;
            src[p[2]] = k;
            ASSERT_EQ(got[static_cast<size_t>((i * os[1] + j) * os[2] + k)],
                      xv[static_cast<size_t>((src[0] * 3 + src[1]) * 4 + src[2])])
                << dtype_name(t);
          }
    }
  }
}

TEST(InterpStructure, LargeTransposeUsesTilesCorrectly) {
  const int64_t R = 300, C = 517;
  std::vector<double> v(static_cast<size_t>(R * C));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i);
  for (DType t : {DType::F64, DType::I16, DType::U8}) {
    Tensor x = make_tensor(t, {R, C}, v);
    std::vector<double> xv = to_doubles(x);
    auto got = to_doubles(run1("transpose", x, {C, R}, {{"permutation", std::vector<int64_t>{1, 0}}}));
    for (int64_t i = 0; i < C; ++i)
      for (int64_t j = 0; j < R; ++j)
        ASSERT_EQ(got[static_cast<size_t>(i * R + j)], xv[static_cast<size_t>(j * C + i)]);
  }
}

TEST(InterpStructure, BroadcastInDim) {
  for (DType t : all_dtypes()) {
    Tensor row = typed_iota(t, {3});
    auto rv = to_doubles(row);
    auto a = to_doubles(run1("broadcast_in_dim", row, {2, 3},
                             {{"shape", S({2, 3})}, {"broadcast_dimensions", std::vector<int64_t>{1}}}));
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) EXPECT_EQ(a[static_cast<size_t>(i * 3 + j)], rv[static_cast<size_t>(j)]);
    Tensor col = typed_iota(t, {3, 1});
    auto cv = to_doubles(col);
    auto c = to_doubles(run1("broadcast_in_dim", col, {2, 3, 4},
                             {{"shape", S({2, 3, 4})}, {"broadcast_dimensions", std::vector<int64_t>{1, 2}}}));
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j)
        for (int k = 0; k < 4; ++k) EXPECT_EQ(c[static_cast<size_t>((i * 3 + j) * 4 + k)], cv[static_cast<size_t>(j)]);
    Tensor s = make_tensor(t, {}, {1});
    auto sv = to_doubles(
        run1("broadcast_in_dim", s, {2, 2}, {{"shape", S({2, 2})}, {"broadcast_dimensions", std::vector<int64_t>{}}}));
    EXPECT_EQ(sv, std::vector<double>(4, 1.0));
  }
  Tensor z = Tensor::empty({0}, DType::F32);
  EXPECT_EQ(
      run1("broadcast_in_dim", z, {3, 0}, {{"shape", S({3, 0})}, {"broadcast_dimensions", std::vector<int64_t>{1}}})
          .numel(),
      0);
}

TEST(InterpStructure, SliceWithStridesAndEmptyResults) {
  for (DType t : all_dtypes()) {
    Tensor x = typed_iota(t, {5, 6});
    auto xv = to_doubles(x);
    auto got = to_doubles(run1("slice", x, {2, 2},
                               {{"start_indices", std::vector<int64_t>{1, 0}},
                                {"limit_indices", S({5, 6})},
                                {"strides", std::vector<int64_t>{2, 3}}}));
    std::vector<double> want;
    for (int i = 1; i < 5; i += 2)
      for (int j = 0; j < 6; j += 3) want.push_back(xv[static_cast<size_t>(i * 6 + j)]);
    EXPECT_EQ(got, want) << dtype_name(t);
    auto mid = to_doubles(run1("slice", x, {3, 2},
                               {{"start_indices", std::vector<int64_t>{1, 2}},
                                {"limit_indices", S({4, 4})},
                                {"strides", std::vector<int64_t>{1, 1}}}));
    want.clear();
    for (int i = 1; i < 4; ++i)
      for (int j = 2; j < 4; ++j) want.push_back(xv[static_cast<size_t>(i * 6 + j)]);
    EXPECT_EQ(mid, want);
    Tensor e = run1("slice", x, {0, 6},
                    {{"start_indices", std::vector<int64_t>{3, 0}},
                     {"limit_indices", S({3, 6})},
                     {"strides", std::vector<int64_t>{1, 1}}});
    EXPECT_EQ(e.shape(), (std::vector<int64_t>{0, 6}));
  }
}

TEST(InterpStructure, SymbolicSliceLimitBeyondExtentIsAValidationError) {
  GraphBuilder b;
  Value* x = b.input(DType::F32, Shape{Dim("N")});
  Value* r = b.op("slice", {x}, tt(DType::F32, Shape{DimExpr(4)}),
                  {{"start_indices", std::vector<int64_t>{0}},
                   {"limit_indices", Shape{DimExpr(4)}},
                   {"strides", std::vector<int64_t>{1}}},
                  Location{"s.py", 3, 1});
  auto p = interp::prepare(b.build({r}));
  std::vector<Tensor> outs(1);
  std::vector<Tensor> ok = {make_tensor(DType::F32, {6}, {1, 2, 3, 4, 5, 6})};
  interp::execute(*p, ok, outs);
  EXPECT_EQ(to_doubles(outs[0]), (std::vector<double>{1, 2, 3, 4}));
  std::vector<Tensor> small = {make_tensor(DType::F32, {3}, {1, 2, 3})};
  std::vector<Tensor> outs2(1);
  try {
    interp::execute(*p, small, outs2);
    FAIL() << "expected a ValidationError";
  } catch (const ValidationError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("evoxc.slice at s.py:3:1"), std::string::npos) << m;
    EXPECT_NE(m.find("N = 3"), std::string::npos) << m;
  }
}

TEST(InterpStructure, ConcatenateEveryDtypeWithAnEmptyPiece) {
  for (DType t : all_dtypes()) {
    Tensor a = typed_iota(t, {2, 2});
    Tensor e = Tensor::empty({2, 0}, t);
    Tensor c = make_tensor(t, {2, 3}, {6, 5, 4, 3, 2, 1});
    GraphBuilder b;
    Value* va = b.input(t, S({2, 2}));
    Value* ve = b.input(t, S({2, 0}));
    Value* vc = b.input(t, S({2, 3}));
    Value* r = b.op("concatenate", {va, ve, vc}, tt(t, S({2, 5})), {{"axis", int64_t{1}}});
    Value* r0 = b.op("concatenate", {va, va}, tt(t, S({4, 2})), {{"axis", int64_t{0}}});
    auto outs = run_graph(b.build({r, r0}), {a, e, c});
    auto av = to_doubles(a), cv = to_doubles(c);
    std::vector<double> want = {av[0], av[1], cv[0], cv[1], cv[2], av[2], av[3], cv[3], cv[4], cv[5]};
    EXPECT_EQ(to_doubles(outs[0]), want) << dtype_name(t);
    std::vector<double> want0 = {av[0], av[1], av[2], av[3], av[0], av[1], av[2], av[3]};
    EXPECT_EQ(to_doubles(outs[1]), want0);
  }
}

TEST(InterpCreation, IotaEveryDtype) {
  for (DType t : all_dtypes()) {
    for (int64_t dim : {0, 1}) {
      GraphBuilder b;
      Value* r = b.op("iota", {}, tt(t, S({3, 4})), {{"shape", S({3, 4})}, {"dimension", dim}, {"dtype", t}});
      auto got = to_doubles(run_graph(b.build({r}), {})[0]);
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 4; ++j) {
          double v = dim == 0 ? i : j;
          if (is_bool(t)) v = v != 0 ? 1 : 0;
          EXPECT_EQ(got[static_cast<size_t>(i * 4 + j)], v) << dtype_name(t);
        }
    }
  }
}

double full_value(DType t, Attribute value) {
  GraphBuilder b;
  Value* r = b.op("full", {}, tt(t, S({2})), {{"shape", S({2})}, {"value", value}, {"dtype", t}});
  auto got = to_doubles(run_graph(b.build({r}), {})[0]);
  EXPECT_EQ(got[0], got[1]);
  return got[0];
}

TEST(InterpCreation, FullConvertsItsValueByTheSemanticsRules) {
  EXPECT_EQ(full_value(DType::F32, 2.5), 2.5);
  EXPECT_EQ(full_value(DType::F16, int64_t{3}), 3.0);
  EXPECT_EQ(full_value(DType::BF16, true), 1.0);
  EXPECT_EQ(full_value(DType::I32, 1e10), 2147483647.0);  // saturates
  EXPECT_EQ(full_value(DType::U8, -1e10), 0.0);           // saturates
  EXPECT_EQ(full_value(DType::I64, std::nan("")), 0.0);   // NaN -> 0
  EXPECT_EQ(full_value(DType::I8, int64_t{300}), 44.0);   // wraps
  EXPECT_EQ(full_value(DType::I16, -2.7), -2.0);          // truncates toward zero
  EXPECT_EQ(full_value(DType::Bool, 0.5), 1.0);
  EXPECT_EQ(full_value(DType::U64, int64_t{-1}), 18446744073709551615.0);
  EXPECT_TRUE(std::isinf(full_value(DType::F64, INFINITY)));
  for (DType t : all_dtypes()) EXPECT_EQ(full_value(t, int64_t{1}), 1.0) << dtype_name(t);
}

TEST(InterpCreation, ConstantIsReadInPlaceButReturnedAsACopy) {
  Tensor c = Tensor::from_vector<int16_t>({1, -2, 3}, {3});
  GraphBuilder b;
  Value* k = b.op("constant", {}, tt(DType::I16, S({3})), {{"value", c}});
  Value* t = b.op("reshape", {k}, tt(DType::I16, S({3, 1})), {{"shape", S({3, 1})}});
  Graph g = b.build({k, t});
  auto p = interp::prepare(g);
  std::vector<Tensor> outs(2);
  interp::execute(*p, {}, outs);
  EXPECT_EQ(outs[0].to_vector<int16_t>(), (std::vector<int16_t>{1, -2, 3}));
  EXPECT_EQ(outs[1].shape(), (std::vector<int64_t>{3, 1}));
  EXPECT_NE(outs[0].raw_data(), c.raw_data());
  outs[0].data<int16_t>()[0] = 99;  // the user's copy; the program's constant must not change
  std::vector<Tensor> again(2);
  interp::execute(*p, {}, again);
  EXPECT_EQ(again[0].to_vector<int16_t>()[0], 1);
}

}  // namespace
}  // namespace evoxc::testing
