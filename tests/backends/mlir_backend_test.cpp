// Tests of the mlir backend's pipeline and persistence: compile/load/run against the interpreter, object-code
// artifacts that load without recompiling, CPU/feature and corruption checks, LoweredProgram as .mlir text.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <thread>

#include "evoxc/evoxc.h"
#include "evoxc/trace/control.h"
#if EVOXC_HAS_MLIR
#include "backends/mlir/codegen/codegen.h"
#endif

namespace evoxc {
namespace {

using ST = SymbolicTensor;

bool have_mlir() { return find_backend("mlir") != nullptr; }
#define REQUIRE_MLIR() \
  if (!have_mlir()) GTEST_SKIP() << "this build has no mlir backend (configured with -DEVOXC_MLIR=OFF)"

Graph chain_graph() {
  return trace([](ST a, ST b) { return tanh(a * b + a); }, TensorSpec({1000}, f32), TensorSpec({1000}, f32));
}

std::vector<Tensor> inputs() {
  std::vector<float> a(1000), b(1000);
  for (int i = 0; i < 1000; ++i) {
    a[i] = static_cast<float>(i % 37) / 10.0f - 1.5f;
    b[i] = static_cast<float>(i % 11) / 5.0f - 1.0f;
  }
  return {Tensor::from_vector(a, {1000}), Tensor::from_vector(b, {1000})};
}

std::vector<float> run_flat(const Executable& e, const std::vector<Tensor>& in) {
  std::vector<Tensor> out(1);
  e.execute(in, out);
  return out[0].to_vector<float>();
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 2e-6f + 2e-5f * std::abs(want[i])) << i;
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / (name + std::to_string(getpid()))).string();
}

TEST(MlirBackend, RunsLikeTheInterpreter) {
  REQUIRE_MLIR();
  Graph g = chain_graph();
  LoweredProgram low = lower(g, "mlir");
  EXPECT_NE(low.text().find("linalg.generic"), std::string::npos);
  EXPECT_NE(low.text().find("math.tanh"), std::string::npos);
  Executable e = load(compile(low));
  expect_close(run_flat(e, inputs()), run_flat(load(compile(lower(g))), inputs()));
}

TEST(MlirBackend, EveryOptLevelComputesTheSame) {
  REQUIRE_MLIR();
  Graph g = chain_graph();
  std::vector<float> want = run_flat(load(compile(lower(g))), inputs());
  for (int level = 0; level <= 3; ++level) {
    CompiledArtifact a = compile(lower(g, "mlir"), CompileOptions{OptLevel(level), {}});
    EXPECT_NE(a.options().find("opt_level=O" + std::to_string(level)), std::string::npos) << a.options();
    expect_close(run_flat(load(a), inputs()), want);
  }
}

TEST(MlirBackend, ArtifactHoldsObjectCodeAndLoadsWithoutRecompiling) {
  REQUIRE_MLIR();
  Graph g = chain_graph();
  CompiledArtifact a = compile(lower(g, "mlir"));
  EXPECT_FALSE(a.header().cpu.empty());
  EXPECT_NE(a.header().cpu_features.find('+'), std::string::npos);
  std::string path = temp_path("evoxc_mlir_art");
  a.save(path);
  auto t0 = std::chrono::steady_clock::now();
  CompiledArtifact b = CompiledArtifact::load(path);
  Executable e = load(b);
  double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::filesystem::remove(path);
  EXPECT_EQ(b.header().cpu, a.header().cpu);
  expect_close(run_flat(e, inputs()), run_flat(load(a), inputs()));
  // Linking object code takes milliseconds; compiling takes tens of milliseconds at least.
  EXPECT_LT(load_s, 1.0);
}

TEST(MlirBackend, MismatchedCpuOrFeaturesIsAPersistenceError) {
  REQUIRE_MLIR();
  CompiledArtifact a = compile(lower(chain_graph(), "mlir"));
  std::string bytes = a.to_bytes();
  for (const auto& [from, to] : {std::pair<std::string, std::string>{a.header().cpu, "x86_64-pc-linux-gnu i386"},
                                 std::pair<std::string, std::string>{"+avx", "+nonexistent"}}) {
    std::string changed = bytes;
    size_t at = changed.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    changed.replace(at, from.size(), to);
    try {
      CompiledArtifact::from_bytes(changed);
      ADD_FAILURE() << "loaded an artifact for another CPU (" << to << ")";
    } catch (const PersistenceError& e) {
      EXPECT_NE(std::string(e.what()).find("compile it again here"), std::string::npos) << e.what();
    }
  }
}

