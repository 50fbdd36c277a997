// End-to-end tests of the staging pipeline: trace → lower → compile → load → run, artifacts and options.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "evoxc/evoxc.h"

namespace evoxc {
namespace {

Graph quickstart_graph() {
  auto f = [](SymbolicTensor x, SymbolicTensor w) { return sum(tanh(dot(x, w)), {1}); };
  return trace(f, TensorSpec({4, 8}, f32), TensorSpec({8, 4}, f32));
}

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "/evoxc_pipeline_" + std::to_string(::getpid()) + "_" + name;
}

TEST(Pipeline, QuickstartComputesFourTanhSums) {
  Executable exe = load(compile(lower(quickstart_graph())), Device::cpu());
  Tree<Tensor> y = run(exe, ones({4, 8}), ones({8, 4}));
  const Tensor& t = y.leaf();
  ASSERT_EQ(t.shape(), (std::vector<int64_t>{4}));
  float expected = 4.0f * std::tanh(8.0f);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(t.data<float>()[i], expected, 1e-6f);
  EXPECT_EQ(t.to_string().substr(0, 8), "[3.99999");
}

TEST(Pipeline, SymbolicBatchWithDictTrees) {
  using P = std::map<std::string, SymbolicTensor>;
  auto model = [](P p, P b) {
    SymbolicTensor h = tanh(dot(b["x"], p["w1"]) + p["b1"]);
    return std::map<std::string, SymbolicTensor>{{"logits", dot(h, p["w2"])}, {"hidden", h}};
  };
  DimExpr B = Dim("B");
  std::map<std::string, TensorSpec> ps{{"w1", {{4, 8}, f32}}, {"b1", {{8}, f32}}, {"w2", {{8, 3}, f32}}};
  std::map<std::string, TensorSpec> bs{{"x", {{B, 4}, f32}}};
  Executable exe = build(model, ps, bs);
  std::map<std::string, Tensor> params{{"w1", full({4, 8}, 0.5)}, {"b1", full({8}, 0.25)}, {"w2", ones({8, 3})}};
  for (int64_t b : {1, 5, 1000}) {
    Tensor x = Tensor::empty({b, 4}, f32);
    for (int64_t i = 0; i < b * 4; ++i) x.data<float>()[i] = static_cast<float>(i % 7) * 0.1f;
    Tree<Tensor> out = run(exe, params, std::map<std::string, Tensor>{{"x", x}});
    const Tensor& logits = out["logits"].leaf();
    const Tensor& hidden = out["hidden"].leaf();
    ASSERT_EQ(logits.shape(), (std::vector<int64_t>{b, 3}));
    ASSERT_EQ(hidden.shape(), (std::vector<int64_t>{b, 8}));
    for (int64_t r = 0; r < b; ++r) {
      double s = 0;
      for (int k = 0; k < 4; ++k) s += 0.5 * x.data<float>()[r * 4 + k];
      double h = std::tanh(s + 0.25);
      EXPECT_NEAR(hidden.data<float>()[r * 8 + 3], h, 1e-5);
      EXPECT_NEAR(logits.data<float>()[r * 3 + 2], 8 * h, 1e-4);
    }
  }
}

TEST(Pipeline, EvaluateAndBuildAreShorthands) {
  auto f = [](SymbolicTensor x, double scale) { return x * scale + 1; };
  Tree<Tensor> y = evaluate(f, Tensor::from_vector<float>({1, 2, 3}, {3}), 2.0);
  EXPECT_EQ(y.leaf().to_vector<float>(), (std::vector<float>{3, 5, 7}));
}

TEST(Pipeline, ExecuteWritesIntoCallerBuffers) {
  Executable exe = load(compile(lower(quickstart_graph())));
  Tensor x = ones({4, 8}), w = ones({8, 4});
  std::vector<float> storage(4, -1.0f);
  std::vector<Tensor> outs{Tensor::borrow(storage.data(), {4}, f32)};
  std::vector<Tensor> ins{x, w};
  exe.execute(ins, outs);
  EXPECT_EQ(outs[0].raw_data(), storage.data());
  EXPECT_NEAR(storage[2], 4 * std::tanh(8.0), 1e-5);
}

TEST(Pipeline, RunIsSafeFromManyThreads) {
  auto f = [](SymbolicTensor x) { return sum(x * x, {0}); };
  Executable exe = build(f, TensorSpec({Dim("N")}, f64));
  std::vector<std::thread> threads;
  std::vector<double> got(8, 0);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 50; ++rep) {
        Tensor x = Tensor::full({t + 1}, 2.0, f64);
        got[static_cast<size_t>(t)] = run(exe, x).leaf().data<double>()[0];
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 8; ++t) EXPECT_EQ(got[static_cast<size_t>(t)], 4.0 * (t + 1));
}

