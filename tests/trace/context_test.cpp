// Tests for the trace context: SymbolicTensors used outside their trace, location scopes, shared scalar constants,
// result types remembered across traces (and threads), and control-flow regions traced exactly once.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <thread>

#include "evoxc/evoxc.h"
#include "trace/trace_util.h"

namespace evoxc {
namespace {

using ST = SymbolicTensor;

using testing::expect_error;

std::vector<std::string> op_names(const Block& b) {
  std::vector<std::string> out;
  for (const auto& op : b.operations()) out.push_back(op->name());
  return out;
}

// ---- SymbolicTensors outside their trace ----

TEST(TraceSafety, ATensorOfAnEndedTraceIsATraceErrorInANewTrace) {
  ST kept;
  trace(
      [&](ST x) {
        kept = x * 2.0;
        return kept;
      },
      TensorSpec({3}, f32));
  ASSERT_TRUE(kept.defined());
  expect_error<TraceError>([&] { trace([&](ST x) { return x + kept; }, TensorSpec({3}, f32)); },
                           {"trace that has ended", "op 'add'"});
  // No trace active at all: every use is checked, inspection included.
  expect_error<TraceError>([&] { (void)kept.shape(); }, {"after its trace ended"});
  expect_error<TraceError>([&] { (void)kept.dtype(); }, {"after its trace ended"});
  expect_error<TraceError>([&] { (void)kept.value(); }, {"after its trace ended"});
  expect_error<TraceError>([&] { (void)sin(kept); }, {"after its trace ended"});
}

TEST(TraceSafety, ANewTraceAtTheSameAddressDoesNotAcceptOldTensors) {
  // Two contexts built one after the other in the same storage: the old tensor's context
  // pointer then points at a live trace, and only the generation tells them apart.
  std::optional<TraceContext> slot;
  slot.emplace();
  TraceContext* first = &*slot;
  uint64_t first_gen = slot->generation();
  ST old = slot->add_input(TensorSpec({2}, f32));
  slot.reset();
  slot.emplace();
  ASSERT_EQ(&*slot, first);
  EXPECT_NE(slot->generation(), first_gen);
  ST fresh = slot->add_input(TensorSpec({2}, f32));
  EXPECT_EQ(fresh.context(), first);
  expect_error<TraceError>([&] { (void)old.type(); }, {"trace that has ended"});
  expect_error<TraceError>([&] { (void)add(fresh, old); }, {"trace that has ended", "op 'add'"});
  EXPECT_EQ(add(fresh, fresh).shape(), Shape({2}));
}

TEST(TraceSafety, AnOuterTensorInsideANestedTraceIsATraceError) {
  auto outer = [](ST x) {
    expect_error<TraceError>([&] { trace([&](ST y) { return y + x; }, TensorSpec({3}, f32)); },
                             {"enclosing trace", "nested trace"});
    expect_error<TraceError>([&] { trace([&](ST) { return x; }, TensorSpec({3}, f32)); }, {"another trace"});
    expect_error<TraceError>(
        [&] {
          trace(
              [&](ST y) {
                (void)x.shape();
                return y;
              },
              TensorSpec({3}, f32));
        },
        {"enclosing trace"});
    // Once the nested trace has ended the outer tensor is usable again.
    return x * 3.0;
  };
  Graph g = trace(outer, TensorSpec({3}, f32));
  EXPECT_EQ(g.output_specs()[0].to_string(), "tensor<3xf32>");
  verify(g);
}

TEST(TraceSafety, ANestedTraceOfItsOwnIsFine) {
  auto outer = [](ST x) {
    Graph inner = trace([](ST y) { return y + 1.0; }, TensorSpec({2}, f32));
    EXPECT_EQ(inner.num_inputs(), 1u);
    return x - 1.0;
  };
  verify(trace(outer, TensorSpec({3}, f32)));
}

TEST(TraceSafety, DefaultConstructedTensorsAreTraceErrors) {
  ST none;
  EXPECT_FALSE(none.defined());
  EXPECT_EQ(none.generation(), 0u);
  expect_error<TraceError>([&] { trace([&](ST x) { return x + none; }, TensorSpec({3}, f32)); }, {"undefined"});
  expect_error<TraceError>([&] { trace([&](ST) { return none; }, TensorSpec({3}, f32)); }, {"undefined"});
}

// ---- locations ----

TEST(TraceLocation, OpsTakeTheCppCallSiteByDefault) {
  Graph g = trace([](ST x) { return sin(x); }, TensorSpec({3}, f32));
  const Location& l = g.main().entry().operations()[0]->location();
  EXPECT_EQ(l.file, "context_test.cpp");
  EXPECT_EQ(l.line, __LINE__ - 3);
}

TEST(TraceLocation, AScopeOverridesTheCallSiteUntilItEnds) {
  Graph g = trace(
      [](ST x) {
        TraceContext& ctx = TraceContext::current();
        ST a, b;
        {
          LocationScope scope(ctx, Location{"model.py", 12, 4});
          a = sin(x);
          {
            LocationScope inner(ctx, Location{"layers.py", 3, 0});
            b = cos(a);
          }
          a = a + b;  // back at model.py:12
          scope.set(Location{"model.py", 13, 0});
          a = tanh(a);
        }
        return exp(a);  // the C++ call site again
      },
      TensorSpec({3}, f32));
  const auto& ops = g.main().entry().operations();
  ASSERT_EQ(op_names(g.main().entry()), (std::vector<std::string>{"sin", "cos", "add", "tanh", "exp", "return"}));
  EXPECT_EQ(ops[0]->location().to_string(), "model.py:12:4");
  EXPECT_EQ(ops[1]->location().to_string(), "layers.py:3:0");
  EXPECT_EQ(ops[2]->location().to_string(), "model.py:12:4");
  EXPECT_EQ(ops[3]->location().to_string(), "model.py:13:0");
  EXPECT_EQ(ops[4]->location().file, "context_test.cpp");
}

TEST(TraceLocation, ErrorsNameTheScopeLocation) {
  auto f = [](ST a, ST b) {
    LocationScope scope(TraceContext::current(), Location{"train.py", 41, 8});
    return a + b;
  };
  expect_error<ShapeError>([&] { trace(f, TensorSpec({3}, f32), TensorSpec({4}, f32)); }, {"train.py:41:8"});
}

TEST(TraceLocation, RegionsAndControlOpsTakeTheScopeLocation) {
  auto f = [](ST p, ST x) {
    LocationScope scope(TraceContext::current(), Location{"ctl.py", 7, 0});
    return cond(
        p, [](const ST& v) { return v + 1.0; }, [](const ST& v) { return v; }, x);
  };
  Graph g = trace(f, TensorSpec({}, bool_), TensorSpec({3}, f32));
  const Operation& c = *g.main().entry().operations()[0];
  EXPECT_EQ(c.location().to_string(), "ctl.py:7:0");
  EXPECT_EQ(c.region(0).block().operations()[0]->location().to_string(), "ctl.py:7:0");
  verify(g);
}

// ---- host scalars ----

TEST(TraceScalars, ARepeatedHostScalarIsOneConstantPerBlock) {
  Graph g = trace([](ST x) { return (x * 2.0 + 2.0) * 3.0 + 2; }, TensorSpec({3}, f32));
  // 2.0 and the int 2 are both f32 2 here: one full; 3.0 another.
  EXPECT_EQ(op_names(g.main().entry()),
            (std::vector<std::string>{"full", "multiply", "add", "full", "multiply", "add", "return"}));
  Graph h = trace([](ST x) { return (x + 2) * 2.0; }, TensorSpec({3}, i32));
  // The same value in two dtypes (i32 for x + 2, f32 once 2.0 promotes to float): two constants.
  EXPECT_EQ(std::count_if(h.main().entry().operations().begin(), h.main().entry().operations().end(),
                          [](const auto& op) { return op->name() == "full"; }),
            2);
  verify(g);
  verify(h);
}

TEST(TraceScalars, RegionsMakeTheirOwnConstants) {
  auto f = [](ST p, ST x) {
    ST y = x * 2.0;
    return cond(
        p, [](const ST& v) { return v * 2.0; }, [](const ST& v) { return v; }, y);
  };
  Graph g = trace(f, TensorSpec({}, bool_), TensorSpec({3}, f32));
  const Operation& c = *g.main().entry().operations().at(2);
  ASSERT_EQ(c.name(), "cond");
  // The branch does not capture main's constant: it has its own.
  EXPECT_EQ(op_names(c.region(0).block()), (std::vector<std::string>{"full", "multiply", "return"}));
  EXPECT_TRUE(captured_values(c).empty());
  verify(g);
}

// ---- result types remembered across traces ----

TEST(TraceInference, RememberedTypesNeverHideAnError) {
  auto f = [](ST a, ST b) { return sin(a + b) * b; };
  for (int i = 0; i < 3; ++i) verify(trace(f, TensorSpec({3}, f32), TensorSpec({3}, f32)));
  // The same ops over other types: inferred (and checked) afresh.
  EXPECT_THROW(trace(f, TensorSpec({3}, f32), TensorSpec({4}, f32)), ShapeError);
  Graph g = trace(f, TensorSpec({Dim("N"), 1}, f16), TensorSpec({1, 5}, f16));
  EXPECT_EQ(g.output_specs()[0].to_string(), "tensor<Nx5xf16>");
  verify(g);
  auto bits = [](ST a, ST b) { return bitwise_and(a, b); };
  verify(trace(bits, TensorSpec({2}, i32), TensorSpec({2}, i32)));
  EXPECT_THROW(trace(bits, TensorSpec({2}, f32), TensorSpec({2}, f32)), TypeError);
}

TEST(TraceInference, ThreadsTraceConcurrently) {
  // Each thread has its own innermost trace; the shared memo of result types is read and
  // filled from every thread at once.
  auto f = [](ST x, ST y) { return select(greater(abs(y), 1e-3), x / y, 1.0) + log(abs(x) + 1e-3); };
  std::vector<std::thread> threads;
  std::vector<int> good(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        DType dt = (i + t) % 2 ? f32 : f64;
        try {  // an exception must not escape the thread
          Graph g = trace(f, TensorSpec({i + 1}, dt), TensorSpec({i + 1}, dt));
          verify(g);
          if (g.output_specs()[0] == TensorSpec({i + 1}, dt) && TraceContext::current_or_null() == nullptr) ++good[t];
        } catch (const Error&) {
        }
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(good, (std::vector<int>{50, 50, 50, 50}));
}

// ---- control-flow regions are traced once ----

TEST(TraceControlOnce, RegionFunctionsRunOncePerTrace) {
  int true_calls = 0, false_calls = 0;
  auto c = [&](ST p, ST x) {
    return cond(
        p,
        [&](const ST& v) {
          ++true_calls;
          return v + 1.0;
        },
        [&](const ST& v) {
          ++false_calls;
          return v;
        },
        x);
  };
  verify(trace(c, TensorSpec({}, bool_), TensorSpec({3}, f32)));
  EXPECT_EQ(true_calls, 1);
  EXPECT_EQ(false_calls, 1);

  int cond_calls = 0, body_calls = 0;
  auto w = [&](ST x) {
    return while_loop(
        [&](const ST& v) {
          ++cond_calls;
          return less(sum(v), 10.0);
        },
        [&](const ST& v) {
          ++body_calls;
          return v * 2.0;
        },
        x);
  };
  verify(trace(w, TensorSpec({3}, f32)));
  EXPECT_EQ(cond_calls, 1);
  EXPECT_EQ(body_calls, 1);

  int scan_calls = 0;
  auto s = [&](ST xs) {
    return scan(
               [&](const ST& carry, const ST& x) {
                 ++scan_calls;
                 return std::pair<ST, ST>{carry + x, carry};
               },
               zeros_like(sum(xs, {0})), xs)
        .first;
  };
  verify(trace(s, TensorSpec({5, 3}, f32)));
  EXPECT_EQ(scan_calls, 1);

  int fori_static = 0, fori_dynamic = 0;
  auto fs = [&](ST x) {
    return fori_loop(
        0, 4,
        [&](const ST& i, const ST& v) {
          ++fori_static;
          return v + astype(i, f32);
        },
        x);
  };
  verify(trace(fs, TensorSpec({3}, f32)));
  EXPECT_EQ(fori_static, 1);
  auto fd = [&](ST n, ST x) {
    return fori_loop(
        0, n,
        [&](const ST& i, const ST& v) {
          ++fori_dynamic;
          return v + astype(i, f32);
        },
        x);
  };
  verify(trace(fd, TensorSpec({}, i32), TensorSpec({3}, f32)));
  EXPECT_EQ(fori_dynamic, 1);

  int branch_calls = 0;
  auto sw = [&](ST i, ST x) {
    return switch_<ST>(i,
                       {[&](const ST& v) {
                          ++branch_calls;
                          return v;
                        },
                        [&](const ST& v) {
                          ++branch_calls;
                          return v * 2.0;
                        },
                        [&](const ST& v) {
                          ++branch_calls;
                          return -v;
                        }},
                       x);
  };
  verify(trace(sw, TensorSpec({}, i32), TensorSpec({3}, f32)));
  EXPECT_EQ(branch_calls, 3);
}

TEST(TraceControlOnce, AFailingRegionLeavesNoTraceOfItself) {
  // A region that throws: the detached op is dropped, the block stack is restored, and the
  // enclosing trace continues in main's body.
  auto f = [](ST p, ST x) {
    expect_error<TraceError>(
        [&] {
          (void)cond(
              p, [](const ST&) -> ST { throw TraceError("boom"); }, [](const ST& v) { return v; }, x);
        },
        {"boom"});
    return x + 1.0;
  };
  Graph g = trace(f, TensorSpec({}, bool_), TensorSpec({3}, f32));
  EXPECT_EQ(op_names(g.main().entry()), (std::vector<std::string>{"full", "add", "return"}));
  verify(g);
}

}  // namespace
}  // namespace evoxc
