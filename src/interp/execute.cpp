// execute(): binds symbolic dims, validates inputs and outputs, then walks the prepared instructions.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <ctime>
#include <exception>
#include <limits>
#include <mutex>

#include "evoxc/core/error.h"
#include "evoxc/core/run_limits.h"
#include "program.h"
#include "thread_pool.h"

namespace evoxc::interp {

namespace {

// Returns the frame to the pool however execute() leaves.
class FrameLease {
 public:
  explicit FrameLease(const Program& p) : p_(p), f_(p.acquire_frame()) {}
  ~FrameLease() { p_.release_frame(std::move(f_)); }
  FrameLease(const FrameLease&) = delete;
  FrameLease& operator=(const FrameLease&) = delete;
  Program::FrameData& operator*() { return *f_; }
  Program::FrameData* operator->() { return f_.get(); }

 private:
  const Program& p_;
  std::unique_ptr<Program::FrameData> f_;
};

[[noreturn]] void input_mismatch(const Program& p, size_t i, DType dt, const int64_t* shape, size_t rank,
                                 const std::string& extra = "") {
  throw ValidationError("input " + p.input_paths[i] + ": expected " + p.values[i].type().to_string() + ", got " +
                        (dt == p.values[i].dtype()
                             ? "shape " + shape_text(shape, rank)
                             : "dtype " + std::string(dtype_name(dt)) + " with shape " + shape_text(shape, rank)) +
                        extra);
}
[[noreturn]] void input_mismatch(const Program& p, size_t i, const Tensor& t, const std::string& extra = "") {
  input_mismatch(p, i, t.dtype(), t.shape().data(), t.rank(), extra);
}

// Block plans: inputs are raw buffers of the plan's dtypes and ranks (the enclosing
// plan checked both at prepare), so only extents are checked.
struct RawInputs {
  const Program& p;
  const int64_t* const* dims;
  size_t rank(size_t i) const { return p.values[i].rank(); }
  const int64_t* shape(size_t i) const { return dims[i]; }
  [[noreturn]] void mismatch(size_t i, const std::string& extra) const {
    input_mismatch(p, i, p.values[i].dtype(), dims[i], rank(i), extra);
  }
};
struct TensorInputs {
  const Program& p;
  std::span<const Tensor> t;
  size_t rank(size_t i) const { return t[i].rank(); }
  const int64_t* shape(size_t i) const { return t[i].shape().data(); }
  [[noreturn]] void mismatch(size_t i, const std::string& extra) const { input_mismatch(p, i, t[i], extra); }
};

template <typename In>
void check_input_rules(const Program& p, const In& in, Program::FrameData& f) {
  using K = Program::InputRule::Kind;
  for (const auto& r : p.input_rules) {
    int64_t got = in.shape(r.input)[r.axis];
    switch (r.kind) {
      case K::Const:
        if (got != r.value) in.mismatch(r.input, "");
        break;
      case K::Bind: f.syms[static_cast<size_t>(r.slot)] = got; break;
      case K::SameSym: {
        int64_t want = f.syms[static_cast<size_t>(r.slot)];
        if (got != want) {
          const std::string& sym = p.sym_names[static_cast<size_t>(r.slot)];
          in.mismatch(r.input, ": dim " + std::to_string(r.axis) + " gives " + sym + " = " + std::to_string(got) +
                                   ", but input " + p.input_paths[r.first_input] + " (" +
                                   p.values[r.first_input].type().to_string() + ", shape " +
                                   shape_text(in.shape(r.first_input), in.rank(r.first_input)) + ") bound " + sym +
                                   " = " + std::to_string(want) + " at dim " + std::to_string(r.first_axis) +
                                   "; pass inputs whose " + sym + " extents agree");
        }
        break;
      }
      case K::Expr: {
        int64_t want = p.code.eval(r.slot, f.syms.data());
        if (got != want)
          in.mismatch(r.input, ": dim " + std::to_string(r.axis) + " must be " + p.code.expr(r.slot).to_string() +
                                   " = " + std::to_string(want));
        break;
      }
    }
  }
}

void check_inputs(const Program& p, std::span<const Tensor> inputs, Program::FrameData& f) {
  for (size_t i = 0; i < p.num_inputs; ++i) {
    const Tensor& t = inputs[i];
    if (!t.defined())
      throw ValidationError("input " + p.input_paths[i] + ": the tensor is undefined; pass a tensor of type " +
                            p.values[i].type().to_string());
    if (t.dtype() != p.values[i].dtype() || t.rank() != p.values[i].rank()) input_mismatch(p, i, t);
  }
  check_input_rules(p, TensorInputs{p, inputs}, f);
}

std::string bindings_text(const Program& p, const Program::FrameData& f) {
  std::string s;
  for (size_t i = 0; i < p.sym_names.size(); ++i)
    s += (i ? ", " : "") + p.sym_names[i] + " = " + std::to_string(f.syms[i]);
  return s;
}

// Symbolic programs: evaluate every extent, run the checks in op order, count elements.
void evaluate_shapes(const Program& p, Program::FrameData& f) {
  for (size_t e = 0; e < p.code.size(); ++e) f.expr_vals[e] = p.code.eval(static_cast<int32_t>(e), f.syms.data());
  for (const Check& c : p.checks) {
    int64_t a = f.expr_vals[static_cast<size_t>(c.a)], b = f.expr_vals[static_cast<size_t>(c.b)];
    bool ok = true;
    std::string rel;
    switch (c.kind) {
      case Check::Kind::Equal: ok = a == b, rel = " must equal "; break;
      case Check::Kind::BroadcastTo: ok = a == b || a == 1, rel = " must be 1 or equal "; break;
      case Check::Kind::LessEqual: ok = a <= b, rel = " must be at most "; break;
      case Check::Kind::NonNegative: ok = a >= 0, rel = " must be at least "; break;
    }
    auto text = [&](int32_t id, int64_t v) {
      const DimExpr& e = p.code.expr(id);
      return e.is_const() ? std::to_string(v) : e.to_string() + " = " + std::to_string(v);
    };
    if (!ok)
      throw ValidationError(c.what + ": " + text(c.a, a) + rel + text(c.b, b) + " (with " + bindings_text(p, f) + ")");
  }
  for (size_t k = 0; k < p.dim_expr.size(); ++k)
    if (p.dim_expr[k] >= 0) f.dims[k] = f.expr_vals[static_cast<size_t>(p.dim_expr[k])];
  for (size_t v = 0; v < p.values.size(); ++v) {
    const ValueDesc& d = p.values[v];
    int64_t n = 1;
    for (uint32_t i = 0; i < d.rank(); ++i) {
      int64_t x = f.dims[d.dim_off + i];
      if (x < 0 || __builtin_mul_overflow(n, x, &n) || n > kMaxElements)
        throw ValidationError(p.producer(static_cast<uint32_t>(v)) + ": " + p.value_name(static_cast<uint32_t>(v)) +
                              " of type " + d.type().to_string() + " gets shape " +
                              shape_text(f.dims.data() + d.dim_off, d.rank()) + " with " + bindings_text(p, f) +
                              ", which is too large or negative");
    }
    f.numel[v] = n;
  }
}

// Symbolic programs: evaluate_shapes, then size the buffers.
void resolve_shapes(const Program& p, Program::FrameData& f) {
  evaluate_shapes(p, f);
  size_t off = 0;
  for (size_t b = 0; b < p.buffers.size(); ++b) {
    size_t bytes = 0;
    for (uint32_t v : p.buffers[b].values)
      bytes = std::max(bytes, static_cast<size_t>(f.numel[v]) * size_of(p.values[v].dtype()));
    f.offsets[b] = off;
    off += (bytes + 63) / 64 * 64;
  }
  try {
    f.reserve_arena(off);
  } catch (const ValidationError& e) {
    // Name the largest temporary: the op whose result makes the scratch too big.
    size_t best = 0, best_bytes = 0;
    for (size_t v = 0; v < p.values.size(); ++v) {
      size_t b = static_cast<size_t>(f.numel[v]) * size_of(p.values[v].dtype());
      if (p.storage[v].kind == Program::StorageKind::Temp && b >= best_bytes) best = v, best_bytes = b;
    }
    auto v = static_cast<uint32_t>(best);
    throw ValidationError(std::string(e.what()) + " (the largest: " + p.value_name(v) + " of " + p.producer(v) +
                          ", shape " + shape_text(f.dims.data() + p.values[v].dim_off, p.values[v].rank()) + ", " +
                          std::to_string(best_bytes) + " bytes, with " + bindings_text(p, f) + ")");
  }
  for (size_t v = 0; v < p.values.size(); ++v) {
    const Program::Storage& s = p.storage[v];
    if (s.kind == Program::StorageKind::Temp) f.ptr[v] = static_cast<char*>(f.arena) + f.offsets[s.index];
    if (s.kind == Program::StorageKind::Constant) f.ptr[v] = p.constants[s.index].raw_data();
  }
}

bool overlaps(const Tensor& a, const Tensor& b) {
  if (a.nbytes() == 0 || b.nbytes() == 0) return false;
  auto* pa = static_cast<const char*>(a.raw_data());
  auto* pb = static_cast<const char*>(b.raw_data());
  return pa < pb + b.nbytes() && pb < pa + a.nbytes();
}

std::string at_iteration(const Operation& op, int64_t iteration) {
  return op_where(op) + ", iteration " + std::to_string(iteration);
}

// A Tensor for an output slot, with a failure to allocate naming the output and its producer.
Tensor allocate_output(const Program& p, size_t j, const int64_t* shape, size_t rank) {
  try {
    DType dt = p.values[p.output_value[j]].dtype();
    int64_t n = 1;
    for (size_t i = 0; i < rank; ++i) n *= shape[i];  // at most kMaxElements: checked at prepare or per call
    check_host_memory(static_cast<size_t>(n) * size_of(dt), "the output");
    return Tensor::empty(std::vector<int64_t>(shape, shape + rank), dt);
  } catch (const Error& e) {
    uint32_t v = p.output_value[j];
    throw ValidationError("output [" + std::to_string(j) + "] (" + p.value_name(v) + " of " + p.producer(v) + ", " +
                          std::string(dtype_name(p.values[v].dtype())) + " of shape " + shape_text(shape, rank) +
                          "): " + e.what() + "; make the op's result smaller");
  }
}

// One concurrent segment of a stream schedule, run by parallel_run's tasks. Its per-call state
// lives here, on the caller's stack: nothing is allocated per call.
//
// A lane is run by whichever thread claims it; a thread whose next step waits for a lane that
// nobody runs claims that lane and runs it itself up to the count it needs, then lets it go.
// So the segment completes whatever the pool does: one thread alone (a worker running a call,
// set_num_threads(1) after prepare, a pool busy with another call) runs every lane in turn.
// Why this cannot deadlock: every lane lists its steps in one topological order of the graph
// (the planner's emission order), and a wait names a step before the waiting one in that
// order. A thread blocks only on a lane another thread holds, whose current step comes before
// the step it waits for, so following who-waits-on-whom strictly goes back in that order and
// ends at a thread that can run. A thread that runs a lane for another lane's wait runs it only
// up to the step needed, all of which come before the waiting step: they never need more of
// the lane it left (already done that far).
//
// Waiting: a short spin (a wait is usually for a step running on another core right now), then
// helping (ready steps of a lane nobody holds, never blocking inside it), then sleeping until
// the lane gets there: on a machine with fewer free cores than lanes, a spinning waiter would
// take the core from the very thread it waits for.
class SegmentRun {
 public:
  SegmentRun(const Program& p, const Frame& frame, const StreamSchedule::Segment& seg)
      : p_(p), frame_(frame), lanes_(p.streams.lanes.data() + seg.lane_begin), n_(seg.lane_end - seg.lane_begin) {}