TEST(Pipeline, ArtifactSavesAndLoads) {
  CompiledArtifact a = compile(lower(quickstart_graph()), CompileOptions{OptLevel("O3"), {}});
  std::string path = temp_path("q.evoxcartifact");
  a.save(path);
  CompiledArtifact b = CompiledArtifact::load(path);
  EXPECT_EQ(a.content_hash(), b.content_hash());
  EXPECT_EQ(b.options().substr(0, 12), "opt_level=O3");
  Tree<Tensor> y = run(load(b), ones({4, 8}), ones({8, 4}));
  EXPECT_NEAR(y.leaf().data<float>()[0], 4 * std::tanh(8.0f), 1e-6);
  std::remove(path.c_str());
}

TEST(PipelineErrors, CorruptedArtifactsArePersistenceErrors) {
  CompiledArtifact a = compile(lower(quickstart_graph()));
  std::string path = temp_path("c.evoxcartifact");
  a.save(path);
  std::string data;
  {
    std::ifstream in(path, std::ios::binary);
    data.assign(std::istreambuf_iterator<char>(in), {});
  }
  auto write = [&](const std::string& d) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << d;
  };
  write(data.substr(0, data.size() / 2));
  EXPECT_THROW(CompiledArtifact::load(path), PersistenceError);
  std::string flipped = data;
  flipped[flipped.size() - 3] ^= 0x20;
  write(flipped);
  EXPECT_THROW(CompiledArtifact::load(path), PersistenceError);
  write("not an artifact");
  EXPECT_THROW(CompiledArtifact::load(path), PersistenceError);
  std::string v2 = data;
  const std::string current = "\"format_version\":" + std::to_string(CompiledArtifact::kFormatVersion);
  v2.replace(v2.find(current), current.size(), "\"format_version\":9");
  write(v2);
  try {
    CompiledArtifact::load(path);
    FAIL() << "expected PersistenceError";
  } catch (const PersistenceError& e) {
    EXPECT_NE(std::string(e.what()).find("format version 9"), std::string::npos) << e.what();
  }
  std::remove(path.c_str());
  EXPECT_THROW(CompiledArtifact::load(path), PersistenceError);
}

TEST(Pipeline, OptLevelSpellingsAndPrecedence) {
  EXPECT_EQ(OptLevel("O3").value(), 3);
  EXPECT_EQ(OptLevel("1").value(), 1);
  EXPECT_EQ(OptLevel(0).value(), 0);
  EXPECT_THROW(OptLevel("O4"), ValidationError);
  EXPECT_THROW(OptLevel(7), ValidationError);
  EXPECT_THROW(OptLevel("fast"), ValidationError);
  ::unsetenv("EVOXC_OPT_LEVEL");
  EXPECT_EQ(CompileOptions{}.resolve_opt_level().first.value(), 2);
  ::setenv("EVOXC_OPT_LEVEL", "O1", 1);
  EXPECT_EQ(CompileOptions{}.resolve_opt_level().second, "env");
  EXPECT_EQ(CompileOptions{}.resolve_opt_level().first.value(), 1);
  CompileOptions opt{OptLevel(3), {}};
  EXPECT_EQ(opt.resolve_opt_level().first.value(), 3);
  opt.flags = {"-O0"};
  EXPECT_EQ(opt.resolve_opt_level().first.value(), 0);
  EXPECT_EQ(opt.resolve_opt_level().second, "flag");
  ::unsetenv("EVOXC_OPT_LEVEL");
}

TEST(Pipeline, DevicesAndBackends) {
  auto ds = devices();
  ASSERT_FALSE(ds.empty());
  EXPECT_EQ(ds[0], Device::cpu(0));
  EXPECT_THROW(get_backend("tvm"), BackendError);
  EXPECT_TRUE(get_backend("interp").capabilities().symbolic_shapes);
  CompiledArtifact a = compile(lower(quickstart_graph()));
  EXPECT_THROW(load(a, Device::cuda(0)), DeviceError);
  EXPECT_EQ(Device::parse("hip:1"), Device::rocm(1));
  EXPECT_THROW(Device::parse("tpu"), ValidationError);
}

TEST(PipelineErrors, RunBoundaryChecks) {
  Executable exe = load(compile(lower(quickstart_graph())));
  EXPECT_THROW(run(exe, ones({4, 8})), ValidationError);
  EXPECT_THROW(run(exe, ones({4, 8}), ones({8, 5})), ValidationError);
  EXPECT_THROW(run(exe, ones({4, 8}, f64), ones({8, 4})), ValidationError);
  try {
    run(exe, ones({4, 8}), std::vector<Tensor>{ones({8, 4})});
    FAIL() << "expected ValidationError";
  } catch (const ValidationError& e) {
    EXPECT_NE(std::string(e.what()).find("[1]"), std::string::npos) << e.what();
  }
}

TEST(PipelineErrors, SymbolicConflictAtRun) {
  auto f = [](SymbolicTensor a, SymbolicTensor b) { return a + b; };
  DimExpr B = Dim("B");
  Executable exe = build(f, TensorSpec({B}, f32), TensorSpec({B}, f32));
  EXPECT_EQ(run(exe, ones({3}), ones({3})).leaf().numel(), 3);
  EXPECT_THROW(run(exe, ones({3}), ones({4})), ValidationError);
}

}  // namespace
}  // namespace evoxc
