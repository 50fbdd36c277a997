// Interpreter plan and executor: broadcasting, symbolic shapes, validation messages, buffers, threads.
#include "interp/program.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <thread>

#include "interp/elementwise.h"
#include "interp/graph_util.h"
#include "interp/thread_pool.h"

namespace evoxc::testing {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ValidationError& e) {
    return std::string("ValidationError: ") + e.what();
  } catch (const BackendError& e) {
    return std::string("BackendError: ") + e.what();
  } catch (const std::exception& e) {
    return std::string("other: ") + e.what();
  }
  return "no error";
}

#define EXPECT_HAS(haystack, needle) EXPECT_NE((haystack).find(needle), std::string::npos) << (haystack)

// --- broadcasting elementwise graphs

Tensor run_binary(const std::string& op, const Tensor& a, const Tensor& b, const std::vector<int64_t>& out,
                  DType out_t) {
  GraphBuilder g;
  Value* va = g.input(a.dtype(), S(a.shape()));
  Value* vb = g.input(b.dtype(), S(b.shape()));
  Value* r = g.op(op, {va, vb}, tt(out_t, S(out)));
  return run_graph(g.build({r}), {a, b})[0];
}

// numpy broadcasting reference over flat row-major indices.
template <typename F>
std::vector<double> ref_broadcast(const std::vector<int64_t>& as, const std::vector<double>& av,
                                  const std::vector<int64_t>& bs, const std::vector<double>& bv,
                                  const std::vector<int64_t>& os, F f) {
  int64_t n = 1;
  for (int64_t d : os) n *= d;
  std::vector<double> out;
  for (int64_t flat = 0; flat < n; ++flat) {
    std::vector<int64_t> idx(os.size());
    int64_t q = flat;
    for (size_t i = os.size(); i-- > 0;) {
      idx[i] = q % os[i];
      q /= os[i];
    }
    auto at = [&](const std::vector<int64_t>& s, const std::vector<double>& v) {
      int64_t off = 0;
      size_t lead = os.size() - s.size();
      for (size_t i = 0; i < s.size(); ++i) off = off * s[i] + (s[i] == 1 ? 0 : idx[lead + i]);
      return v[static_cast<size_t>(off)];
    };
    out.push_back(f(at(as, av), at(bs, bv)));
  }
  return out;
}

TEST(InterpBroadcast, BinaryOpsBroadcastLikeNumpy) {
  struct C {
    std::vector<int64_t> a, b, o;
  };
  std::vector<C> cases = {{{3, 1}, {1, 4}, {3, 4}},          {{}, {2, 3}, {2, 3}},
                          {{2, 3, 4}, {3, 1}, {2, 3, 4}},    {{4}, {2, 3, 4}, {2, 3, 4}},
                          {{2, 1, 4}, {1, 3, 1}, {2, 3, 4}}, {{5}, {5}, {5}},
                          {{0, 3}, {1, 3}, {0, 3}},          {{1}, {}, {1}}};
  for (DType t : {DType::F32, DType::I32, DType::U8, DType::F64, DType::I64}) {
    for (const C& c : cases) {
      int64_t na = 1, nb = 1;
      for (int64_t d : c.a) na *= d;
      for (int64_t d : c.b) nb *= d;
      Tensor a = make_tensor(t, c.a, sample_values(t, na, 3));
      Tensor b = make_tensor(t, c.b, sample_values(t, nb, 4));
      auto want = ref_broadcast(c.a, to_doubles(a), c.b, to_doubles(b), c.o, [](double x, double y) { return x + y; });
      EXPECT_EQ(to_doubles(run_binary("add", a, b, c.o, t)), to_doubles(make_tensor(t, c.o, want)))
          << dtype_name(t) << " rank " << c.a.size() << "," << c.b.size();
      auto lt = ref_broadcast(c.a, to_doubles(a), c.b, to_doubles(b), c.o, [](double x, double y) { return x < y; });
      EXPECT_EQ(to_doubles(run_binary("less", a, b, c.o, DType::Bool)), lt);
    }
  }
}

