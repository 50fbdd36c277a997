// Steady-state execute() on a static program with caller outputs must not touch the heap,
// control flow included (while_loop, scan, fori_loop and cond, per call and per iteration).
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <new>

#include "evoxc/trace/control.h"
#include "evoxc/trace/ops.h"
#include "evoxc/trace/trace.h"
#include "interp/graph_util.h"

namespace {
std::atomic<long> g_news{0};
}

// GCC cannot see that these replacements pair malloc with free on both sides.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

// Counts every allocation of this test program (the library allocates through operator new).
void* operator new(std::size_t n) {
  g_news.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
// The nothrow forms too (std::stable_sort's temporary buffer uses them), so every form of
// new pairs with the free of the deletes below (a sanitizer build checks the pairing).
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  g_news.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(n == 0 ? 1 : n);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
// Aligned scratch (the plan's arena, loop carries) comes from aligned_alloc: counted too.
extern "C" void* aligned_alloc(std::size_t alignment, std::size_t n) noexcept {
  g_news.fetch_add(1, std::memory_order_relaxed);
  void* p = nullptr;
  return posix_memalign(&p, alignment < sizeof(void*) ? sizeof(void*) : alignment, n) == 0 ? p : nullptr;
}

namespace evoxc::testing {
namespace {

TEST(InterpAlloc, StaticProgramWithCallerOutputsAllocatesNothing) {
  GraphBuilder g;
  Value* x = g.input(DType::F32, S({8, 16}));
  Value* w = g.input(DType::F32, S({16, 4}));
  Value* d = g.op("dot", {x, w}, tt(DType::F32, S({8, 4})));
  Value* e = g.op("exp", {d}, tt(DType::F32, S({8, 4})));
  Value* s = g.op("reduce_sum", {e}, tt(DType::F32, S({8})), {{"axes", std::vector<int64_t>{1}}, {"keepdims", false}});
  Value* t = g.op("transpose", {e}, tt(DType::F32, S({4, 8})), {{"permutation", std::vector<int64_t>{1, 0}}});
  Value* r = g.op("reshape", {t}, tt(DType::F32, S({32})), {{"shape", S({32})}});
  Value* m = g.op("multiply", {r, r}, tt(DType::F32, S({32})));
  auto p = interp::prepare(g.build({s, m}));
  std::vector<Tensor> in = {Tensor::full({8, 16}, 0.01), Tensor::full({16, 4}, 0.5)};
  std::vector<Tensor> out = {Tensor::zeros({8}), Tensor::zeros({32})};
  interp::execute(*p, in, out);  // warm-up: the frame pool fills here
  long before = g_news.load();
  for (int i = 0; i < 100; ++i) interp::execute(*p, in, out);
  EXPECT_EQ(g_news.load() - before, 0);
  // exp(16 * 0.01 * 0.5) = exp(0.08), four per row.
  EXPECT_NEAR(out[0].to_vector<float>()[3], 4.0 * std::exp(0.08), 1e-5);
  EXPECT_NEAR(out[1].to_vector<float>()[5], std::exp(0.16), 1e-5);
}

// Runs `p` 100 times after a warm-up and returns the allocations those runs made.
long steady_allocations(const interp::Program& p, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  interp::execute(p, in, out);  // warm-up: frames and control states are pooled here
  long before = g_news.load();
  for (int i = 0; i < 100; ++i) interp::execute(p, in, out);
  return g_news.load() - before;
}

using ST = SymbolicTensor;

TEST(InterpAlloc, WhileLoopAllocatesNothingPerCallOrIteration) {
  // i < n: x = x * 0.5 + y (y captured); 20 iterations a call.
  using C = std::tuple<ST, ST>;
  auto f = [](ST n, ST x, ST y) {
    return while_loop([&](const C& c) { return less(std::get<0>(c), n); },
                      [&](const C& c) {
                        return C{std::get<0>(c) + int64_t{1}, std::get<1>(c) * 0.5 + y};
                      },
                      C{fill(Shape(), 0, i64), x});
  };
  Graph g = trace(f, TensorSpec({}, i64), TensorSpec({16}, f32), TensorSpec({16}, f32));
  auto p = interp::prepare(g);
  std::vector<Tensor> in = {Tensor::scalar<int64_t>(20), Tensor::full({16}, 4.0f), Tensor::full({16}, 1.0f)};
  std::vector<Tensor> out = {Tensor::scalar<int64_t>(0), Tensor::zeros({16})};
  EXPECT_EQ(steady_allocations(*p, in, out), 0);
  EXPECT_EQ(out[0].data<const int64_t>()[0], 20);
  double want = 4.0;
  for (int i = 0; i < 20; ++i) want = want * 0.5 + 1.0;
  EXPECT_NEAR(out[1].to_vector<float>()[7], want, 1e-5);
}

TEST(InterpAlloc, ScanAllocatesNothingPerCallOrStep) {
  // carry += x_t; ys[t] = carry * 2, over 12 steps of (3,) slices, with a captured scale.
  auto f = [](ST c0, ST xs, ST scale) {
    return scan(
        [&](const ST& c, const ST& x) {
          return std::pair<ST, ST>{c + x * scale, (c + x * scale) * 2.0};
        },
        c0, xs);
  };
  Graph g = trace(f, TensorSpec({3}, f32), TensorSpec({12, 3}, f32), TensorSpec({3}, f32));
  auto p = interp::prepare(g);
  std::vector<Tensor> in = {Tensor::zeros({3}), Tensor::full({12, 3}, 1.0f), Tensor::full({3}, 0.5f)};
  std::vector<Tensor> out = {Tensor::zeros({3}), Tensor::zeros({12, 3})};
  EXPECT_EQ(steady_allocations(*p, in, out), 0);
  EXPECT_NEAR(out[0].to_vector<float>()[2], 6.0, 1e-6);
  EXPECT_NEAR(out[1].to_vector<float>()[3 * 11 + 1], 12.0, 1e-6);
  EXPECT_NEAR(out[1].to_vector<float>()[3 * 4 + 1], 5.0, 1e-6);
}

TEST(InterpAlloc, ForiLoopAndCondAllocateNothing) {
  // fori_loop with host bounds (a scan of static length) around a cond on the index.
  auto f = [](ST x) {
    return fori_loop(
        0, 10,
        [](const ST& i, const ST& c) {
          return cond(
              less(i, int32_t{5}), [](const ST& v) { return v + 1.0; }, [](const ST& v) { return v * 2.0; }, c);
        },
        x);
  };
  Graph g = trace(f, TensorSpec({4}, f64));
  auto p = interp::prepare(g);
  std::vector<Tensor> in = {Tensor::full({4}, 0.0, f64)};
  std::vector<Tensor> out = {Tensor::zeros({4}, f64)};
  EXPECT_EQ(steady_allocations(*p, in, out), 0);
  EXPECT_EQ(out[0].to_vector<double>()[0], 5.0 * 32.0);
}

}  // namespace
}  // namespace evoxc::testing
