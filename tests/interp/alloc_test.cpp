// Steady-state execute() on a static program with caller outputs must not touch the heap.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <new>

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
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

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

}  // namespace
}  // namespace evoxc::testing
