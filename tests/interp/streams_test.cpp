// Stream schedules: a top-level plan's independent kernels run on several threads, as decided at
// prepare. Results must be bit-identical to the op-order run, and every buffer reuse ordered.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "evoxc/trace/control.h"
#include "evoxc/trace/ops.h"
#include "evoxc/trace/trace.h"
#include "interp/graph_util.h"
#include "interp/program.h"
#include "interp/thread_pool.h"

namespace evoxc::testing {
namespace {

using interp::Program;
using interp::StreamSchedule;

// The pool's thread limit for a scope: prepare reads it to decide the schedule.
class Threads {
 public:
  explicit Threads(int n) { interp::set_num_threads(n); }
  ~Threads() { interp::set_num_threads(0); }
  Threads(const Threads&) = delete;
  Threads& operator=(const Threads&) = delete;
};

std::shared_ptr<const Program> prepare_with(const Graph& g, int threads) {
  Threads t(threads);
  return interp::prepare(g);
}

std::vector<Tensor> run(const Program& p, const std::vector<Tensor>& in, size_t num_outputs) {
  std::vector<Tensor> out(num_outputs);
  interp::execute(p, in, out);
  return out;
}

// Bit for bit, NaN payloads included.
::testing::AssertionResult same_bits(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  if (a.size() != b.size()) return ::testing::AssertionFailure() << a.size() << " vs " << b.size() << " outputs";
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].nbytes() != b[i].nbytes() || a[i].dtype() != b[i].dtype())
      return ::testing::AssertionFailure() << "output " << i << " differs in size or dtype";
    if (std::memcmp(a[i].raw_data(), b[i].raw_data(), a[i].nbytes()) != 0)
      return ::testing::AssertionFailure() << "output " << i << " differs";
  }
  return ::testing::AssertionSuccess();
}

Tensor random_f32(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-2.f, 2.f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = u(rng);
  return Tensor::from_vector(v, {n});
}

// ---------------------------------------------------------------------------------------------
// An independent check of a scheduled plan: every kernel is scheduled once, the lanes' waits
// admit a run (no cycle), every read comes after its producer, and two values sharing a
// temporary buffer never overlap in time: all accesses to the earlier one happen before the
// later one is written (or in the same kernel: an in-place result, a fused run's member).

const std::set<std::string>& kernel_less_ops() {
  static const std::set<std::string> ops = {"constant", "reshape", "expand_dims", "squeeze", "bitcast_convert"};
  return ops;
}