TEST(MlirBackend, TruncatedOrCorruptedArtifactIsAnError) {
  REQUIRE_MLIR();
  std::string bytes = compile(lower(chain_graph(), "mlir")).to_bytes();
  for (size_t cut : {bytes.size() / 2, bytes.size() - 1, size_t{40}})
    EXPECT_THROW(CompiledArtifact::from_bytes(bytes.substr(0, cut)), PersistenceError) << cut;
  std::string flipped = bytes;
  flipped[flipped.size() - 100] ^= 0x55;
  EXPECT_THROW(CompiledArtifact::from_bytes(flipped), PersistenceError);
}

TEST(MlirBackend, SymbolicShapesRunAtEveryExtent) {
  REQUIRE_MLIR();
  Graph g = trace([](ST a, ST b) { return exp(a) * b + a; }, TensorSpec({Dim("N")}, f32), TensorSpec({Dim("N")}, f32));
  Executable m = load(compile(lower(g, "mlir")));
  Executable i = load(compile(lower(g)));
  for (int64_t n : {0, 1, 7, 1000}) {
    std::vector<float> a(static_cast<size_t>(n)), b(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) {
      a[k] = static_cast<float>(k % 5) - 2.0f;
      b[k] = static_cast<float>(k % 3);
    }
    std::vector<Tensor> in{Tensor::from_vector(a, {n}), Tensor::from_vector(b, {n})};
    expect_close(run_flat(m, in), run_flat(i, in));
  }
  std::vector<Tensor> bad{Tensor::zeros({3}, f32), Tensor::zeros({4}, f32)};
  std::vector<Tensor> out(1);
  EXPECT_THROW(m.execute(bad, out), ValidationError);
}

TEST(MlirBackend, CallerOutputsAreWrittenInPlace) {
  REQUIRE_MLIR();
  Executable e = load(compile(lower(chain_graph(), "mlir")));
  std::vector<Tensor> out{Tensor::zeros({1000}, f32)};
  const void* where = out[0].raw_data();
  e.execute(inputs(), out);
  EXPECT_EQ(out[0].raw_data(), where);
  expect_close(out[0].to_vector<float>(), run_flat(e, inputs()));
}

TEST(MlirBackend, LoweredProgramSavesAndLoadsAsMlirText) {
  REQUIRE_MLIR();
  LoweredProgram low = lower(chain_graph(), "mlir");
  std::string path = temp_path("evoxc_lowered") + ".mlir";
  low.save(path);
  LoweredProgram back = LoweredProgram::load(path);
  EXPECT_EQ(back.backend(), "mlir");
  EXPECT_EQ(back.text(), low.text());
  expect_close(run_flat(load(compile(back)), inputs()), run_flat(load(compile(low)), inputs()));
  // Truncating the trailer line leaves a file load() refuses.
  std::string data = read_file(path);
  write_file_atomic(path, data.substr(0, data.rfind("// evoxc-lowered")));
  EXPECT_THROW(LoweredProgram::load(path), PersistenceError);
  std::filesystem::remove(path);
}

TEST(MlirBackend, BadTextIsABackendErrorWithDiagnostics) {
  REQUIRE_MLIR();
  Graph g = chain_graph();
  LoweredProgram broken("mlir", g, std::string("module { func.func @main(%a: tensor<4xf32>) { nonsense } }"));
  try {
    compile(broken);
    ADD_FAILURE() << "compiled nonsense";
  } catch (const BackendError& e) {
    EXPECT_NE(std::string(e.what()).find("does not parse"), std::string::npos) << e.what();
  }
}

// At O2 large loops run in blocks on the async runtime's pool: results equal the interpreter's while
// two threads run and free executables at once (an executable's code is freed only once no worker
// is still returning through it).
TEST(MlirBackend, ParallelBlocksFromTwoThreadsWhileExecutablesAreFreed) {
  REQUIRE_MLIR();
  const int64_t rows = 512, cols = 1024;
  Graph g = trace([](ST x) { return sum(tanh(x * x + x), Axes{1}); }, TensorSpec({rows, cols}, f32));
  std::vector<float> x(static_cast<size_t>(rows * cols));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 101) / 50.0f - 1.0f;
  std::vector<Tensor> in = {Tensor::from_vector(x, {rows, cols})};
  std::vector<float> want = run_flat(load(compile(lower(g))), in);
  CompiledArtifact a = compile(lower(g, "mlir"), CompileOptions{OptLevel(2), {}});
  ASSERT_NE(a.options().find("threads="), std::string::npos);
  auto work = [&] {
    for (int round = 0; round < 20; ++round) {
      Executable e = load(a);
      std::vector<float> got = run_flat(e, in);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-3f + 1e-5f * std::abs(want[i])) << i;
    }
  };
  std::thread other(work);
  work();
  other.join();
}

