// Tests of evoxc's implementation of MLIR's async runtime ABI (src/backends/common/async_runtime.cpp), driven as
// compiled parallel loops drive it: tokens added to a group, blocks run on the pool while the caller waits, values,
// error states, continuations, and quiesce. Built in every configuration, so ThreadSanitizer checks it too.
#include "backends/common/async_runtime.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace evoxc {
namespace {

using Resume = void (*)(void*);

// The runtime's entry points, looked up by MLIR's names as the JIT linker does.
struct Api {
  template <typename F>
  static F get(const char* name) {
    for (const RuntimeSymbol& s : async_runtime::symbols())
      if (std::string(s.name) == name) return reinterpret_cast<F>(s.address);
    ADD_FAILURE() << "no runtime symbol " << name;
    return nullptr;
  }
  void (*add_ref)(void*, int64_t) = get<void (*)(void*, int64_t)>("mlirAsyncRuntimeAddRef");
  void (*drop_ref)(void*, int64_t) = get<void (*)(void*, int64_t)>("mlirAsyncRuntimeDropRef");
  void* (*create_token)() = get<void* (*)()>("mlirAsyncRuntimeCreateToken");
  void* (*create_value)(int64_t) = get<void* (*)(int64_t)>("mlirAsyncRuntimeCreateValue");
  void* (*create_group)(int64_t) = get<void* (*)(int64_t)>("mlirAsyncRuntimeCreateGroup");
  int64_t (*add_to_group)(void*, void*) = get<int64_t (*)(void*, void*)>("mlirAsyncRuntimeAddTokenToGroup");
  void (*emplace_token)(void*) = get<void (*)(void*)>("mlirAsyncRuntimeEmplaceToken");
  void (*emplace_value)(void*) = get<void (*)(void*)>("mlirAsyncRuntimeEmplaceValue");
  void (*set_token_error)(void*) = get<void (*)(void*)>("mlirAsyncRuntimeSetTokenError");
  bool (*is_token_error)(void*) = get<bool (*)(void*)>("mlirAsyncRuntimeIsTokenError");
  bool (*is_group_error)(void*) = get<bool (*)(void*)>("mlirAsyncRuntimeIsGroupError");
  void (*await_token)(void*) = get<void (*)(void*)>("mlirAsyncRuntimeAwaitToken");
  void (*await_value)(void*) = get<void (*)(void*)>("mlirAsyncRuntimeAwaitValue");
  void (*await_group)(void*) = get<void (*)(void*)>("mlirAsyncRuntimeAwaitAllInGroup");
  std::byte* (*storage)(void*) = get<std::byte* (*)(void*)>("mlirAsyncRuntimeGetValueStorage");
  void (*execute)(void*, Resume) = get<void (*)(void*, Resume)>("mlirAsyncRuntimeExecute");
  void (*await_group_then)(void*, void*,
                           Resume) = get<void (*)(void*, void*, Resume)>("mlirAsyncRuntimeAwaitAllInGroupAndExecute");
  void (*await_token_then)(void*, void*,
                           Resume) = get<void (*)(void*, void*, Resume)>("mlirAsyncRuntimeAwaitTokenAndExecute");
  int64_t (*workers)() = get<int64_t (*)()>("mlirAsyncRuntimGetNumWorkerThreads");
};

const Api& api() {
  static const Api a;
  return a;
}

// One block of a parallel loop: adds its index into `sum`, then completes its token.
struct Block {
  std::atomic<int64_t>* sum;
  int64_t index;
  void* token;
  bool fail;
};
void run_block(void* p) {
  auto* b = static_cast<Block*>(p);
  b->sum->fetch_add(b->index + 1);
  if (b->fail)
    api().set_token_error(b->token);
  else
    api().emplace_token(b->token);
}

// What async-parallel-for's sequential dispatch does: blocks 1..n-1 on the pool, block 0 inline, await.
int64_t parallel_sum(int64_t n, bool fail_one = false) {
  const Api& a = api();
  std::atomic<int64_t> sum{0};
  std::vector<Block> blocks(static_cast<size_t>(n));
  void* group = a.create_group(n - 1);
  for (int64_t i = 1; i < n; ++i) {
    Block& b = blocks[static_cast<size_t>(i)];
    b = {&sum, i, a.create_token(), fail_one && i == n - 1};
    void* token = b.token;
    a.execute(&b, run_block);
    a.add_to_group(token, group);
    a.drop_ref(token, 1);
  }
  sum.fetch_add(1);  // block 0
  a.await_group(group);
  EXPECT_EQ(a.is_group_error(group), fail_one);
  a.drop_ref(group, 1);
  return sum.load();
}

// A task runs with the call context of the thread that submitted it (the mlir backend's run limits reach a
// call's blocks on the pool through it), and the worker's own context is back to nullptr afterwards.
struct Seen {
  void* context = reinterpret_cast<void*>(1);
  void* token = nullptr;
};
void record_context(void* p) {
  auto* s = static_cast<Seen*>(p);
  s->context = async_runtime::call_context();
  api().emplace_token(s->token);
}

TEST(AsyncRuntime, TasksRunWithTheSubmittersCallContext) {
  const Api& a = api();
  int marker = 0;
  for (void* context : {static_cast<void*>(&marker), static_cast<void*>(nullptr)}) {
    async_runtime::call_context() = context;
    std::vector<Seen> seen(16);
    for (Seen& s : seen) {
      s.token = a.create_token();  // two references: this caller's and the task's (emplace drops it)
      a.execute(&s, record_context);
    }
    for (Seen& s : seen) {
      a.await_token(s.token);
      a.drop_ref(s.token, 1);
      EXPECT_EQ(s.context, context);
    }
  }
  EXPECT_EQ(async_runtime::call_context(), nullptr);
}

TEST(AsyncRuntime, BlocksRunOnceEachAndTheCallerWaitsForAll) {
  EXPECT_GE(api().workers(), 2);
  for (int64_t n : {1, 2, 3, 16, 100}) EXPECT_EQ(parallel_sum(n), n * (n + 1) / 2) << n;
  EXPECT_EQ(parallel_sum(8, true), 36);
}

TEST(AsyncRuntime, SeveralCallersAtOnceWithQuiesceBetween) {
  auto caller = [] {
    for (int round = 0; round < 200; ++round) {
      int64_t n = 2 + round % 17;
      ASSERT_EQ(parallel_sum(n), n * (n + 1) / 2);
      if (round % 50 == 0) async_runtime::quiesce();
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) threads.emplace_back(caller);
  caller();
  for (std::thread& t : threads) t.join();
}

TEST(AsyncRuntime, ValuesTokensAndContinuations) {
  const Api& a = api();
  void* value = a.create_value(sizeof(int64_t));
  struct Writer {
    void* value;
  } w{value};
  a.execute(&w, [](void* p) {
    void* v = static_cast<Writer*>(p)->value;
    int64_t x = 42;
    std::memcpy(api().storage(v), &x, sizeof x);
    api().emplace_value(v);
  });
  a.await_value(value);
  int64_t got = 0;
  std::memcpy(&got, a.storage(value), sizeof got);
  EXPECT_EQ(got, 42);
  a.drop_ref(value, 1);

  // A continuation registered on a pending token runs once the token completes; on a completed one, at once.
  void* token = a.create_token();
  std::atomic<int> ran{0};
  a.await_token_then(token, &ran, [](void* p) { static_cast<std::atomic<int>*>(p)->fetch_add(1); });
  EXPECT_EQ(ran.load(), 0);
  a.add_ref(token, 1);  // the test's second reference, dropped below
  a.execute(token, [](void* t) { api().emplace_token(t); });
  a.await_token(token);
  EXPECT_FALSE(a.is_token_error(token));
  a.await_token_then(token, &ran, [](void* p) { static_cast<std::atomic<int>*>(p)->fetch_add(1); });
  // The second continuation ran here, at once. The first runs on the worker that completed the token,
  // after the token became available, so await_token may return before it has: wait for it (bounded).
  EXPECT_GE(ran.load(), 1);
  for (int i = 0; i < 5000 && ran.load() < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(ran.load(), 2);
  a.drop_ref(token, 2);

  // A group continuation: runs when the last of its tokens completes.
  void* group = a.create_group(2);
  std::atomic<int> done{0};
  void* t1 = a.create_token();
  void* t2 = a.create_token();
  a.add_to_group(t1, group);
  a.add_to_group(t2, group);
  a.await_group_then(group, &done, [](void* p) { static_cast<std::atomic<int>*>(p)->store(1); });
  a.emplace_token(t1);
  EXPECT_EQ(done.load(), 0);
  a.emplace_token(t2);
  EXPECT_EQ(done.load(), 1);
  a.drop_ref(t1, 1);
  a.drop_ref(t2, 1);
  a.drop_ref(group, 1);
}

}  // namespace
}  // namespace evoxc
