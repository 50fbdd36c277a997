// A persistent worker pool for large kernels; tasks are fixed-size chunks, so results never depend on thread count.
#pragma once

#include <cstdint>
#include <type_traits>

namespace evoxc::interp {

// Runs fn(ctx, i) for every i in [0, n) on up to num_threads() threads (the caller
// included) and returns when all are done. Nested calls from a worker run serially.
// fn must not throw.
void parallel_run(int64_t n, void (*fn)(void* ctx, int64_t i), void* ctx);

template <typename F>
void parallel_for(int64_t n, F&& f) {
  if (n <= 0) return;
  if (n == 1) {
    f(int64_t{0});
    return;
  }
  parallel_run(
      n, [](void* c, int64_t i) { (*static_cast<std::remove_reference_t<F>*>(c))(i); }, &f);
}

// Changes the thread limit at run time (tests compare 1 and N threads). n < 1 resets to
// the default (hardware concurrency or EVOXC_NUM_THREADS).
void set_num_threads(int n);

// Elements per chunk of an elementwise or copy kernel: below it a kernel stays on one thread.
inline constexpr int64_t kParallelGrain = 32768;

}  // namespace evoxc::interp