// Multi-dimensional loops with reductions inside, split into blocks at O2: each block must run once
// (upstream's block-aligned dispatch ran one twice, doubling 32x32 and 64x64 matmuls).
TEST(MlirBackend, SplitLoopsRunEachBlockOnce) {
  REQUIRE_MLIR();
  for (int64_t n : {32, 48, 64, 100}) {
    Graph g = trace([](ST a, ST b) { return matmul(a, b) + sum(a, Axes{1}, true); }, TensorSpec({n, n}, f32),
                    TensorSpec({n, n}, f32));
    std::vector<float> a(static_cast<size_t>(n * n)), b(a.size());
    for (size_t i = 0; i < a.size(); ++i) {
      a[i] = static_cast<float>(i % 13) / 6.0f - 1.0f;
      b[i] = static_cast<float>(i % 7) / 3.0f - 1.0f;
    }
    std::vector<Tensor> in = {Tensor::from_vector(a, {n, n}), Tensor::from_vector(b, {n, n})};
    std::vector<float> want = run_flat(load(compile(lower(g))), in);
    std::vector<float> got = run_flat(load(compile(lower(g, "mlir"), CompileOptions{OptLevel(2), {}})), in);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_NEAR(got[i], want[i], 1e-3f + 1e-4f * std::abs(want[i])) << n << " " << i;
  }
}

// At O2 the independent operands of a wide concatenate (a merged population's stacked results) run as groups on the
// pool, each group's ops outlined into a function: results equal the interpreter's with an operand that is an input
// as it is, a value shared by all operands, one value in two groups' operands, and a concat along axis 1.
TEST(MlirBackend, WideConcatRunsItsOperandsInParallel) {
  REQUIRE_MLIR();
  const int64_t n = 16384;
  Graph g = trace(
      [](ST x, ST y) {
        ST shared = cos(x);
        std::vector<ST> parts;
        for (int k = 0; k < 8; ++k) parts.push_back(sin(x * static_cast<double>(k + 1)) + shared);
        parts.push_back(x);
        parts.push_back(parts[0]);
        ST rows = concatenate({tanh(y) * 2.0, y, exp(-y)}, 1);
        return std::vector<ST>{concatenate(parts, 0), rows};
      },
      TensorSpec({n}, f32), TensorSpec({64, 512}, f32));
  std::vector<float> x(static_cast<size_t>(n)), y(64 * 512);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 97) / 30.0f - 1.5f;
  for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<float>(i % 89) / 40.0f - 1.0f;
  std::vector<Tensor> in = {Tensor::from_vector(x, {n}), Tensor::from_vector(y, {64, 512})};
  std::vector<Tensor> want(2), got(2);
  load(compile(lower(g))).execute(in, want);
  LoweredProgram low = lower(g, "mlir");
  load(compile(low, CompileOptions{OptLevel(2), {}})).execute(in, got);
  for (size_t r = 0; r < 2; ++r) {
    ASSERT_EQ(got[r].shape(), want[r].shape()) << r;
    expect_close(got[r].to_vector<float>(), want[r].to_vector<float>());
  }
#if EVOXC_HAS_MLIR
  mlir_codegen::CodegenOptions two;
  two.threads = 2;
  std::string loops = mlir_codegen::lower_to_loops(low.text(), two);
  // Both concats split: the first into 3 groups (about 115k iterations of work), the second into 2 (65k).
  size_t functions = 0;
  for (size_t at = loops.find("func.func private @evoxc_concat_part_"); at != std::string::npos;
       at = loops.find("func.func private @evoxc_concat_part_", at + 1))
    ++functions;
  EXPECT_EQ(functions, 5u);
  EXPECT_NE(loops.find("async"), std::string::npos);
  mlir_codegen::CodegenOptions one;  // one thread: the concat stays as it is
  EXPECT_EQ(mlir_codegen::lower_to_loops(low.text(), one).find("evoxc_concat_part_"), std::string::npos);
#endif
}

