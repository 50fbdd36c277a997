// What every loop-running backend shares about one call's run limits: when to read the clock and what a limit hit
// says. The interpreter's RunBudget (one thread) and the mlir backend's LoopBudget (a call's threads, atomics) keep
// their own counters around this core, so both stop and report alike.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace evoxc::run_limits {

// The deadline is checked by reading the clock every `stride` loop iterations: the stride doubles (up to
// kMaxClockStride) while samples come less than kClockSampleGap apart, and drops to 1 when an iteration is slow, so
// a deadline is overshot by at most about one iteration or this gap.
inline constexpr int64_t kMaxClockStride = 1024;
inline constexpr std::chrono::nanoseconds kClockSampleGap = std::chrono::microseconds(20);
inline int64_t next_clock_stride(int64_t stride, std::chrono::nanoseconds since_last_sample) {
  if (since_last_sample >= kClockSampleGap) return 1;
  return stride * 2 < kMaxClockStride ? stride * 2 : kMaxClockStride;
}

// The RunLimitError messages. `where` names the loop and the iteration (or is empty before the call starts).
std::string cancelled_before_start();
std::string deadline_before_start();
std::string count_reached(const std::string& where, int64_t max_count);
std::string cancelled(const std::string& where);
std::string deadline_passed(const std::string& where, std::chrono::microseconds over, int64_t iterations);

}  // namespace evoxc::run_limits