TEST(InterpBroadcast, LargeBroadcastSplitsAcrossThreadsIdentically) {
  const int64_t R = 700, C = 300;
  std::vector<double> av(static_cast<size_t>(R)), bv(static_cast<size_t>(C));
  for (size_t i = 0; i < av.size(); ++i) av[i] = std::sin(static_cast<double>(i));
  for (size_t i = 0; i < bv.size(); ++i) bv[i] = std::cos(static_cast<double>(i));
  Tensor a = make_tensor(DType::F32, {R, 1}, av), b = make_tensor(DType::F32, {1, C}, bv);
  interp::set_num_threads(1);
  Tensor one = run_binary("multiply", a, b, {R, C}, DType::F32);
  interp::set_num_threads(2);
  Tensor two = run_binary("multiply", a, b, {R, C}, DType::F32);
  interp::set_num_threads(0);
  auto o = one.to_vector<float>(), w = two.to_vector<float>();
  ASSERT_EQ(0, std::memcmp(o.data(), w.data(), o.size() * sizeof(float)));
  auto ar = a.to_vector<float>(), br = b.to_vector<float>();
  for (int64_t i = 0; i < R; i += 13)
    for (int64_t j = 0; j < C; ++j)
      ASSERT_EQ(o[static_cast<size_t>(i * C + j)], ar[static_cast<size_t>(i)] * br[static_cast<size_t>(j)]);
}

TEST(InterpBroadcast, SelectClampConvertAndBitcast) {
  GraphBuilder g;
  Value* p = g.input(DType::Bool, S({3, 1}));
  Value* x = g.input(DType::F32, S({3, 4}));
  Value* y = g.input(DType::F32, S({}));
  Value* sel = g.op("select", {p, x, y}, tt(DType::F32, S({3, 4})));
  Value* cl = g.op("clamp", {y, x, y}, tt(DType::F32, S({3, 4})));
  Value* cv = g.op("convert", {x}, tt(DType::I32, S({3, 4})), {{"dtype", DType::I32}});
  Value* bc = g.op("bitcast_convert", {x}, tt(DType::U32, S({3, 4})), {{"dtype", DType::U32}});
  std::vector<double> xv = {-2.5, -1, 0, 1, 2, 3.5, 4, 5, 6, 7, 8, 9.75};
  Tensor xt = make_tensor(DType::F32, {3, 4}, xv);
  auto outs = run_graph(g.build({sel, cl, cv, bc}),
                        {make_tensor(DType::Bool, {3, 1}, {1, 0, 1}), xt, make_tensor(DType::F32, {}, {2})});
  auto s = to_doubles(outs[0]), c = to_doubles(outs[1]), i = to_doubles(outs[2]);
  auto bits = outs[3].to_vector<uint32_t>();
  for (size_t k = 0; k < 12; ++k) {
    EXPECT_EQ(s[k], (k / 4 == 1) ? 2.0 : xv[k]);
    EXPECT_EQ(c[k], 2.0);  // clamp(2, x, 2) = min(max(2, x), 2)
    EXPECT_EQ(i[k], std::trunc(xv[k]));
    EXPECT_EQ(bits[k], std::bit_cast<uint32_t>(static_cast<float>(xv[k])));
  }
}

// --- symbolic shapes

Graph symbolic_graph() {
  GraphBuilder g;
  Shape bx4{Dim("B"), DimExpr(4)};
  Value* x = g.input(DType::F32, bx4);
  Value* w = g.input(DType::F32, S({4}));
  Value* y = g.op("multiply", {x, w}, tt(DType::F32, bx4));
  Value* s = g.op("reduce_sum", {y}, tt(DType::F32, Shape{Dim("B")}),
                  {{"axes", std::vector<int64_t>{1}}, {"keepdims", false}});
  Value* t = g.op("transpose", {y}, tt(DType::F32, Shape{DimExpr(4), Dim("B")}),
                  {{"permutation", std::vector<int64_t>{1, 0}}});
  Value* r =
      g.op("reshape", {t}, tt(DType::F32, Shape{Dim("B") * DimExpr(4)}), {{"shape", Shape{Dim("B") * DimExpr(4)}}});
  return g.build({s, r});
}

