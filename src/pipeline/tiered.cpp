// TieredExecutable: the first tier loaded at once, the compiled tier lowered, compiled and loaded on a
// background thread and published with one atomic pointer the call path reads.
#include "evoxc/pipeline/tiered.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "evoxc/core/error.h"

namespace evoxc {

const char* tier_name(Tier t) { return t == Tier::First ? "first" : "compiled"; }

const char* compile_state_name(TierReport::Compile c) {
  switch (c) {
    case TierReport::Compile::NotStarted: return "not started";
    case TierReport::Compile::Running: return "running";
    case TierReport::Compile::Ready: return "ready";
    case TierReport::Compile::Failed: return "failed";
    case TierReport::Compile::Cancelled: return "cancelled";
  }
  return "?";
}

namespace {
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
constexpr int kAuto = -1;
}  // namespace

struct TieredExecutable::State {
  Graph graph;
  TieredOptions options;
  Executable first;
  // Trips the background compile when the last handle goes.
  std::shared_ptr<CancellationToken> cancel = std::make_shared<CancellationToken>();

  // The compiled tier: `compiled_owner` is set once by the worker (under mu) before `compiled` points at it,
  // so a call that reads the pointer (acquire) sees a complete Executable that lives as long as the State.
  std::optional<Executable> compiled_owner;
  std::atomic<const Executable*> compiled{nullptr};
  std::atomic<int> pinned{kAuto};  // kAuto, or a Tier
  std::atomic<bool> started{false};
  std::atomic<int64_t> calls_before_start{0};
  std::atomic<int64_t> first_calls{0}, compiled_calls{0};

  mutable std::mutex mu;
  std::condition_variable done;
  TierReport::Compile state = TierReport::Compile::NotStarted;
  std::string error;
  double lower_seconds = 0, compile_seconds = 0, load_seconds = 0;
  std::vector<StageTime> stages;
  std::thread worker;

  ~State() {
    cancel->cancel();
    if (worker.joinable()) worker.join();
  }

  void start() {
    if (started.exchange(true, std::memory_order_acq_rel)) return;
    std::lock_guard<std::mutex> lock(mu);
    state = TierReport::Compile::Running;
    worker = std::thread([this] { work(); });
  }

  void finish(TierReport::Compile s, std::string message) {
    {
      std::lock_guard<std::mutex> lock(mu);
      state = s;
      error = std::move(message);
    }
    done.notify_all();
  }

  // Runs on the worker thread: lower, compile, load, publish. Errors are recorded, never thrown.
  void work() {
    try {
      auto t0 = Clock::now();
      LoweredProgram lowered = lower(graph, options.compiled_backend);
      (void)lowered.text();  // a backend may print on first use: part of lowering
      double t_lower = seconds_since(t0);
      CompileOptions co = options.compile;
      co.cancel = cancel;
      t0 = Clock::now();
      CompiledArtifact artifact = evoxc::compile(lowered, co);
      double t_compile = seconds_since(t0);
      if (cancel->cancelled()) return finish(TierReport::Compile::Cancelled, "");
      t0 = Clock::now();
      Executable exe = load(artifact, options.device);
      double t_load = seconds_since(t0);
      {
        std::lock_guard<std::mutex> lock(mu);
        lower_seconds = t_lower;
        compile_seconds = t_compile;
        load_seconds = t_load;
        stages = artifact.stage_times();
        compiled_owner = std::move(exe);
        compiled.store(&*compiled_owner, std::memory_order_release);
        state = TierReport::Compile::Ready;
      }
      done.notify_all();
    } catch (const std::exception& e) {
      if (cancel->cancelled()) return finish(TierReport::Compile::Cancelled, "");
      const char* type = dynamic_cast<const Error*>(&e) ? "" : "unexpected error: ";
      finish(TierReport::Compile::Failed, std::string(type) + e.what());
    }
  }

  // The tier of the next call, starting the compile on the call that makes it due.
  const Executable& select() {
    const Executable* c = compiled.load(std::memory_order_acquire);
    int pin = pinned.load(std::memory_order_relaxed);
    if (c && pin != static_cast<int>(Tier::First)) {
      compiled_calls.fetch_add(1, std::memory_order_relaxed);
      return *c;
    }
    if (!started.load(std::memory_order_relaxed) && options.compile_after_calls > 0 &&
        calls_before_start.fetch_add(1, std::memory_order_relaxed) + 1 >= options.compile_after_calls)
      start();
    first_calls.fetch_add(1, std::memory_order_relaxed);
    return first;
  }

