// Tests of the xla backend on a real PJRT plugin (XLA's CPU plugin from PyPI, installed into .venv by make):
// results against the interpreter, every dtype, control flow, caller buffers and zero-copy outputs, threads,
// artifacts that reload without recompiling, and the must-fail cases (plugin versions, symbolic shapes, identity).
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <thread>

#include "evoxc/evoxc.h"
#include "evoxc/trace/control.h"
#if EVOXC_HAS_XLA
#include "backends/xla/pjrt.h"
#include "evoxc/backends/xla.h"
#endif

namespace evoxc {
namespace {

using ST = SymbolicTensor;

#if !EVOXC_HAS_XLA
TEST(XlaBackend, Skipped) { GTEST_SKIP() << "this build has no xla backend (no PJRT C API header at configure time)"; }
#else

// The plugin: discovery's, with the project's .venv searched too (where `make` installs the CPU plugin).
bool plugin(std::string* why) {
  static const bool searched = [] {
    std::error_code ec;
    std::vector<std::string> dirs;
    for (const auto& e : std::filesystem::directory_iterator(std::string(EVOXC_TEST_VENV) + "/lib", ec))
      dirs.push_back((e.path() / "site-packages").string());
    xla::add_search_directories(dirs);
    return true;
  }();
  (void)searched;
  return xla::available(why);
}
#define REQUIRE_PLUGIN()                                                            \
  do {                                                                              \
    std::string why;                                                                \
    if (!plugin(&why)) GTEST_SKIP() << "no PJRT plugin loads here (" << why << ")"; \
  } while (0)

Executable build_xla(const Graph& g) { return load(compile(lower(g, "xla"))); }

void expect_same(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what;
  if (is_float(want.dtype())) {
    double tol = want.dtype() == f64 ? 1e-12 : want.dtype() == f32 ? 2e-6 : 2e-3;
    for (int64_t i = 0; i < got.numel(); ++i) {
      double a = got.get_as_double(i), b = want.get_as_double(i);
      if (!(std::isnan(a) && std::isnan(b))) {
        EXPECT_NEAR(a, b, tol * (1 + std::abs(b))) << what << " [" << i << "]";
      }
    }
  } else {
    EXPECT_EQ(std::memcmp(got.raw_data(), want.raw_data(), got.nbytes()), 0) << what;
  }
}

std::vector<Tensor> run_both(const Graph& g, const std::vector<Tensor>& in) {
  Executable x = build_xla(g), i = build_graph(g);
  std::vector<Tensor> ox(g.num_outputs()), oi(g.num_outputs());
  x.execute(in, ox);
  i.execute(in, oi);
  for (size_t j = 0; j < ox.size(); ++j) expect_same(ox[j], oi[j], "output " + std::to_string(j));
  return ox;
}

Tensor ramp(std::vector<int64_t> shape, DType dtype, double scale = 0.25, double offset = -2.0) {
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) v[static_cast<size_t>(k)] = offset + scale * static_cast<double>(k % 17);
  Tensor x = Tensor::from_vector(v, shape);
  if (dtype == f64) return x;
  return evaluate([dtype](ST a) { return convert(a, dtype); }, x).leaf();
}

TEST(XlaBackend, PluginIsXlasCpuPluginWithAMatchingApi) {
  REQUIRE_PLUGIN();
  const xla::PluginInfo& info = xla::plugin_info();
  EXPECT_EQ(info.platform, "cpu");
  EXPECT_EQ(info.api_major, xla::header_api_version().first);
  EXPECT_GE(info.api_minor, xla::header_api_version().second);
  EXPECT_FALSE(info.devices.empty());
  EXPECT_TRUE(std::filesystem::exists(info.path)) << info.path;
}

TEST(XlaBackend, RunsLikeTheInterpreter) {
  REQUIRE_PLUGIN();
  Graph g = trace([](ST a, ST b) { return tanh(a * b + a) - exp(b * 0.5); }, TensorSpec({1000}, f32),
                  TensorSpec({1000}, f32));
  run_both(g, {ramp({1000}, f32), ramp({1000}, f32, 0.1, -0.7)});
}

TEST(XlaBackend, ReductionsMatmulAndSeveralOutputs) {
  REQUIRE_PLUGIN();
  Graph g = trace(
      [](ST a, ST b) {
        ST m = matmul(a, b);
        return std::make_tuple(sum(m, {1}), max(a, {0}), m);
      },
      TensorSpec({8, 5}, f64), TensorSpec({5, 3}, f64));
  run_both(g, {ramp({8, 5}, f64), ramp({5, 3}, f64, 0.5, 1.0)});
}

TEST(XlaBackend, EveryDTypeRoundTripsExactly) {
  REQUIRE_PLUGIN();
  for (int k = 0; k < kNumDTypes; ++k) {
    DType t = static_cast<DType>(k);
    Graph g = t == DType::Bool
                  ? trace([](ST a, ST b) { return logical_and(a, b); }, TensorSpec({3, 4}, t), TensorSpec({3, 4}, t))
                  : trace([](ST a, ST b) { return a + b * b; }, TensorSpec({3, 4}, t), TensorSpec({3, 4}, t));
    double scale = is_float(t) ? 0.25 : 1.0, offset = is_signed_int(t) || is_float(t) ? -3 : 0;
    SCOPED_TRACE(dtype_name(t));
    if (t == DType::Bool)
      run_both(g, {ramp({3, 4}, t, 1, 0), ramp({3, 4}, t, 1, -1)});
    else
      run_both(g, {ramp({3, 4}, t, scale, offset), ramp({3, 4}, t, scale, offset)});
  }
}

TEST(XlaBackend, ControlFlowRankZeroAndZeroSize) {
  REQUIRE_PLUGIN();
  using C = std::tuple<ST, ST>;
  Graph loop = trace(
      [](ST n, ST x) {
        return while_loop([&](const C& c) { return less(std::get<0>(c), n); },
                          [&](const C& c) {
                            return C{std::get<0>(c) + int64_t{1}, std::get<1>(c) * 0.5 + 1.0};
                          },
                          C{fill(Shape(), 0, i64), x});
      },
      TensorSpec({}, i64), TensorSpec({4}, f32));
  run_both(loop, {Tensor::scalar<int64_t>(7), ramp({4}, f32)});
  Graph empty = trace([](ST a) { return sum(a * 2.0, {0}); }, TensorSpec({0, 3}, f32));
  std::vector<Tensor> out = run_both(empty, {Tensor::empty({0, 3}, f32)});
  EXPECT_EQ(out[0].to_vector<float>(), std::vector<float>({0, 0, 0}));
}

TEST(XlaBackend, CallerOutputsAreWrittenInPlaceAndOthersDoNotAliasInputs) {
  REQUIRE_PLUGIN();
  Graph g = trace([](ST a, ST b) { return std::make_tuple(a + b, a); }, TensorSpec({64}, f32), TensorSpec({64}, f32));
  Executable x = build_xla(g);
  Tensor a = ramp({64}, f32), b = ramp({64}, f32, 1, 0);
  std::vector<Tensor> out{Tensor::zeros({64}, f32), Tensor()};
  void* caller = out[0].raw_data();
  x.execute(std::vector<Tensor>{a, b}, out);
  EXPECT_EQ(out[0].raw_data(), caller);
  EXPECT_FLOAT_EQ(out[0].to_vector<float>()[5], -2.0f + 0.25f * 5 + 5.0f);
  // The second output is the input itself: it must not share the caller's input memory.
  EXPECT_NE(out[1].raw_data(), a.raw_data());
  float before = out[1].to_vector<float>()[3];
  a.data<float>()[3] = 1234.0f;
  EXPECT_EQ(out[1].to_vector<float>()[3], before);
}

TEST(XlaBackend, ManyThreadsCallOneExecutable) {
  REQUIRE_PLUGIN();
  Graph g = trace([](ST a, ST s) { return a * s + 1.0; }, TensorSpec({256}, f32), TensorSpec({}, f32));
  Executable x = build_xla(g);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t)
    threads.emplace_back([&, t] {
      Tensor a = Tensor::full({256}, 2.0f, f32);
      for (int k = 0; k < 200; ++k) {
        std::vector<Tensor> out(1);
        x.execute(std::vector<Tensor>{a, Tensor::scalar<float>(static_cast<float>(t * 1000 + k))}, out);
        float want = 2.0f * static_cast<float>(t * 1000 + k) + 1.0f;
        if (out[0].to_vector<float>()[255] != want) ++wrong;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(XlaBackend, ArtifactsReloadWithoutRecompilingAndRefuseAnotherPlugin) {
  REQUIRE_PLUGIN();
  Graph g = trace([](ST a) { return sin(a) * 2.0; }, TensorSpec({16}, f32));
  CompiledArtifact art = compile(lower(g, "xla"));
  ASSERT_NE(art.native(), nullptr);
  std::string bytes = art.to_bytes();
  CompiledArtifact back = CompiledArtifact::from_bytes(bytes);
  EXPECT_EQ(back.native(), nullptr);
  EXPECT_EQ(back.header().cpu, art.header().cpu);
  Tensor a = ramp({16}, f32);
  std::vector<Tensor> o1(1), o2(1);
  load(art).execute(std::vector<Tensor>{a}, o1);
  load(back).execute(std::vector<Tensor>{a}, o2);
  EXPECT_EQ(o1[0].to_vector<float>(), o2[0].to_vector<float>());

  ArtifactHeader other = back.header();
  other.cpu = "pjrt cpu some-other-version";
  CompiledArtifact foreign(other, back.graph(), back.payload());
  EXPECT_THROW(load(foreign), PersistenceError);
  std::string payload = back.payload();
  payload.resize(payload.size() - payload.size() / 3);
  CompiledArtifact cut(back.header(), back.graph(), payload);
  EXPECT_THROW(load(cut), PersistenceError);
}

TEST(XlaBackend, MustFail) {
  REQUIRE_PLUGIN();
  // Symbolic shapes: PJRT compiles static programs.
  Graph sym = trace([](ST a) { return a + 1.0; }, TensorSpec({Dim("N")}, f32));
  try {
    lower(sym, "xla");
    ADD_FAILURE() << "a symbolic graph lowered for xla";
  } catch (const BackendError& e) {
    EXPECT_NE(std::string(e.what()).find("symbolic"), std::string::npos) << e.what();
  }
  // Inputs of the wrong shape or dtype.
  Executable x = build_xla(trace([](ST a) { return a * 2.0; }, TensorSpec({4}, f32)));
  std::vector<Tensor> out(1);
  EXPECT_THROW(x.execute(std::vector<Tensor>{Tensor::zeros({5}, f32)}, out), ValidationError);
  EXPECT_THROW(x.execute(std::vector<Tensor>{Tensor::zeros({4}, f64)}, out), ValidationError);
  // A device the plugin does not have, one it has that is not device 0, and another kind than its platform's.
  CompiledArtifact id = compile(lower(trace([](ST a) { return a; }, TensorSpec({4}, f32)), "xla"));
  EXPECT_THROW(load(id, Device::cpu(999)), DeviceError);
  if (xla::plugin_info().devices.size() > 1) {
    EXPECT_THROW(load(id, Device::cpu(1)), DeviceError);
  }
  EXPECT_THROW(load(id, Device(Device::Kind::Cuda, 0)), DeviceError);
  // One plugin per process: initialize after the first use.
  try {
    xla::initialize({"cpu", "", {}});
    ADD_FAILURE() << "initialize after the plugin loaded";
  } catch (const BackendError& e) {
    EXPECT_NE(std::string(e.what()).find("before the first use"), std::string::npos) << e.what();
  }
}

TEST(XlaPlugin, VersionMismatchNamesBothVersions) {
  auto expect_refused = [](const char* version, const char* words) {
    ::setenv("EVOXC_FAKE_PJRT_VERSION", version, 1);
    try {
      xla_backend::Plugin p(EVOXC_FAKE_PJRT_PLUGIN, {});
      ADD_FAILURE() << "the fake plugin " << version << " loaded";
    } catch (const BackendError& e) {
      std::string m = e.what();
      EXPECT_NE(m.find(std::string("implements PJRT C API ") + version), std::string::npos) << m;
      EXPECT_NE(m.find(words), std::string::npos) << m;
    }
  };
  auto [major, minor] = xla::header_api_version();
  std::string ours = std::to_string(major) + "." + std::to_string(minor);
  expect_refused("0.1", ("compiled against " + ours).c_str());
  expect_refused("1.200", ("compiled against " + ours).c_str());
  ::unsetenv("EVOXC_FAKE_PJRT_VERSION");
}

TEST(XlaPlugin, MissingOrNonPluginLibrariesAreBackendErrors) {
  EXPECT_THROW(xla_backend::Plugin("/nonexistent/libpjrt.so", {}), BackendError);
  try {
    xla_backend::Plugin p("libm.so.6", {});
    ADD_FAILURE() << "libm loaded as a plugin";
  } catch (const BackendError& e) {
    EXPECT_NE(std::string(e.what()).find("no GetPjrtApi symbol"), std::string::npos) << e.what();
  }
}
#endif

}  // namespace
}  // namespace evoxc
