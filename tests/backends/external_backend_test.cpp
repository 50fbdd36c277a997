// The external-compiler adapter on a fake compiler (the module is the StableHLO text; running it runs the graph on
// the interpreter): lowering with decompositions, artifacts through bytes, identity checks, callback errors.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>

#include "evoxc/backends/external.h"
#include "evoxc/evoxc.h"

namespace evoxc {
namespace {

std::string g_identity = "fake 1.0";
std::atomic<int> g_compiles{0};
std::atomic<int> g_last_level{-1};
bool g_fail_compile = false;

// Runs the module's graph on the interpreter.
class FakeExecutable final : public ExecutableImpl {
 public:
  explicit FakeExecutable(Executable exe) : exe_(std::move(exe)) {}
  void execute(std::span<const Tensor> inputs, std::span<Tensor> outputs) const override {
    exe_.execute(inputs, outputs);
  }

 private:
  Executable exe_;
};

const bool registered = [] {
  ExternalCompiler c;
  c.name = "fake_external";
  c.device_kinds = {Device::Kind::Cpu};
  for (int i = 0; i < kNumDTypes; ++i) c.dtypes.push_back(static_cast<DType>(i));
  c.not_native = {{"cholesky", "the fake compiler has no cholesky"}, {"svd", "the fake compiler has no svd"}};
  c.identity = [] { return g_identity; };
  c.compile = [](const std::string& text, int level, const std::vector<std::string>&) {
    if (g_fail_compile) throw std::runtime_error("the fake compiler refused");
    ++g_compiles;
    g_last_level = level;
    return ExternalModule{"fake-cpu", text};
  };
  c.load = [](const ExternalModule& m, const Graph& g, Device) -> std::shared_ptr<const ExecutableImpl> {
    if (m.target != "fake-cpu" || m.bytes.find("stablehlo") == std::string::npos)
      throw PersistenceError("fake: not a module of mine");
    return std::make_shared<FakeExecutable>(load(compile(lower(g, "interp"))));
  };
  return register_external_backend(std::move(c));
}();

Graph spd_program() {
  return trace(
      [](const SymbolicTensor& a) {
        SymbolicTensor s = matmul(a, transpose(a)) + 4.0 * linalg::inv(linalg::cholesky(identity(3, DType::F64) * 3.0));
        return linalg::cholesky(s) + tanh(a);
      },
      TensorSpec(Shape{3, 3}, DType::F64));
}

Tensor input() {
  Tensor a = Tensor::empty({3, 3}, DType::F64);
  for (int i = 0; i < 9; ++i) a.data<double>()[i] = 0.1 * i - 0.3;
  return a;
}

void expect_equal(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.shape(), b.shape());
  for (int64_t i = 0; i < a.numel(); ++i) EXPECT_NEAR(a.data<double>()[i], b.data<double>()[i], 1e-12) << i;
}

TEST(ExternalBackend, LowersTheExportWithoutWhatTheCompilerCannotTakeAndRuns) {
  ASSERT_TRUE(registered);
  Graph g = spd_program();
  LoweredProgram l = lower(g, "fake_external");
  EXPECT_EQ(l.text().find("cholesky"), std::string::npos);
  EXPECT_NE(l.text().find("stablehlo.while"), std::string::npos);
  EXPECT_NE(lower(g, "stablehlo").text().find("stablehlo.cholesky"), std::string::npos);
  int before = g_compiles;
  CompiledArtifact art = compile(l, CompileOptions{OptLevel(1), {}});
  EXPECT_EQ(g_compiles, before + 1);
  EXPECT_EQ(g_last_level, 1);
  EXPECT_EQ(art.target(), "fake-cpu");
  EXPECT_EQ(art.header().cpu, get_backend("fake_external").identity());
  Tensor want = run(build_graph(g), input()).leaf();
  expect_equal(run(load(art), input()).leaf(), want);
  // Through bytes: the module comes back from the payload, not the compiler.
  CompiledArtifact back = CompiledArtifact::from_bytes(art.to_bytes());
  expect_equal(run(load(back), input()).leaf(), want);
  EXPECT_EQ(g_compiles, before + 1);
}

TEST(ExternalBackend, AnArtifactOfAnotherCompilerIsRefused) {
  CompiledArtifact art = compile(lower(spd_program(), "fake_external"));
  std::string bytes = art.to_bytes();
  g_identity = "fake 2.0";
  EXPECT_THROW(
      {
        try {
          CompiledArtifact::from_bytes(bytes);
        } catch (const PersistenceError& e) {
          EXPECT_NE(std::string(e.what()).find("compiled by 'fake 1.0"), std::string::npos) << e.what();
          throw;
        }
      },
      PersistenceError);
  g_identity = "fake 1.0";
  EXPECT_NO_THROW(CompiledArtifact::from_bytes(bytes));
}

TEST(ExternalBackend, CallbackErrorsNameTheBackendAndUnsupportedOpsTheReason) {
  g_fail_compile = true;
  try {
    compile(lower(spd_program(), "fake_external"));
    ADD_FAILURE() << "expected a BackendError";
  } catch (const BackendError& e) {
    EXPECT_NE(std::string(e.what()).find("fake_external: compile: the fake compiler refused"), std::string::npos)
        << e.what();
  }
  g_fail_compile = false;
  Graph s = trace([](const SymbolicTensor& a) { return linalg::svdvals(a); }, TensorSpec(Shape{3, 3}, DType::F64));
  try {
    lower(s, "fake_external");
    ADD_FAILURE() << "expected a BackendError";
  } catch (const BackendError& e) {
    EXPECT_NE(std::string(e.what()).find("the fake compiler has no svd"), std::string::npos) << e.what();
  }
}

TEST(ExternalBackend, CoverageShowsDecomposedOpsAndTheCompilersDeferrals) {
  const RuleTableBase& t = get_backend("fake_external").lowered_ops();
  EXPECT_TRUE(t.has(get_op("cholesky").id));  // through its decomposition
  EXPECT_TRUE(t.has(get_op("add").id));
  EXPECT_FALSE(t.has(get_op("svd").id));
  ASSERT_NE(t.deferral(get_op("svd").id), nullptr);
}

}  // namespace
}  // namespace evoxc
