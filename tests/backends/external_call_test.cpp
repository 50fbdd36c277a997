// external_call on every backend that calls host kernels (interp, mlir) and through the portable decomposition on
// those that cannot: slot resolution at load (exact, then default, else a BackendError naming the kernel, also for a
// saved graph), batch levels (a batch variant or one call per position), kernel errors, no derivatives, bad calls.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "evoxc/evoxc.h"
#include "evoxc/transforms/decompose.h"
#include "expect_error.h"

namespace evoxc {
namespace {

using ST = SymbolicTensor;
using test::expect_error;
constexpr DType f32 = DType::F32;

bool have_mlir() { return find_backend("mlir") != nullptr; }
std::vector<std::string> host_backends() {
  std::vector<std::string> b{"interp"};
  if (have_mlir()) b.push_back("mlir");
  return b;
}

// out = 2 * x + y (f32, same extents), counting calls.
std::atomic<int> axpy_calls{0};
void axpy(std::span<const ExternalBuffer> in, std::span<ExternalBuffer> out) {
  ++axpy_calls;
  const auto* x = static_cast<const float*>(in[0].data);
  const auto* y = static_cast<const float*>(in[1].data);
  auto* o = static_cast<float*>(out[0].data);
  const int64_t n = out[0].numel();
  for (int64_t i = 0; i < n; ++i) o[i] = 2.0f * x[i] + y[i];
}

// The same with y broadcast from the batch variant's leading level (extent 1 or the batch's).
std::atomic<int> batched_calls{0};
void axpy_batched(std::span<const ExternalBuffer> in, std::span<ExternalBuffer> out) {
  ++batched_calls;
  const auto* x = static_cast<const float*>(in[0].data);
  const auto* y = static_cast<const float*>(in[1].data);
  auto* o = static_cast<float*>(out[0].data);
  const int64_t rows = out[0].shape[0], n = out[0].numel() / rows;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < n; ++i)
      o[r * n + i] = 2.0f * x[(in[0].shape[0] == 1 ? 0 : r) * n + i] + y[(in[1].shape[0] == 1 ? 0 : r) * n + i];
}

class ExternalCall : public ::testing::Test {
 protected:
  void SetUp() override {
    register_external_kernel("test.axpy", axpy);
    axpy_calls = 0;
    batched_calls = 0;
  }
  void TearDown() override {
    unregister_external_kernel("test.axpy");
    unregister_external_kernel("test.axpy", "interp");
    unregister_external_kernel("test.axpy", "mlir");
    register_external_portable("test.axpy", nullptr);
  }
};

// axpy over (N,) x and y, then a use downstream (so the result is an ordinary SSA value).
Graph axpy_graph() {
  return trace(
      [](const ST& x, const ST& y) {
        std::vector<ST> args{x, y};
        ST r = external_call("test.axpy", args, std::vector<TensorType>{TensorType(f32, Shape{Dim("N")})})[0];
        return r + 1.0;
      },
      TensorSpec(Shape{Dim("N")}, f32), TensorSpec(Shape{Dim("N")}, f32));
}

std::vector<float> run1(const Executable& e, const std::vector<Tensor>& in) {
  std::vector<Tensor> out(1);
  e.execute(in, out);
  return out[0].to_vector<float>();
}

std::vector<Tensor> xy(int64_t n) {
  std::vector<float> x(static_cast<size_t>(n)), y(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    x[static_cast<size_t>(i)] = static_cast<float>(i) * 0.5f;
    y[static_cast<size_t>(i)] = 10.0f - static_cast<float>(i);
  }
  return {Tensor::from_vector(x, {n}), Tensor::from_vector(y, {n})};
}

TEST_F(ExternalCall, RunsTheRegisteredKernelOnEveryHostBackend) {
  Graph g = axpy_graph();
  EXPECT_NE(g.to_string().find("evoxc.external_call"), std::string::npos);
  EXPECT_NE(g.to_string().find("kernel = \"test.axpy\""), std::string::npos) << g.to_string();
  for (const std::string& b : host_backends()) {
    SCOPED_TRACE(b);
    Executable e = load(compile(lower(g, b)));
    for (int64_t n : {1, 5, 1000}) {
      std::vector<float> got = run1(e, xy(n));
      ASSERT_EQ(got.size(), static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i)
        EXPECT_EQ(got[static_cast<size_t>(i)],
                  2.0f * (static_cast<float>(i) * 0.5f) + 10.0f - static_cast<float>(i) + 1.0f);
    }
  }
}

TEST_F(ExternalCall, TheBackendsOwnSlotComesBeforeTheDefault) {
  Graph g = axpy_graph();
  for (const std::string& b : host_backends()) {
    SCOPED_TRACE(b);
    register_external_kernel(
        "test.axpy",
        [](std::span<const ExternalBuffer>, std::span<ExternalBuffer> out) {
          auto* o = static_cast<float*>(out[0].data);
          for (int64_t i = 0; i < out[0].numel(); ++i) o[i] = -7.0f;
        },
        b);
    EXPECT_EQ(run1(load(compile(lower(g, b))), xy(3)), (std::vector<float>{-6.0f, -6.0f, -6.0f}));
    EXPECT_TRUE(unregister_external_kernel("test.axpy", b));
    EXPECT_EQ(run1(load(compile(lower(g, b))), xy(1)), (std::vector<float>{11.0f}));
  }
  auto all = registered_external_kernels();
  EXPECT_NE(std::find(all.begin(), all.end(), std::pair<std::string, std::string>("test.axpy", "default")), all.end());
}

TEST_F(ExternalCall, AnUnregisteredKernelIsAnErrorAtLoadNamingIt) {
  // A graph saved where the kernel was registered, read back where it is not.
  Graph g = Graph::parse(axpy_graph().to_string());
  unregister_external_kernel("test.axpy");
  for (const std::string& b : host_backends()) {
    SCOPED_TRACE(b);
    CompiledArtifact a = compile(lower(g, b));
    expect_error<BackendError>([&] { load(a); }, "no kernel 'test.axpy' is registered for backend '" + b + "'");
  }
  // Executables loaded while it was registered keep what they found.
  register_external_kernel("test.axpy", axpy);
  std::vector<Executable> loaded;
  for (const std::string& b : host_backends()) loaded.push_back(load(compile(lower(g, b))));
  unregister_external_kernel("test.axpy");
  for (const Executable& e : loaded) EXPECT_EQ(run1(e, xy(1)), (std::vector<float>{11.0f}));
}

TEST_F(ExternalCall, KernelErrorsReachTheCallerTyped) {
  Graph g = axpy_graph();
  for (const std::string& b : host_backends()) {
    SCOPED_TRACE(b);
    register_external_kernel("test.axpy", [](std::span<const ExternalBuffer>, std::span<ExternalBuffer>) {
      throw ValidationError("test.axpy: refuses");
    });
    Executable e = load(compile(lower(g, b)));
    expect_error<ValidationError>([&] { run1(e, xy(2)); }, "test.axpy: refuses");
    register_external_kernel("test.axpy", [](std::span<const ExternalBuffer>, std::span<ExternalBuffer>) {
      throw std::runtime_error("out of luck");
    });
    Executable e2 = load(compile(lower(g, b)));
    expect_error<BackendError>([&] { run1(e2, xy(2)); }, "kernel 'test.axpy' failed: out of luck");
    register_external_kernel("test.axpy", axpy);
  }
}

// vmap over x only: one batch level, y expanded to a leading extent 1.
Graph batched_graph(int levels) {
  Graph g = trace(
      [](const ST& x, const ST& y) {
        std::vector<ST> args{x, y};
        return external_call("test.axpy", args, std::vector<TensorType>{TensorType(f32, Shape{3})})[0];
      },
      TensorSpec(Shape{3}, f32), TensorSpec(Shape{3}, f32));
  for (int l = 0; l < levels; ++l)
    g = vmap(g, AxisTree::tuple({AxisTree(0), AxisTree::none()}), AxisTree(0), DimExpr(l == 0 ? 4 : 2));
  return g;
}

std::vector<float> batched_want(int levels, const std::vector<float>& x, const std::vector<float>& y) {
  std::vector<float> w(x.size());
  for (size_t i = 0; i < x.size(); ++i) w[i] = 2.0f * x[i] + y[i % 3];
  (void)levels;
  return w;
}

TEST_F(ExternalCall, VmapAddsABatchLevelServedByTheBatchVariantOrOneCallPerRow) {
  for (int levels : {1, 2}) {
    Graph g = batched_graph(levels);
    EXPECT_NE(g.to_string().find("batch_dims = " + std::to_string(levels)), std::string::npos) << g.to_string();
    const int64_t rows = levels == 1 ? 4 : 8;
    std::vector<float> x(static_cast<size_t>(rows * 3)), y{1.0f, 2.0f, 3.0f};
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
    std::vector<int64_t> xs = levels == 1 ? std::vector<int64_t>{4, 3} : std::vector<int64_t>{2, 4, 3};
    std::vector<Tensor> in{Tensor::from_vector(x, xs), Tensor::from_vector(y, {3})};
    for (const std::string& b : host_backends()) {
      SCOPED_TRACE(b + " levels " + std::to_string(levels));
      axpy_calls = 0;
      EXPECT_EQ(run1(load(compile(lower(g, b))), in), batched_want(levels, x, y));
      EXPECT_EQ(axpy_calls.load(), rows);  // one call per batch position
      register_external_batch_variant("test.axpy", axpy_batched);
      axpy_calls = 0;
      batched_calls = 0;
      EXPECT_EQ(run1(load(compile(lower(g, b))), in), batched_want(levels, x, y));
      EXPECT_EQ(axpy_calls.load(), 0);
      EXPECT_EQ(batched_calls.load(), levels == 1 ? 1 : 2);  // the innermost level whole, the outer looped
      register_external_kernel("test.axpy", axpy);           // drops the batch variant with the entry
    }
  }
}

TEST_F(ExternalCall, ThePortableRunsWhereTheBackendCannotCallHostCode) {
  // A rule table without external_call stands for a backend with no host dispatch (xla, iree, the export).
  RuleTable<int, BackendError> no_host("no_host");
  for (const OpDef* d : all_ops())
    if (d->id != get_op("external_call").id) no_host.set(*d, 0);
  Graph g = axpy_graph();
  expect_error<BackendError>([&] { decompose(g, no_host); }, "no portable decomposition is registered");
  register_external_portable("test.axpy", [](std::span<const ST> a) { return std::vector<ST>{a[0] * 2.0 + a[1]}; });
  static std::vector<std::string> warnings;
  warnings.clear();
  set_warning_handler([](const std::string& m) { warnings.push_back(m); });
  Graph d = decompose(g, no_host);
  set_warning_handler(nullptr);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("portable decomposition runs instead"), std::string::npos);
  EXPECT_EQ(d.to_string().find("evoxc.external_call"), std::string::npos);
  axpy_calls = 0;
  EXPECT_EQ(run1(load(compile(lower(d))), xy(4)), run1(load(compile(lower(g))), xy(4)));
  EXPECT_EQ(axpy_calls.load(), 1);  // only the interpreter's run of g called the kernel
  // Batched: the portable is vmapped over the collapsed levels.
  set_warning_handler([](const std::string&) {});
  Graph b2 = batched_graph(2);
  Graph db = decompose(b2, no_host);
  set_warning_handler(nullptr);
  std::vector<float> x(24), y{1.0f, 2.0f, 3.0f};
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) - 5.0f;
  std::vector<Tensor> in{Tensor::from_vector(x, {2, 4, 3}), Tensor::from_vector(y, {3})};
  EXPECT_EQ(run1(load(compile(lower(db))), in), batched_want(2, x, y));
  // A portable of the wrong type is named.
  register_external_portable("test.axpy", [](std::span<const ST> a) { return std::vector<ST>{a[0] > a[1]}; });
  set_warning_handler([](const std::string&) {});
  expect_error<BackendError>([&] { decompose(g, no_host); }, "result 0 of the portable decomposition is tensor<Nxi1>");
  set_warning_handler(nullptr);
}

