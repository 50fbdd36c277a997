// The worker pool behind parallel_for: jobs live on the caller's stack, workers help until the tasks run out.
#include "thread_pool.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include "evoxc/interp/interp.h"

namespace evoxc::interp {

namespace {

struct Job {
  void (*fn)(void*, int64_t);
  void* ctx;
  int64_t n;
  std::atomic<int64_t> next{0};
  std::atomic<int64_t> done{0};
  int helpers_left = 0;  // guarded by the pool mutex
  int active = 0;        // workers inside the job; guarded by the pool mutex
  Job* link = nullptr;
};

thread_local bool t_in_worker = false;

int default_threads() {
  if (const char* env = std::getenv("EVOXC_NUM_THREADS")) {
    char* end = nullptr;
    long v = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && v >= 1) return static_cast<int>(std::min<long>(v, 1024));
  }
  unsigned hc = std::thread::hardware_concurrency();
  return hc == 0 ? 1 : static_cast<int>(hc);
}

class Pool {
 public:
  Pool() : limit_(default_threads()) {}

  int limit() const { return limit_.load(std::memory_order_relaxed); }
  void set_limit(int n) { limit_.store(n < 1 ? default_threads() : n, std::memory_order_relaxed); }

  void run(int64_t n, void (*fn)(void*, int64_t), void* ctx) {
    int threads = limit();
    if (t_in_worker || threads <= 1 || n <= 1) {
      for (int64_t i = 0; i < n; ++i) fn(ctx, i);
      return;
    }
    Job job;
    job.fn = fn;
    job.ctx = ctx;
    job.n = n;
    int helpers = static_cast<int>(std::min<int64_t>(threads - 1, n - 1));
    {
      std::lock_guard<std::mutex> lk(mu_);
      ensure_workers(helpers);
      job.helpers_left = helpers;
      job.link = head_;
      head_ = &job;
    }
    if (helpers == 1) {
      cv_work_.notify_one();
    } else {
      cv_work_.notify_all();
    }
    work(job);
    std::unique_lock<std::mutex> lk(mu_);
    unlink(&job);
    cv_done_.wait(lk, [&] { return job.active == 0 && job.done.load(std::memory_order_acquire) == job.n; });
  }

 private:
  static void work(Job& job) {
    for (;;) {
      int64_t i = job.next.fetch_add(1, std::memory_order_relaxed);
      if (i >= job.n) return;
      job.fn(job.ctx, i);
      job.done.fetch_add(1, std::memory_order_acq_rel);
    }
  }

  void unlink(Job* job) {
    for (Job** p = &head_; *p; p = &(*p)->link) {
      if (*p == job) {
        *p = job->link;
        return;
      }
    }
  }

  // Called with mu_ held. Workers are never destroyed: the pool lives until exit.
  void ensure_workers(int want) {
    while (static_cast<int>(workers_.size()) < want) {
      workers_.emplace_back([this] { loop(); });
      workers_.back().detach();
    }
  }

  void loop() {
    t_in_worker = true;
    std::unique_lock<std::mutex> lk(mu_);
    for (;;) {
      cv_work_.wait(lk, [&] { return head_ != nullptr; });
      Job* job = head_;
      if (--job->helpers_left <= 0) unlink(job);
      ++job->active;
      lk.unlock();
      work(*job);
      lk.lock();
      --job->active;
      if (job->active == 0) cv_done_.notify_all();
    }
  }

  std::atomic<int> limit_;
  std::mutex mu_;
  std::condition_variable cv_work_, cv_done_;
  Job* head_ = nullptr;
  std::vector<std::thread> workers_;
};

Pool& pool() {
  static Pool* p = new Pool();  // never destroyed: detached workers may outlive static destructors
  return *p;
}

}  // namespace

void parallel_run(int64_t n, void (*fn)(void*, int64_t), void* ctx) { pool().run(n, fn, ctx); }

void set_num_threads(int n) { pool().set_limit(n); }

int num_threads() { return pool().limit(); }

}  // namespace evoxc::interp
