// The staging bench: a generation of new GP programs traced, lowered, compiled, loaded and run,
// timed per stage (the workload the architecture issue sets targets for).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>

#include "gp_population.h"

// Under valgrind (bench/staging_callgrind.sh) each stage of --per-op is dumped as its own
// callgrind profile; elsewhere the requests are no-ops.
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#else
#define CALLGRIND_ZERO_STATS
#define CALLGRIND_DUMP_STATS_AT(name) (void)(name)
#endif

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

struct Stages {
  double trace = 0, build = 0, run = 0, vmap = 0, vjp = 0;
  double merge = 0, merged_build = 0, merged_run = 0;  // batch_functions of the whole population
  double data_gen = 0, data_eval = 0, data_pred = 0;   // programs as data: pack + evaluate, evaluate, predictions
};

// The population as data (evoxc::gp): the bench trees' primitives, with their own protected log
// log(|x| + 1e-6), and one evaluator (MSE fitness) built once for every generation.
struct DataPath {
  int32_t code_of[10] = {};
  evoxc::gp::PrimitiveSet set = evoxc::bench::gp_primitive_set(code_of);
  evoxc::gp::Evaluator* evaluator = nullptr;  // MSE fitness
  evoxc::gp::Evaluator* predictor = nullptr;  // the predictions alone (no loss)
  // The trees packed into a Population, in prefix order as they are made.
  evoxc::gp::Population pack(const std::vector<evoxc::bench::GpTree>& pop, int vars) const {
    evoxc::gp::Population p(set, vars);
    for (const auto& t : pop) p.add_prefix(evoxc::bench::gp_nodes(t, code_of));
    return p;
  }
};

