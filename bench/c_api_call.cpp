// What the C ABI (evoxc/c_api.h) adds to one call: a + b on f32[4] through evoxc_executable_execute against the C++
// Executable::execute of the same executable, on every backend that runs here, in interleaved rounds (the machine's
// noise is larger than the difference). The last column is the C++ execute on Tensor::borrow views of the same memory,
// as the C ABI passes it. bench_c_api_call [SITE_PACKAGES] (where the PJRT CPU plugin is installed).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "evoxc/c_api.h"
#include "evoxc/capi/handle.h"
#include "evoxc/evoxc.h"
#ifdef EVOXC_HAS_XLA
#include "evoxc/backends/xla.h"
#endif

using namespace evoxc;
using Clock = std::chrono::steady_clock;

template <typename F>
double mean_us(F&& f, int n) {
  auto t0 = Clock::now();
  for (int i = 0; i < n; ++i) f();
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / n;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main(int argc, char** argv) {
#ifdef EVOXC_HAS_XLA
  if (argc > 1) xla::add_search_directories({argv[1]});
#else
  (void)argc;
  (void)argv;
#endif
  Graph g = trace([](const SymbolicTensor& a, const SymbolicTensor& b) { return a + b; }, TensorSpec({4}, f32),
                  TensorSpec({4}, f32));
  std::vector<Tensor> in{Tensor::full({4}, 1.0, f32), Tensor::full({4}, 2.0, f32)};
  std::vector<Tensor> out{Tensor::zeros({4}, f32)};
  evoxc_buffer cin[2] = {{in[0].raw_data(), 16, EVOXC_FLOAT32, 1, nullptr},
                         {in[1].raw_data(), 16, EVOXC_FLOAT32, 1, nullptr}};
  evoxc_buffer cout[1] = {{out[0].raw_data(), 16, EVOXC_FLOAT32, 1, nullptr}};
  std::printf("one call of a + b on f32[4], us per call (medians of 21 interleaved rounds of 3000 calls):\n");
  std::printf("  %-8s %12s %12s %14s %16s\n", "backend", "C++ execute", "C ABI", "C ABI adds", "C++ (borrowed)");
  for (const std::string& name : backend_names()) {
    if (get_backend(name).capabilities().device_kinds.empty()) continue;
    Executable exe;
    try {
      exe = load(compile(lower(g, name)));
    } catch (const BackendError& e) {
      std::printf("  %-8s not available: %s\n", name.c_str(), e.what());
      continue;
    }
    evoxc_executable* h = capi::make_handle(exe);
    std::vector<double> cpp, c, diff, bor;
    std::vector<Tensor> bin{Tensor::borrow(in[0].raw_data(), {4}, f32), Tensor::borrow(in[1].raw_data(), {4}, f32)};
    std::vector<Tensor> bout{Tensor::borrow(out[0].raw_data(), {4}, f32)};
    for (int round = 0; round < 21; ++round) {
      bor.push_back(mean_us([&] { exe.execute(bin, bout); }, 3000));
      double a = mean_us([&] { exe.execute(in, out); }, 3000);
      double b = mean_us([&] { evoxc_executable_execute(h, cin, 2, cout, 1); }, 3000);
      cpp.push_back(a);
      c.push_back(b);
      diff.push_back(b - a);
    }
    std::printf("  %-8s %12.3f %12.3f %14.3f %16.3f\n", name.c_str(), median(cpp), median(c), median(diff),
                median(bor));
    evoxc_executable_release(h);
  }
  return 0;
}
