// Run budget: RunOptions (deadline, loop-iteration cap, CancellationToken) stop runaway loops with a
// RunLimitError naming the loop, and leave the executable usable. Built under TSan too: no data races by design.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "evoxc/evoxc.h"
#include "evoxc/trace/control.h"

namespace evoxc {
namespace {

using ST = SymbolicTensor;
using Clock = std::chrono::steady_clock;
using C = std::tuple<ST, ST>;

// i = 0; acc = x; while i < n: i += 1, acc = acc * 0.5 + 1. With n = INT64_MAX it never ends in practice.
std::tuple<ST, ST> count_to(ST n, ST x) {
  return while_loop([&](const C& c) { return less(std::get<0>(c), n); },
                    [&](const C& c) {
                      return C{std::get<0>(c) + int64_t{1}, std::get<1>(c) * 0.5 + 1.0};
                    },
                    C{fill(Shape(), 0, i64), x});
}

Executable count_exe() { return build(count_to, TensorSpec({}, i64), TensorSpec({4}, f32)); }

Tree<Tensor> count_inputs(int64_t n) {
  return Tree<Tensor>::tuple({Tree<Tensor>(Tensor::scalar<int64_t>(n)), Tree<Tensor>(Tensor::full({4}, 3.0f))});
}

constexpr int64_t kForever = std::numeric_limits<int64_t>::max();

int64_t count_of(const Tree<Tensor>& out) { return out[0].leaf().data<const int64_t>()[0]; }

// The message of the RunLimitError `fn` throws (a failure when it throws nothing or another type).
template <typename F>
std::string limit_error(F&& fn) {
  try {
    fn();
  } catch (const RunLimitError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a RunLimitError";
  return "";
}

void expect_contains(const std::string& msg, const std::vector<std::string>& parts) {
  for (const auto& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

TEST(RunBudget, RunLimitErrorIsAnEvoxcError) {
  RunLimitError e("x");
  const Error& base = e;
  EXPECT_STREQ(base.what(), "x");
}

TEST(RunBudget, DefaultIsUnlimited) {
  Executable exe = count_exe();
  EXPECT_EQ(count_of(exe.run(count_inputs(200000))), 200000);
  EXPECT_TRUE(RunOptions{}.unlimited());
}

TEST(RunBudget, DeadlineStopsAnInfiniteWhileLoop) {
  Executable exe = count_exe();
  RunOptions o = RunOptions::with_timeout(std::chrono::milliseconds(50));
  std::string msg = limit_error([&] { exe.run(count_inputs(kForever), o); });
  // The error comes only once the deadline has passed.
  EXPECT_GE(Clock::now(), *o.deadline);
  expect_contains(msg, {"evoxc.while_loop at", "run_budget_test.cpp:", "deadline passed", "--timeout", "iteration "});
  // The same executable runs the next call, and a call within the deadline gives the same bits.
  Tree<Tensor> free_run = exe.run(count_inputs(1000));
  Tree<Tensor> timed = exe.run(count_inputs(1000), RunOptions::with_timeout(std::chrono::seconds(600)));
  EXPECT_EQ(count_of(free_run), 1000);
  EXPECT_TRUE(same_bits(free_run[0].leaf(), timed[0].leaf()));
  EXPECT_TRUE(same_bits(free_run[1].leaf(), timed[1].leaf()));
}

TEST(RunBudget, PassedDeadlineStopsBeforeTheCall) {
  Executable exe = build([](ST x) { return x * 2.0; }, TensorSpec({3}, f32));
  RunOptions o;
  o.deadline = Clock::now() - std::chrono::seconds(1);
  std::string msg = limit_error([&] { run_with(o, exe, Tensor::full({3}, 1.0f)); });
  expect_contains(msg, {"deadline had passed before the call started"});
}

TEST(RunBudget, IterationCapIsExactAndCountsBodyIterations) {
  Executable exe = count_exe();
  RunOptions o;
  o.max_loop_iterations = 1000;
  // Exactly 1000 body iterations fit; the 1001st does not run.
  EXPECT_EQ(count_of(exe.run(count_inputs(1000), o)), 1000);
  std::string msg = limit_error([&] { exe.run(count_inputs(1001), o); });
  expect_contains(msg, {"evoxc.while_loop at", "run_budget_test.cpp:", "iteration 1000", "max_loop_iterations = 1000",
                        "--max-iterations"});
  msg = limit_error([&] { exe.run(count_inputs(kForever), o); });
  expect_contains(msg, {"max_loop_iterations = 1000"});
  // The count is per call: the next call starts from zero.
  EXPECT_EQ(count_of(exe.run(count_inputs(1000), o)), 1000);
}

TEST(RunBudget, NegativeIterationCapIsRejected) {
  Executable exe = count_exe();
  RunOptions o;
  o.max_loop_iterations = -1;
  try {
    exe.run(count_inputs(3), o);
    ADD_FAILURE() << "expected a ValidationError";
  } catch (const ValidationError& e) {
    expect_contains(e.what(), {"max_loop_iterations = -1", "0 for unlimited"});
  }
}

TEST(RunBudget, CancelFromAnotherThread) {
  Executable exe = count_exe();
  auto token = std::make_shared<CancellationToken>();
  RunOptions o;
  o.cancel = token;
  std::atomic<bool> started{false};
  std::thread canceller([&] {
    while (!started.load()) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    token->cancel();
  });
  std::string msg = limit_error([&] {
    started.store(true);
    exe.run(count_inputs(kForever), o);
  });
  canceller.join();
  expect_contains(msg, {"evoxc.while_loop at", "cancelled through its CancellationToken", "reset()"});
  EXPECT_TRUE(token->cancelled());
  // A tripped token stops later calls at their start, until reset.
  msg = limit_error([&] { exe.run(count_inputs(5), o); });
  expect_contains(msg, {"cancelled", "before the call started"});
  token->reset();
  EXPECT_FALSE(token->cancelled());
  EXPECT_EQ(count_of(exe.run(count_inputs(5), o)), 5);
}

TEST(RunBudget, HugeScanIsStoppedByTheBudget) {
  // A scan of length 10^12 with only a carry allocates nothing per step: only the budget stops it.
  auto f = [](ST x) {
    auto body = [](const ST& c, const std::vector<ST>&) { return std::pair<ST, std::vector<ST>>{c + 1.0, {}}; };
    return scan(body, x, std::vector<ST>{}, int64_t{1000000000000}).first;
  };
  Executable exe = build(f, TensorSpec({}, f32));
  RunOptions o;
  o.max_loop_iterations = 5000;
  std::string msg = limit_error([&] { run_with(o, exe, Tensor::scalar<float>(0.0f)); });
  expect_contains(msg, {"evoxc.scan at", "run_budget_test.cpp:", "iteration 5000", "max_loop_iterations = 5000"});
  msg = limit_error(
      [&] { run_with(RunOptions::with_timeout(std::chrono::milliseconds(20)), exe, Tensor::scalar(0.0f)); });
  expect_contains(msg, {"evoxc.scan at", "deadline passed"});
}

constexpr int64_t kRows = int64_t{1} << 46;

TEST(RunBudget, HugeScanOutputIsATypedErrorNotAnAllocation) {
  // ys of 10^12 rows (the case: 4 TB of float32, more than the host's memory): the error names the
  // output and the scan, and comes before any allocation is tried.
  auto f = [](ST x) {
    auto body = [](const ST& c, const std::vector<ST>&) { return std::pair<ST, ST>{c + 1.0, c}; };
    return scan(body, x, std::vector<ST>{}, int64_t{1000000000000}).second;
  };
  Executable exe = build(f, TensorSpec({}, f32));
  try {
    run(exe, Tensor::scalar<float>(0.0f));
    ADD_FAILURE() << "expected a ValidationError";
  } catch (const ValidationError& e) {
    expect_contains(e.what(), {"output [0]", "evoxc.scan at", "run_budget_test.cpp:", "cannot allocate"});
  }
  // 2^46 rows (256 TiB, below the 2^48-element bound) as a temporary, reduced afterwards: the scratch error
  // names the scan's result.
  auto g = [](ST x) {
    auto body = [](const ST& c, const std::vector<ST>&) { return std::pair<ST, ST>{c + 1.0, c}; };
    return sum(scan(body, x, std::vector<ST>{}, kRows).second);
  };
  Executable exe2 = build(g, TensorSpec({}, f32));
  try {
    run(exe2, Tensor::scalar<float>(0.0f));
    ADD_FAILURE() << "expected a ValidationError";
  } catch (const ValidationError& e) {
    expect_contains(e.what(), {"cannot allocate", "evoxc.scan at", "tensor<70368744177664xf32>"});
  }
  // Beyond 2^48 elements the load itself refuses the plan, naming the op.
  auto h = [](ST x) {
    auto body = [](const ST& c, const std::vector<ST>&) { return std::pair<ST, ST>{c + 1.0, c}; };
    return scan(body, x, std::vector<ST>{}, int64_t{1} << 50).second;
  };
  try {
    build(h, TensorSpec({}, f32));
    ADD_FAILURE() << "expected a BackendError";
  } catch (const BackendError& e) {
    expect_contains(e.what(), {"evoxc.scan at", "1125899906842624 elements", "2^48"});
  }
}

// An outer scan of 3 steps around the counting while_loop.
ST nested(ST n, ST x) {
  auto body = [&](const ST& c, const std::vector<ST>&) {
    auto [i, acc] = count_to(n, c);
    return std::pair<ST, std::vector<ST>>{acc, {}};
  };
  return scan(body, x, std::vector<ST>{}, int64_t{3}).first;
}

TEST(RunBudget, NestedLoopsNameTheInnermostLoopFirst) {
  Executable exe = build(nested, TensorSpec({}, i64), TensorSpec({4}, f32));
  RunOptions o;
  o.max_loop_iterations = 100;  // counts the inner and the outer loops' iterations together
  // 3 outer + 3 * 30 inner = 93 iterations fit.
  Tree<Tensor> ok = run_with(o, exe, Tensor::scalar<int64_t>(30), Tensor::full({4}, 3.0f));
  Tree<Tensor> free_run = run(exe, Tensor::scalar<int64_t>(30), Tensor::full({4}, 3.0f));
  EXPECT_TRUE(same_bits(ok.leaf(), free_run.leaf()));
  // 3 + 3 * 40 do not: the inner loop hits the cap in the outer loop's third step.
  std::string msg = limit_error([&] { run_with(o, exe, Tensor::scalar<int64_t>(40), Tensor::full({4}, 3.0f)); });
  size_t inner = msg.find("evoxc.while_loop at"), outer = msg.find("inside evoxc.scan at");
  ASSERT_NE(inner, std::string::npos) << msg;
  ASSERT_NE(outer, std::string::npos) << msg;
  EXPECT_LT(inner, outer);
  expect_contains(msg, {"max_loop_iterations = 100", "evoxc.scan at", "iteration 2"});
  // Deadline in the nested case, then the same executable again.
  msg = limit_error([&] {
    run_with(RunOptions::with_timeout(std::chrono::milliseconds(20)), exe, Tensor::scalar(kForever),
             Tensor::full({4}, 3.0f));
  });
  expect_contains(msg, {"evoxc.while_loop at", "deadline passed", "inside evoxc.scan at", "iteration 0"});
  EXPECT_TRUE(same_bits(run(exe, Tensor::scalar<int64_t>(30), Tensor::full({4}, 3.0f)).leaf(), free_run.leaf()));
}

TEST(RunBudget, ExecuteWithCallerOutputsIsReusableAfterALimit) {
  Executable exe = count_exe();
  std::vector<Tensor> in = {Tensor::scalar<int64_t>(kForever), Tensor::full({4}, 3.0f)};
  std::vector<Tensor> out = {Tensor::scalar<int64_t>(0), Tensor::zeros({4})};
  RunOptions o;
  o.max_loop_iterations = 10;
  EXPECT_THROW(exe.execute(in, out, o), RunLimitError);
  in[0] = Tensor::scalar<int64_t>(7);
  exe.execute(in, out, o);
  EXPECT_EQ(out[0].data<const int64_t>()[0], 7);
  std::vector<Tensor> want(2);
  exe.execute(in, want);
  EXPECT_TRUE(same_bits(out[1], want[1]));
}

TEST(RunBudget, EvaluateWithAndDynamicTakeRunOptions) {
  RunOptions o;
  o.max_loop_iterations = 10;
  std::string msg =
      limit_error([&] { evaluate_with(o, count_to, Tensor::scalar<int64_t>(11), Tensor::full({4}, 3.0f)); });
  expect_contains(msg, {"max_loop_iterations = 10"});
  Tree<Tensor> r = evaluate_with(o, count_to, Tensor::scalar<int64_t>(10), Tensor::full({4}, 3.0f));
  EXPECT_EQ(count_of(r), 10);
  TraceFunction fn = [](const std::vector<TracedArg>& args) {
    auto [i, acc] = count_to(std::get<ST>(args.at(0).leaf()), std::get<ST>(args.at(1).leaf()));
    return Tree<ST>::tuple({Tree<ST>(i), Tree<ST>(acc)});
  };
  std::vector<EvalArg> args = {EvalArg(Tensor::scalar<int64_t>(11)), EvalArg(Tensor::full({4}, 3.0f))};
  msg = limit_error([&] { evaluate_dynamic(fn, args, {}, o); });
  expect_contains(msg, {"max_loop_iterations = 10"});
}

TEST(RunBudget, ConcurrentCallsWithDifferentBudgetsAreIndependent) {
  Executable exe = count_exe();
  Tree<Tensor> want = exe.run(count_inputs(500));
  std::atomic<int> limited_errors{0}, good{0};
  auto token = std::make_shared<CancellationToken>();  // never tripped: polled concurrently
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < 25; ++k) {
        if (t % 2 == 0) {
          RunOptions o;
          o.max_loop_iterations = 100 + t;
          o.cancel = token;
          try {
            exe.run(count_inputs(kForever), o);
          } catch (const RunLimitError& e) {
            if (std::string(e.what()).find("max_loop_iterations = " + std::to_string(100 + t)) != std::string::npos)
              limited_errors.fetch_add(1);
          }
        } else {
          RunOptions o;
          o.cancel = token;
          Tree<Tensor> r = exe.run(count_inputs(500), t == 1 ? RunOptions{} : o);
          if (same_bits(r[0].leaf(), want[0].leaf()) && same_bits(r[1].leaf(), want[1].leaf())) good.fetch_add(1);
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(limited_errors.load(), 50);
  EXPECT_EQ(good.load(), 50);
}

}  // namespace
}  // namespace evoxc