void check_schedule(const Program& p, const Graph& g) {
  const StreamSchedule& st = p.streams;
  ASSERT_FALSE(st.segments.empty()) << "no stream schedule to check";
  // Where each kernel runs.
  struct Place {
    uint32_t seg = UINT32_MAX, lane = 0;
    int32_t pos = 0;
  };
  std::vector<Place> place(p.kernels.size());
  for (uint32_t s = 0; s < st.segments.size(); ++s) {
    const auto& seg = st.segments[s];
    for (uint32_t l = seg.lane_begin; l < seg.lane_end; ++l)
      for (uint32_t i = st.lanes[l].step_begin; i < st.lanes[l].step_end; ++i) {
        uint32_t k = st.steps[i].kernel;
        ASSERT_LT(k, p.kernels.size());
        ASSERT_TRUE(p.kernels[k]) << "step of an op without a kernel";
        ASSERT_EQ(place[k].seg, UINT32_MAX) << "kernel " << k << " scheduled twice";
        place[k] = {s, l - seg.lane_begin, static_cast<int32_t>(i - st.lanes[l].step_begin)};
      }
  }
  for (size_t k = 0; k < p.kernels.size(); ++k)
    if (p.kernels[k]) {
      ASSERT_NE(place[k].seg, UINT32_MAX) << "kernel " << k << " never scheduled";
    }
  // Vector clocks per step, by simulating the lanes: a step runs once its waits are met.
  // [lane of the schedule][pos]: the clock at the end of that step, over the segment's lanes.
  std::vector<std::vector<std::vector<int32_t>>> clocks(st.lanes.size());
  for (const auto& seg : st.segments) {
    const uint32_t L = seg.lane_end - seg.lane_begin;
    std::vector<int32_t> done(L, 0);
    for (bool progress = true; progress;) {
      progress = false;
      for (uint32_t l = 0; l < L; ++l) {
        const auto& lane = st.lanes[seg.lane_begin + l];
        auto& lc = clocks[seg.lane_begin + l];
        while (done[l] < static_cast<int32_t>(lane.step_end - lane.step_begin)) {
          const auto& step = st.steps[lane.step_begin + static_cast<uint32_t>(done[l])];
          std::vector<int32_t> c = done[l] ? lc.back() : std::vector<int32_t>(L, 0);
          bool ready = true;
          for (uint32_t w = step.wait_begin; w < step.wait_end; ++w) {
            const auto& wt = st.waits[w];
            ASSERT_LT(wt.lane, L);
            ASSERT_NE(wt.lane, l) << "a lane waits for itself";
            if (done[wt.lane] < wt.count) {
              ready = false;
              break;
            }
            const auto& other = clocks[seg.lane_begin + wt.lane][static_cast<size_t>(wt.count - 1)];
            for (uint32_t u = 0; u < L; ++u) c[u] = std::max(c[u], other[u]);
          }
          if (!ready) break;
          c[l] = done[l] + 1;
          lc.push_back(c);
          ++done[l];
          progress = true;
        }
      }
    }
    for (uint32_t l = 0; l < L; ++l)
      ASSERT_EQ(done[l],
                static_cast<int32_t>(st.lanes[seg.lane_begin + l].step_end - st.lanes[seg.lane_begin + l].step_begin))
          << "the waits of a segment form a cycle";
  }
  // a happens before b (or is b).
  auto before = [&](uint32_t a, uint32_t b) {
    if (a == b) return true;
    const Place &pa = place[a], &pb = place[b];
    if (pa.seg != pb.seg) return pa.seg < pb.seg;
    // b's clock at its end: a lane's entry counts its steps done by then (b's own included).
    uint32_t lb = st.segments[pb.seg].lane_begin + pb.lane;
    return clocks[lb][static_cast<size_t>(pb.pos)][pa.lane] > pa.pos;
  };

  // Value ids as the planner numbers them: inputs, then each op's results in op order.
  const Block& entry = g.main().entry();
  std::unordered_map<const Value*, uint32_t> id;
  std::vector<uint32_t> occupant;  // per value: the value whose bytes it reads (itself, or a view's root)
  std::vector<uint32_t> producer;  // per value: the kernel writing its occupant, UINT32_MAX for none
  for (const auto& a : entry.arguments()) {
    id.emplace(a.get(), static_cast<uint32_t>(id.size()));
    occupant.push_back(static_cast<uint32_t>(occupant.size()));
    producer.push_back(UINT32_MAX);
  }
  struct Access {
    uint32_t value, kernel;
    bool write;
  };
  std::vector<Access> accesses;
  const auto& ops = entry.operations();
  uint32_t current = UINT32_MAX;  // the kernel a fused member runs in
  for (size_t k = 0; k + 1 < ops.size(); ++k) {
    const Operation& op = *ops[k];
    bool view = kernel_less_ops().count(op.name()) != 0 && op.name() != "constant";
    bool runs = p.kernels[k] != nullptr || kernel_less_ops().count(op.name()) == 0;
    if (p.kernels[k]) current = static_cast<uint32_t>(k);
    for (size_t r = 0; r < op.num_results(); ++r) {
      auto v = static_cast<uint32_t>(id.size());
      id.emplace(op.result(r), v);
      occupant.push_back(view ? occupant[id.at(op.operand(0))] : v);
      producer.push_back(view ? producer[id.at(op.operand(0))] : (runs ? current : UINT32_MAX));
      if (runs) accesses.push_back({v, current, true});
    }
    if (!runs) continue;
    for (const Value* o : op.operands()) {
      uint32_t v = occupant[id.at(o)];
      accesses.push_back({v, current, false});
      if (producer[v] != UINT32_MAX) {
        EXPECT_TRUE(before(producer[v], current)) << "kernel " << current << " may read %" << v << " before it is made";
      }
    }
  }
  // Temporaries sharing a buffer.
  std::map<uint32_t, std::vector<uint32_t>> by_buffer;  // buffer -> occupants
  for (uint32_t v = 0; v < occupant.size(); ++v)
    if (occupant[v] == v && p.storage[v].kind == Program::StorageKind::Temp) by_buffer[p.storage[v].index].push_back(v);
  std::vector<std::vector<const Access*>> of(occupant.size());
  for (const Access& a : accesses) of[a.value].push_back(&a);
  auto all_before = [&](uint32_t u, uint32_t w) {  // every access to u happens before w is written
    for (const Access* a : of[u])
      if (!before(a->kernel, producer[w])) return false;
    return true;
  };
  for (const auto& [b, vals] : by_buffer)
    for (size_t i = 0; i < vals.size(); ++i)
      for (size_t j = i + 1; j < vals.size(); ++j)
        EXPECT_TRUE(all_before(vals[i], vals[j]) || all_before(vals[j], vals[i]))
            << "%" << vals[i] << " and %" << vals[j] << " share buffer " << b << " but may overlap in time";
}