TEST_F(ExternalCall, HasNoDerivative) {
  Graph g = trace(
      [](const ST& x) {
        std::vector<ST> args{x, x};
        return sum(external_call("test.axpy", args, std::vector<TensorType>{TensorType(f32, Shape{3})})[0]);
      },
      TensorSpec(Shape{3}, f32));
  expect_error<TransformError>([&] { grad(g); }, "an external kernel is opaque: it has no derivative");
  expect_error<TransformError>([&] { jvp(g); }, "external_call");
}

TEST_F(ExternalCall, TheCAndTensorFormsRunToo) {
  static int user_value = 3;
  register_external_kernel("test.axpy",
                           c_kernel(
                               [](void* user, const ExternalBuffer* in, int64_t, ExternalBuffer* out, int64_t) {
                                 const auto* x = static_cast<const float*>(in[0].data);
                                 auto* o = static_cast<float*>(out[0].data);
                                 for (int64_t i = 0; i < out[0].numel(); ++i)
                                   o[i] = x[i] * static_cast<float>(*static_cast<int*>(user));
                               },
                               &user_value));
  Graph g = axpy_graph();
  for (const std::string& b : host_backends())
    EXPECT_EQ(run1(load(compile(lower(g, b))), xy(2)), (std::vector<float>{1.0f, 2.5f})) << b;
  register_external_kernel("test.axpy", tensor_kernel([](std::span<const Tensor> in, std::span<Tensor> out) {
                             ASSERT_EQ(in[0].shape(), out[0].shape());
                             const float* y = in[1].data<const float>();
                             float* o = out[0].data<float>();
                             for (int64_t i = 0; i < out[0].numel(); ++i) o[i] = y[i];
                           }));
  for (const std::string& b : host_backends())
    EXPECT_EQ(run1(load(compile(lower(g, b))), xy(2)), (std::vector<float>{11.0f, 10.0f})) << b;
}

