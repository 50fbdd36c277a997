// Tests of the C ABI (evoxc/c_api.h): saved executables of every backend loaded, described and executed into
// caller buffers from C calls; symbolic extents; outputs that alias inputs; many threads on one handle; and the
// must-fail set of bad calls, each with its status and message.
#include "evoxc/c_api.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "evoxc/capi/handle.h"
#include "evoxc/evoxc.h"
#ifdef EVOXC_HAS_XLA
#include "evoxc/backends/xla.h"
#endif

namespace evoxc {
namespace {

using ST = SymbolicTensor;

std::string temp_path(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("evoxc_capi_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

// The backends that compile and run here: the interpreter, mlir when built, xla when a plugin loads.
std::vector<std::string> runnable_backends() {
  std::vector<std::string> out{"interp"};
#ifdef EVOXC_HAS_MLIR
  out.push_back("mlir");
#endif
#ifdef EVOXC_HAS_XLA
  std::error_code ec;
  std::vector<std::string> dirs;
  for (const auto& e : std::filesystem::directory_iterator(std::string(EVOXC_TEST_VENV) + "/lib", ec))
    dirs.push_back((e.path() / "site-packages").string());
  xla::add_search_directories(dirs);
  if (xla::available()) out.push_back("xla");
#endif
  return out;
}

// f(x, y) = {"s": sum(x * y + x), "z": x * y + x} on f32[4]: a scalar and a vector output.
Graph affine_graph() {
  return trace(
      [](ST x, ST y) {
        ST z = x * y + x;
        return std::map<std::string, ST>{{"s", sum(z, {0})}, {"z", z}};
      },
      TensorSpec({4}, f32), TensorSpec({4}, f32));
}

std::string save(const Graph& g, const std::string& backend, const std::string& name) {
  std::string path = temp_path(name + "_" + backend + ".evoxcartifact");
  compile(lower(g, backend)).save(path);
  return path;
}

evoxc_executable* load_or_fail(const std::string& path) {
  evoxc_executable* exe = nullptr;
  evoxc_status st = evoxc_executable_load(path.c_str(), nullptr, &exe);
  EXPECT_EQ(st, EVOXC_OK) << evoxc_last_error();
  return exe;
}

evoxc_buffer buffer(void* data, size_t nbytes, int32_t dtype, int32_t rank, int64_t* dims = nullptr) {
  return evoxc_buffer{data, nbytes, dtype, rank, dims};
}

TEST(CApi, AbiVersionAndCheck) {
  EXPECT_EQ(evoxc_abi_version(), EVOXC_ABI_VERSION);
  EXPECT_EQ(evoxc_check_abi(EVOXC_ABI_VERSION), EVOXC_OK);
  EXPECT_EQ(evoxc_check_abi(EVOXC_ABI_VERSION + 41), EVOXC_ERROR_ABI);
  std::string msg = evoxc_last_error();
  EXPECT_NE(msg.find("ABI version " + std::to_string(EVOXC_ABI_VERSION + 41)), std::string::npos) << msg;
  EXPECT_NE(msg.find("has ABI version " + std::to_string(EVOXC_ABI_VERSION)), std::string::npos) << msg;
  EXPECT_STREQ(evoxc_version(), "0.1.0");
}

TEST(CApi, DtypeNamesAndSizesFollowTheCatalogue) {
  for (int32_t code = 0; code < kNumDTypes; ++code) {
    DType t = static_cast<DType>(code);
    EXPECT_EQ(std::string(evoxc_dtype_name(code)), dtype_name(t));
    EXPECT_EQ(evoxc_dtype_size(code), size_of(t));
  }
  EXPECT_EQ(evoxc_dtype_name(-1), nullptr);
  EXPECT_EQ(evoxc_dtype_name(kNumDTypes), nullptr);
  EXPECT_EQ(evoxc_dtype_size(kNumDTypes), 0u);
  EXPECT_EQ(evoxc_dtype_size(EVOXC_BFLOAT16), 2u);
}

TEST(CApi, EveryBackendLoadsDescribesAndExecutesIntoCallerBuffers) {
  Graph g = affine_graph();
  std::string names;
  for (const std::string& b : runnable_backends()) names += " " + b;
  std::printf("backends checked:%s\n", names.c_str());
  for (const std::string& backend : runnable_backends()) {
    SCOPED_TRACE(backend);
    evoxc_executable* exe = load_or_fail(save(g, backend, "affine"));
    ASSERT_NE(exe, nullptr);
    EXPECT_STREQ(evoxc_executable_backend(exe), backend.c_str());
    EXPECT_STREQ(evoxc_executable_device(exe), "cpu:0");
    ASSERT_EQ(evoxc_executable_num_inputs(exe), 2u);
    ASSERT_EQ(evoxc_executable_num_outputs(exe), 2u);

    evoxc_tensor_spec in1{}, s{}, z{};
    ASSERT_EQ(evoxc_executable_input_spec(exe, 1, &in1), EVOXC_OK);
    EXPECT_STREQ(in1.name, "[1]");
    EXPECT_EQ(in1.dtype, EVOXC_FLOAT32);
    ASSERT_EQ(in1.rank, 1);
    EXPECT_EQ(in1.dims[0], 4);
    EXPECT_EQ(in1.itemsize, 4u);
    EXPECT_EQ(in1.nbytes, 16u);
    ASSERT_EQ(evoxc_executable_output_spec(exe, 0, &s), EVOXC_OK);
    ASSERT_EQ(evoxc_executable_output_spec(exe, 1, &z), EVOXC_OK);
    EXPECT_STREQ(s.name, "['s']");
    EXPECT_EQ(s.rank, 0);
    EXPECT_EQ(s.nbytes, 4u);
    EXPECT_STREQ(z.name, "['z']");
    EXPECT_EQ(z.nbytes, 16u);

    float* x = static_cast<float*>(evoxc_aligned_alloc(16));
    float* y = static_cast<float*>(evoxc_aligned_alloc(16));
    float* zo = static_cast<float*>(evoxc_aligned_alloc(16));
    ASSERT_EQ(reinterpret_cast<uintptr_t>(x) % 64, 0u);
    float so = 0;
    for (int round = 0; round < 3; ++round) {  // the same buffers, refilled in place, as a native loop does
      for (int i = 0; i < 4; ++i) {
        x[i] = static_cast<float>(i + round);
        y[i] = static_cast<float>(2 * i - 1);
      }
      evoxc_buffer ins[2] = {buffer(x, 16, EVOXC_FLOAT32, 1), buffer(y, 16, EVOXC_FLOAT32, 1)};
      evoxc_buffer outs[2] = {buffer(&so, 4, EVOXC_FLOAT32, 0), buffer(zo, 16, EVOXC_FLOAT32, 1)};
      ASSERT_EQ(evoxc_executable_execute(exe, ins, 2, outs, 2), EVOXC_OK) << evoxc_last_error();
      float total = 0;
      for (int i = 0; i < 4; ++i) {
        float want = x[i] * y[i] + x[i];
        EXPECT_FLOAT_EQ(zo[i], want) << "round " << round << " [" << i << "]";
        total += want;
      }
      EXPECT_FLOAT_EQ(so, total) << "round " << round;
    }
    evoxc_aligned_free(x);
    evoxc_aligned_free(y);
    evoxc_aligned_free(zo);
    evoxc_executable_release(exe);
  }
}

TEST(CApi, SymbolicExtentsComeFromTheInputsAndGoToTheOutputs) {
  Graph g = trace([](ST x) { return sum(x * x, {1}); }, TensorSpec({Dim("B"), 3}, f64));
  evoxc_executable* exe = load_or_fail(save(g, "interp", "symbolic"));
  ASSERT_NE(exe, nullptr);
  evoxc_tensor_spec in{}, out{};
  ASSERT_EQ(evoxc_executable_input_spec(exe, 0, &in), EVOXC_OK);
  ASSERT_EQ(in.rank, 2);
  EXPECT_EQ(in.dims[0], -1);
  EXPECT_EQ(in.dims[1], 3);
  EXPECT_EQ(in.nbytes, 0u);
  ASSERT_EQ(evoxc_executable_output_spec(exe, 0, &out), EVOXC_OK);
  EXPECT_EQ(out.dims[0], -1);

  std::vector<double> x{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  int64_t xd[2] = {5, 3};
  double r[8] = {};
  int64_t rd[1] = {-7};
  evoxc_buffer ib = buffer(x.data(), x.size() * 8, EVOXC_FLOAT64, 2, xd);
  evoxc_buffer ob = buffer(r, sizeof r, EVOXC_FLOAT64, 1, rd);
  ASSERT_EQ(evoxc_executable_execute(exe, &ib, 1, &ob, 1), EVOXC_OK) << evoxc_last_error();
  EXPECT_EQ(rd[0], 5);
  for (int b = 0; b < 5; ++b) {
    double want = 0;
    for (int k = 0; k < 3; ++k) want += x[3 * b + k] * x[3 * b + k];
    EXPECT_DOUBLE_EQ(r[b], want) << b;
  }
  // A capacity too small for this call's result is refused with both sizes.
  int64_t big[2] = {10, 3};
  std::vector<double> xb(30, 1.0);
  evoxc_buffer ib2 = buffer(xb.data(), xb.size() * 8, EVOXC_FLOAT64, 2, big);
  EXPECT_EQ(evoxc_executable_execute(exe, &ib2, 1, &ob, 1), EVOXC_ERROR_VALIDATION);
  EXPECT_NE(std::string(evoxc_last_error()).find("needs 80 bytes, the buffer holds 64"), std::string::npos)
      << evoxc_last_error();
  // No extents for a symbolic input.
  evoxc_buffer nodims = buffer(x.data(), x.size() * 8, EVOXC_FLOAT64, 2);
  EXPECT_EQ(evoxc_executable_execute(exe, &nodims, 1, &ob, 1), EVOXC_ERROR_VALIDATION);
  EXPECT_NE(std::string(evoxc_last_error()).find("are symbolic (-1), so the buffer must give dims"), std::string::npos)
      << evoxc_last_error();
  // Extents that contradict the static ones.
  int64_t wrong[2] = {5, 4};
  evoxc_buffer ib3 = buffer(x.data(), 20 * 8, EVOXC_FLOAT64, 2, wrong);
  EXPECT_EQ(evoxc_executable_execute(exe, &ib3, 1, &ob, 1), EVOXC_ERROR_VALIDATION);
  EXPECT_NE(std::string(evoxc_last_error()).find("extents (5, 4) do not fit the program's (-1, 3)"), std::string::npos)
      << evoxc_last_error();
  evoxc_executable_release(exe);
}

TEST(CApi, AnOutputThatIsAnInputIsCopiedIntoTheCallersBuffer) {
  Graph g = trace([](ST x, ST y) { return std::make_tuple(x, y + 1.0); }, TensorSpec({3}, i32), TensorSpec({3}, f32));
  for (const std::string& backend : runnable_backends()) {
    SCOPED_TRACE(backend);
    evoxc_executable* exe = load_or_fail(save(g, backend, "alias"));
    ASSERT_NE(exe, nullptr);
    int32_t x[3] = {7, -8, 9}, xo[3] = {0, 0, 0};
    float y[3] = {1, 2, 3}, yo[3] = {0, 0, 0};
    evoxc_buffer ins[2] = {buffer(x, 12, EVOXC_INT32, 1), buffer(y, 12, EVOXC_FLOAT32, 1)};
    evoxc_buffer outs[2] = {buffer(xo, 12, EVOXC_INT32, 1), buffer(yo, 12, EVOXC_FLOAT32, 1)};
    ASSERT_EQ(evoxc_executable_execute(exe, ins, 2, outs, 2), EVOXC_OK) << evoxc_last_error();
    EXPECT_EQ(std::vector<int32_t>(xo, xo + 3), std::vector<int32_t>(x, x + 3));
    EXPECT_EQ(std::vector<float>(yo, yo + 3), (std::vector<float>{2, 3, 4}));
    evoxc_executable_release(exe);
  }
}

TEST(CApi, ManyThreadsExecuteOneHandle) {
  Graph g = affine_graph();
  for (const std::string& backend : runnable_backends()) {
    SCOPED_TRACE(backend);
    evoxc_executable* exe = load_or_fail(save(g, backend, "threads"));
    ASSERT_NE(exe, nullptr);
    std::vector<int> wrong(4, 0), failed(4, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        float x[4], y[4], z[4], s;
        for (int it = 0; it < 300; ++it) {
          for (int i = 0; i < 4; ++i) {
            x[i] = static_cast<float>(t * 1000 + it + i);
            y[i] = static_cast<float>(i);
          }
          evoxc_buffer ins[2] = {buffer(x, 16, EVOXC_FLOAT32, 1), buffer(y, 16, EVOXC_FLOAT32, 1)};
          evoxc_buffer outs[2] = {buffer(&s, 4, EVOXC_FLOAT32, 0), buffer(z, 16, EVOXC_FLOAT32, 1)};
          if (evoxc_executable_execute(exe, ins, 2, outs, 2) != EVOXC_OK) {
            ++failed[t];
            continue;
          }
          for (int i = 0; i < 4; ++i)
            if (z[i] != x[i] * y[i] + x[i]) ++wrong[t];
        }
      });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(wrong, std::vector<int>(4, 0));
    EXPECT_EQ(failed, std::vector<int>(4, 0));
    evoxc_executable_release(exe);
  }
}

TEST(CApi, LoadFromBytesAndReferenceCounting) {
  std::string path = save(affine_graph(), "interp", "bytes");
  std::ifstream f(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  evoxc_executable* exe = nullptr;
  ASSERT_EQ(evoxc_executable_load_bytes(bytes.data(), bytes.size(), "cpu", &exe), EVOXC_OK) << evoxc_last_error();
  EXPECT_EQ(evoxc_executable_retain(exe), exe);
  evoxc_executable_release(exe);  // one reference left: still usable
  EXPECT_EQ(evoxc_executable_num_inputs(exe), 2u);
  EXPECT_EQ(&capi::executable(exe).graph().main(), &capi::executable(exe).graph().main());
  evoxc_executable_release(exe);
  evoxc_executable_release(nullptr);
  EXPECT_EQ(evoxc_executable_retain(nullptr), nullptr);
}

TEST(CApi, AHandleFromACppExecutableSharesIt) {
  Executable cpp = load(compile(lower(affine_graph(), "interp")));
  evoxc_executable* exe = capi::make_handle(cpp);
  EXPECT_EQ(&capi::executable(exe).graph(), &cpp.graph());
  EXPECT_EQ(evoxc_executable_num_outputs(exe), 2u);
  evoxc_executable_release(exe);
  EXPECT_THROW(capi::make_handle(Executable()), ValidationError);
  EXPECT_THROW(capi::executable(nullptr), ValidationError);
}

// ---- must fail: each bad call gives its status and a message that says what is wrong ----

void expect_failure(evoxc_status got, evoxc_status want, const std::string& message) {
  EXPECT_EQ(got, want) << evoxc_last_error();
  EXPECT_NE(std::string(evoxc_last_error()).find(message), std::string::npos)
      << "message: " << evoxc_last_error() << "\nexpected to contain: " << message;
}

TEST(CApiMustFail, LoadErrors) {
  evoxc_executable* exe = reinterpret_cast<evoxc_executable*>(0x1);
  expect_failure(evoxc_executable_load("/nonexistent/a.evoxcartifact", nullptr, &exe), EVOXC_ERROR_PERSISTENCE,
                 "/nonexistent/a.evoxcartifact");
  EXPECT_EQ(exe, nullptr) << "a failed load leaves *out NULL";
  expect_failure(evoxc_executable_load(nullptr, nullptr, &exe), EVOXC_ERROR_INVALID_ARGUMENT, "path is NULL");
  expect_failure(evoxc_executable_load("x", nullptr, nullptr), EVOXC_ERROR_INVALID_ARGUMENT, "out is NULL");
  expect_failure(evoxc_executable_load_bytes("not an artifact", 15, nullptr, &exe), EVOXC_ERROR_PERSISTENCE,
                 "artifact");
  expect_failure(evoxc_executable_load_bytes(nullptr, 3, nullptr, &exe), EVOXC_ERROR_INVALID_ARGUMENT, "data is NULL");
  std::string path = save(affine_graph(), "interp", "mustfail");
  expect_failure(evoxc_executable_load(path.c_str(), "gpu:0", &exe), EVOXC_ERROR_INVALID_ARGUMENT,
                 "unknown kind 'gpu'");
  expect_failure(evoxc_executable_load(path.c_str(), "cuda:0", &exe), EVOXC_ERROR_DEVICE, "cuda");
  // A truncated artifact names the file.
  std::string cut = temp_path("truncated.evoxcartifact");
  {
    std::ifstream in(path, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  }
  expect_failure(evoxc_executable_load(cut.c_str(), nullptr, &exe), EVOXC_ERROR_PERSISTENCE, "truncated");
}

TEST(CApiMustFail, SpecAndExecuteErrors) {
  evoxc_executable* exe = load_or_fail(save(affine_graph(), "interp", "mustfail2"));
  ASSERT_NE(exe, nullptr);
  evoxc_tensor_spec spec{};
  expect_failure(evoxc_executable_input_spec(exe, 2, &spec), EVOXC_ERROR_INVALID_ARGUMENT,
                 "index 2 is out of range for 2 inputs");
  expect_failure(evoxc_executable_output_spec(exe, 9, &spec), EVOXC_ERROR_INVALID_ARGUMENT,
                 "index 9 is out of range for 2 outputs");
  expect_failure(evoxc_executable_input_spec(nullptr, 0, &spec), EVOXC_ERROR_INVALID_ARGUMENT, "NULL");
  expect_failure(evoxc_executable_input_spec(exe, 0, nullptr), EVOXC_ERROR_INVALID_ARGUMENT, "out is NULL");
  EXPECT_EQ(evoxc_executable_num_inputs(nullptr), 0u);
  EXPECT_EQ(evoxc_executable_backend(nullptr), nullptr);

  float x[4] = {}, y[4] = {}, z[4] = {}, s = 0;
  double xd[4] = {};
  auto run = [&](evoxc_buffer in0, evoxc_buffer in1, evoxc_buffer out0, evoxc_buffer out1) {
    evoxc_buffer ins[2] = {in0, in1};
    evoxc_buffer outs[2] = {out0, out1};
    return evoxc_executable_execute(exe, ins, 2, outs, 2);
  };
  evoxc_buffer gx = buffer(x, 16, EVOXC_FLOAT32, 1), gy = buffer(y, 16, EVOXC_FLOAT32, 1);
  evoxc_buffer gs = buffer(&s, 4, EVOXC_FLOAT32, 0), gz = buffer(z, 16, EVOXC_FLOAT32, 1);
  ASSERT_EQ(run(gx, gy, gs, gz), EVOXC_OK) << evoxc_last_error();

  expect_failure(run(buffer(xd, 32, EVOXC_FLOAT64, 1), gy, gs, gz), EVOXC_ERROR_VALIDATION,
                 "input 0 ([0]): the buffer says dtype float64, the program takes float32");
  expect_failure(run(gx, buffer(y, 16, 99, 1), gs, gz), EVOXC_ERROR_VALIDATION, "dtype code 99");
  expect_failure(run(gx, buffer(y, 16, EVOXC_FLOAT32, 2), gs, gz), EVOXC_ERROR_VALIDATION,
                 "input 1 ([1]): the buffer has rank 2, the program's is 1");
  expect_failure(run(gx, buffer(y, 12, EVOXC_FLOAT32, 1), gs, gz), EVOXC_ERROR_VALIDATION,
                 "input 1 ([1]): the buffer has 12 bytes, the tensor 16");
  expect_failure(run(buffer(nullptr, 16, EVOXC_FLOAT32, 1), gy, gs, gz), EVOXC_ERROR_VALIDATION,
                 "input 0 ([0]): data is NULL");
  expect_failure(run(gx, gy, gs, buffer(z, 8, EVOXC_FLOAT32, 1)), EVOXC_ERROR_VALIDATION,
                 "output 1 (['z']): the buffer holds 8 bytes, the result needs 16");
  expect_failure(run(gx, gy, buffer(&s, 4, EVOXC_INT32, 0), gz), EVOXC_ERROR_VALIDATION,
                 "output 0 (['s']): the buffer says dtype int32, the program takes float32");
  int64_t five[1] = {5};
  expect_failure(run(buffer(x, 20, EVOXC_FLOAT32, 1, five), gy, gs, gz), EVOXC_ERROR_VALIDATION,
                 "extents (5,) do not fit the program's (4,)");
  evoxc_buffer one[1] = {gx};
  expect_failure(evoxc_executable_execute(exe, one, 1, one, 1), EVOXC_ERROR_VALIDATION,
                 "the program takes 2 inputs and gives 2 outputs; got 1 input and 1 output buffers");
  expect_failure(evoxc_executable_execute(nullptr, one, 1, one, 1), EVOXC_ERROR_INVALID_ARGUMENT, "NULL");
  expect_failure(evoxc_executable_execute(exe, nullptr, 2, one, 1), EVOXC_ERROR_INVALID_ARGUMENT, "inputs is NULL");
  // A failure on one thread does not leak into another thread's message.
  std::string other;
  std::thread([&] { other = evoxc_last_error(); }).join();
  EXPECT_EQ(other, "");
  evoxc_executable_release(exe);
}

}  // namespace
}  // namespace evoxc
