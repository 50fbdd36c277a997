// MLIR's async runtime C ABI on evoxc's own pool: tokens, values and groups as reference-counted
// objects, tasks (coroutine resumptions) on workers that spin before they sleep, and a caller that
// runs queued tasks while it waits.
//
// Why not MLIR's libmlir_async_runtime: its llvm::ThreadPool parks idle workers on a condition
// variable, and waking one costs tens of microseconds on a virtual machine, more than a parallel
// block of a 1024x1024 reduction takes; its waiting caller sleeps instead of working.
#include "backends/common/async_runtime.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace evoxc::async_runtime {
namespace {

using Resume = void (*)(void*);

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

// How long an idle worker or a waiting caller spins before it sleeps: long enough to bridge the
// gap between the calls of a loop that runs a compiled program many times, short enough not to
// hold a core when the program is done.
constexpr auto kSpin = std::chrono::microseconds(200);

// Spins on `ready` for up to kSpin; true when it became ready.
template <typename Ready>
bool spin_until(Ready&& ready) {
  auto start = std::chrono::steady_clock::now();
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (ready()) return true;
      cpu_relax();
    }
    if (std::chrono::steady_clock::now() - start > kSpin) return false;
  }
}

thread_local void* t_call_context = nullptr;

// A coroutine to resume, and the call context of the thread that made it runnable.
struct Task {
  Task() = default;
  Task(void* handle, Resume resume) : handle(handle), resume(resume), context(t_call_context) {}
  void* handle = nullptr;
  Resume resume = nullptr;
  void* context = nullptr;
  // Resumes the coroutine under its call context.
  void operator()() const {
    void* saved = t_call_context;
    t_call_context = context;
    resume(handle);
    t_call_context = saved;
  }
};

class Pool {
 public:
  Pool() {
    unsigned hc = std::thread::hardware_concurrency();
    int workers = std::max(1, static_cast<int>(hc) - 1);
    // A thread that cannot start leaves fewer workers: a waiting caller runs the queued tasks itself.
    try {
      for (; workers_ < workers; ++workers_) std::thread([this] { loop(); }).detach();
    } catch (const std::system_error&) {
    }
  }
  int workers() const { return workers_; }

  void submit(Task t) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      queue_.push_back(t);
      queued_.fetch_add(1, std::memory_order_seq_cst);
    }
    if (sleepers_.load(std::memory_order_seq_cst) > 0) {
      wake_.fetch_add(1, std::memory_order_seq_cst);
      wake_.notify_one();
    }
  }

  // Runs one queued task on this thread; false when there was none.
  bool help() {
    Task t;
    if (!pop(t)) return false;
    run(t);
    return true;
  }

  bool has_work() const { return queued_.load(std::memory_order_acquire) > 0; }

  void quiesce() {
    std::lock_guard<std::mutex> lock(quiesce_mu_);
    int old = epoch_.load(std::memory_order_seq_cst);
    epoch_.store(1 - old, std::memory_order_seq_cst);
    while (active_[old].load(std::memory_order_seq_cst) != 0) std::this_thread::yield();
  }

 private:
  bool pop(Task& t) {
    if (queued_.load(std::memory_order_acquire) == 0) return false;
    std::lock_guard<std::mutex> lock(mu_);
    if (queue_.empty()) return false;
    t = queue_.front();
    queue_.pop_front();
    queued_.fetch_sub(1, std::memory_order_relaxed);
    return true;
  }

  // Runs a task inside the current epoch's count, so quiesce() knows when it has left the code.
  void run(const Task& t) {
    int e;
    for (;;) {
      e = epoch_.load(std::memory_order_seq_cst);
      active_[e].fetch_add(1, std::memory_order_seq_cst);
      if (epoch_.load(std::memory_order_seq_cst) == e) break;
      active_[e].fetch_sub(1, std::memory_order_seq_cst);
    }
    t();
    active_[e].fetch_sub(1, std::memory_order_seq_cst);
  }

  [[noreturn]] void loop() {
    for (;;) {
      Task t;
      if (pop(t)) {
        run(t);
        continue;
      }
      if (spin_until([&] { return queued_.load(std::memory_order_acquire) > 0; })) continue;
      // Sleep: announce it, then look once more, so a submit either sees the sleeper or is seen.
      uint32_t seen = wake_.load(std::memory_order_seq_cst);
      sleepers_.fetch_add(1, std::memory_order_seq_cst);
      if (queued_.load(std::memory_order_seq_cst) == 0) wake_.wait(seen, std::memory_order_seq_cst);
      sleepers_.fetch_sub(1, std::memory_order_seq_cst);
    }
  }

  std::mutex mu_;
  std::deque<Task> queue_;
  std::atomic<int64_t> queued_{0};
  std::atomic<int> sleepers_{0};
  std::atomic<uint32_t> wake_{0};
  int workers_ = 0;
  std::mutex quiesce_mu_;
  std::atomic<int> epoch_{0};
  std::atomic<int64_t> active_[2] = {0, 0};
};