// ---------------------------------------------------------------------------------------------
// Graphs.

// `chains` independent chains of `len` elementwise ops over (n,) float32, each over the
// inputs and a constant of its own, joined by one concatenate or by a tree of adds.
Graph chains_graph(int chains, int64_t n, int len, bool concat) {
  GraphBuilder g;
  Value* x = g.input(DType::F32, S({n}));
  Value* y = g.input(DType::F32, S({n}));
  const TensorType t = tt(DType::F32, S({n}));
  std::vector<Value*> ends;
  for (int c = 0; c < chains; ++c) {
    Value* k = g.op("constant", {}, t, {{"value", random_f32(n, 1000u + static_cast<uint32_t>(c))}});
    Value* cur = c % 2 ? y : x;
    for (int i = 0; i < len; ++i) {
      switch ((i + c) % 6) {
        case 0: cur = g.op("sin", {cur}, t); break;
        case 1: cur = g.op("add", {cur, y}, t); break;
        case 2: cur = g.op("tanh", {cur}, t); break;
        case 3: cur = g.op("multiply", {cur, k}, t); break;
        case 4: cur = g.op("cos", {cur}, t); break;
        default: cur = g.op("subtract", {x, cur}, t); break;
      }
    }
    ends.push_back(cur);
  }
  if (concat) return g.build({g.op("concatenate", ends, tt(DType::F32, S({n * chains})), {{"axis", int64_t{0}}})});
  while (ends.size() > 1) {
    std::vector<Value*> next;
    for (size_t i = 0; i + 1 < ends.size(); i += 2) next.push_back(g.op("add", {ends[i], ends[i + 1]}, t));
    if (ends.size() % 2) next.push_back(ends.back());
    ends = next;
  }
  return g.build({ends[0]});
}

std::vector<Tensor> two_inputs(int64_t n) { return {random_f32(n, 1), random_f32(n, 2)}; }

// Runs `graph` prepared with `threads` threads and with one, `runs` times each, and expects
// bit-identical outputs; returns the concurrent plan.
std::shared_ptr<const Program> expect_same_as_sequential(const Graph& graph, const std::vector<Tensor>& in, int threads,
                                                         int runs = 3) {
  auto seq = prepare_with(graph, 1);
  EXPECT_EQ(interp::num_streams(*seq), 1);
  auto par = prepare_with(graph, threads);
  std::vector<Tensor> want = run(*seq, in, graph.num_outputs());
  Threads t(threads);
  for (int r = 0; r < runs; ++r) EXPECT_TRUE(same_bits(run(*par, in, graph.num_outputs()), want)) << "run " << r;
  return par;
}

