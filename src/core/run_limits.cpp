// The run limits' messages (include/evoxc/core/run_limits.h): one wording for every backend that runs loops.
#include "evoxc/core/run_limits.h"

namespace evoxc::run_limits {
namespace {

// What to do when a limit is hit.
constexpr const char* kRaiseDeadline =
    "; allow more time (RunOptions::deadline, or `evoxc run --timeout SECONDS`) or make the loop end sooner";
constexpr const char* kRaiseCount =
    "; raise RunOptions::max_loop_iterations (`evoxc run --max-iterations N`) or make the loop end sooner";

}  // namespace

std::string cancelled_before_start() {
  return "the run was cancelled (its CancellationToken was tripped before the call started; reset() it to run "
         "again)";
}

std::string deadline_before_start() {
  return std::string("the run's deadline had passed before the call started") + kRaiseDeadline;
}

std::string count_reached(const std::string& where, int64_t max_count) {
  return where + ": the run reached max_loop_iterations = " + std::to_string(max_count) +
         " (body iterations of all loops of the call, counted together)" + kRaiseCount;
}

std::string cancelled(const std::string& where) {
  return where + ": the run was cancelled through its CancellationToken (reset() it to run again)";
}

std::string deadline_passed(const std::string& where, std::chrono::microseconds over, int64_t iterations) {
  return where + ": the run's deadline passed (" + std::to_string(over.count()) + " us ago; " +
         std::to_string(iterations) + " loop iterations in all)" + kRaiseDeadline;
}

}  // namespace evoxc::run_limits
