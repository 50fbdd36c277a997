// How runtime functions that compiled mlir programs call report errors: into the call's ErrorSink (an argument
// of @main), never by unwinding through compiled frames; the executable raises the first one when the call returns.
#pragma once

#include <atomic>
#include <exception>
#include <mutex>

namespace evoxc::mlir_backend {

class ExternalTable;

// One per call of a compiled program; runtime functions (on any thread of the call) capture into it.
class ErrorSink {
 public:
  // Keeps the exception in flight (call from a catch block) unless an earlier one is kept.
  void capture() noexcept {
    std::lock_guard<std::mutex> lock(mu_);
    if (!first_) first_ = std::current_exception();
    any_.store(true, std::memory_order_release);
  }
  // Rethrows the first captured exception, if any (on the calling thread, after the compiled code returned).
  void rethrow_if_any() {
    if (!any_.load(std::memory_order_acquire)) return;  // the usual case: one load, no lock
    std::exception_ptr e;
    {
      std::lock_guard<std::mutex> lock(mu_);
      e = first_;
    }
    if (e) std::rethrow_exception(e);
  }

  // The external kernels the executable resolved at load (external_runtime.h), for external_call sites; the
  // sink is the one per-call pointer compiled code already passes to the runtime.
  const ExternalTable* externals = nullptr;

 private:
  std::atomic<bool> any_{false};
  std::mutex mu_;
  std::exception_ptr first_;
};

}  // namespace evoxc::mlir_backend