// ---------------------------------------------------------------------------------------------
// Independent chains.

struct ChainCase {
  int chains;
  int64_t n;
  int len;
  bool concat;
};

class StreamChains : public ::testing::TestWithParam<ChainCase> {};

TEST_P(StreamChains, TwoThreadsMatchOneBitForBitAndUseTwoStreams) {
  const ChainCase& c = GetParam();
  Graph g = chains_graph(c.chains, c.n, c.len, c.concat);
  auto p = expect_same_as_sequential(g, two_inputs(c.n), 2);
  EXPECT_EQ(interp::num_streams(*p), 2) << "the concurrent schedule was not chosen";
  check_schedule(*p, g);
}

TEST_P(StreamChains, FourThreadsMatchOneBitForBit) {
  const ChainCase& c = GetParam();
  Graph g = chains_graph(c.chains, c.n, c.len, c.concat);
  auto p = expect_same_as_sequential(g, two_inputs(c.n), 4);
  EXPECT_GE(interp::num_streams(*p), 2);
  EXPECT_LE(interp::num_streams(*p), std::min(4, c.chains));
  check_schedule(*p, g);
}

INSTANTIATE_TEST_SUITE_P(Graphs, StreamChains,
                         ::testing::Values(ChainCase{2, 4096, 12, true}, ChainCase{2, 1024, 40, false},
                                           ChainCase{3, 4096, 10, false}, ChainCase{4, 1024, 30, true},
                                           ChainCase{5, 4096, 8, true}, ChainCase{8, 1024, 20, false},
                                           ChainCase{8, 4096, 6, true}),
                         [](const auto& info) {
                           const ChainCase& c = info.param;
                           return std::to_string(c.chains) + "x" + std::to_string(c.len) + "_n" + std::to_string(c.n) +
                                  (c.concat ? "_concat" : "_add");
                         });

TEST(StreamPlan, SmallGraphStaysSequential) {
  Graph g = chains_graph(2, 1024, 3, true);
  auto p = prepare_with(g, 2);
  EXPECT_EQ(interp::num_streams(*p), 1);
  EXPECT_TRUE(p->streams.segments.empty());
  EXPECT_TRUE(same_bits(run(*p, two_inputs(1024), 1), run(*prepare_with(g, 1), two_inputs(1024), 1)));
}

TEST(StreamPlan, OneThreadAtPrepareGivesTheSequentialPlan) {
  Graph g = chains_graph(4, 4096, 12, true);
  EXPECT_EQ(interp::num_streams(*prepare_with(g, 1)), 1);
  EXPECT_EQ(interp::num_streams(*prepare_with(g, 2)), 2);
}

TEST(StreamPlan, OneLongChainStaysSequential) {
  Graph g = chains_graph(1, 4096, 60, false);
  EXPECT_EQ(interp::num_streams(*prepare_with(g, 2)), 1);
}

// A loop kernel ticks the call's single-threaded RunBudget (and may throw RunLimitError): a
// graph with control flow keeps op order, however much independent work it has besides.
TEST(StreamPlan, ControlFlowKeepsOpOrder) {
  using ST = SymbolicTensor;
  using C = std::tuple<ST, ST>;
  auto traced = [](bool loop) {
    auto f = [loop](ST n, ST x, ST y) {
      ST a = x, b = y, c = x + y;
      for (int i = 0; i < 15; ++i) a = sin(a), b = cos(b), c = tanh(c);
      ST r = y;
      if (loop)
        r = std::get<1>(while_loop([&](const C& k) { return less(std::get<0>(k), n); },
                                   [&](const C& k) {
                                     return C{std::get<0>(k) + int64_t{1}, std::get<1>(k) * 0.5 + x};
                                   },
                                   C{fill(Shape(), 0, i64), y}));
      return C{a + b + c, r};
    };
    return trace(f, TensorSpec({}, i64), TensorSpec({4096}, f32), TensorSpec({4096}, f32));
  };
  EXPECT_EQ(interp::num_streams(*prepare_with(traced(false), 2)), 2);
  Graph g = traced(true);
  EXPECT_EQ(interp::num_streams(*prepare_with(g, 2)), 1);
}

