// The mlir backend's run limits: loop ticks against one call's RunOptions (see loop_budget.h).
#include "backends/mlir/loop_budget.h"

#include "backends/common/async_runtime.h"
#include "evoxc/core/error.h"
#include "evoxc/core/run_limits.h"

namespace evoxc::mlir_backend {
namespace {

using Clock = std::chrono::steady_clock;

int64_t ns(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

// Calls running with limits, process-wide: an unlimited call's tick costs one relaxed load.
std::atomic<int64_t> g_limited{0};

bool loop_tick(const char* where) {
  if (g_limited.load(std::memory_order_relaxed) == 0) return true;
  auto* budget = static_cast<LoopBudget*>(async_runtime::call_context());
  return budget == nullptr || budget->tick(where);
}

}  // namespace

LoopBudget::LoopBudget(const RunOptions& options)
    : max_count_(options.max_loop_iterations > 0 ? options.max_loop_iterations : INT64_MAX),
      cancelled_(options.cancel ? &options.cancel->flag() : nullptr),
      deadline_(options.deadline),
      last_sample_ns_(ns(Clock::now())) {}

void LoopBudget::check_start() const {
  if (cancelled_ && cancelled_->load(std::memory_order_relaxed))
    throw RunLimitError(run_limits::cancelled_before_start());
  if (deadline_ && Clock::now() >= *deadline_) throw RunLimitError(run_limits::deadline_before_start());
}

bool LoopBudget::tick(const char* where) {
  if (stopped_.load(std::memory_order_relaxed)) return false;
  int64_t n = count_.fetch_add(1, std::memory_order_relaxed) + 1;
  if (n > max_count_) {
    stop(run_limits::count_reached(where, max_count_));
    return false;
  }
  if (cancelled_ && cancelled_->load(std::memory_order_relaxed)) {
    stop(run_limits::cancelled(where));
    return false;
  }
  if (deadline_ && n >= next_sample_.load(std::memory_order_relaxed)) {
    Clock::time_point now = Clock::now();
    if (now >= *deadline_) {
      stop(run_limits::deadline_passed(where, std::chrono::duration_cast<std::chrono::microseconds>(now - *deadline_),
                                       n - 1));
      return false;
    }
    int64_t last = last_sample_ns_.exchange(ns(now), std::memory_order_relaxed);
    int64_t stride = run_limits::next_clock_stride(stride_.load(std::memory_order_relaxed),
                                                   std::chrono::nanoseconds(ns(now) - last));
    stride_.store(stride, std::memory_order_relaxed);
    next_sample_.store(n + stride, std::memory_order_relaxed);
  }
  return true;
}

void LoopBudget::stop(const std::string& why) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopped_.load(std::memory_order_relaxed)) return;  // the first limit hit is the one reported
  message_ = why;
  stopped_.store(true, std::memory_order_release);
}

void LoopBudget::raise_if_stopped() const {
  if (!stopped_.load(std::memory_order_acquire)) return;
  std::lock_guard<std::mutex> lock(mu_);
  throw RunLimitError(message_);
}

LoopBudget::Scope::Scope(LoopBudget& budget) : saved_(async_runtime::call_context()) {
  async_runtime::call_context() = &budget;
  g_limited.fetch_add(1, std::memory_order_relaxed);
}

LoopBudget::Scope::~Scope() {
  g_limited.fetch_sub(1, std::memory_order_relaxed);
  async_runtime::call_context() = saved_;
}

const std::vector<RuntimeSymbol>& loop_budget_symbols() {
  static const std::vector<RuntimeSymbol> table = {{"evoxc_loop_tick", reinterpret_cast<void*>(&loop_tick)}};
  return table;
}

}  // namespace evoxc::mlir_backend
