// Sparse tensors (evoxc/trace/sparse.h) and their primitives: every operation against the dense computation, the
// structure checks, vmap over the dense operand and over the values, derivatives with respect to the values
// (jvp against finite differences, vjp against jvp), and the decompositions the compiled backends run.
#include "evoxc/trace/sparse.h"

#include <gtest/gtest.h>

#include "evoxc/transforms/decompose.h"
#include "expect_error.h"
#include "transforms/transform_util.h"

namespace evoxc {
namespace {

using ST = SymbolicTensor;
using testing::expect_close;
using testing::make_tensor;
using testing::run_flat;
using testing::values_of;
constexpr DType f64 = DType::F64;
constexpr DType i64 = DType::I64;

// A 3x4 matrix with entries (0,1)=2, (0,3)=-1, (2,0)=5, (2,2)=3, and a repeated (0,1)+=0.5 in the COO form.
Tensor coo_indices() { return make_tensor({0, 1, 0, 3, 2, 0, 2, 2, 0, 1}, {5, 2}, i64); }
Tensor coo_values() { return make_tensor({2, -1, 5, 3, 0.5}, {5}, f64); }
std::vector<double> dense_of_coo() { return {0, 2.5, 0, -1, 0, 0, 0, 0, 5, 0, 3, 0}; }
Tensor csr_indptr() { return make_tensor({0, 2, 2, 4}, {4}, i64); }
Tensor csr_indices() { return make_tensor({1, 3, 0, 2}, {4}, i64); }
Tensor csr_values() { return make_tensor({2, -1, 5, 3}, {4}, f64); }

Graph coo_graph(const std::function<std::vector<ST>(const sparse::SparseTensor&)>& f) {
  return trace(
      [&](const ST& i, const ST& v) {
        return f(sparse::coo(i, v, Shape{3, 4}));
      },
      TensorSpec(Shape{5, 2}, i64), TensorSpec(Shape{5}, f64));
}

Graph csr_graph(const std::function<std::vector<ST>(const sparse::SparseTensor&, const ST&)>& f, Shape dense) {
  return trace(
      [&](const ST& p, const ST& i, const ST& v, const ST& d) {
        return f(sparse::csr(p, i, v, Shape{3, 4}), d);
      },
      TensorSpec(Shape{4}, i64), TensorSpec(Shape{Dim("nse")}, i64), TensorSpec(Shape{Dim("nse")}, f64),
      TensorSpec(std::move(dense), f64));
}

TEST(Sparse, ConversionsKeepTheDenseValue) {
  Graph g = coo_graph([](const sparse::SparseTensor& a) {
    return std::vector<ST>{sparse::to_dense(a), sparse::to_dense(sparse::to_csr(a)),
                           sparse::to_dense(sparse::to_csc(a)), sparse::to_dense(sparse::to_coo(sparse::to_csr(a))),
                           sparse::to_dense(sparse::transpose(sparse::to_csr(a)))};
  });
  std::vector<Tensor> out = run_flat(g, {coo_indices(), coo_values()});
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(values_of(out[i]), dense_of_coo()) << i;
  EXPECT_EQ(out[4].shape(), (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(values_of(out[4])[1 * 3 + 0], 2.5);  // (1, 0) of the transpose
  // The CSR arrays: rows sorted, the repeated (0, 1) kept and adjacent.
  Graph arrays = coo_graph([](const sparse::SparseTensor& a) {
    sparse::SparseTensor c = sparse::to_csr(a);
    return std::vector<ST>{c.indptr, c.indices, c.values};
  });
  std::vector<Tensor> csr = run_flat(arrays, {coo_indices(), coo_values()});
  EXPECT_EQ(values_of(csr[0]), (std::vector<double>{0, 3, 3, 5}));
  EXPECT_EQ(values_of(csr[1]), (std::vector<double>{1, 1, 3, 0, 2}));
  EXPECT_EQ(values_of(csr[2]), (std::vector<double>{2, 0.5, -1, 5, 3}));
}

TEST(Sparse, FromDenseAddMultiplyReduceReshapeConcatenate) {
  Graph g = trace(
      [](const ST& x, const ST& y) {
        sparse::SparseTensor a = sparse::from_dense(x), b = sparse::from_dense(y, 3);
        return std::vector<ST>{sparse::to_dense(sparse::add(a, b)),
                               sparse::to_dense(sparse::multiply(a, b)),
                               sparse::to_dense(sparse::multiply_dense(a, y)),
                               sparse::to_dense(sparse::reduce_sum(a, {0})),
                               sparse::sum(a),
                               sparse::to_dense(sparse::reshape(a, Shape{6})),
                               sparse::to_dense(sparse::concatenate({a, b}, 1))};
      },
      TensorSpec(Shape{2, 3}, f64), TensorSpec(Shape{2, 3}, f64));
  Tensor x = make_tensor({1, 0, 2, 0, 3, 0}, {2, 3}, f64), y = make_tensor({4, 5, 0, 0, 6, 0}, {2, 3}, f64);
  std::vector<Tensor> out = run_flat(g, {x, y});
  EXPECT_EQ(values_of(out[0]), (std::vector<double>{5, 5, 2, 0, 9, 0}));
  EXPECT_EQ(values_of(out[1]), (std::vector<double>{4, 0, 0, 0, 18, 0}));
  EXPECT_EQ(values_of(out[2]), (std::vector<double>{4, 0, 0, 0, 18, 0}));
  EXPECT_EQ(values_of(out[3]), (std::vector<double>{1, 3, 2}));
  EXPECT_EQ(values_of(out[4]), (std::vector<double>{6}));
  EXPECT_EQ(values_of(out[5]), (std::vector<double>{1, 0, 2, 0, 3, 0}));
  EXPECT_EQ(values_of(out[6]), (std::vector<double>{1, 0, 2, 4, 5, 0, 0, 3, 0, 0, 6, 0}));
}

TEST(Sparse, MatmulInEveryFormatAndOrderMatchesTheDenseProduct) {
  Graph g = coo_graph([](const sparse::SparseTensor& a) {
    ST b = reshape(astype(iota(Shape{8}, 0, i64), f64), Shape{4, 2});
    ST c = reshape(astype(iota(Shape{6}, 0, i64), f64), Shape{2, 3}) - 1.0;
    ST v = astype(iota(Shape{4}, 0, i64), f64);
    ST u = astype(iota(Shape{3}, 0, i64), f64) + 1.0;
    std::vector<ST> out;
    for (const sparse::SparseTensor& s : {a, sparse::to_csr(a), sparse::to_csc(a)}) {
      out.push_back(sparse::matmul(s, b));
      out.push_back(sparse::matmul(s, v));
      out.push_back(sparse::matmul(c, s));
      out.push_back(sparse::matmul(u, s));
    }
    ST d = sparse::to_dense(a);
    out.push_back(matmul(d, b));
    out.push_back(matmul(d, v));
    out.push_back(matmul(c, d));
    out.push_back(matmul(u, d));
    return out;
  });
  std::vector<Tensor> out = run_flat(g, {coo_indices(), coo_values()});
  for (size_t f = 0; f < 3; ++f)
    for (size_t k = 0; k < 4; ++k)
      expect_close(out[f * 4 + k], out[12 + k], 1e-14, 1e-14, "format " + std::to_string(f));
}

TEST(Sparse, BadStructureIsAValidationErrorNamingTheEntry) {
  Graph g = coo_graph([](const sparse::SparseTensor& a) { return std::vector<ST>{sparse::to_dense(a)}; });
  Tensor bad = make_tensor({0, 1, 0, 3, 2, 0, 3, 2, 0, 1}, {5, 2}, i64);
  test::expect_error<ValidationError>(
      [&] {
        run_flat(g, {bad, coo_values()});
      },
      "COO entry 3 has index 3 on axis 0, out of range for shape (3, 4)");
  Graph c = csr_graph([](const sparse::SparseTensor& a, const ST& d) { return std::vector<ST>{sparse::matmul(a, d)}; },
                      Shape{4});
  Tensor d = make_tensor({1, 2, 3, 4}, {4}, f64);
  test::expect_error<ValidationError>(
      [&] {
        run_flat(c, {csr_indptr(), make_tensor({3, 1, 0, 2}, {4}, i64), csr_values(), d});
      },
      "entry 1 (row 0) has index 1 after 3: indices must be sorted within each row");
  test::expect_error<ValidationError>(
      [&] {
        run_flat(c, {make_tensor({0, 2, 1, 4}, {4}, i64), csr_indices(), csr_values(), d});
      },
      "indptr[2] is 1, it must lie in [indptr[1] = 2, 4]");
  test::expect_error<ValidationError>(
      [&] {
        run_flat(c, {csr_indptr(), make_tensor({1, 4, 0, 2}, {4}, i64), csr_values(), d});
      },
      "has index 4, out of range [0, 4)");
  // A valid one runs.
  EXPECT_EQ(values_of(run_flat(c, {csr_indptr(), csr_indices(), csr_values(), d})[0]), (std::vector<double>{0, 0, 14}));
}

TEST(Sparse, VmapOverTheDenseOperandAndOverTheValues) {
  Graph g = csr_graph([](const sparse::SparseTensor& a, const ST& d) { return std::vector<ST>{sparse::matmul(a, d)}; },
                      Shape{4, 2});
  std::vector<Tensor> ex{csr_indptr(), csr_indices(), csr_values(), testing::random_tensor({4, 2}, f64, 3)};
  testing::expect_vmap_matches_loop(g, ex, {false, false, false, true});
  testing::expect_vmap_matches_loop(g, ex, {false, false, true, true});
  testing::expect_vmap_matches_loop(g, ex, {false, false, true, false});
}

TEST(Sparse, DerivativesWithRespectToTheValues) {
  Graph g = csr_graph(
      [](const sparse::SparseTensor& a, const ST& d) {
        ST dt = transpose(d, std::vector<int64_t>{1, 0});
        return std::vector<ST>{sparse::matmul(a, d), sparse::matmul(dt, sparse::transpose(a)),
                               sparse::matmul(sparse::to_csc(a), d) * 2.0,
                               sparse::to_dense(sparse::multiply_dense(sparse::to_coo(a), sparse::to_dense(a)))};
      },
      Shape{4, 2});
  std::vector<Tensor> p{csr_indptr(), csr_indices(), csr_values(), testing::random_tensor({4, 2}, f64, 5)};
  testing::expect_jvp_matches_fd(g, p);
  testing::expect_vjp_matches_jvp(g, p);
}

TEST(Sparse, TheDecompositionsComputeWhatTheKernelsCompute) {
  RuleTable<int, BackendError> dense_only("dense_only");
  for (const OpDef* d : all_ops())
    if (d->category != OpCategory::Sparse) dense_only.set(*d, 0);
  for (bool t : {false, true}) {
    Graph g = csr_graph(
        [t](const sparse::SparseTensor& a, const ST& d) {
          return std::vector<ST>{t ? sparse::matmul(sparse::to_csc(a), d) : sparse::matmul(a, d)};
        },
        Shape{4, 2});
    Graph d = decompose(g, dense_only);
    EXPECT_EQ(d.to_string().find("evoxc.sparse_"), std::string::npos);
    std::vector<Tensor> in{csr_indptr(), csr_indices(), csr_values(), testing::random_tensor({4, 2}, f64, 9)};
    expect_close(run_flat(d, in)[0], run_flat(g, in)[0], 1e-14, 1e-14, t ? "csc" : "csr");
  }
}

}  // namespace
}  // namespace evoxc
