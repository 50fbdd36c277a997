// Concurrency stress: one executable per kind (symbolic batch dims, control flow, sort/gather, large
// tensors on the interpreter's thread pool) called through run and execute from 16 threads at once;
// every result must equal the serial result bit for bit. Built with TSan by `make test-tsan`.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <functional>
#include <latch>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "evoxc/evoxc.h"
#include "evoxc/trace/control.h"
#include "interp/thread_pool.h"

namespace evoxc {
namespace {

using ST = SymbolicTensor;

constexpr int kThreads = 16;
// Calls per thread; each alternates between run and execute (with and without preallocated outputs).
constexpr int kCallsPerThread = 6;

// Deterministic input values with a spread of magnitudes and signs (and a NaN for floats when asked).
Tensor make_tensor(std::vector<int64_t> shape, DType dtype, uint32_t seed, bool with_nan = false) {
  Tensor t = Tensor::empty(std::move(shape), dtype);
  uint32_t s = seed * 2654435761u + 12345u;
  for (int64_t i = 0; i < t.numel(); ++i) {
    s = s * 1664525u + 1013904223u;
    int v = static_cast<int>(s >> 24) - 128;
    switch (dtype) {
      case DType::F32: t.data<float>()[i] = static_cast<float>(v) / 16.0f; break;
      case DType::F64: t.data<double>()[i] = static_cast<double>(v) / 16.0; break;
      case DType::I32: t.data<int32_t>()[i] = v; break;
      case DType::Bool: t.data<bool>()[i] = (v & 1) != 0; break;
      default: ADD_FAILURE() << "make_tensor: unhandled dtype"; break;
    }
  }
  if (with_nan && t.numel() > 1 && dtype == f32) t.data<float>()[1] = std::numeric_limits<float>::quiet_NaN();
  return t;
}

bool same_bits(const Tensor& a, const Tensor& b, std::string* why) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) {
    *why = "type " + a.repr() + " vs " + b.repr();
    return false;
  }
  if (std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) != 0) {
    *why = "values " + a.to_string() + " vs " + b.to_string();
    return false;
  }
  return true;
}

// One call case: flat inputs (graph order) and the serial results.
struct Case {
  std::vector<Tensor> inputs;
  std::vector<Tensor> want;
};