// ---------------------------------------------------------------------------------------------
// Buffer-reuse hazards.

// A value `s` read on every step of two chains, built one after the other so that they run on
// two lanes. The last reader of `s` in the planner's walk, `add(s, c)`, could write its result
// over `s` (it is operand 0 and dies there), but the other lane's readers are not ordered
// before it: it must not. The first chain's short-lived values die on its lane while the
// other lane runs, so their buffers are candidates for the other lane's results too.
Graph shared_reader_graph(int64_t n, int len) {
  GraphBuilder g;
  Value* x = g.input(DType::F32, S({n}));
  Value* y = g.input(DType::F32, S({n}));
  const TensorType t = tt(DType::F32, S({n}));
  Value* s = g.op("sin", {x}, t);
  Value* b = g.op("cos", {y}, t);
  for (int i = 0; i < len; ++i) b = g.op("multiply", {g.op("sin", {b}, t), s}, t);
  Value* c = g.op("tanh", {y}, t);
  for (int i = 0; i < len; ++i) c = g.op("add", {g.op("cos", {c}, t), s}, t);
  return g.build({b, g.op("sin", {g.op("add", {s, c}, t)}, t)});  // add's result a temporary
}

TEST(StreamStorage, SharedOperandIsNotOverwrittenAcrossLanes) {
  for (int64_t n : {int64_t{1024}, int64_t{4096}}) {
    Graph g = shared_reader_graph(n, n == 1024 ? 40 : 12);
    auto p = expect_same_as_sequential(g, two_inputs(n), 2, 10);
    EXPECT_EQ(interp::num_streams(*p), 2);
    check_schedule(*p, g);
  }
}

// Outputs that are inputs, constants, views, repeats and intermediates also read by later ops.
TEST(StreamStorage, OutputsThatAreInputsConstantsViewsAndRepeats) {
  const int64_t n = 4096;
  GraphBuilder g;
  Value* x = g.input(DType::F32, S({n}));
  Value* y = g.input(DType::F32, S({n}));
  const TensorType t = tt(DType::F32, S({n}));
  Value* k = g.op("constant", {}, t, {{"value", random_f32(n, 77)}});
  Value* a = x;
  Value* b = y;
  Value* mid = nullptr;
  for (int i = 0; i < 12; ++i) {
    a = g.op(i % 2 ? "sin" : "add", i % 2 ? std::vector<Value*>{a} : std::vector<Value*>{a, k}, t);
    b = g.op(i % 2 ? "tanh" : "multiply", i % 2 ? std::vector<Value*>{b} : std::vector<Value*>{b, y}, t);
    if (i == 5) mid = a;
  }
  Value* view = g.op("reshape", {b}, tt(DType::F32, S({64, 64})), {{"shape", S({64, 64})}});
  Value* late = g.op("add", {mid, b}, t);
  Graph graph = g.build({x, k, a, view, mid, a, late, y});
  auto p = expect_same_as_sequential(graph, two_inputs(n), 2, 5);
  EXPECT_EQ(interp::num_streams(*p), 2);
  check_schedule(*p, graph);
}