  // Runs every lane with the pool's help. Rethrows the first exception a kernel raised, once
  // every lane has stopped.
  void run() {
    parallel_run(
        n_, [](void* c, int64_t i) { static_cast<SegmentRun*>(c)->task(static_cast<uint32_t>(i)); }, this);
    if (error_) std::rethrow_exception(error_);
  }
  // Runs every lane on the caller.
  void run_alone() {
    task(0);
    if (error_) std::rethrow_exception(error_);
  }

 private:
  struct alignas(64) LaneState {   // one cache line each: lanes publish progress independently
    std::atomic<int32_t> done{0};  // steps completed; their writes are visible to an acquire
    std::atomic<bool> claimed{false};
    // The smallest count a sleeper waits for (INT32_MAX: none), so that publishing a step
    // wakes sleepers only when one of them can go on.
    std::atomic<int32_t> wanted{INT32_MAX};
  };

  // One pool task: claims lanes, starting at its own, while any is left unclaimed. A lane
  // another thread holds is finished by it; one it lets go unfinished, after running it for a
  // wait, it picks up again in its own task. So a task may leave as soon as nothing is free
  // (parallel_run then waits for the others).
  void task(uint32_t first) {
    for (bool ran = true; ran && !failed();) {
      ran = false;
      for (uint32_t i = 0; i < n_ && !failed(); ++i) {
        uint32_t l = (first + i) % n_;
        if (state_[l].done.load(std::memory_order_acquire) >= length(l) || !claim(l)) continue;
        run_lane(l, length(l));
        unclaim(l);
        ran = true;
      }
    }
  }

