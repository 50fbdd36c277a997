// Trace speed on the staging workload (bench/gp_population.h: 500 seeded GP trees of 17 nodes over two (1024,)
// float32 inputs). Disabled by default: it measures and asserts nothing about time. Run it with
//   build/tests/trace_trace_perf_test --gtest_also_run_disabled_tests
// or count instructions with valgrind --tool=callgrind on the same command.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "../../bench/gp_population.h"

namespace evoxc {
namespace {

TEST(TracePerf, DISABLED_GpPopulationTrace) {
  const int programs = 500, reps = 9;
  auto pop = bench::gp_population(20261201, programs, 17, 2);
  size_t ops = 0;
  for (const auto& t : pop) ops += bench::gp_trace(t, 2, 1024).main().entry().num_operations();
  std::vector<double> us;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    for (const auto& t : pop) {
      Graph g = bench::gp_trace(t, 2, 1024);
      ASSERT_TRUE(g.defined());
    }
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / programs);
  }
  std::sort(us.begin(), us.end());
  std::printf("gp_trace: %d programs, %.1f IR ops per graph, median %.2f us per trace (min %.2f, %d passes)\n",
              programs, static_cast<double>(ops) / programs, us[us.size() / 2], us.front(), reps);
}

}  // namespace
}  // namespace evoxc