// A random DAG of elementwise ops: operands drawn mostly from recent values (chains), sometimes
// from anywhere (values read across lanes, late); a few outputs anywhere.
Graph random_dag(uint32_t seed, int64_t n, int num_ops) {
  std::mt19937 rng(seed);
  GraphBuilder g;
  const TensorType t = tt(DType::F32, S({n}));
  std::vector<Value*> vals = {g.input(DType::F32, S({n})), g.input(DType::F32, S({n})), g.input(DType::F32, S({n}))};
  vals.push_back(g.op("constant", {}, t, {{"value", random_f32(n, seed + 5)}}));
  static const char* kUnary[] = {"sin", "cos", "tanh", "neg", "abs"};
  static const char* kBinary[] = {"add", "subtract", "multiply", "maximum"};
  auto pick = [&]() {
    auto m = static_cast<uint32_t>(vals.size());
    if (rng() % 4 == 0) return vals[rng() % m];
    return vals[m - 1 - rng() % std::min<uint32_t>(m, 6)];
  };
  for (int i = 0; i < num_ops; ++i) {
    if (rng() % 3 == 0)
      vals.push_back(g.op(kUnary[rng() % 5], {pick()}, t));
    else
      vals.push_back(g.op(kBinary[rng() % 4], {pick(), pick()}, t));
  }
  std::vector<Value*> outs = {vals.back()};
  for (int i = 0; i < 4; ++i) outs.push_back(vals[rng() % vals.size()]);
  return g.build(outs);
}

TEST(StreamStorage, RandomGraphsMatchSequentialAndReuseOnlyOrderedBuffers) {
  int scheduled = 0;
  for (uint32_t seed = 0; seed < 24; ++seed) {
    Graph g = random_dag(seed, 1024, 160);
    std::vector<Tensor> in = {random_f32(1024, seed), random_f32(1024, seed + 100), random_f32(1024, seed + 200)};
    for (int threads : {2, 3}) {
      auto p = expect_same_as_sequential(g, in, threads, 2);
      if (interp::num_streams(*p) > 1) {
        ++scheduled;
        check_schedule(*p, g);
      }
    }
  }
  EXPECT_GT(scheduled, 10) << "too few random graphs got a concurrent schedule to test much";
}

// Large kernels (tiled over every thread) run alone between concurrent segments: here each
// round's large ops need the previous round's small chains, and feed the next round's, so
// the plan alternates sequential and concurrent segments.
TEST(StreamStorage, LargeKernelsSplitSegments) {
  const int64_t big = 3 * interp::kParallelGrain, n = 4096;
  GraphBuilder g;
  Value* x = g.input(DType::F32, S({n}));
  Value* X = g.input(DType::F32, S({big}));
  const TensorType t = tt(DType::F32, S({n})), T = tt(DType::F32, S({big})), scalar = tt(DType::F32, S({}));
  // Maxima are exact on any thread count (a sum's chunking follows the thread count).
  auto max_of = [&](Value* v) {
    return g.op("reduce_max", {v}, scalar, {{"axes", std::vector<int64_t>{0}}, {"keepdims", false}});
  };
  Value* cur = X;
  Value* s = max_of(x);
  for (int round = 0; round < 3; ++round) {
    cur = g.op(round % 2 ? "sin" : "tanh", {g.op("add", {cur, s}, T)}, T);
    Value* m = max_of(cur);
    Value* sum = nullptr;
    for (int c = 0; c < 4; ++c) {
      Value* v = g.op("add", {x, m}, t);
      for (int i = 0; i < 10; ++i) v = g.op((i + c) % 2 ? "cos" : "sin", {v}, t);
      sum = sum ? g.op("add", {sum, v}, t) : v;
    }
    s = max_of(sum);
  }
  Graph graph = g.build({s, cur});
  auto p = expect_same_as_sequential(graph, {random_f32(n, 3), random_f32(big, 4)}, 2);
  EXPECT_EQ(interp::num_streams(*p), 2);
  EXPECT_GE(p->streams.segments.size(), 5u);
  check_schedule(*p, graph);
}

// ---------------------------------------------------------------------------------------------
// Runs: pooled frames, concurrent calls, one thread, nested in a pool worker.

