// Tests of the xla backend on a real PJRT plugin (XLA's CPU plugin from PyPI, installed into .venv by make):
// results against the interpreter, every dtype, control flow, caller buffers and zero-copy outputs, threads,
// artifacts that reload without recompiling, and the must-fail cases (plugin versions, symbolic shapes, identity).
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <thread>

#include "evoxc/evoxc.h"
#include "evoxc/trace/control.h"
#if EVOXC_HAS_XLA
#include "backends/xla/pjrt.h"
#include "backends/xla_util.h"
#include "evoxc/backends/xla.h"
#include "evoxc/ops/extension.h"
#endif

namespace evoxc {
namespace {

using ST = SymbolicTensor;

#if !EVOXC_HAS_XLA
TEST(XlaBackend, Skipped) { GTEST_SKIP() << "this build has no xla backend (no PJRT C API header at configure time)"; }
#else

#define REQUIRE_PLUGIN() REQUIRE_XLA_PLUGIN()

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
  // A device the plugin does not have, and another kind than its platform's (other devices: xla_device_test.cpp).
  CompiledArtifact id = compile(lower(trace([](ST a) { return a; }, TensorSpec({4}, f32)), "xla"));
  EXPECT_THROW(load(id, Device::cpu(999)), DeviceError);
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

// ---- stablehlo_call and xla::Program: StableHLO modules from outside evoxc (JAX exports) ----

// A module as JAX prints it: attributes and locations on the signature, a private helper, #loc aliases after it.
constexpr const char* kModuleA =
    R"(module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3xf32> {mhlo.layout_mode = "default"} loc("x"), %arg1: tensor<f32> loc("s")) -> (tensor<3xf32> {jax.result_info = "[0]"}, tensor<i32> {jax.result_info = "[1]"}) {
    %0 = call @helper(%arg0) : (tensor<3xf32>) -> tensor<3xf32> loc(#loc3)
    %1 = stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<f32>) -> tensor<3xf32> loc(#loc4)
    %2 = stablehlo.multiply %0, %1 : tensor<3xf32> loc(#loc4)
    %c = stablehlo.constant dense<7> : tensor<i32> loc(#loc)
    return %2, %c : tensor<3xf32>, tensor<i32> loc(#loc)
  } loc(#loc)
  func.func private @helper(%arg0: tensor<3xf32> loc("x")) -> tensor<3xf32> {
    %0 = stablehlo.sine %arg0 : tensor<3xf32> loc(#loc5)
    return %0 : tensor<3xf32> loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc3 = loc("jit(f)/helper"(#loc))
#loc4 = loc("jit(f)/mul")
#loc5 = loc("sin")
)";

// Another module with the same symbol and alias names (@main, @helper, #loc), which must not clash with A's.
constexpr const char* kModuleB = R"(#loc = loc("b")
module @jit_g {
  func.func public @main(%arg0: tensor<3xf32>) -> tensor<3xf32> {
    %0 = func.call @helper(%arg0) : (tensor<3xf32>) -> tensor<3xf32> loc(#loc)
    return %0 : tensor<3xf32>
  }
  func.func private @helper(%arg0: tensor<3xf32>) -> tensor<3xf32> {
    %0 = stablehlo.add %arg0, %arg0 : tensor<3xf32>
    return %0 : tensor<3xf32>
  }
}
)";

TEST(StablehloSignature, ReadsJaxSignaturesAndRefusesWhatEvoxcCannotHold) {
  StablehloSignature sig = parse_stablehlo_signature(kModuleA);
  ASSERT_EQ(sig.inputs.size(), 2u);
  EXPECT_EQ(sig.inputs[0], TensorType(f32, Shape{3}));
  EXPECT_EQ(sig.inputs[1], TensorType(f32, Shape{}));
  ASSERT_EQ(sig.outputs.size(), 2u);
  EXPECT_EQ(sig.outputs[1], TensorType(i32, Shape{}));
  EXPECT_EQ(parse_stablehlo_signature(kModuleB).outputs, std::vector<TensorType>{TensorType(f32, Shape{3})});
  auto refused = [](const std::string& text, const std::string& words) {
    try {
      (void)parse_stablehlo_signature(text);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const TypeError& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  refused("module { func.func public @main(%a: tensor<?xf32>) -> tensor<f32> { } }", "a dynamic extent ('?')");
  refused("module { func.func public @main(%a: tensor<2xcomplex<f32>>) { } }", "element type 'complex'");
  refused("module { func.func public @main(%a: tensor<2xf8E4M3FN>) { } }", "element type 'f8E4M3FN'");
  refused("module { func.func private @f() { } }", "has no `func.func public @main(...)`");
  refused("module { func.func public @main(%a: tensor<2xf32, #enc>) { } }", "a tensor type with an encoding");
}

TEST(StablehloCall, TypesComeFromTheModuleAndOperandsAreChecked) {
  Graph g = trace(
      [](ST x, ST s) {
        std::vector<ST> in{x, s};
        auto r = stablehlo_call(kModuleA, in);
        return std::make_tuple(r[0], r[1]);
      },
      TensorSpec({3}, f32), TensorSpec({}, f32));
  EXPECT_EQ(g.output_specs()[1].dtype, i32);
  try {
    (void)trace(
        [](ST x) {
          std::vector<ST> in{x, x};
          return stablehlo_call(kModuleA, in)[0];
        },
        TensorSpec({4}, f32));
    ADD_FAILURE() << "a tensor<4xf32> operand was accepted for tensor<3xf32>";
  } catch (const TypeError& e) {
    EXPECT_NE(std::string(e.what()).find("operand 0 is tensor<4xf32>, the module's @main takes tensor<3xf32>"),
              std::string::npos)
        << e.what();
  }
  // Nowhere but where StableHLO runs: each table says so.
  auto says = [&](auto&& f, const std::string& words) {
    try {
      f();
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  says([&] { (void)lower(g, "interp"); }, "build the graph with backend=\"xla\"");
  says([&] { (void)vmap(g); }, "opaque to evoxc's transforms");
  if (find_backend("mlir")) says([&] { (void)lower(g, "mlir"); }, "has no StableHLO");
}

TEST(StablehloCall, ModulesAreEmbeddedApartAndRunInsideEvoxcGraphs) {
  REQUIRE_PLUGIN();
  // z = B(A(x, s)[0]) + A(x, s)[1] + A(x, s)[0]: two modules with clashing names, one of them called twice.
  Graph g = trace(
      [](ST x, ST s) {
        std::vector<ST> in{x, s};
        auto a = stablehlo_call(kModuleA, in);
        auto again = stablehlo_call(kModuleA, in);
        std::vector<ST> b_in{a[0]};
        ST b = stablehlo_call(kModuleB, b_in)[0];
        return b + convert(a[1], f32) + again[0];
      },
      TensorSpec({3}, f32), TensorSpec({}, f32));
  std::string text = lower(g, "stablehlo").text();
  for (const char* want : {"func.func private @evoxc_m0_main", "func.func private @evoxc_m0_helper",
                           "func.func private @evoxc_m1_main", "func.func private @evoxc_m1_helper",
                           "#evoxc_m0_loc3 = loc(\"jit(f)/helper\"(#evoxc_m0_loc))", "#evoxc_m1_loc = loc(\"b\")"})
    EXPECT_NE(text.find(want), std::string::npos) << want << "\n" << text;
  EXPECT_EQ(text.find("@evoxc_m2_"), std::string::npos) << "module A was embedded twice:\n" << text;
  Executable exe = load(compile(lower(g, "xla")));
  Tensor x = Tensor::from_vector<float>({0.5f, -1.0f, 2.0f}, {3});
  Tensor s = Tensor::scalar<float>(3.0f);
  Tensor z = run(exe, x, s).leaf();
  for (int i = 0; i < 3; ++i) {
    float a0 = std::sin(x.data<float>()[i]) * 3.0f;
    EXPECT_NEAR(z.data<float>()[i], a0 + a0 + 7.0f + a0, 2e-5) << i;
  }
}

TEST(StablehloCall, OnlyTheModulesOwnSymbolsAreRenamed) {
  // A custom call's target and a quoted symbol: the target is no symbol of the module and keeps its name.
  const char* m = R"(module {
  func.func public @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
    %0 = stablehlo.custom_call @lapack_spotrf_ffi(%arg0) : (tensor<2xf32>) -> tensor<2xf32>
    %1 = func.call @"odd name"(%0) : (tensor<2xf32>) -> tensor<2xf32>
    return %1 : tensor<2xf32>
  }
  func.func private @"odd name"(%arg0: tensor<2xf32>) -> tensor<2xf32> {
    return %arg0 : tensor<2xf32>
  }
})";
  Graph g = trace(
      [&](ST x) {
        std::vector<ST> in{x};
        return stablehlo_call(m, in)[0];
      },
      TensorSpec({2}, f32));
  std::string text = lower(g, "stablehlo").text();
  EXPECT_NE(text.find("stablehlo.custom_call @lapack_spotrf_ffi("), std::string::npos) << text;
  EXPECT_NE(text.find("func.call @\"evoxc_m0_odd name\"(%0)"), std::string::npos) << text;
  EXPECT_NE(text.find("func.func private @\"evoxc_m0_odd name\""), std::string::npos) << text;
  EXPECT_NE(text.find("{callee = @evoxc_m0_main}"), std::string::npos) << text;
}

TEST(XlaProgram, FromTextSavesLoadsCompilesAndRuns) {
  xla::Program p = xla::Program::from_text(kModuleA);
  EXPECT_EQ(p.input_specs().size(), 2u);
  EXPECT_EQ(p.text(), kModuleA);
  std::string path =
      (std::filesystem::temp_directory_path() / ("evoxc_xla_program_" + std::to_string(::getpid()) + ".evoxcgraph"))
          .string();
  p.save(path);
  xla::Program back = xla::Program::load(path);
  EXPECT_EQ(back.text(), kModuleA);
  EXPECT_EQ(back.graph().output_tree().structure_string(), "(*, *)");
  EXPECT_EQ(xla::Program::from_text(kModuleB, true).graph().output_tree().structure_string(), "*");
  EXPECT_THROW(xla::Program::from_text(kModuleA, true), ValidationError);
  // Another graph is not a program.
  Graph other = trace([](ST x) { return x + 1.0; }, TensorSpec({3}, f32));
  EXPECT_THROW(xla::Program::from_graph(other), BackendError);
  REQUIRE_PLUGIN();
  Executable exe = back.compile();
  Tensor x = Tensor::from_vector<float>({0.25f, 1.0f, -2.0f}, {3});
  Tree<Tensor> out = run(exe, x, Tensor::scalar<float>(-2.0f));
  for (int i = 0; i < 3; ++i)
    EXPECT_NEAR(out.children()[0].leaf().data<float>()[i], std::sin(x.data<float>()[i]) * -2.0f, 2e-6);
  EXPECT_EQ(out.children()[1].leaf().data<int32_t>()[0], 7);
  std::filesystem::remove(path);
}

TEST(XlaFfi, RegistrationChecksItsArgumentsAndAnUnhandledTargetIsNamedAtCompile) {
  EXPECT_THROW(xla::register_ffi_target("", reinterpret_cast<void*>(1)), ValidationError);
  EXPECT_THROW(xla::register_ffi_target("evoxc_target", nullptr), ValidationError);
  REQUIRE_PLUGIN();
  xla::Program p = xla::Program::from_text(R"(module {
  func.func public @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
    %0 = stablehlo.custom_call @evoxc_unregistered_target(%arg0) {api_version = 4 : i32} : (tensor<2xf32>) -> tensor<2xf32>
    return %0 : tensor<2xf32>
  }
})");
  try {
    (void)p.compile();
    ADD_FAILURE() << "a custom call without a handler compiled";
  } catch (const BackendError& e) {
    EXPECT_NE(std::string(e.what()).find("evoxc_unregistered_target"), std::string::npos) << e.what();
  }
}

TEST(XlaProgram, APluginsRefusalIsABackendErrorAtCompile) {
  REQUIRE_PLUGIN();
  xla::Program p = xla::Program::from_text(R"(module {
  func.func public @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
    %0 = stablehlo.frobnicate %arg0 : tensor<2xf32>
    return %0 : tensor<2xf32>
  }
})");
  try {
    (void)p.compile();
    ADD_FAILURE() << "an unknown StableHLO op compiled";
  } catch (const BackendError& e) {
    EXPECT_NE(std::string(e.what()).find("frobnicate"), std::string::npos) << e.what();
  }
}
#endif

}  // namespace
}  // namespace evoxc