  int32_t length(uint32_t l) const { return static_cast<int32_t>(lanes_[l].step_end - lanes_[l].step_begin); }
  bool failed() const { return failed_.load(std::memory_order_relaxed); }
  bool claim(uint32_t l) {
    LaneState& s = state_[l];
    // Acquire: the previous holder's steps (and their writes) happen before ours.
    return !s.claimed.load(std::memory_order_relaxed) && !s.claimed.exchange(true, std::memory_order_acquire);
  }

  // Stores that sleepers wait for are sequentially consistent, and the waker then looks for
  // sleepers: either a sleeper's check (under the mutex) sees the store, or the waker sees
  // the sleeper's registration and notifies under the mutex.
  void unclaim(uint32_t l) {
    state_[l].claimed.store(false, std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) > 0) notify();
  }
  void publish(uint32_t l, int32_t done) {
    state_[l].done.store(done, std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) > 0 && done >= state_[l].wanted.load(std::memory_order_seq_cst)) {
      state_[l].wanted.store(INT32_MAX, std::memory_order_seq_cst);  // sleepers still short re-register
      notify();
    }
  }
  void notify() {
    { std::lock_guard<std::mutex> lk(mu_); }  // a sleeper is either before its check or waiting
    cv_.notify_all();
  }

  // Sleeps until lane `l` has `count` steps done, or is let go unfinished, or some lane failed.
  void sleep_until(uint32_t l, int32_t count) {
    LaneState& s = state_[l];
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    {
      std::unique_lock<std::mutex> lk(mu_);
      for (;;) {
        int32_t w = s.wanted.load(std::memory_order_seq_cst);
        while (count < w && !s.wanted.compare_exchange_weak(w, count, std::memory_order_seq_cst)) {
        }
        if (s.done.load(std::memory_order_seq_cst) >= count || !s.claimed.load(std::memory_order_seq_cst) || failed())
          break;
        cv_.wait(lk);
      }
    }
    sleepers_.fetch_sub(1, std::memory_order_relaxed);
  }