  bool wait(std::optional<std::chrono::duration<double>> timeout) {
    start();
    std::unique_lock<std::mutex> lock(mu);
    // (NotStarted too: another thread's start() may not have marked it Running yet)
    auto finished = [&] { return state != TierReport::Compile::Running && state != TierReport::Compile::NotStarted; };
    if (timeout)
      done.wait_for(lock, *timeout, finished);
    else
      done.wait(lock, finished);
    return state == TierReport::Compile::Ready;
  }
};

namespace {

// The "tiered" Executable's implementation: each call runs on the tier State::select picks.
class TieredImpl final : public ExecutableImpl {
 public:
  explicit TieredImpl(std::shared_ptr<TieredExecutable::State> s) : s_(std::move(s)) {}
  void execute(std::span<const Tensor> inputs, std::span<Tensor> outputs) const override {
    s_->select().implementation().execute(inputs, outputs);
  }
  // The first tier decides: a call the compiled tier cannot limit runs on the first one instead.
  bool supports_run_options() const override { return s_->first.implementation().supports_run_options(); }
  void execute_with(std::span<const Tensor> inputs, std::span<Tensor> outputs,
                    const RunOptions& options) const override {
    const Executable* exe = &s_->select();
    if (!exe->implementation().supports_run_options()) {
      if (s_->pinned.load(std::memory_order_relaxed) == static_cast<int>(Tier::Compiled))
        throw BackendError("tiered: the compiled tier (" + s_->options.compiled_backend +
                           ") cannot honour RunOptions and the executable is pinned to it");
      exe = &s_->first;
    }
    exe->implementation().execute_with(inputs, outputs, options);
  }

 private:
  std::shared_ptr<TieredExecutable::State> s_;
};

}  // namespace

TieredExecutable::TieredExecutable(const Graph& graph, const TieredOptions& options)
    : state_(std::make_shared<State>()) {
  if (options.compile_after_calls < 0)
    throw ValidationError("TieredOptions::compile_after_calls = " + std::to_string(options.compile_after_calls) +
                          " is negative");
  (void)get_backend(options.compiled_backend);  // BackendError now for a name this build does not have
  state_->graph = graph;
  state_->options = options;
  state_->options.compile.cancel = nullptr;
  state_->first = load(compile(lower(graph, options.first_backend), CompileOptions{}), options.device);
  exe_ = Executable("tiered", options.device, graph, std::make_shared<TieredImpl>(state_));
  if (options.compile_after_calls == 0) state_->start();
}

const Executable& TieredExecutable::executable() const { return exe_; }

Tree<Tensor> TieredExecutable::run(const Tree<Tensor>& inputs, const RunOptions& options) const {
  return exe_.run(inputs, options);
}

void TieredExecutable::execute(std::span<const Tensor> inputs, std::span<Tensor> outputs,
                               const RunOptions& options) const {
  exe_.execute(inputs, outputs, options);
}

Tier TieredExecutable::tier() const {
  bool ready = state_->compiled.load(std::memory_order_acquire) != nullptr;
  return ready && state_->pinned.load(std::memory_order_relaxed) != static_cast<int>(Tier::First) ? Tier::Compiled
                                                                                                  : Tier::First;
}

bool TieredExecutable::ready() const { return state_->compiled.load(std::memory_order_acquire) != nullptr; }

void TieredExecutable::start_compile() const { state_->start(); }

bool TieredExecutable::wait(std::optional<std::chrono::duration<double>> timeout) const {
  return state_->wait(timeout);
}

void TieredExecutable::pin(std::optional<Tier> tier) const {
  if (tier == Tier::Compiled && !state_->wait(std::nullopt)) {
    TierReport r = report();
    throw BackendError("tiered: cannot pin the compiled tier: its compile on '" + r.compiled_backend + "' " +
                       compile_state_name(r.compile) + (r.error.empty() ? "" : ": " + r.error));
  }
  state_->pinned.store(tier ? static_cast<int>(*tier) : kAuto, std::memory_order_relaxed);
}

TierReport TieredExecutable::report() const {
  TierReport r;
  r.first_backend = state_->options.first_backend;
  r.compiled_backend = state_->options.compiled_backend;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    r.compile = state_->state;
    r.error = state_->error;
    r.lower_seconds = state_->lower_seconds;
    r.compile_seconds = state_->compile_seconds;
    r.load_seconds = state_->load_seconds;
    r.stages = state_->stages;
  }
  r.first_calls = state_->first_calls.load(std::memory_order_relaxed);
  r.compiled_calls = state_->compiled_calls.load(std::memory_order_relaxed);
  int pin = state_->pinned.load(std::memory_order_relaxed);
  if (pin != kAuto) r.pinned = static_cast<Tier>(pin);
  return r;
}

const Executable& TieredExecutable::first() const { return state_->first; }

std::optional<Executable> TieredExecutable::compiled() const {
  const Executable* c = state_->compiled.load(std::memory_order_acquire);
  if (!c) return std::nullopt;
  return *c;
}

}  // namespace evoxc
