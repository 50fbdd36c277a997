// The FIFO worker behind evoxc::io's asynchronous copies: one thread, started on the first copy, that runs each queued
// Tensor::to in order and hands its tensor or its error to the copy's handle.
#include "evoxc/io/async.h"

#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include "evoxc/core/device_runtime.h"
#include "evoxc/core/error.h"

namespace evoxc::io {

struct AsyncCopy::State {
  Tensor source;  // released once copied
  Direction direction;
  Device from, to;
  uint64_t ticket = 0;  // its place in the queue
  // Guarded by the worker's mutex:
  bool finished = false;
  Tensor copy;
  std::exception_ptr error;
};

namespace {

class Worker {
 public:
  std::shared_ptr<AsyncCopy::State> submit(std::shared_ptr<AsyncCopy::State> s) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!thread_started_) {
      std::thread(&Worker::loop, this).detach();  // lives as long as the process: copies may be queued at exit
      thread_started_ = true;
    }
    s->ticket = ++queued_;
    queue_.push_back(s);
    wake_.notify_all();
    return s;
  }

  // Waits until `pred` holds (under the lock) or the timeout passes; whether it holds.
  template <typename Pred>
  bool wait(Pred pred, Timeout timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!timeout) {
      done_.wait(lock, pred);
      return true;
    }
    auto until =
        std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(*timeout);
    return done_.wait_until(lock, until, pred);
  }

  std::mutex& mu() { return mu_; }
  uint64_t queued() {
    std::lock_guard<std::mutex> lock(mu_);
    return queued_;
  }
  uint64_t finished_locked() const { return finished_; }
  size_t pending() {
    std::lock_guard<std::mutex> lock(mu_);
    return static_cast<size_t>(queued_ - finished_);
  }

 private:
  void loop() {
    for (;;) {
      std::shared_ptr<AsyncCopy::State> s;
      {
        std::unique_lock<std::mutex> lock(mu_);
        wake_.wait(lock, [&] { return !queue_.empty(); });
        s = std::move(queue_.front());
        queue_.pop_front();
      }
      Tensor copy;
      std::exception_ptr error;
      try {
        copy = s->source.to(s->to);
      } catch (...) {
        error = std::current_exception();
      }
      Tensor source = std::move(s->source);  // freed below, outside the lock (its release may take the GIL)
      {
        std::lock_guard<std::mutex> lock(mu_);
        s->copy = std::move(copy);
        s->error = error;
        s->finished = true;
        ++finished_;
      }
      done_.notify_all();
      source = Tensor();
      s.reset();
    }
  }

  std::mutex mu_;
  std::condition_variable wake_, done_;
  std::deque<std::shared_ptr<AsyncCopy::State>> queue_;
  uint64_t queued_ = 0, finished_ = 0;  // copies run in ticket order: the first `finished_` tickets are done
  bool thread_started_ = false;
};

Worker& worker() {
  static Worker* w = new Worker();  // never destroyed: its detached thread uses it until the process ends
  return *w;
}

Direction direction_of(Device from, Device to) {
  bool host_from = from == Device::cpu(), host_to = to == Device::cpu();
  if (host_from) return host_to ? Direction::HostToHost : Direction::HostToDevice;
  return host_to ? Direction::DeviceToHost : Direction::DeviceToDevice;
}

AsyncCopy queue(const Tensor& tensor, Device device, const char* what) {
  if (!tensor.defined()) throw ValidationError(std::string("evoxc.io.") + what + ": an undefined tensor");
  if (!tensor.buffer()->runtime() && tensor.device().kind != Device::Kind::Cpu)
    throw DeviceError(std::string("evoxc.io.") + what + ": the storage on " + tensor.device().to_string() +
                      " was wrapped by the caller, not made by a device runtime: evoxc cannot read it");
  if (device != Device::cpu()) (void)device_runtime(device);  // DeviceError now, not at result()
  auto s = std::make_shared<AsyncCopy::State>();
  s->source = tensor;
  s->from = tensor.device();
  s->to = device;
  s->direction = direction_of(s->from, device);
  return AsyncCopy(worker().submit(std::move(s)));
}

}  // namespace

std::string_view direction_name(Direction d) {
  switch (d) {
    case Direction::HostToDevice: return "host_to_device";
    case Direction::DeviceToHost: return "device_to_host";
    case Direction::DeviceToDevice: return "device_to_device";
    case Direction::HostToHost: return "host_to_host";
  }
  return "?";
}

Direction AsyncCopy::direction() const { return state_->direction; }
Device AsyncCopy::source() const { return state_->from; }
Device AsyncCopy::target() const { return state_->to; }

bool AsyncCopy::done() const {
  std::lock_guard<std::mutex> lock(worker().mu());
  return state_->finished;
}

bool AsyncCopy::wait(Timeout timeout) const {
  const State* s = state_.get();
  if (!worker().wait([s] { return s->finished; }, timeout)) return false;
  if (s->error) std::rethrow_exception(s->error);  // the transfer's own error, as it threw it
  return true;
}

Tensor AsyncCopy::result(Timeout timeout) const {
  if (!wait(timeout))
    throw TimeoutError("evoxc.io: the " + std::string(direction_name(state_->direction)) + " copy to " +
                       state_->to.to_string() + " has not finished within " + std::to_string(timeout->count()) +
                       " s (it goes on; wait again)");
  std::lock_guard<std::mutex> lock(worker().mu());
  return state_->copy;
}

AsyncCopy prefetch(const Tensor& tensor, Device device) { return queue(tensor, device, "prefetch"); }

AsyncCopy sink(const Tensor& tensor) { return queue(tensor, Device::cpu(), "sink"); }

void wait_all(Timeout timeout) {
  Worker& w = worker();
  uint64_t last = w.queued();
  if (!w.wait([&w, last] { return w.finished_locked() >= last; }, timeout))
    throw TimeoutError("evoxc.io.wait_all: " + std::to_string(w.pending()) + " copies have not finished within " +
                       std::to_string(timeout->count()) + " s (they go on)");
}

size_t pending() { return worker().pending(); }

}  // namespace evoxc::io