  // Runs lane `l` (claimed) until `until` steps are done, or until some lane failed.
  void run_lane(uint32_t l, int32_t until) {
    const StreamSchedule& st = p_.streams;
    for (int32_t pos = state_[l].done.load(std::memory_order_relaxed); pos < until && !failed(); ++pos) {
      const StreamSchedule::Step& step = st.steps[lanes_[l].step_begin + static_cast<uint32_t>(pos)];
      for (uint32_t w = step.wait_begin; w < step.wait_end; ++w) wait_for(l, st.waits[w].lane, st.waits[w].count);
      if (failed()) return;
      // The next kernel object, whose vtable pointer the next call waits on: steps visit the
      // kernels out of their order in memory, so the hardware prefetcher does not.
      if (pos + 1 < until) __builtin_prefetch(p_.kernels[st.steps[lanes_[l].step_begin + pos + 1].kernel].get());
      run_step(step);
      publish(l, pos + 1);
    }
  }

  void run_step(const StreamSchedule::Step& step) {
    // Kernels do not throw (control flow, which can, never gets a schedule); should one
    // still, every lane stops and run() rethrows once all have.
    try {
      p_.kernels[step.kernel]->run(frame_);
    } catch (...) {
      if (!failed_.exchange(true, std::memory_order_seq_cst)) error_ = std::current_exception();
      notify();
    }
  }