Pool& pool() {
  static Pool* p = new Pool();  // never destroyed: detached workers outlive static destructors
  return *p;
}

// Waits for `ready`, running queued tasks meanwhile, then spinning, then sleeping on `word`
// (whose value changes, with a notify, when `ready` becomes true).
template <typename Word, typename Ready>
void await(std::atomic<Word>& word, Ready&& ready) {
  for (;;) {
    if (ready()) return;
    if (pool().help()) continue;
    if (spin_until([&] { return ready() || pool().has_work(); })) continue;
    Word seen = word.load(std::memory_order_seq_cst);
    if (ready()) return;
    word.wait(seen, std::memory_order_seq_cst);
  }
}

// ---- reference-counted runtime objects --------------------------------------------------------

struct Object {
  explicit Object(int64_t refs) : refs(refs) {}
  virtual ~Object() = default;
  void add_ref(int64_t n) { refs.fetch_add(n, std::memory_order_relaxed); }
  void drop_ref(int64_t n) {
    if (refs.fetch_sub(n, std::memory_order_acq_rel) == n) delete this;
  }
  std::atomic<int64_t> refs;
};

struct Group;

enum State : int32_t { kPending = 0, kReady = 1, kError = 2 };

// A token or value: created with two references, the caller's and the task's, which the task
// drops when it completes it, so the object outlives a caller that drops its reference early.
struct Completion : Object {
  Completion() : Object(2) {}
  std::atomic<int32_t> state{kPending};
  std::mutex mu;
  std::vector<Task> awaiters;  // coroutines to resume on completion
  std::vector<Group*> groups;  // groups counting this completion

  void complete(State s);
  void await_then(Task t) {
    std::unique_lock<std::mutex> lock(mu);
    if (state.load(std::memory_order_acquire) != kPending) {
      lock.unlock();
      t();
      return;
    }
    awaiters.push_back(t);
  }
};

struct Value : Completion {
  explicit Value(int64_t size) : storage(static_cast<size_t>(std::max<int64_t>(size, 1))) {}
  std::vector<std::byte> storage;
};

struct Group : Object {
  explicit Group(int64_t size) : Object(1), pending(size) {}
  std::atomic<int64_t> pending;
  std::atomic<int64_t> errors{0};
  std::atomic<int64_t> rank{0};
  std::mutex mu;
  std::vector<Task> awaiters;

  // One counted completion arrived; the caller holds a reference to the group.
  void arrive(bool error) {
    std::vector<Task> ready;
    {
      std::lock_guard<std::mutex> lock(mu);
      if (error) errors.fetch_add(1, std::memory_order_relaxed);
      if (pending.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        ready.swap(awaiters);
        pending.notify_all();
      }
    }
    for (const Task& t : ready) t();
  }
};

void Completion::complete(State s) {
  std::vector<Task> ready;
  std::vector<Group*> counted;
  {
    std::lock_guard<std::mutex> lock(mu);
    state.store(s, std::memory_order_release);
    state.notify_all();
    ready.swap(awaiters);
    counted.swap(groups);
  }
  for (Group* g : counted) {
    g->arrive(s == kError);
    g->drop_ref(1);
  }
  for (const Task& t : ready) t();
  drop_ref(1);  // the task's reference
}

// ---- the C ABI (mlir/ExecutionEngine/AsyncRuntime.h) ----------------------------------------

void add_ref(void* p, int64_t n) { static_cast<Object*>(p)->add_ref(n); }
void drop_ref(void* p, int64_t n) { static_cast<Object*>(p)->drop_ref(n); }
void* create_token() { return static_cast<Object*>(new Completion()); }
void* create_value(int64_t size) { return static_cast<Object*>(new Value(size)); }
void* create_group(int64_t size) { return static_cast<Object*>(new Group(size)); }