// A chain of row_switch ops (a merged population) runs as one group: at two threads one dispatch on the pool
// for all its loops, each block running every member over its rows; results equal the interpreter's. A small
// loop (work known at compile time, under one block) is not dispatched at all.
TEST(MlirBackend, LargeModulesCompileInPartsOnThreads) {
  REQUIRE_MLIR();
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "one core: the module is compiled whole";
  // 192 independent programs stacked: ParallelConcat makes groups of them functions of their own, and the module is
  // large enough to be split, its parts optimised and emitted on threads, linked from one archive.
  const int64_t n = 4096;
  Graph g = trace(
      [](ST x) {
        std::vector<ST> parts;
        for (int k = 0; k < 192; ++k) {
          double a = 0.01 * (k + 1);
          parts.push_back(tanh(tanh(x * a + 0.5) * (x - a)) + tanh(x * x * a));
        }
        return concatenate(parts, 0);
      },
      TensorSpec({n}, f32));
  CompiledArtifact a = compile(lower(g, "mlir"), CompileOptions{OptLevel(2), {}});
  bool split = false;
  for (const StageTime& st : a.stage_times()) split = split || st.stage == "split";
  EXPECT_TRUE(split) << a.options();
  std::vector<float> x(static_cast<size_t>(n));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 101) / 25.0f - 2.0f;
  std::vector<Tensor> in = {Tensor::from_vector(x, {n})};
  std::vector<float> got = run_flat(load(a), in);
  expect_close(got, run_flat(load(compile(lower(g))), in));
  // The saved artifact links its parts again without compiling, to the same bits.
  std::string path = temp_path("evoxc_mlir_parts");
  a.save(path);
  CompiledArtifact b = CompiledArtifact::load(path);
  std::filesystem::remove(path);
  EXPECT_EQ(run_flat(load(b), in), got);
}

TEST(MlirBackend, RowSwitchChainIsOneDispatch) {
  REQUIRE_MLIR();
  std::string rows;
  for (int i = 0; i < 32; ++i) rows += (i ? ", " : "") + std::to_string((i * 5 + i / 7) % 3);
  auto op = [&](int k, const std::string& in, const std::string& variants) {
    return "    %" + std::to_string(k) + " = evoxc.row_switch(" + in + ") attributes {rows = [" + rows +
           "], variants = \"" + variants + "\"} : tensor<32x512xf32>\n";
  };
  Graph g =
      Graph::parse(std::string("module @\"main\" version 1 attributes {inputs = \"(*, *)\", outputs = \"*\"} {\n") +
                   "  func @main(%arg0: tensor<32x512xf32>, %arg1: tensor<512xf32>) -> tensor<32x512xf32> {\n" +
                   op(0, "%arg0, %arg1", "add,multiply,maximum") + op(1, "%0", "tanh,neg,abs") +
                   op(2, "%1, %arg1", "subtract,add,minimum") + "    evoxc.return(%2)\n  }\n}\n");
  std::vector<float> x(32 * 512), y(512);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 101) / 25.0f - 2.0f;
  for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<float>(i % 13) / 6.0f - 1.0f;
  std::vector<Tensor> in = {Tensor::from_vector(x, {32, 512}), Tensor::from_vector(y, {512})};
  std::vector<Tensor> want(1), got(1);
  load(compile(lower(g))).execute(in, want);
  LoweredProgram low = lower(g, "mlir");
  load(compile(low, CompileOptions{OptLevel(2), {}})).execute(in, got);
  expect_close(got[0].to_vector<float>(), want[0].to_vector<float>());
#if EVOXC_HAS_MLIR
  auto count = [](const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count(low.text(), "evoxc.row_runs"), 3u);
  mlir_codegen::CodegenOptions two;
  two.threads = 2;
  EXPECT_EQ(count(mlir_codegen::lower_to_loops(low.text(), two), "async.runtime.create_group"), 1u);
  mlir_codegen::CodegenOptions one;
  EXPECT_EQ(count(mlir_codegen::lower_to_loops(low.text(), one), "async."), 0u);
  // 1000 elements of tanh(a * b + a): far under one block's work.
  EXPECT_EQ(count(mlir_codegen::lower_to_loops(lower(chain_graph(), "mlir").text(), two), "async."), 0u);
#endif
}