TEST(StreamRun, RepeatedRunsWithPooledFramesAndCallerOutputs) {
  Graph g = chains_graph(4, 4096, 12, true);
  auto p = prepare_with(g, 2);
  ASSERT_EQ(interp::num_streams(*p), 2);
  auto in = two_inputs(4096);
  std::vector<Tensor> want = run(*prepare_with(g, 1), in, 1);
  Threads t(2);
  std::vector<Tensor> out = {Tensor::zeros({4 * 4096}, f32)};
  for (int r = 0; r < 50; ++r) {
    interp::execute(*p, in, out);
    ASSERT_TRUE(same_bits(out, want)) << "run " << r;
    ASSERT_TRUE(same_bits(run(*p, in, 1), want)) << "run " << r;
  }
}

TEST(StreamRun, ConcurrentCallsOnOneProgram) {
  Graph g = chains_graph(6, 1024, 30, false);
  auto p = prepare_with(g, 2);
  ASSERT_EQ(interp::num_streams(*p), 2);
  Threads t(2);
  std::vector<std::vector<Tensor>> in = {two_inputs(1024), {random_f32(1024, 9), random_f32(1024, 10)}};
  auto seq = prepare_with(g, 1);
  std::vector<std::vector<Tensor>> want = {run(*seq, in[0], 1), run(*seq, in[1], 1)};
  std::vector<int> bad(2, 0);
  std::vector<std::thread> callers;
  for (int c = 0; c < 2; ++c)
    callers.emplace_back([&, c] {
      for (int r = 0; r < 40; ++r)
        if (!same_bits(run(*p, in[static_cast<size_t>(c)], 1), want[static_cast<size_t>(c)])) ++bad[c];
    });
  for (auto& th : callers) th.join();
  EXPECT_EQ(bad[0], 0);
  EXPECT_EQ(bad[1], 0);
}

// After a call that left the caller waiting on a busy machine, calls run every lane on the
// caller for a while (execute.cpp): the same results.
TEST(StreamRun, CallsRunAloneAfterABusyCall) {
  Graph g = chains_graph(4, 4096, 12, true);
  auto p = prepare_with(g, 2);
  ASSERT_EQ(interp::num_streams(*p), 2);
  auto in = two_inputs(4096);
  std::vector<Tensor> want = run(*prepare_with(g, 1), in, 1);
  Threads t(2);
  p->stream_load.alone_calls.store(5);
  for (int r = 0; r < 5; ++r) EXPECT_TRUE(same_bits(run(*p, in, 1), want)) << "run " << r;
  EXPECT_EQ(p->stream_load.alone_calls.load(), 0);
  EXPECT_TRUE(same_bits(run(*p, in, 1), want));
}

TEST(StreamRun, OneThreadAfterAConcurrentPrepare) {
  Graph g = chains_graph(4, 4096, 12, false);
  auto p = prepare_with(g, 4);
  ASSERT_GT(interp::num_streams(*p), 1);
  auto in = two_inputs(4096);
  std::vector<Tensor> want = run(*prepare_with(g, 1), in, 1);
  Threads t(1);  // parallel_run then runs every lane on the caller
  EXPECT_TRUE(same_bits(run(*p, in, 1), want));
}

TEST(StreamRun, InsidePoolWorkers) {
  Graph g = chains_graph(4, 4096, 12, true);
  auto p = prepare_with(g, 2);
  ASSERT_EQ(interp::num_streams(*p), 2);
  auto in = two_inputs(4096);
  std::vector<Tensor> want = run(*prepare_with(g, 1), in, 1);
  Threads t(2);
  // One call on the caller, one on a pool worker (where nested parallel_run is serial).
  std::vector<std::vector<Tensor>> got(4, std::vector<Tensor>(1));
  interp::parallel_for(4, [&](int64_t i) {
    // parallel_for's functions must not throw; a failure shows as an undefined output.
    try {
      interp::execute(*p, in, got[static_cast<size_t>(i)]);
    } catch (...) {
      got[static_cast<size_t>(i)][0] = Tensor();
    }
  });
  for (const auto& o : got) EXPECT_TRUE(o[0].defined() && same_bits(o, want));
}

}  // namespace
}  // namespace evoxc::testing
