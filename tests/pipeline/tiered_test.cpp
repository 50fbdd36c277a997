// TieredExecutable: first tier at once, the switch to the compiled tier, pinning, failures, cancellation on
// drop, calls from many threads across the switch (built with TSan by `make test-tsan`), and mlir when built.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "evoxc/evoxc.h"

namespace evoxc {
namespace {

using ST = SymbolicTensor;
using namespace std::chrono_literals;

// A compiled tier the test controls: its compile waits until the gate opens (or the compile is cancelled),
// fails when asked, and its executable is the interpreter's, counting its calls.
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
  bool fail = false;
  std::atomic<int> compiles{0}, cancelled{0}, calls{0};
  void reset() {
    std::lock_guard<std::mutex> lock(mu);
    open = false;
    fail = false;
    compiles = 0;
    cancelled = 0;
    calls = 0;
  }
  void release() {
    {
      std::lock_guard<std::mutex> lock(mu);
      open = true;
    }
    cv.notify_all();
  }
};
Gate& gate() {
  static Gate g;
  return g;
}

class CountingImpl final : public ExecutableImpl {
 public:
  explicit CountingImpl(Executable inner) : inner_(std::move(inner)) {}
  void execute(std::span<const Tensor> inputs, std::span<Tensor> outputs) const override {
    gate().calls.fetch_add(1);
    inner_.implementation().execute(inputs, outputs);
  }

 private:
  Executable inner_;
};

class GateBackend final : public Backend {
 public:
  GateBackend() : Backend(caps()) {}
  CompiledArtifact deserialize(const ArtifactHeader&, std::string) const override {
    throw PersistenceError("test_gate: no payloads");
  }

 protected:
  LoweredProgram lower_verified(const Graph& graph) const override {
    return LoweredProgram(name(), graph, std::string("test_gate program"));
  }
  CompiledArtifact compile_lowered(const LoweredProgram& lowered, const CompileOptions& options) const override {
    Gate& g = gate();
    g.compiles.fetch_add(1);
    std::unique_lock<std::mutex> lock(g.mu);
    while (!g.open) {
      if (options.cancel && options.cancel->cancelled()) {
        g.cancelled.fetch_add(1);
        throw BackendError("test_gate: compile cancelled");
      }
      g.cv.wait_for(lock, 1ms);
    }
    if (g.fail) throw BackendError("test_gate: this program does not compile");
    ArtifactHeader h{name(), "cpu", "", "", ""};
    return CompiledArtifact(h, lowered.graph(), [](const Graph&) { return std::string(); }, {{"gate", 0.0}});
  }
  Executable load_artifact(const CompiledArtifact& artifact, Device device) const override {
    return Executable(name(), device, artifact.graph(), std::make_shared<CountingImpl>(build_graph(artifact.graph())));
  }