TEST_F(ExternalCall, BadCallsAreTypedErrors) {
  const OpDef& def = get_op("external_call");
  TensorType x(f32, Shape{4, 3});
  auto infer = [&](AttrMap attrs, std::vector<TensorType> ops) { return infer_result_types(def, ops, attrs); };
  expect_error<TypeError>(
      [&] {
        infer({{"kernel", std::string("")}, {"results", std::string("tensor<f32>")}}, {x});
      },
      "the kernel's name must not be empty");
  expect_error<TypeError>(
      [&] {
        infer({{"kernel", std::string("k")}, {"results", std::string("tensor<3xq9>")}}, {x});
      },
      "result type 0 'tensor<3xq9>' does not parse");
  expect_error<TypeError>(
      [&] {
        infer({{"kernel", std::string("k")}, {"results", std::string("")}}, {x});
      },
      "at least one result type");
  expect_error<ShapeError>(
      [&] {
        infer({{"kernel", std::string("k")}, {"results", std::string("tensor<f32>")}, {"batch_dims", int64_t{1}}},
              {x, TensorType(f32, Shape{5})});
      },
      "batch level 0 has extents 4 and 5");
  expect_error<ShapeError>(
      [&] {
        infer({{"kernel", std::string("k")}, {"results", std::string("tensor<f32>")}, {"batch_dims", int64_t{3}}}, {x});
      },
      "has fewer than batch_dims = 3 axes");
  auto r = infer({{"kernel", std::string("k")},
                  {"results", std::string("tensor<2xi32>, tensor<f64>")},
                  {"batch_dims", int64_t{1}}},
                 {x, TensorType(f32, Shape{1, 7})});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].to_string(), "tensor<4x2xi32>");
  EXPECT_EQ(r[1].to_string(), "tensor<4xf64>");
  expect_error<ValidationError>([] { register_external_kernel("", axpy); }, "must not be empty");
  expect_error<ValidationError>([] { register_external_batch_variant("test.none", axpy); },
                                "has no implementation in slot 'default'");
  expect_error<TraceError>(
      [&] {
        trace(
            [](const ST& a) {
              std::vector<ST> args{a};
              return external_call("test.axpy", args, std::vector<TensorType>{})[0];
            },
            TensorSpec(Shape{3}, f32));
      },
      "give at least one result type");
}