// One pass over the population: every stage of every program, timed per stage.
Stages generation(const std::vector<evoxc::bench::GpTree>& pop, int vars, int64_t cases,
                  const std::vector<evoxc::Tensor>& inputs, std::vector<evoxc::Tensor>& outs, int run_reps,
                  const DataPath& data, const evoxc::Tensor& x, const evoxc::Tensor& y) {
  using namespace evoxc;
  Stages s;
  // Programs as data first: a whole generation (pack + evaluate: fitness out), then evaluation alone.
  auto t0 = Clock::now();
  gp::Population packed = data.pack(pop, vars);
  (void)data.evaluator->evaluate(packed, x, y);
  s.data_gen = since(t0);
  t0 = Clock::now();
  for (int r = 0; r < run_reps; ++r) (void)data.evaluator->evaluate(packed, x, y);
  s.data_eval = since(t0) / run_reps;
  t0 = Clock::now();
  for (int r = 0; r < run_reps; ++r) (void)data.predictor->evaluate(packed, x);
  s.data_pred = since(t0) / run_reps;
  std::vector<Graph> graphs(pop.size());
  t0 = Clock::now();
  for (size_t i = 0; i < pop.size(); ++i) graphs[i] = bench::gp_trace(pop[i], vars, cases);
  s.trace = since(t0);
  // Transform staging: a vectorized and a reverse-mode graph of every program (not run).
  t0 = Clock::now();
  for (const Graph& g : graphs) (void)vectorize(g);
  s.vmap = since(t0);
  t0 = Clock::now();
  for (const Graph& g : graphs) (void)vjp(g);
  s.vjp = since(t0);
  // The population as one graph (inputs shared by every program), built and run once.
  t0 = Clock::now();
  BatchOptions bo;
  bo.axes = AxisTree();
  BatchResult merged = batch_functions(graphs, bo);
  s.merge = since(t0);
  t0 = Clock::now();
  Executable mexe = load(compile(lower(merged.graph)));
  s.merged_build = since(t0);
  std::vector<Tensor> mouts(1);
  mexe.execute(inputs, mouts);  // warm (allocates the output once)
  t0 = Clock::now();
  for (int r = 0; r < run_reps; ++r) mexe.execute(inputs, mouts);
  s.merged_run = since(t0) / run_reps;
  std::vector<Executable> exes(pop.size());
  t0 = Clock::now();
  for (size_t i = 0; i < pop.size(); ++i) exes[i] = load(compile(lower(graphs[i])));
  s.build = since(t0);
  for (auto& e : exes) e.execute(inputs, std::span<Tensor>(&outs[0], 1));  // warm
  t0 = Clock::now();
  for (int r = 0; r < run_reps; ++r)
    for (auto& e : exes) e.execute(inputs, std::span<Tensor>(&outs[0], 1));
  s.run = since(t0) / run_reps;
  return s;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

size_t count_ops(const evoxc::Block& b) {
  size_t n = 0;
  for (const auto& op : b.operations()) {
    ++n;
    for (const auto& r : op->regions()) n += count_ops(r->block());
  }
  return n;
}

// --per-op: the staging stages of the architecture issue one after another over the population,
// each repeated `reps` times, reported per op of the traced programs (every op counted, the
// returns included). Each stage's last repetition is a callgrind dump of its own.
void per_op(const std::vector<evoxc::bench::GpTree>& pop, int vars, int64_t cases, int reps) {
  using namespace evoxc;
  std::vector<Graph> graphs(pop.size());
  for (size_t i = 0; i < pop.size(); ++i) graphs[i] = bench::gp_trace(pop[i], vars, cases);
  size_t ops = 0;
  for (const Graph& g : graphs) ops += count_ops(g.main().entry());
  BatchOptions bo;
  bo.axes = AxisTree();
  struct Stage {
    const char* name;
    std::function<void()> fn;
  };
  std::vector<Graph> sink(pop.size());
  const Stage stages[] = {
      {"trace",
       [&] {
         for (size_t i = 0; i < pop.size(); ++i) sink[i] = bench::gp_trace(pop[i], vars, cases);
       }},
      {"clone",
       [&] {
         for (const Graph& g : graphs) (void)clone_module(g.module());
       }},
      {"verify",
       [&] {
         for (const Graph& g : graphs) verify(g);
       }},
      {"vectorize",
       [&] {
         for (const Graph& g : graphs) (void)vectorize(g);
       }},
      {"vjp",
       [&] {
         for (const Graph& g : graphs) (void)vjp(g);
       }},
      {"merge", [&] { (void)batch_functions(graphs, bo); }},
  };
  std::printf("%zu programs, %zu ops (median of %d)\n", pop.size(), ops, reps);
  for (const Stage& st : stages) {
    std::vector<double> t;
    for (int r = 0; r < reps; ++r) {
      if (r + 1 == reps) CALLGRIND_ZERO_STATS;
      auto t0 = Clock::now();
      st.fn();
      t.push_back(since(t0));
      if (r + 1 == reps) CALLGRIND_DUMP_STATS_AT(st.name);
    }
    const double s = median(t);
    std::printf("  %-10s %9.3f ms  %8.1f ns/op\n", st.name, s * 1e3, s * 1e9 / static_cast<double>(ops));
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace evoxc;
  int programs = 500, size = 17, vars = 2, reps = 5;
  int64_t cases = 1024;
  bool json = false;
  int merge_only = 0;       // repeat only trace + merge this many times (for a profiler)
  int transforms_only = 0;  // repeat only trace + vectorize + vjp this many times (for a profiler)
  int per_op_reps = 0;      // > 0: only the staging stages, per op (bench/staging_callgrind.sh)
  int data_only = 0;        // repeat only the programs-as-data generation this many times
  int compile_level = -1;   // >= 0: only the merged population compiled on mlir at this level, timed per stage
  std::string dump;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--quick") {
      reps = 3;
    } else if (a == "--json") {
      json = true;
    } else if (a == "--dump" && i + 1 < argc) {
      dump = argv[++i];
    } else if (a == "--data-only" && i + 1 < argc) {
      data_only = std::atoi(argv[++i]);
    } else if (a == "--per-op" && i + 1 < argc) {
      per_op_reps = std::atoi(argv[++i]);
    } else if (a == "--merge-only" && i + 1 < argc) {
      merge_only = std::atoi(argv[++i]);
    } else if (a == "--transforms-only" && i + 1 < argc) {
      transforms_only = std::atoi(argv[++i]);
    } else if (a == "--compile" && i + 1 < argc) {
      compile_level = std::atoi(argv[++i]);
    } else if (a == "--programs" && i + 1 < argc) {
      programs = std::atoi(argv[++i]);
    } else {
      std::fprintf(
          stderr,
          "usage: bench_staging [--quick] [--json] [--programs N] [--dump FILE] [--merge-only N] [--data-only N] "
          "[--compile LEVEL] [--transforms-only N] [--per-op N]\n");
      return 2;
    }
  }
  try {
    auto pop = bench::gp_population(20261201, programs, size, vars);
    // The population in prefix notation, one program a line, so bench/compare.py can time
    // numpy evaluating exactly these programs.
    if (!dump.empty()) {
      std::string text;
      static const char* kNames[] = {"v", "c", "add", "sub", "mul", "div", "sin", "cos", "tanh", "log"};
      char buf[64];
      for (const auto& t : pop) {
        for (const auto& n : t) {
          if (n.kind == bench::GpNode::Var) {
            std::snprintf(buf, sizeof buf, "v%d ", n.var);
          } else if (n.kind == bench::GpNode::Const) {
            std::snprintf(buf, sizeof buf, "c%.9g ", static_cast<double>(n.value));
          } else {
            std::snprintf(buf, sizeof buf, "%s ", kNames[n.kind]);
          }
          text += buf;
        }
        text += "\n";
      }
      write_file_atomic(dump, text);
    }
    if (per_op_reps > 0) {
      per_op(pop, vars, cases, per_op_reps);
      return 0;
    }
    if (data_only > 0) {  // only the programs-as-data generation, repeated (for a profiler)
      std::vector<float> xv(static_cast<size_t>(vars * cases)), yv(static_cast<size_t>(cases), 0.f);
      for (size_t k = 0; k < xv.size(); ++k) xv[k] = static_cast<float>(k % 1024) / 1024.f - 0.5f;
      Tensor xt = Tensor::from_vector(xv, {vars, cases}), yt = Tensor::from_vector(yv, {cases});
      DataPath data;
      gp::Evaluator ev(data.set, vars, gp::Loss::MSE);
      std::vector<double> gen;
      for (int r = 0; r < data_only; ++r) {
        auto t0 = Clock::now();
        gp::Population p = data.pack(pop, vars);
        (void)ev.evaluate(p, xt, yt);
        gen.push_back(since(t0));
      }
      std::printf("programs as data: %.3f ms a generation (median of %d)\n", median(gen) * 1e3, data_only);
      return 0;
    }
    if (compile_level >= 0) {  // the merged population compiled on mlir, its compile time per stage
      std::vector<Graph> graphs(pop.size());
      for (size_t i = 0; i < pop.size(); ++i) graphs[i] = bench::gp_trace(pop[i], vars, cases);
      BatchOptions bo;
      bo.axes = AxisTree();
      bo.switch_ops = SwitchOps::elementwise();
      bo.bands = Bands::autodetect();
      Graph merged = batch_functions(graphs, bo).graph;
      auto t0 = Clock::now();
      LoweredProgram low = lower(merged, "mlir");
      if (!dump.empty()) write_file_atomic(dump + ".mlir", low.text());  // the lowered module, for inspection
      double t_lower = since(t0);
      CompileOptions co;
      co.opt_level = OptLevel(compile_level);
      t0 = Clock::now();
      CompiledArtifact art = compile(low, co);
      double t_compile = since(t0);
      t0 = Clock::now();
      Executable exe = load(art);
      double t_load = since(t0);
      std::printf("mlir O%d, %zu programs: lower %.3f s, compile %.3f s (", compile_level, pop.size(), t_lower,
                  t_compile);
      for (const StageTime& st : art.stage_times()) std::printf(" %s %.3f", st.stage.c_str(), st.seconds);
      std::printf(" ), load %.3f s\n", t_load);
      std::vector<Tensor> in;
      for (int v = 0; v < vars; ++v) in.push_back(Tensor::full({cases}, 0.25 * (v + 1), f32));
      std::vector<Tensor> out(1);
      exe.execute(in, out);
      std::vector<double> rt;
      for (int r = 0; r < 50; ++r) {
        t0 = Clock::now();
        exe.execute(in, out);
        rt.push_back(since(t0));
      }
      std::printf("  run %.3f ms (median of 50)\n", median(rt) * 1e3);
      return 0;
    }
    if (transforms_only > 0) {  // only trace, vectorize and vjp, repeated (for a profiler)
      std::vector<double> tr, vm, vj;
      for (int r = 0; r < transforms_only; ++r) {
        std::vector<Graph> graphs(pop.size());
        auto t0 = Clock::now();
        for (size_t i = 0; i < pop.size(); ++i) graphs[i] = bench::gp_trace(pop[i], vars, cases);
        tr.push_back(since(t0));
        t0 = Clock::now();
        for (const Graph& g : graphs) (void)vectorize(g);
        vm.push_back(since(t0));
        t0 = Clock::now();
        for (const Graph& g : graphs) (void)vjp(g);
        vj.push_back(since(t0));
      }
      std::printf("per program: trace %.2f us, vectorize %.2f us, vjp %.2f us (median of %d)\n",
                  median(tr) * 1e6 / programs, median(vm) * 1e6 / programs, median(vj) * 1e6 / programs,
                  transforms_only);
      return 0;
    }
    if (merge_only > 0) {
      BatchOptions bo;
      bo.axes = AxisTree();
      std::vector<double> tr, me;
      for (int r = 0; r < merge_only; ++r) {
        std::vector<Graph> graphs(pop.size());
        auto t0 = Clock::now();
        for (size_t i = 0; i < pop.size(); ++i) graphs[i] = bench::gp_trace(pop[i], vars, cases);
        tr.push_back(since(t0));
        t0 = Clock::now();
        (void)batch_functions(graphs, bo);
        me.push_back(since(t0));
      }
      std::printf("trace %.2f ms, merge %.2f ms (median of %d)\n", median(tr) * 1e3, median(me) * 1e3, merge_only);
      return 0;
    }
    std::vector<Tensor> inputs;
    for (int v = 0; v < vars; ++v) {
      std::vector<float> x(static_cast<size_t>(cases));
      for (size_t k = 0; k < x.size(); ++k) x[k] = static_cast<float>(k) / static_cast<float>(cases) * (v + 1) - 0.5f;
      inputs.push_back(Tensor::from_vector(x, {cases}));
    }
    std::vector<Tensor> outs{Tensor::zeros({cases}, f32)};
    // Programs as data: x as (vars, cases), a target y = x0^2 + sin(x1), one evaluator for every generation.
    std::vector<float> xv, yv(static_cast<size_t>(cases));
    for (const Tensor& in : inputs) {
      std::vector<float> r = in.to_vector<float>();
      xv.insert(xv.end(), r.begin(), r.end());
    }
    for (size_t k = 0; k < yv.size(); ++k) yv[k] = xv[k] * xv[k] + std::sin(xv[yv.size() + k]);
    Tensor xt = Tensor::from_vector(xv, {vars, cases}), yt = Tensor::from_vector(yv, {cases});
    DataPath data;
    auto t_ev = Clock::now();
    gp::Evaluator ev(data.set, vars, gp::Loss::MSE);
    const double evaluator_ms = since(t_ev) * 1e3;
    gp::Evaluator pv(data.set, vars, gp::Loss::None);
    data.evaluator = &ev;
    data.predictor = &pv;
    // The median of `reps` generations per stage, so one noisy pass does not decide.
    std::vector<double> tr, bu, ru, vm, vj, me, mb, mr, dg, de, dp;
    for (int r = 0; r < reps; ++r) {
      Stages s = generation(pop, vars, cases, inputs, outs, 5, data, xt, yt);
      dg.push_back(s.data_gen);
      de.push_back(s.data_eval);
      dp.push_back(s.data_pred);
      tr.push_back(s.trace);
      bu.push_back(s.build);
      ru.push_back(s.run);
      vm.push_back(s.vmap);
      vj.push_back(s.vjp);
      me.push_back(s.merge);
      mb.push_back(s.merged_build);
      mr.push_back(s.merged_run);
    }
    double n = programs;
    double t = median(tr) / n * 1e6, b = median(bu) / n * 1e6, x = median(ru) / n * 1e6;
    double v = median(vm) / n * 1e6, g = median(vj) / n * 1e6;
    double merge_ms = median(me) * 1e3, mbuild_ms = median(mb) * 1e3, mrun_ms = median(mr) * 1e3;
    double nodes_per_s = static_cast<double>(size) * static_cast<double>(cases) / (x * 1e-6);
    double data_gen_ms = median(dg) * 1e3, data_eval_ms = median(de) * 1e3, data_pred_ms = median(dp) * 1e3;
    if (json) {
      std::printf(
          "{\"trace_us\": %.3f, \"build_us\": %.3f, \"run_us\": %.3f, \"node_evals_per_s\": %.4g, \"vmap_us\": %.3f, "
          "\"vjp_us\": %.3f, \"merge_ms\": %.3f, \"merged_build_ms\": %.3f, \"merged_run_ms\": %.3f, "
          "\"data_gen_ms\": %.4f, \"data_eval_ms\": %.4f, \"data_pred_ms\": %.4f, \"evaluator_build_ms\": %.3f}\n",
          t, b, x, nodes_per_s, v, g, merge_ms, mbuild_ms, mrun_ms, data_gen_ms, data_eval_ms, data_pred_ms,
          evaluator_ms);
    } else {
      std::printf("GP population: %d programs of %d nodes over %d inputs of %lld float32 cases (median of %d)\n",
                  programs, size, vars, static_cast<long long>(cases), reps);
      std::printf("  trace                   %8.2f us/program\n", t);
      std::printf("  lower+compile+load      %8.2f us/program\n", b);
      std::printf("  execute                 %8.2f us/program  (%.3g node-evaluations/s)\n", x, nodes_per_s);
      std::printf("  a new generation costs  %8.2f ms (trace + build + one run of every program)\n",
                  (t + b + x) * n / 1e3);
      std::printf("  vectorize (transform)   %8.2f us/program\n", v);
      std::printf("  vjp (transform)         %8.2f us/program\n", g);
      std::printf(
          "  batch_functions (merge) %8.2f ms for the population; merged build %.2f ms, run %.3f ms (%.3g "
          "node-evaluations/s)\n",
          merge_ms, mbuild_ms, mrun_ms, static_cast<double>(size) * static_cast<double>(cases) * n / (mrun_ms * 1e-3));
      std::printf("  a merged generation     %8.2f ms (trace + merge + build + one run of the merged graph)\n",
                  t * n / 1e3 + merge_ms + mbuild_ms + mrun_ms);
      std::printf(
          "  programs as data        %8.3f ms a generation (pack %d trees + evaluate: MSE fitness out), %.3f ms an "
          "evaluation, %.3f ms the predictions alone (%.3g node-evaluations/s); the evaluator was built once in "
          "%.1f ms\n",
          data_gen_ms, programs, data_eval_ms, data_pred_ms,
          static_cast<double>(size) * static_cast<double>(cases) * n / (data_eval_ms * 1e-3), evaluator_ms);
    }
  } catch (const Error& e) {
    std::fprintf(stderr, "bench_staging: %s\n", e.what());
    return 1;
  }
  return 0;
}