Completion* completion(void* p) { return static_cast<Completion*>(static_cast<Object*>(p)); }
Group* group(void* p) { return static_cast<Group*>(static_cast<Object*>(p)); }

int64_t add_to_group(void* token, void* grp) {
  Completion* c = completion(token);
  Group* g = group(grp);
  int64_t rank = g->rank.fetch_add(1, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(c->mu);
    if (c->state.load(std::memory_order_acquire) == kPending) {
      g->add_ref(1);  // held until the completion arrives
      c->groups.push_back(g);
      return rank;
    }
  }
  g->arrive(c->state.load(std::memory_order_acquire) == kError);
  return rank;
}

void emplace(void* p) { completion(p)->complete(kReady); }
void set_error(void* p) { completion(p)->complete(kError); }
bool is_error(void* p) { return completion(p)->state.load(std::memory_order_acquire) == kError; }
bool is_group_error(void* p) { return group(p)->errors.load(std::memory_order_acquire) > 0; }

void await_completion(void* p) {
  Completion* c = completion(p);
  await(c->state, [c] { return c->state.load(std::memory_order_acquire) != kPending; });
}
void await_group(void* p) {
  Group* g = group(p);
  await(g->pending, [g] { return g->pending.load(std::memory_order_acquire) == 0; });
}
std::byte* value_storage(void* p) { return static_cast<Value*>(completion(p))->storage.data(); }

void execute(void* handle, Resume resume) { pool().submit(Task{handle, resume}); }
void await_completion_then(void* p, void* handle, Resume resume) { completion(p)->await_then(Task{handle, resume}); }
void await_group_then(void* p, void* handle, Resume resume) {
  Group* g = group(p);
  {
    std::lock_guard<std::mutex> lock(g->mu);
    if (g->pending.load(std::memory_order_acquire) != 0) {
      g->awaiters.push_back(Task{handle, resume});
      return;
    }
  }
  Task{handle, resume}();
}
int64_t num_workers() { return pool().workers() + 1; }

template <typename F>
void* address(F* f) {
  return reinterpret_cast<void*>(f);
}

}  // namespace

const std::vector<RuntimeSymbol>& symbols() {
  static const std::vector<RuntimeSymbol> table = {
      {"mlirAsyncRuntimeAddRef", address(add_ref)},
      {"mlirAsyncRuntimeDropRef", address(drop_ref)},
      {"mlirAsyncRuntimeCreateToken", address(create_token)},
      {"mlirAsyncRuntimeCreateValue", address(create_value)},
      {"mlirAsyncRuntimeCreateGroup", address(create_group)},
      {"mlirAsyncRuntimeAddTokenToGroup", address(add_to_group)},
      {"mlirAsyncRuntimeEmplaceToken", address(emplace)},
      {"mlirAsyncRuntimeEmplaceValue", address(emplace)},
      {"mlirAsyncRuntimeSetTokenError", address(set_error)},
      {"mlirAsyncRuntimeSetValueError", address(set_error)},
      {"mlirAsyncRuntimeIsTokenError", address(is_error)},
      {"mlirAsyncRuntimeIsValueError", address(is_error)},
      {"mlirAsyncRuntimeIsGroupError", address(is_group_error)},
      {"mlirAsyncRuntimeAwaitToken", address(await_completion)},
      {"mlirAsyncRuntimeAwaitValue", address(await_completion)},
      {"mlirAsyncRuntimeAwaitAllInGroup", address(await_group)},
      {"mlirAsyncRuntimeGetValueStorage", address(value_storage)},
      {"mlirAsyncRuntimeExecute", address(execute)},
      {"mlirAsyncRuntimeAwaitTokenAndExecute", address(await_completion_then)},
      {"mlirAsyncRuntimeAwaitValueAndExecute", address(await_completion_then)},
      {"mlirAsyncRuntimeAwaitAllInGroupAndExecute", address(await_group_then)},
      {"mlirAsyncRuntimGetNumWorkerThreads", address(num_workers)},  // sic: MLIR's spelling
  };
  return table;
}

void quiesce() { pool().quiesce(); }

void*& call_context() { return t_call_context; }

int worker_count() { return pool().workers(); }

}  // namespace evoxc::async_runtime