// Several dtypes and ranks, a rank-0 operand, two results, an operand that is a transposed view.
TEST_F(ExternalCall, MixedDtypesRanksAndResults) {
  register_external_kernel("test.mix", [](std::span<const ExternalBuffer> in, std::span<ExternalBuffer> out) {
    ASSERT_EQ(in[0].rank, 2);
    ASSERT_EQ(in[1].rank, 0);
    ASSERT_EQ(in[2].dtype, DType::Bool);
    const auto* x = static_cast<const double*>(in[0].data);
    const int32_t s = *static_cast<const int32_t*>(in[1].data);
    const auto* flag = static_cast<const bool*>(in[2].data);
    auto* y = static_cast<double*>(out[0].data);
    auto* count = static_cast<int64_t*>(out[1].data);
    *count = 0;
    for (int64_t i = 0; i < in[0].shape[0]; ++i) {
      *count += flag[i] ? 1 : 0;
      for (int64_t j = 0; j < 2; ++j) y[i * 2 + j] = flag[i] ? x[i * 2 + j] * s : 0.0;
    }
  });
  Graph g = trace(
      [](const ST& xt, const ST& s, const ST& flag) {
        std::vector<ST> args{transpose(xt, std::vector<int64_t>{1, 0}), s, flag};
        return external_call(
            "test.mix", args,
            std::vector<TensorType>{TensorType(DType::F64, Shape{Dim("N"), 2}), TensorType(DType::I64, Shape{})});
      },
      TensorSpec(Shape{2, Dim("N")}, DType::F64), TensorSpec(Shape{}, DType::I32),
      TensorSpec(Shape{Dim("N")}, DType::Bool));
  // xt = [[0, 1, 2], [10, 11, 12]]: x = xt^T.
  Tensor flag = Tensor::empty({3}, DType::Bool);
  flag.data<bool>()[0] = true;
  flag.data<bool>()[1] = false;
  flag.data<bool>()[2] = true;
  std::vector<Tensor> in{Tensor::from_vector(std::vector<double>{0, 1, 2, 10, 11, 12}, {2, 3}),
                         Tensor::from_vector(std::vector<int32_t>{3}, {}), flag};
  for (const std::string& b : host_backends()) {
    SCOPED_TRACE(b);
    std::vector<Tensor> out(2);
    load(compile(lower(g, b))).execute(in, out);
    EXPECT_EQ(out[0].to_vector<double>(), (std::vector<double>{0, 30, 0, 0, 6, 36}));
    EXPECT_EQ(out[1].to_vector<int64_t>(), (std::vector<int64_t>{2}));
  }
  unregister_external_kernel("test.mix");
}

}  // namespace
}  // namespace evoxc
