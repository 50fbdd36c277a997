// The run limits' shared core: the clock-sampling stride and the messages every loop-running backend raises.
#include "evoxc/core/run_limits.h"

#include <gtest/gtest.h>

namespace evoxc {
namespace {

using std::chrono::microseconds;

TEST(RunLimits, TheClockStrideDoublesToItsCapWhileSamplesComeFastAndResetsOnASlowIteration) {
  int64_t s = 1;
  for (int i = 0; i < 20; ++i) s = run_limits::next_clock_stride(s, microseconds(1));
  EXPECT_EQ(s, run_limits::kMaxClockStride);
  EXPECT_EQ(run_limits::next_clock_stride(4, microseconds(1)), 8);
  EXPECT_EQ(run_limits::next_clock_stride(s, run_limits::kClockSampleGap), 1);
  EXPECT_EQ(run_limits::next_clock_stride(64, microseconds(500)), 1);
}

TEST(RunLimits, MessagesNameTheLoopTheLimitAndTheRemedy) {
  std::string count = run_limits::count_reached("evoxc.while_loop at m.py:3:1, iteration 7", 100);
  EXPECT_NE(count.find("evoxc.while_loop at m.py:3:1, iteration 7: the run reached max_loop_iterations = 100"),
            std::string::npos);
  EXPECT_NE(count.find("--max-iterations"), std::string::npos);
  std::string late = run_limits::deadline_passed("L", microseconds(42), 9);
  EXPECT_NE(late.find("L: the run's deadline passed (42 us ago; 9 loop iterations in all)"), std::string::npos);
  EXPECT_NE(late.find("--timeout"), std::string::npos);
  EXPECT_NE(run_limits::cancelled("L").find("CancellationToken"), std::string::npos);
  EXPECT_NE(run_limits::cancelled_before_start().find("before the call started"), std::string::npos);
  EXPECT_NE(run_limits::deadline_before_start().find("before the call started"), std::string::npos);
}

}  // namespace
}  // namespace evoxc