  // Lane `self`'s next step needs `count` steps of lane `l`.
  void wait_for(uint32_t self, uint32_t l, int32_t count) {
    for (int spins = 0;;) {
      if (state_[l].done.load(std::memory_order_acquire) >= count || failed()) return;
      if (claim(l)) {
        run_lane(l, count);
        unclaim(l);
        continue;
      }
      if (++spins < kSpins) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
        continue;
      }
      spins = 0;
      if (!help(self)) sleep_until(l, count);
    }
  }

  // Runs a few ready steps (those whose waits are met) of some lane nobody holds, other than
  // `self`; never blocks. Returns whether it ran any. A few: the lane this thread holds may be
  // able to go on by then, and others may be waiting for it.
  bool help(uint32_t self) {
    const StreamSchedule& st = p_.streams;
    for (uint32_t u = 0; u < n_; ++u) {
      if (u == self || state_[u].done.load(std::memory_order_relaxed) >= length(u) || !claim(u)) continue;
      int32_t pos = state_[u].done.load(std::memory_order_relaxed), start = pos;
      for (int32_t end = std::min(length(u), pos + kHelpSteps); pos < end && !failed(); ++pos) {
        const StreamSchedule::Step& step = st.steps[lanes_[u].step_begin + static_cast<uint32_t>(pos)];
        bool ready = true;
        for (uint32_t w = step.wait_begin; ready && w < step.wait_end; ++w)
          ready = state_[st.waits[w].lane].done.load(std::memory_order_acquire) >= st.waits[w].count;
        if (!ready) break;
        run_step(step);
        publish(u, pos + 1);
      }
      unclaim(u);
      if (pos > start) return true;
    }
    return false;
  }

  // About a microsecond of spinning before a waiter looks for other work or sleeps.
  static constexpr int kSpins = 256;
  static constexpr int32_t kHelpSteps = 4;

  const Program& p_;
  const Frame& frame_;
  const StreamSchedule::Lane* lanes_;
  const uint32_t n_;
  LaneState state_[StreamSchedule::kMaxLanes];
  std::atomic<bool> failed_{false};
  std::exception_ptr error_;
  std::atomic<int> sleepers_{0};
  std::mutex mu_;
  std::condition_variable cv_;
};

// This thread's CPU time, in nanoseconds.
int64_t thread_cpu_ns() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

// The kernels of one call: in op order, or by the plan's stream schedule.
//
// A call whose caller was off its core for more than a quarter of its concurrent segments
// (asleep, waiting for a lane a pool thread held; or preempted) ran on a machine busier than
// it has cores, where the lanes would have gone faster on the caller alone: the next calls then
// run every lane on the caller, for a count of calls that doubles while this repeats (up to
// 256) and resets once a call goes well. Results do not depend on it (nor on any interleaving).
void run_kernels(const Program& p, const Frame& frame) {
  const StreamSchedule& st = p.streams;
  if (st.segments.empty()) {
    for (const KernelPtr& k : p.kernels)
      if (k) k->run(frame);
    return;
  }
  Program::StreamLoad& load = p.stream_load;
  const bool alone = load.alone_calls.load(std::memory_order_relaxed) > 0;
  if (alone) load.alone_calls.fetch_sub(1, std::memory_order_relaxed);
  int64_t wall = 0, busy = 0;
  for (const StreamSchedule::Segment& seg : st.segments) {
    if (seg.lane_end - seg.lane_begin == 1) {
      const StreamSchedule::Lane& lane = st.lanes[seg.lane_begin];
      for (uint32_t i = lane.step_begin; i < lane.step_end; ++i) p.kernels[st.steps[i].kernel]->run(frame);
    } else if (alone) {
      SegmentRun(p, frame, seg).run_alone();
    } else {
      auto t0 = std::chrono::steady_clock::now();
      int64_t c0 = thread_cpu_ns();
      SegmentRun(p, frame, seg).run();
      busy += thread_cpu_ns() - c0;
      wall += std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
    }
  }
  if (alone) return;
  if (4 * (wall - busy) > wall) {
    int32_t next = std::min(256, std::max(1, 2 * load.backoff.load(std::memory_order_relaxed)));
    load.backoff.store(next, std::memory_order_relaxed);
    load.alone_calls.store(next, std::memory_order_relaxed);
  } else {
    load.backoff.store(0, std::memory_order_relaxed);
  }
}

}  // namespace

