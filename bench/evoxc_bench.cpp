// Times evoxc workloads on the interpreter and prints one JSON object (median seconds per call).
#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "evoxc/evoxc.h"
#include "evoxc/interp/interp.h"

namespace {

using evoxc::SymbolicTensor;
using evoxc::Tensor;
using evoxc::TensorSpec;

// Median over `reps` batches of the per-call time; each batch runs long enough to be timed well.
double time_call(const std::function<void()>& fn, double min_batch_s, int reps) {
  using clock = std::chrono::steady_clock;
  for (int i = 0; i < 3; ++i) fn();
  int n = 1;
  for (;;) {
    auto t0 = clock::now();
    for (int i = 0; i < n; ++i) fn();
    double dt = std::chrono::duration<double>(clock::now() - t0).count();
    if (dt >= min_batch_s) break;
    n *= 2;
  }
  std::vector<double> per_call;
  for (int r = 0; r < reps; ++r) {
    auto t0 = clock::now();
    for (int i = 0; i < n; ++i) fn();
    per_call.push_back(std::chrono::duration<double>(clock::now() - t0).count() / n);
  }
  std::sort(per_call.begin(), per_call.end());
  return per_call[per_call.size() / 2];
}

Tensor random_tensor(std::vector<int64_t> shape, uint32_t seed) {
  Tensor t = Tensor::empty(std::move(shape), evoxc::f32);
  uint32_t s = seed;
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    s = s * 1664525u + 1013904223u;
    p[i] = static_cast<float>(s >> 8) / 16777216.0f - 0.5f;
  }
  return t;
}

// Runs exe.execute with preallocated outputs: the native hot path.
double time_exe(const evoxc::Executable& exe, const std::vector<Tensor>& ins, double batch_s, int reps) {
  std::vector<Tensor> outs(exe.num_outputs());
  exe.execute(ins, outs);  // allocates outputs once; later calls write into them
  return time_call([&] { exe.execute(ins, outs); }, batch_s, reps);
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  double batch_s = quick ? 0.02 : 0.1;
  int reps = quick ? 5 : 9;
  std::map<std::string, double> results;
  try {
    {  // per-op dispatch: a chain of 100 elementwise ops on (64,)
      auto chain = [](SymbolicTensor x, SymbolicTensor c) {
        SymbolicTensor y = x;
        for (int i = 0; i < 50; ++i) y = (y * c) + c;
        return y;
      };
      auto exe = evoxc::build(chain, TensorSpec({64}, evoxc::f32), TensorSpec({64}, evoxc::f32));
      results["dispatch_chain100_64"] = time_exe(exe, {random_tensor({64}, 1), random_tensor({64}, 2)}, batch_s, reps);
    }
    {  // tanh(a*b+a) on 2^20 float32
      auto f = [](SymbolicTensor a, SymbolicTensor b) { return evoxc::tanh(a * b + a); };
      int64_t n = 1 << 20;
      auto exe = evoxc::build(f, TensorSpec({n}, evoxc::f32), TensorSpec({n}, evoxc::f32));
      results["tanh_fma_1M"] = time_exe(exe, {random_tensor({n}, 3), random_tensor({n}, 4)}, batch_s, reps);
    }
    {  // sum(axis=1) of 1024x1024 float32
      auto f = [](SymbolicTensor a) { return evoxc::sum(a, {1}); };
      auto exe = evoxc::build(f, TensorSpec({1024, 1024}, evoxc::f32));
      results["sum_axis1_1024"] = time_exe(exe, {random_tensor({1024, 1024}, 5)}, batch_s, reps);
    }
    {  // matmul 512x512 float32
      auto f = [](SymbolicTensor a, SymbolicTensor b) { return evoxc::matmul(a, b); };
      auto exe = evoxc::build(f, TensorSpec({512, 512}, evoxc::f32), TensorSpec({512, 512}, evoxc::f32));
      results["matmul_512"] = time_exe(exe, {random_tensor({512, 512}, 6), random_tensor({512, 512}, 7)}, batch_s, reps);
    }
  } catch (const evoxc::Error& e) {
    std::cerr << "evoxc_bench: " << e.what() << "\n";
    return 1;
  }
  std::cout << "{";
  bool first = true;
  for (const auto& [k, v] : results) {
    std::cout << (first ? "" : ", ") << "\"" << k << "\": " << v;
    first = false;
  }
  std::cout << ", \"threads\": " << evoxc::interp::num_threads() << "}\n";
  return 0;
}