TEST(InterpSymbolic, OneProgramRunsEveryBatchSize) {
  auto p = interp::prepare(symbolic_graph());
  for (int64_t B : {1, 5, 1000, 5, 1}) {
    std::vector<float> xv(static_cast<size_t>(B * 4));
    for (size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>(i % 11) - 5.0f;
    std::vector<float> wv = {1, 2, 3, 4};
    std::vector<Tensor> outs(2);
    interp::execute(*p, std::vector<Tensor>{Tensor::from_vector(xv, {B, 4}), Tensor::from_vector(wv, {4})}, outs);
    ASSERT_EQ(outs[0].shape(), std::vector<int64_t>{B});
    ASSERT_EQ(outs[1].shape(), std::vector<int64_t>{B * 4});
    auto s = outs[0].to_vector<float>(), r = outs[1].to_vector<float>();
    for (int64_t b = 0; b < B; ++b) {
      float want = 0;
      for (int64_t j = 0; j < 4; ++j) {
        float y = xv[static_cast<size_t>(b * 4 + j)] * wv[static_cast<size_t>(j)];
        want += y;
        ASSERT_EQ(r[static_cast<size_t>(j * B + b)], y);
      }
      ASSERT_EQ(s[static_cast<size_t>(b)], want) << "B=" << B;
    }
  }
}

// --- must-fail set

TEST(InterpValidation, BadInputsAndOutputsNameWhatIsWrong) {
  GraphBuilder g;
  Shape bx4{Dim("B"), DimExpr(4)};
  Value* a = g.input(DType::F32, bx4);
  Value* x = g.input(DType::F32, bx4);
  Value* r = g.op("add", {a, x}, tt(DType::F32, bx4));
  TreeDef tree = TreeDef::tuple({TreeDef(LeafMark{}), TreeDef::dict({{"x", TreeDef(LeafMark{})}})});
  auto p = interp::prepare(g.build({r}, tree));
  Tensor good = Tensor::zeros({5, 4});
  auto run = [&](std::vector<Tensor> in, std::vector<Tensor> out) {
    return error_of([&] { interp::execute(*p, in, out); });
  };
  EXPECT_EQ(run({good, Tensor::zeros({5, 3})}, {Tensor()}),
            "ValidationError: input [1]['x']: expected tensor<Bx4xf32>, got shape (5, 3)");
  std::string e = run({good, Tensor::zeros({5, 4}, DType::I32)}, {Tensor()});
  EXPECT_HAS(e, "ValidationError: input [1]['x']: expected tensor<Bx4xf32>, got dtype int32");
  e = run({good, Tensor::zeros({5, 4, 1})}, {Tensor()});
  EXPECT_HAS(e, "input [1]['x']: expected tensor<Bx4xf32>, got shape (5, 4, 1)");
  e = run({good, Tensor::zeros({6, 4})}, {Tensor()});
  EXPECT_HAS(e, "ValidationError: input [1]['x']");
  EXPECT_HAS(e, "B = 6");
  EXPECT_HAS(e, "input [0]");
  EXPECT_HAS(e, "B = 5");
  EXPECT_HAS(e, "shape (5, 4)");
  e = run({good}, {Tensor()});
  EXPECT_EQ(e, "ValidationError: execute: the program takes 2 input tensors, got 1");
  e = run({good, good}, {Tensor(), Tensor()});
  EXPECT_HAS(e, "ValidationError: execute: the program has 1 outputs, got 2");
  e = run({good, good}, {Tensor::zeros({5, 3})});
  EXPECT_HAS(e,
             "ValidationError: output [0]: the caller's tensor has dtype float32 and shape (5, 3), but the "
             "program writes float32 of shape (5, 4)");
  e = run({good, good}, {Tensor::zeros({5, 4}, DType::F64)});
  EXPECT_HAS(e, "ValidationError: output [0]: the caller's tensor has dtype float64");
  e = run({good, Tensor()}, {Tensor()});
  EXPECT_HAS(e, "ValidationError: input [1]['x']: the tensor is undefined");
  EXPECT_EQ(run({good, good}, {Tensor()}), "no error");
}

TEST(InterpValidation, PrepareRejectsOpsWithoutKernelsAndOpsWithRegions) {
  {
    // evoxc.return has no kernel (the table defers it with a reason): one before the end of
    // a block is refused with the table's message.
    auto m = std::make_shared<Module>();
    Function& f = m->add_function("main");
    Value* x = f.entry().add_argument(tt(DType::F32, S({2})));
    f.entry().append("return", {x}, {}, {}, Location{"m.py", 7, 2});
    f.result_types().push_back(tt(DType::F32, S({2})));
    f.entry().append("return", {x}, {});
    Graph g(m, TreeDef::tuple({TreeDef(LeafMark{})}), TreeDef::tuple({TreeDef(LeafMark{})}));
    std::string e = error_of([&] { interp::prepare(g); });
    EXPECT_HAS(e, "BackendError: interp: evoxc.return at m.py:7:2 has no interp rule: evoxc.return ends a block");
  }
  {
    auto m = std::make_shared<Module>();
    Function& f = m->add_function("main");
    Value* x = f.entry().add_argument(tt(DType::F32, S({2})));
    Operation* w = f.entry().append("exp", {x}, {tt(DType::F32, S({2}))}, {}, Location{"m.py", 9, 0}, 1);
    f.result_types().push_back(tt(DType::F32, S({2})));
    f.entry().append("return", {w->result(0)}, {});
    Graph g(m, TreeDef::tuple({TreeDef(LeafMark{})}), TreeDef::tuple({TreeDef(LeafMark{})}));
    std::string e = error_of([&] { interp::prepare(g); });
    EXPECT_HAS(e, "BackendError: evoxc.exp at m.py:9:0: ops with regions are not supported");
  }
  {
    GraphBuilder g;
    Value* x = g.input(DType::Bool, S({2}));
    Value* r = g.op("exp", {x}, tt(DType::Bool, S({2})));
    EXPECT_HAS(error_of([&] { interp::prepare(g.build({r})); }), "BackendError: evoxc.exp: no kernel for dtype bool");
  }
  const RuleTableBase& k = interp::kernels();
  EXPECT_EQ(k.name(), "interp");
  EXPECT_TRUE(k.has(get_op("dot").id));
  EXPECT_TRUE(k.has(get_op("reduce_sum").id));
  EXPECT_TRUE(k.has(get_op("reshape").id));
  EXPECT_TRUE(k.has(get_op("constant").id));
  EXPECT_TRUE(k.has(get_op("add").id));
  EXPECT_FALSE(k.has(get_op("return").id));
  ASSERT_NE(k.deferral(get_op("return").id), nullptr);
  EXPECT_GE(interp::num_threads(), 1);
}

// The coverage matrix's view: every op of the catalogue has a kernel or a recorded reason why not.
TEST(InterpKernels, EveryOpHasAKernelOrADeferral) {
  const RuleTableBase& k = interp::kernels();
  for (const OpDef* d : all_ops()) EXPECT_TRUE(k.has(d->id) || k.deferral(d->id) != nullptr) << d->name;
}

// --- buffers, outputs and threads

// A chain long enough that buffers get reused and ops run in place; one value (a) stays
// live across the chain to catch a buffer handed out too early.
Graph chain_graph(int64_t n, int links) {
  GraphBuilder g;
  Value* x = g.input(DType::F32, S({n}));
  Value* one = g.op("full", {}, tt(DType::F32, S({})), {{"shape", S({})}, {"value", 1.0}, {"dtype", DType::F32}});
  Value* a = g.op("add", {x, one}, tt(DType::F32, S({n})));
  Value* cur = a;
  for (int i = 0; i < links; ++i) {
    Value* m = g.op(i % 2 ? "multiply" : "subtract", {cur, one}, tt(DType::F32, S({n})));
    Value* r = g.op("reshape", {m}, tt(DType::F32, S({n, 1})), {{"shape", S({n, 1})}});
    Value* t = g.op("transpose", {r}, tt(DType::F32, S({1, n})), {{"permutation", std::vector<int64_t>{1, 0}}});
    Value* q = g.op("reshape", {t}, tt(DType::F32, S({n})), {{"shape", S({n})}});
    cur = g.op("add", {q, a}, tt(DType::F32, S({n})));
  }
  return g.build({cur, a});
}

std::vector<float> chain_reference(const std::vector<float>& x, int links) {
  std::vector<float> out(x.size());
  for (size_t k = 0; k < x.size(); ++k) {
    float a = x[k] + 1.0f, cur = a;
    for (int i = 0; i < links; ++i) cur = (i % 2 ? cur * 1.0f : cur - 1.0f) + a;
    out[k] = cur;
  }
  return out;
}

TEST(InterpPlan, LongChainWithBufferReuseIsCorrect) {
  const int64_t n = 257;
  auto p = interp::prepare(chain_graph(n, 40));
  std::vector<float> xv(static_cast<size_t>(n));
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>(i) * 0.25f - 3.0f;
  Tensor x = Tensor::from_vector(xv, {n});
  std::vector<Tensor> outs(2);
  interp::execute(*p, std::vector<Tensor>{x}, outs);
  auto want = chain_reference(xv, 40);
  EXPECT_EQ(outs[0].to_vector<float>(), want);
  EXPECT_EQ(x.to_vector<float>(), xv);  // the input is never written
  for (size_t i = 0; i < xv.size(); ++i) EXPECT_EQ(outs[1].to_vector<float>()[i], xv[i] + 1.0f);
}

TEST(InterpPlan, ChainReusesAFewBuffersAndAliasesViews) {
  auto p = interp::prepare(chain_graph(257, 40));
  // 201 ops; without reuse every non-view result would own a buffer.
  EXPECT_LE(p->buffers.size(), 4u);
  size_t temps = 0;
  for (const auto& s : p->storage) temps += s.kind == interp::Program::StorageKind::Temp ? 1 : 0;
  EXPECT_GT(temps, 100u);
  size_t kernels = 0;
  for (const auto& k : p->kernels) kernels += k != nullptr ? 1 : 0;
  EXPECT_EQ(kernels, 1u + 1u + 40u * 3u);  // full, first add, then subtract/multiply, transpose, add per link
}

TEST(InterpPlan, CallerOutputsAreWrittenInPlace) {
  const int64_t n = 64;
  auto p = interp::prepare(chain_graph(n, 3));
  std::vector<float> xv(static_cast<size_t>(n), 2.0f);
  Tensor x = Tensor::from_vector(xv, {n});
  std::vector<Tensor> outs = {Tensor::zeros({n}), Tensor::zeros({n})};
  void* p0 = outs[0].raw_data();
  void* p1 = outs[1].raw_data();
  interp::execute(*p, std::vector<Tensor>{x}, outs);
  EXPECT_EQ(outs[0].raw_data(), p0);
  EXPECT_EQ(outs[1].raw_data(), p1);
  EXPECT_EQ(outs[0].to_vector<float>(), chain_reference(xv, 3));
  // The caller's output may even be the input's memory.
  std::vector<Tensor> same = {x, Tensor::zeros({n})};
  interp::execute(*p, std::vector<Tensor>{x}, same);
  EXPECT_EQ(same[0].raw_data(), x.raw_data());
  EXPECT_EQ(x.to_vector<float>(), chain_reference(xv, 3));
}

TEST(InterpPlan, InputsAndRepeatsReturnedAsOutputsAreCopies) {
  GraphBuilder h;
  Value* hx = h.input(DType::I32, S({3}));
  Value* hy = h.op("add", {hx, hx}, tt(DType::I32, S({3})));
  auto p = interp::prepare(h.build({hx, hy, hy}));
  Tensor in = Tensor::from_vector<int32_t>({1, 2, 3}, {3});
  std::vector<Tensor> outs(3);
  interp::execute(*p, std::vector<Tensor>{in}, outs);
  EXPECT_NE(outs[0].raw_data(), in.raw_data());
  EXPECT_EQ(outs[0].to_vector<int32_t>(), (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(outs[1].to_vector<int32_t>(), (std::vector<int32_t>{2, 4, 6}));
  EXPECT_EQ(outs[2].to_vector<int32_t>(), (std::vector<int32_t>{2, 4, 6}));
  EXPECT_NE(outs[1].raw_data(), outs[2].raw_data());
}

TEST(InterpPlan, ConcurrentCallsFromEightThreads) {
  auto p = interp::prepare(symbolic_graph());
  auto q = interp::prepare(chain_graph(50000, 4));  // large enough to use the pool inside each call
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int it = 0; it < 20; ++it) {
        int64_t B = 1 + (t * 7 + it) % 13;
        std::vector<float> xv(static_cast<size_t>(B * 4), static_cast<float>(t + it));
        std::vector<Tensor> outs(2);
        interp::execute(
            *p, std::vector<Tensor>{Tensor::from_vector(xv, {B, 4}), Tensor::from_vector<float>({1, 1, 1, 1}, {4})},
            outs);
        auto s = outs[0].to_vector<float>();
        for (float v : s)
          if (v != 4.0f * static_cast<float>(t + it)) ++failures;
        if (it % 5 == 0) {
          std::vector<float> cv(50000, static_cast<float>(t));
          std::vector<Tensor> co(2);
          interp::execute(*q, std::vector<Tensor>{Tensor::from_vector(cv, {50000})}, co);
          if (co[0].to_vector<float>() != chain_reference(cv, 4)) ++failures;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(InterpPlan, DispatchCostOfAShortChain) {
  // Reported, never asserted (tests do not time): a 100-op chain on 64 float32 elements.
  GraphBuilder g;
  Value* x = g.input(DType::F32, S({64}));
  Value* cur = x;
  for (int i = 0; i < 100; ++i) cur = g.op(i % 2 ? "add" : "multiply", {cur, x}, tt(DType::F32, S({64})));
  auto p = interp::prepare(g.build({cur}));
  std::vector<Tensor> in = {Tensor::full({64}, 1.0)};
  std::vector<Tensor> out = {Tensor::zeros({64})};
  for (int i = 0; i < 1000; ++i) interp::execute(*p, in, out);
  auto t0 = std::chrono::steady_clock::now();
  const int reps = 20000;
  for (int i = 0; i < reps; ++i) interp::execute(*p, in, out);
  double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / reps;
  std::printf("100-op chain on (64,) float32: %.2f us per execute()\n", us);
  {
    GraphBuilder h;
    Value* m = h.input(DType::F32, S({1024, 1024}));
    Value* r1 =
        h.op("reduce_sum", {m}, tt(DType::F32, S({1024})), {{"axes", std::vector<int64_t>{1}}, {"keepdims", false}});
    Value* r0 =
        h.op("reduce_sum", {m}, tt(DType::F32, S({1024})), {{"axes", std::vector<int64_t>{0}}, {"keepdims", false}});
    auto q1 = interp::prepare(h.build({r1, r0}));
    std::vector<Tensor> mi = {Tensor::full({1024, 1024}, 0.5)};
    std::vector<Tensor> mo = {Tensor::zeros({1024}), Tensor::zeros({1024})};
    interp::execute(*q1, mi, mo);
    auto t1 = std::chrono::steady_clock::now();
    for (int i = 0; i < 50; ++i) interp::execute(*q1, mi, mo);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t1).count() / 50;
    std::printf("sum over axis 1 and axis 0 of (1024, 1024) float32: %.3f ms per execute()\n", ms);
    EXPECT_EQ(mo[0].to_vector<float>()[7], 512.0f);
    EXPECT_EQ(mo[1].to_vector<float>()[7], 512.0f);
  }
  EXPECT_EQ(out[0].to_vector<float>()[0], 51.0f);  // x = 1: each multiply keeps the value, each add adds 1
}

}  // namespace
}  // namespace evoxc::testing

namespace evoxc::testing {
namespace {

// Large elementwise runs execute tile by tile (fuse_elementwise_runs); with buffers reused
// and ops in place inside the run, results must equal op-by-op evaluation.
Graph fused_chain_graph(int64_t n, int links) {
  GraphBuilder g;
  Value* x = g.input(DType::F32, S({n}));
  Value* y = g.input(DType::F32, S({n}));
  Value* a = g.op("add", {x, y}, tt(DType::F32, S({n})));  // live across the run
  Value* cur = g.op("tanh", {a}, tt(DType::F32, S({n})));
  for (int i = 0; i < links; ++i) {
    Value* m = g.op(i % 2 ? "multiply" : "subtract", {cur, x}, tt(DType::F32, S({n})));
    Value* s = g.op("sin", {m}, tt(DType::F32, S({n})));
    cur = g.op("add", {s, a}, tt(DType::F32, S({n})));
  }
  return g.build({cur, a});
}

TEST(InterpPlan, FusedElementwiseRunsMatchOpByOp) {
  const int64_t n = 200003;  // several tiles and an odd tail
  const int links = 12;
  auto p = interp::prepare(fused_chain_graph(n, links));
  size_t live_kernels = 0;
  for (const auto& k : p->kernels) live_kernels += k != nullptr;
  EXPECT_LT(live_kernels, static_cast<size_t>(2 + 3 * links)) << "the elementwise run was not fused";
  std::vector<float> xv(static_cast<size_t>(n)), yv(static_cast<size_t>(n));
  for (size_t i = 0; i < xv.size(); ++i) {
    xv[i] = static_cast<float>(i % 1000) * 0.001f - 0.5f;
    yv[i] = static_cast<float>(i % 77) * 0.01f;
  }
  // The reference applies the same kernels one op at a time over whole arrays.
  std::vector<float> want(static_cast<size_t>(n)), a(static_cast<size_t>(n));
  auto unary = [&](const char* op, std::vector<float>& v) {
    interp::UnaryParams prm;
    interp::unary_kernel(get_op(op), DType::F32, {}, &prm)(v.data(), v.data(), n, prm);
  };
  for (size_t i = 0; i < a.size(); ++i) a[i] = xv[i] + yv[i];
  want = a;
  unary("tanh", want);
  for (int l = 0; l < links; ++l) {
    for (size_t i = 0; i < want.size(); ++i) want[i] = l % 2 ? want[i] * xv[i] : want[i] - xv[i];
    unary("sin", want);
    for (size_t i = 0; i < want.size(); ++i) want[i] = want[i] + a[i];
  }
  for (int threads : {1, 2}) {
    interp::set_num_threads(threads);
    std::vector<Tensor> outs(2);
    interp::execute(*p, std::vector<Tensor>{Tensor::from_vector(xv, {n}), Tensor::from_vector(yv, {n})}, outs);
    EXPECT_EQ(outs[0].to_vector<float>(), want) << threads << " threads";
    EXPECT_EQ(outs[1].to_vector<float>(), a) << threads << " threads";
  }
  interp::set_num_threads(0);
}

}  // namespace
}  // namespace evoxc::testing