 private:
  static Capabilities caps() {
    Capabilities c = get_backend("interp").capabilities();
    c.backend = "test_gate";
    c.serializable_artifact = false;
    return c;
  }
};

[[maybe_unused]] const bool registered = register_backend("test_gate", [] { return std::make_unique<GateBackend>(); });

Graph program() {
  return trace([](const ST& x) { return sin(x) * 2.0 + x * x; }, TensorSpec({64}, f32));
}

Tensor input(float scale = 0.1f) {
  std::vector<float> v(64);
  for (size_t i = 0; i < v.size(); ++i) v[i] = scale * static_cast<float>(i) - 3.0f;
  return Tensor::from_vector(v, {64});
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

TieredOptions gated(int64_t after = 0) {
  TieredOptions o;
  o.compiled_backend = "test_gate";
  o.compile_after_calls = after;
  return o;
}

class Tiered : public ::testing::Test {
 protected:
  void SetUp() override { gate().reset(); }
};

TEST_F(Tiered, RunsOnTheFirstTierUntilTheCompiledOneIsReady) {
  Graph g = program();
  Tensor x = input();
  Tensor want = run(build_graph(g), x).leaf();
  TieredExecutable t(g, gated());
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(t.tier(), Tier::First);
    EXPECT_TRUE(same_bits(run(t.executable(), x).leaf(), want));
  }
  EXPECT_FALSE(t.ready());
  EXPECT_FALSE(t.compiled().has_value());
  TierReport r = t.report();
  EXPECT_EQ(r.compile, TierReport::Compile::Running);
  EXPECT_EQ(r.first_calls, 3);
  EXPECT_EQ(r.compiled_calls, 0);
  EXPECT_EQ(gate().calls.load(), 0);
  EXPECT_FALSE(t.wait(10ms));  // still gated: times out
  gate().release();
  ASSERT_TRUE(t.wait());
  EXPECT_TRUE(t.ready());
  EXPECT_EQ(t.tier(), Tier::Compiled);
  EXPECT_TRUE(same_bits(t.run(Tree<Tensor>::tuple({Tree<Tensor>(x)})).leaf(), want));
  EXPECT_EQ(gate().calls.load(), 1);
  r = t.report();
  EXPECT_EQ(r.compile, TierReport::Compile::Ready);
  EXPECT_EQ(r.first_calls, 3);
  EXPECT_EQ(r.compiled_calls, 1);
  EXPECT_EQ(r.first_backend, "interp");
  EXPECT_EQ(r.compiled_backend, "test_gate");
  ASSERT_EQ(r.stages.size(), 1u);
  EXPECT_EQ(r.stages[0].stage, "gate");
  EXPECT_GT(r.compile_seconds, 0.0);
  EXPECT_EQ(t.executable().backend(), "tiered");
  EXPECT_EQ(t.first().backend(), "interp");
  EXPECT_EQ(t.compiled()->backend(), "test_gate");
  EXPECT_EQ(gate().compiles.load(), 1);
}

TEST_F(Tiered, PinningChoosesTheTier) {
  Graph g = program();
  Tensor x = input();
  TieredExecutable t(g, gated());
  t.pin(Tier::First);
  gate().release();
  ASSERT_TRUE(t.wait());
  EXPECT_EQ(t.tier(), Tier::First);
  (void)run(t.executable(), x);
  EXPECT_EQ(gate().calls.load(), 0);
  EXPECT_EQ(t.report().pinned, Tier::First);
  t.pin(std::nullopt);
  (void)run(t.executable(), x);
  EXPECT_EQ(gate().calls.load(), 1);
  t.pin(Tier::Compiled);
  EXPECT_EQ(t.tier(), Tier::Compiled);
  (void)run(t.executable(), x);
  EXPECT_EQ(gate().calls.load(), 2);
  EXPECT_EQ(t.report().first_calls, 1);
  EXPECT_EQ(t.report().compiled_calls, 2);
}

TEST_F(Tiered, PinningTheCompiledTierWaitsForIt) {
  TieredExecutable t(program(), gated());
  std::thread opener([] {
    std::this_thread::sleep_for(20ms);
    gate().release();
  });
  t.pin(Tier::Compiled);  // blocks until the gate opens
  opener.join();
  EXPECT_TRUE(t.ready());
  (void)run(t.executable(), input());
  EXPECT_EQ(gate().calls.load(), 1);
}

TEST_F(Tiered, CompileStartsAfterTheGivenNumberOfCalls) {
  gate().release();
  TieredExecutable t(program(), gated(3));
  Tensor x = input();
  (void)run(t.executable(), x);
  (void)run(t.executable(), x);
  EXPECT_EQ(t.report().compile, TierReport::Compile::NotStarted);
  EXPECT_EQ(gate().compiles.load(), 0);
  (void)run(t.executable(), x);  // the third call starts it
  ASSERT_TRUE(t.wait());
  EXPECT_EQ(gate().compiles.load(), 1);
  (void)run(t.executable(), x);
  EXPECT_EQ(gate().calls.load(), 1);
  EXPECT_EQ(t.report().first_calls, 3);
}

TEST_F(Tiered, StartCompileStartsItEarly) {
  gate().release();
  TieredExecutable t(program(), gated(1000));
  EXPECT_EQ(t.report().compile, TierReport::Compile::NotStarted);
  t.start_compile();
  ASSERT_TRUE(t.wait());
  t.start_compile();  // a no-op now
  EXPECT_EQ(gate().compiles.load(), 1);
}

TEST_F(Tiered, AFailedCompileLeavesTheProgramOnTheFirstTier) {
  gate().fail = true;
  gate().release();
  Graph g = program();
  Tensor x = input();
  TieredExecutable t(g, gated());
  EXPECT_FALSE(t.wait());
  TierReport r = t.report();
  EXPECT_EQ(r.compile, TierReport::Compile::Failed);
  EXPECT_NE(r.error.find("this program does not compile"), std::string::npos) << r.error;
  EXPECT_TRUE(same_bits(run(t.executable(), x).leaf(), run(build_graph(g), x).leaf()));
  EXPECT_EQ(t.tier(), Tier::First);
  try {
    t.pin(Tier::Compiled);
    FAIL() << "pinning a failed compiled tier must raise";
  } catch (const BackendError& e) {
    EXPECT_NE(std::string(e.what()).find("failed: test_gate: this program does not compile"), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(t.report().pinned.has_value());
}

TEST_F(Tiered, ACompiledBackendThatCannotTakeTheProgramFailsInTheBackground) {
  // stablehlo lowers but has no executable: the error is the report's, calls stay on the interpreter.
  TieredOptions o;
  o.compiled_backend = "stablehlo";
  TieredExecutable t(program(), o);
  EXPECT_FALSE(t.wait());
  EXPECT_EQ(t.report().compile, TierReport::Compile::Failed);
  EXPECT_FALSE(t.report().error.empty());
  (void)run(t.executable(), input());
  EXPECT_EQ(t.report().first_calls, 1);
}

TEST_F(Tiered, DroppingItWhileCompilingCancelsTheCompile) {
  auto t0 = std::chrono::steady_clock::now();
  {
    TieredExecutable t(program(), gated());
    while (gate().compiles.load() == 0) std::this_thread::sleep_for(1ms);
    Executable copy = t.executable();
    (void)run(copy, input());
  }  // the last handle: cancels the gated compile and joins its thread
  EXPECT_EQ(gate().cancelled.load(), 1);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);
}

TEST_F(Tiered, TheExecutableKeepsTheTiersAliveAfterTheHandleGoes) {
  gate().release();
  Executable exe;
  {
    TieredExecutable t(program(), gated());
    ASSERT_TRUE(t.wait());
    exe = t.executable();
  }
  Tensor x = input();
  EXPECT_TRUE(same_bits(run(exe, x).leaf(), run(build_graph(program()), x).leaf()));
  EXPECT_EQ(gate().calls.load(), 1);
}

TEST_F(Tiered, CallsFromManyThreadsAcrossTheSwitch) {
  Graph g = program();
  std::vector<Tensor> xs;
  std::vector<Tensor> want;
  Executable ref = build_graph(g);
  for (int i = 0; i < 8; ++i) {
    xs.push_back(input(0.05f + 0.01f * static_cast<float>(i)));
    want.push_back(run(ref, xs.back()).leaf());
  }
  constexpr int kThreads = 8, kCalls = 150;
  TieredExecutable t(g, gated());
  std::atomic<int> bad{0}, started{0};
  std::vector<std::thread> threads;
  for (int k = 0; k < kThreads; ++k) {
    threads.emplace_back([&, k] {
      started.fetch_add(1);
      std::vector<Tensor> out(1);
      for (int c = 0; c < kCalls; ++c) {
        size_t i = static_cast<size_t>((k + c) % 8);
        if (c % 2) {
          t.execute(std::span<const Tensor>(&xs[i], 1), out);
          if (!same_bits(out[0], want[i])) bad.fetch_add(1);
        } else if (!same_bits(run(t.executable(), xs[i]).leaf(), want[i])) {
          bad.fetch_add(1);
        }
        if (c == kCalls / 3 && k == 0) gate().release();  // the switch happens mid-stream
        if (c == kCalls / 2 && k == 1) (void)t.report();
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
  ASSERT_TRUE(t.wait());
  TierReport r = t.report();
  EXPECT_EQ(r.first_calls + r.compiled_calls, kThreads * kCalls);
  EXPECT_GT(r.first_calls, 0);
  EXPECT_EQ(r.compiled_calls, gate().calls.load());
}

TEST_F(Tiered, RunOptionsReachTheTierThatRuns) {
  gate().release();
  Graph g = trace(
      [](const ST& x) {
        return while_loop([](const ST& c) { return sum(c) > -1.0; }, [](const ST& c) { return c + 1.0; }, x);
      },
      TensorSpec({4}, f32));
  TieredExecutable t(g, gated());
  ASSERT_TRUE(t.wait());
  RunOptions o;
  o.max_loop_iterations = 5;
  // The gate's executable cannot stop a loop: the limited call runs on the interpreter, which stops it.
  EXPECT_THROW((void)run_with(o, t.executable(), Tensor::zeros({4}, f32)), RunLimitError);
  t.pin(Tier::Compiled);
  EXPECT_THROW((void)run_with(o, t.executable(), Tensor::zeros({4}, f32)), BackendError);
}

TEST_F(Tiered, BadOptionsAreTypedErrors) {
  TieredOptions o;
  o.compile_after_calls = -1;
  EXPECT_THROW(TieredExecutable(program(), o), ValidationError);
  o = TieredOptions();
  o.compiled_backend = "no_such_backend";
  EXPECT_THROW(TieredExecutable(program(), o), BackendError);
  o = TieredOptions();
  o.first_backend = "stablehlo";  // has no executable: the first tier must load
  EXPECT_THROW(TieredExecutable(program(), o), BackendError);
}

TEST(CompileCancel, ATrippedTokenStopsACompile) {
  auto token = std::make_shared<CancellationToken>();
  token->cancel();
  CompileOptions co;
  co.cancel = token;
  try {
    (void)compile(lower(program()), co);
    FAIL() << "a cancelled compile must raise";
  } catch (const BackendError& e) {
    EXPECT_NE(std::string(e.what()).find("compile cancelled"), std::string::npos) << e.what();
  }
  token->reset();
  EXPECT_NO_THROW((void)compile(lower(program()), co));
}

// The real pair: interpreter first, mlir compiled in the background (when this build has it).
TEST(TieredMlir, SwitchesToCompiledCodeWithinTheDocumentedTolerance) {
  if (!find_backend("mlir")) GTEST_SKIP() << "this build has no mlir backend (EVOXC_MLIR=OFF)";
  Graph g = trace([](const ST& x, const ST& y) { return sum(tanh(x) * y + log(abs(x) + 1.0), {1}); },
                  TensorSpec({16, 256}, f32), TensorSpec({16, 256}, f32));
  std::vector<float> xv(16 * 256), yv(16 * 256);
  for (size_t i = 0; i < xv.size(); ++i) {
    xv[i] = static_cast<float>(i % 97) * 0.07f - 3.0f;
    yv[i] = static_cast<float>(i % 13) * 0.3f - 1.5f;
  }
  Tensor x = Tensor::from_vector(xv, {16, 256}), y = Tensor::from_vector(yv, {16, 256});
  TieredExecutable t(g);
  Tensor first = run(t.first(), x, y).leaf();
  ASSERT_TRUE(t.wait()) << t.report().error;
  EXPECT_EQ(t.tier(), Tier::Compiled);
  Tensor compiled = run(t.executable(), x, y).leaf();
  std::vector<float> a = first.to_vector<float>(), b = compiled.to_vector<float>();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-5 * std::max(1.0f, std::abs(a[i]))) << i;
  TierReport r = t.report();
  EXPECT_EQ(r.compiled_calls, 1);
  std::vector<std::string> names;
  for (const StageTime& s : r.stages) names.push_back(s.stage);
  EXPECT_EQ(names, (std::vector<std::string>{"context", "parse", "mlir passes", "translate", "llvm opt", "codegen"}));
  EXPECT_GT(r.lower_seconds, 0.0);
}

TEST(TieredMlir, DroppingItCancelsAnMlirCompile) {
  if (!find_backend("mlir")) GTEST_SKIP() << "this build has no mlir backend (EVOXC_MLIR=OFF)";
  Graph g = program();
  for (int i = 0; i < 5; ++i) {  // dropped at once: cancelled at a stage boundary or finished, never a crash
    TieredExecutable t(g);
    (void)run(t.executable(), input());
    TierReport::Compile c = t.report().compile;
    EXPECT_TRUE(c == TierReport::Compile::Running || c == TierReport::Compile::Ready) << compile_state_name(c);
  }
}

}  // namespace
}  // namespace evoxc