RunBudget::RunBudget(const RunLimits& limits)
    : max_count_(limits.max_loop_iterations > 0 ? limits.max_loop_iterations : std::numeric_limits<int64_t>::max()),
      cancelled_(limits.cancelled),
      deadline_(limits.deadline.has_value()),
      deadline_at_(limits.deadline.value_or(std::chrono::steady_clock::time_point())) {
  if (deadline_) last_sample_ = std::chrono::steady_clock::now();
}

void RunBudget::check_start() const {
  if (cancelled_ && cancelled_->load(std::memory_order_relaxed))
    throw RunLimitError(run_limits::cancelled_before_start());
  if (deadline_ && last_sample_ >= deadline_at_) throw RunLimitError(run_limits::deadline_before_start());
}

void RunBudget::over_count(const Operation& op, int64_t iteration) {
  stopped_at_ = &op;
  throw RunLimitError(run_limits::count_reached(at_iteration(op, iteration), max_count_));
}

void RunBudget::stop_cancelled(const Operation& op, int64_t iteration) {
  stopped_at_ = &op;
  throw RunLimitError(run_limits::cancelled(at_iteration(op, iteration)));
}

void RunBudget::check_clock(const Operation& op, int64_t iteration) {
  auto now = std::chrono::steady_clock::now();
  if (now >= deadline_at_) {
    stopped_at_ = &op;
    throw RunLimitError(run_limits::deadline_passed(
        at_iteration(op, iteration), std::chrono::duration_cast<std::chrono::microseconds>(now - deadline_at_),
        count_ - 1));
  }
  stride_ = run_limits::next_clock_stride(stride_, now - last_sample_);
  until_clock_ = stride_;
  last_sample_ = now;
}

void rethrow_in_loop(const RunLimitError& e, const Operation& op, int64_t iteration) {
  throw RunLimitError(std::string(e.what()) + "; inside " + at_iteration(op, iteration));
}

void execute(const Program& p, std::span<const Tensor> inputs, std::span<Tensor> outputs) {
  execute(p, inputs, outputs, RunLimits{});
}

void check_shapes(const Program& p, std::span<const Tensor> inputs) {
  if (inputs.size() != p.num_inputs)
    throw ValidationError("execute: the program takes " + std::to_string(p.num_inputs) + " input tensors, got " +
                          std::to_string(inputs.size()));
  FrameLease f(p);
  check_inputs(p, inputs, *f);
  if (!p.all_static) evaluate_shapes(p, *f);
}