// Runs every case serially, then from kThreads threads at once (released together by a latch),
// each thread cycling through the cases with its own offset and alternating the three entry
// paths; any error or mismatch fails the test, with the first one in the message.
void stress(const Executable& exe, std::vector<Case> cases) {
  for (auto& c : cases) {
    std::vector<Tree<Tensor>> leaves(c.inputs.begin(), c.inputs.end());
    c.want = exe.run(Tree<Tensor>::tuple(std::move(leaves))).flatten();
    ASSERT_FALSE(c.want.empty());
  }
  std::atomic<int> mismatches{0}, errors{0};
  std::mutex first_mu;
  std::string first;
  std::latch start(kThreads);
  auto worker = [&](int tid) {
    start.arrive_and_wait();
    for (int k = 0; k < kCallsPerThread; ++k) {
      const Case& c = cases[static_cast<size_t>(tid + k) % cases.size()];
      std::vector<Tensor> got;
      try {
        switch ((tid + k) % 3) {
          case 0: {  // run: tree in, tree out
            std::vector<Tree<Tensor>> leaves(c.inputs.begin(), c.inputs.end());
            got = run(exe, Tree<Tensor>::tuple(std::move(leaves))).flatten();
            break;
          }
          case 1: {  // execute, outputs allocated by the executable
            got.resize(c.want.size());
            exe.execute(c.inputs, got);
            break;
          }
          default: {  // execute into caller-provided outputs, written in place
            for (const auto& w : c.want) got.push_back(Tensor::empty(w.shape(), w.dtype()));
            exe.execute(c.inputs, got);
            break;
          }
        }
      } catch (const std::exception& e) {
        ++errors;
        std::lock_guard<std::mutex> lock(first_mu);
        if (first.empty()) first = std::string("threw: ") + e.what();
        continue;
      }
      std::string why = got.size() == c.want.size() ? "" : "output count";
      for (size_t i = 0; why.empty() && i < got.size(); ++i) same_bits(got[i], c.want[i], &why);
      if (!why.empty()) {
        ++mismatches;
        std::lock_guard<std::mutex> lock(first_mu);
        if (first.empty()) first = "thread " + std::to_string(tid) + " call " + std::to_string(k) + ": " + why;
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, t);
  for (auto& t : threads) t.join();
  EXPECT_EQ(errors.load(), 0) << first;
  EXPECT_EQ(mismatches.load(), 0) << first;
}

TEST(ConcurrencyStress, SymbolicBatchDims) {
  auto fn = [](ST x, ST w) { return tanh(matmul(x, w)) + mean(x, {1}, true) * exp(-abs(sum(w, {0}))); };
  Executable exe = build(fn, TensorSpec({Dim("B"), 16}, f32), TensorSpec({16, 8}, f32));
  std::vector<Case> cases;
  uint32_t seed = 1;
  // Different batch sizes interleaved, so concurrent calls bind B to different values.
  for (int64_t b : {1, 3, 7, 33, 2, 64})
    cases.push_back({{make_tensor({b, 16}, f32, seed++), make_tensor({16, 8}, f32, seed++)}, {}});
  stress(exe, std::move(cases));
}

TEST(ConcurrencyStress, ControlFlow) {
  auto fn = [](ST p, ST x, ST xs) {
    // cond on a runtime predicate
    ST c = cond(
        p, [](const ST& v) { return v * 3.0 + 1.0; }, [](const ST& v) { return -v; }, x);
    // while_loop: Newton iterations for sqrt(|x|+1), a data-dependent trip count
    auto cf = [](const std::pair<ST, ST>& s) { return any(greater(abs(s.first - s.second), 1e-6)); };
    ST a = abs(x) + 1.0;
    auto bf = [a](const std::pair<ST, ST>& s) { return std::pair<ST, ST>{0.5 * (s.first + a / s.first), s.first}; };
    ST r = while_loop(cf, bf, std::pair<ST, ST>{a, zeros_like(a)}).first;
    // scan: a running sum over the rows of xs
    auto body = [](const ST& carry, const ST& row) {
      ST n = carry * 0.5 + row;
      return std::pair<ST, ST>{n, n};
    };
    auto [last, ys] = scan(body, zeros_like(x), xs);
    return std::make_tuple(c, r, last, ys);
  };
  Executable exe = build(fn, TensorSpec({}, bool_), TensorSpec({5}, f32), TensorSpec({6, 5}, f32));
  std::vector<Case> cases;
  for (uint32_t s = 0; s < 6; ++s)
    cases.push_back(
        {{Tensor::scalar<bool>(s % 2 == 0), make_tensor({5}, f32, 10 + s), make_tensor({6, 5}, f32, 20 + s)}, {}});
  stress(exe, std::move(cases));
}

TEST(ConcurrencyStress, SortGather) {
  auto fn = [](ST x, ST idx) {
    ST sorted = sort(x, -1);
    ST order = argsort(x, 0);
    ST along = take_along_axis(x, order, 0);
    ST rows = take(x, idx, 0);
    return std::make_tuple(sorted, order, along, rows);
  };
  Executable exe = build(fn, TensorSpec({64, 8}, f32), TensorSpec({10}, i32));
  std::vector<Case> cases;
  for (uint32_t s = 0; s < 5; ++s) {
    Tensor idx = make_tensor({10}, i32, 40 + s);
    for (int64_t i = 0; i < idx.numel(); ++i) idx.data<int32_t>()[i] = (idx.data<int32_t>()[i] + 128) % 64;
    cases.push_back({{make_tensor({64, 8}, f32, 30 + s, /*with_nan=*/true), idx}, {}});
  }
  stress(exe, std::move(cases));
}

TEST(ConcurrencyStress, LargeTensorsUseTheThreadPool) {
  // 256 x 1024 elements: 8 chunks of interp::kParallelGrain, so elementwise, broadcast and
  // reduction kernels split the work across the pool while 16 callers share it.
  constexpr int64_t kRows = 256, kCols = 1024;
  static_assert(kRows * kCols >= 8 * interp::kParallelGrain);
  auto fn = [](ST x, ST b) {
    ST y = exp(x * 0.25) * 0.5 + sin(x) + b;
    return std::make_tuple(y, sum(y, {0}), max(y, {1}));
  };
  Executable exe = build(fn, TensorSpec({kRows, kCols}, f32), TensorSpec({kCols}, f32));
  std::vector<Case> cases;
  for (uint32_t s = 0; s < 4; ++s)
    cases.push_back({{make_tensor({kRows, kCols}, f32, 50 + s), make_tensor({kCols}, f32, 60 + s)}, {}});
  stress(exe, std::move(cases));
}

// Transforms staged from many threads at once, the first of them building the rule tables: each
// thread's printed grad and vmap graphs equal the serial ones.
TEST(ConcurrencyStress, TransformsFromManyThreads) {
  auto fn = [](ST x, ST w) {
    auto body = [w](const ST& h, const ST& v) {
      ST n = tanh(h * w + v);
      return std::pair<ST, ST>{n, n};
    };
    return sum(scan(body, zeros_like(w), x).second);
  };
  Graph g = trace(fn, TensorSpec({5, 3}, f64), TensorSpec({3}, f64));
  auto stage = [&] { return grad(g, {0, 1}).to_string() + vectorize(g).to_string() + jacfwd(g, 1).to_string(); };
  std::vector<std::string> got(kThreads);
  std::latch start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      got[static_cast<size_t>(t)] = stage();
    });
  for (auto& th : threads) th.join();
  std::string want = stage();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(got[static_cast<size_t>(t)], want) << "thread " << t;
}

}  // namespace
}  // namespace evoxc