// RunOptions on compiled code: a while loop ticks the call's budget before each body iteration, so the
// iteration cap is exact (the body's iterations, as on the interpreter), a CancellationToken tripped from another
// thread and a deadline stop a loop that would never end, and the executable serves the next call.
TEST(MlirBackend, RunOptionsStopCompiledLoops) {
  REQUIRE_MLIR();
  using C = std::tuple<ST, ST>;
  Graph g = trace(
      [](ST n, ST x) {
        return while_loop([&](const C& c) { return less(std::get<0>(c), n); },
                          [&](const C& c) {
                            return C{std::get<0>(c) + int64_t{1}, std::get<1>(c) * 0.5 + 1.0};
                          },
                          C{fill(Shape(), 0, i64), x});
      },
      TensorSpec({}, i64), TensorSpec({4}, f32));
  Executable exe = load(compile(lower(g, "mlir")));
  auto inputs = [](int64_t n) {
    return Tree<Tensor>::tuple({Tree<Tensor>(Tensor::scalar<int64_t>(n)), Tree<Tensor>(Tensor::full({4}, 3.0f))});
  };
  auto count = [](const Tree<Tensor>& out) { return out[0].leaf().data<const int64_t>()[0]; };
  auto limit_error = [](const std::function<void()>& fn) {
    try {
      fn();
    } catch (const RunLimitError& e) {
      return std::string(e.what());
    }
    return std::string("no RunLimitError");
  };
  constexpr int64_t kForever = std::numeric_limits<int64_t>::max();
  RunOptions capped;
  capped.max_loop_iterations = 7;
  EXPECT_EQ(count(exe.run(inputs(7), capped)), 7);
  std::string msg = limit_error([&] { exe.run(inputs(8), capped); });
  EXPECT_NE(msg.find("evoxc.while_loop at"), std::string::npos) << msg;
  EXPECT_NE(msg.find("max_loop_iterations = 7"), std::string::npos) << msg;

  auto token = std::make_shared<CancellationToken>();
  RunOptions o;
  o.cancel = token;
  std::atomic<bool> started{false};
  std::thread canceller([&] {
    while (!started.load()) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    token->cancel();
  });
  msg = limit_error([&] {
    started.store(true);
    exe.run(inputs(kForever), o);
  });
  canceller.join();
  EXPECT_NE(msg.find("cancelled through its CancellationToken"), std::string::npos) << msg;
  msg = limit_error([&] { exe.run(inputs(5), o); });
  EXPECT_NE(msg.find("before the call started"), std::string::npos) << msg;
  token->reset();
  EXPECT_EQ(count(exe.run(inputs(5), o)), 5);

  auto t0 = std::chrono::steady_clock::now();
  msg = limit_error([&] { exe.run(inputs(kForever), RunOptions::with_timeout(std::chrono::milliseconds(30))); });
  EXPECT_NE(msg.find("deadline passed"), std::string::npos) << msg;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  EXPECT_EQ(count(exe.run(inputs(3))), 3);
}

// float32/float64 matrix products go to BLAS: row-major, transposed and strided (sliced) operands,
// empty contractions and empty results equal the interpreter's.
TEST(MlirBackend, BlasMatmulTakesEveryOperandLayout) {
  REQUIRE_MLIR();
  auto check = [](Graph g, std::vector<Tensor> in) {
    std::vector<Tensor> want(1), got(1);
    load(compile(lower(g))).execute(in, want);
    Executable e = load(compile(lower(g, "mlir")));
    e.execute(in, got);
    ASSERT_EQ(got[0].shape(), want[0].shape());
    if (got[0].dtype() == f64) {
      std::vector<double> a = got[0].to_vector<double>(), b = want[0].to_vector<double>();
      for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], 1e-9 + 1e-12 * std::abs(b[i])) << i;
    } else {
      expect_close(got[0].to_vector<float>(), want[0].to_vector<float>());
    }
  };
  auto matrix = [](int64_t r, int64_t c, DType t) {
    std::vector<double> v(static_cast<size_t>(r * c));
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i % 17) / 8.0 - 1.0;
    if (t == f64) return Tensor::from_vector(v, {r, c});
    return Tensor::from_vector(std::vector<float>(v.begin(), v.end()), {r, c});
  };
  for (DType t : {f32, f64}) {
    check(trace([](ST a, ST b) { return matmul(a, b); }, TensorSpec({5, 7}, t), TensorSpec({7, 3}, t)),
          {matrix(5, 7, t), matrix(7, 3, t)});
    check(trace([](ST a, ST b) { return matmul(transpose(a), transpose(b)); }, TensorSpec({7, 5}, t),
                TensorSpec({3, 7}, t)),
          {matrix(7, 5, t), matrix(3, 7, t)});
    check(trace(
              [](ST a, ST b) {
                return matmul(slice(a, {1, 2}, {6, 9}), slice(b, {0, 0}, {7, 5}, {1, 2}));
              },
              TensorSpec({8, 10}, t), TensorSpec({9, 5}, t)),
          {matrix(8, 10, t), matrix(9, 5, t)});
    check(trace([](ST a, ST b) { return matmul(a, b); }, TensorSpec({4, 0}, t), TensorSpec({0, 3}, t)),
          {matrix(4, 0, t), matrix(0, 3, t)});
    check(trace([](ST a, ST b) { return matmul(a, b); }, TensorSpec({0, 6}, t), TensorSpec({6, 3}, t)),
          {matrix(0, 6, t), matrix(6, 3, t)});
  }
}

}  // namespace
}  // namespace evoxc