void execute(const Program& p, std::span<const Tensor> inputs, std::span<Tensor> outputs, const RunLimits& limits) {
  RunBudget budget(limits);
  budget.check_start();
  if (inputs.size() != p.num_inputs)
    throw ValidationError("execute: the program takes " + std::to_string(p.num_inputs) + " input tensors, got " +
                          std::to_string(inputs.size()));
  if (outputs.size() != p.output_value.size())
    throw ValidationError("execute: the program has " + std::to_string(p.output_value.size()) + " outputs, got " +
                          std::to_string(outputs.size()) + " output slots");
  FrameLease f(p);
  check_inputs(p, inputs, *f);
  const int64_t* dims = p.all_static ? p.dims_template.data() : nullptr;
  const int64_t* numel = p.all_static ? p.static_numel.data() : nullptr;
  if (!p.all_static) {
    resolve_shapes(p, *f);
    dims = f->dims.data();
    numel = f->numel.data();
  }

  // Outputs: validate caller buffers, allocate missing ones, stage any that overlap an input.
  for (size_t j = 0; j < outputs.size(); ++j) {
    uint32_t v = p.output_value[j];
    const ValueDesc& d = p.values[v];
    const int64_t* want = dims + d.dim_off;
    Tensor& o = outputs[j];
    if (o.defined()) {
      bool same = o.dtype() == d.dtype() && o.rank() == d.rank();
      for (size_t i = 0; same && i < d.rank(); ++i) same = o.shape()[i] == want[i];
      if (!same)
        throw ValidationError("output [" + std::to_string(j) + "]: the caller's tensor has dtype " +
                              std::string(dtype_name(o.dtype())) + " and shape " +
                              shape_text(o.shape().data(), o.rank()) + ", but the program writes " +
                              std::string(dtype_name(d.dtype())) + " of shape " + shape_text(want, d.rank()) +
                              "; pass an undefined Tensor to have it allocated");
      o.raw_data();  // DeviceError for a non-host buffer, before anything runs
      bool clash = false;
      for (const Tensor& in : inputs) clash = clash || overlaps(o, in);
      if (clash) f->staged[j] = Tensor::empty(std::vector<int64_t>(want, want + d.rank()), d.dtype());
    } else {
      o = allocate_output(p, j, want, d.rank());
    }
  }

  // Pointers that change per call: inputs and direct outputs (and their aliases).
  for (uint32_t v : p.patch_values) {
    const Program::Storage& s = p.storage[v];
    if (s.kind == Program::StorageKind::Input) {
      f->ptr[v] = inputs[s.index].raw_data();
    } else if (s.kind == Program::StorageKind::Output) {
      const Tensor& t = f->staged[s.index].defined() ? f->staged[s.index] : outputs[s.index];
      f->ptr[v] = t.raw_data();
    }
  }

  Frame frame{f->ptr.data(), dims, numel, f->syms.data(), &budget};
  run_kernels(p, frame);

  // Copies after the run: outputs that are inputs, constants, views or repeats first, then
  // the staged ones (their sources never overlap a caller buffer).
  for (size_t j = 0; j < outputs.size(); ++j) {
    uint32_t v = p.output_value[j];
    size_t bytes = static_cast<size_t>(numel[v]) * size_of(p.values[v].dtype());
    if (bytes != 0 && !p.output_direct[j]) std::memmove(outputs[j].raw_data(), f->ptr[v], bytes);
  }
  for (size_t j = 0; j < outputs.size(); ++j) {
    uint32_t v = p.output_value[j];
    size_t bytes = static_cast<size_t>(numel[v]) * size_of(p.values[v].dtype());
    if (bytes != 0 && p.output_direct[j] && f->staged[j].defined())
      std::memcpy(outputs[j].raw_data(), f->staged[j].raw_data(), bytes);
  }
}

void execute_block(const Program& p, const BlockCall& c) {
  FrameLease f(p);
  execute_block(p, c, *f);
}

void execute_block(const Program& p, const BlockCall& c, Program::FrameData& fd) {
  Program::FrameData* f = &fd;
  for (size_t i = 0; i < p.num_outer_syms; ++i) f->syms[i] = c.outer_syms[i];
  check_input_rules(p, RawInputs{p, c.in_dims}, *f);
  const int64_t* dims = p.all_static ? p.dims_template.data() : nullptr;
  const int64_t* numel = p.all_static ? p.static_numel.data() : nullptr;
  if (!p.all_static) {
    resolve_shapes(p, *f);
    dims = f->dims.data();
    numel = f->numel.data();
  }
  for (size_t j = 0; j < p.output_value.size(); ++j) {
    const ValueDesc& d = p.values[p.output_value[j]];
    const int64_t* want = dims + d.dim_off;
    for (size_t i = 0; i < d.rank(); ++i)
      if (c.out_dims[j][i] != want[i])
        throw ValidationError("result " + std::to_string(j) + " of " + p.producer(p.output_value[j]) +
                              ": the region computes shape " + shape_text(want, d.rank()) + " where the op's type " +
                              "gives " + shape_text(c.out_dims[j], d.rank()) + "; the graph's types are inconsistent");
  }
  for (uint32_t v : p.patch_values) {
    const Program::Storage& s = p.storage[v];
    if (s.kind == Program::StorageKind::Input)
      f->ptr[v] = const_cast<void*>(c.in[s.index]);  // kernels never write an input's storage
    else if (s.kind == Program::StorageKind::Output)
      f->ptr[v] = c.out[s.index];
  }
  Frame frame{f->ptr.data(), dims, numel, f->syms.data(), c.budget};
  run_kernels(p, frame);
  for (size_t j = 0; j < p.output_value.size(); ++j) {
    uint32_t v = p.output_value[j];
    size_t bytes = static_cast<size_t>(numel[v]) * size_of(p.values[v].dtype());
    if (bytes != 0 && !p.output_direct[j]) std::memmove(c.out[j], f->ptr[v], bytes);
  }
}

}  // namespace evoxc::interp
