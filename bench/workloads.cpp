// The four benchmark workloads and their timing loop; the peers' versions live in bench/compare.py.
#include "workloads.h"

#include <algorithm>
#include <chrono>
#include <functional>

#include "evoxc/evoxc.h"

namespace evoxc::bench {
namespace {

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
  Tensor t = Tensor::empty(std::move(shape), f32);
  uint32_t s = seed;
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    s = s * 1664525u + 1013904223u;
    p[i] = static_cast<float>(s >> 8) / 16777216.0f - 0.5f;
  }
  return t;
}

// Runs exe.execute with preallocated outputs: the native hot path.
double time_exe(const Executable& exe, const std::vector<Tensor>& ins, double batch_s, int reps) {
  std::vector<Tensor> outs(exe.num_outputs());
  exe.execute(ins, outs);  // allocates outputs once; later calls write into them
  return time_call([&] { exe.execute(ins, outs); }, batch_s, reps);
}

}  // namespace

std::vector<WorkloadResult> run_workloads(bool quick) {
  double batch_s = quick ? 0.02 : 0.1;
  int reps = quick ? 5 : 9;
  std::vector<WorkloadResult> results;
  {  // per-op dispatch: a chain of 100 elementwise ops on (64,)
    auto chain = [](SymbolicTensor x, SymbolicTensor c) {
      SymbolicTensor y = x;
      for (int i = 0; i < 50; ++i) y = (y * c) + c;
      return y;
    };
    auto exe = build(chain, TensorSpec({64}, f32), TensorSpec({64}, f32));
    results.push_back({"dispatch_chain100_64", "100 elementwise ops on float32[64] (per-op dispatch)",
                       time_exe(exe, {random_tensor({64}, 1), random_tensor({64}, 2)}, batch_s, reps)});
  }
  {  // tanh(a*b+a) on 2^20 float32
    auto f = [](SymbolicTensor a, SymbolicTensor b) { return tanh(a * b + a); };
    int64_t n = 1 << 20;
    auto exe = build(f, TensorSpec({n}, f32), TensorSpec({n}, f32));
    results.push_back({"tanh_fma_1M", "tanh(a*b+a) on float32[2^20]",
                       time_exe(exe, {random_tensor({n}, 3), random_tensor({n}, 4)}, batch_s, reps)});
  }
  {  // sum(axis=1) of 1024x1024 float32
    auto f = [](SymbolicTensor a) { return sum(a, {1}); };
    auto exe = build(f, TensorSpec({1024, 1024}, f32));
    results.push_back({"sum_axis1_1024", "sum(axis=1) of float32[1024,1024]",
                       time_exe(exe, {random_tensor({1024, 1024}, 5)}, batch_s, reps)});
  }
  {  // matmul 512x512 float32
    auto f = [](SymbolicTensor a, SymbolicTensor b) { return matmul(a, b); };
    auto exe = build(f, TensorSpec({512, 512}, f32), TensorSpec({512, 512}, f32));
    results.push_back({"matmul_512", "matmul of two float32[512,512]",
                       time_exe(exe, {random_tensor({512, 512}, 6), random_tensor({512, 512}, 7)}, batch_s, reps)});
  }
  {  // conv2d: N=8, 64 -> 64 channels, 56x56, 3x3, SAME
    auto f = [](SymbolicTensor x, SymbolicTensor w) { return conv2d(x, w, {1, 1}, "SAME"); };
    auto exe = build(f, TensorSpec({8, 64, 56, 56}, f32), TensorSpec({64, 64, 3, 3}, f32));
    results.push_back(
        {"conv2d_8x64x56", "conv2d NCHW float32[8,64,56,56] * [64,64,3,3], SAME",
         time_exe(exe, {random_tensor({8, 64, 56, 56}, 8), random_tensor({64, 64, 3, 3}, 9)}, batch_s, reps)});
  }
  {  // sort of 2^20 float32
    auto f = [](SymbolicTensor a) { return sort(a); };
    int64_t n = 1 << 20;
    auto exe = build(f, TensorSpec({n}, f32));
    results.push_back({"sort_1M", "sort float32[2^20]", time_exe(exe, {random_tensor({n}, 10)}, batch_s, reps)});
  }
  {  // gather: take 2^20 random indices from a float32[2^20]
    auto f = [](SymbolicTensor a, SymbolicTensor idx) { return take(a, idx); };
    int64_t n = 1 << 20;
    auto exe = build(f, TensorSpec({n}, f32), TensorSpec({n}, i64));
    Tensor idx = Tensor::empty({n}, i64);
    uint32_t s = 11;
    for (int64_t i = 0; i < n; ++i) {
      s = s * 1664525u + 1013904223u;
      idx.data<int64_t>()[i] = static_cast<int64_t>(s % static_cast<uint32_t>(n));
    }
    results.push_back({"gather_1M", "take 2^20 random indices from float32[2^20]",
                       time_exe(exe, {random_tensor({n}, 12), idx}, batch_s, reps)});
  }
  {  // cholesky of a 512x512 float32 SPD matrix
    auto f = [](SymbolicTensor a) { return linalg::cholesky(a); };
    auto exe = build(f, TensorSpec({512, 512}, f32));
    Tensor m = random_tensor({512, 512}, 13);
    Tensor a = Tensor::zeros({512, 512}, f32);
    const float* pm = m.data<float>();
    float* pa = a.data<float>();
    for (int i = 0; i < 512; ++i)  // a = m m^T + 512 I: symmetric positive definite
      for (int j = 0; j < 512; ++j) {
        double acc = i == j ? 512.0 : 0.0;
        for (int k = 0; k < 512; ++k) acc += static_cast<double>(pm[i * 512 + k]) * pm[j * 512 + k];
        pa[i * 512 + j] = static_cast<float>(acc);
      }
    results.push_back({"cholesky_512", "cholesky of an SPD float32[512,512]", time_exe(exe, {a}, batch_s, reps)});
  }
  return results;
}

}  // namespace evoxc::bench
