// batch_functions: N programs with one signature merged into one graph with a leading, static function axis.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "evoxc/ir/graph.h"
#include "evoxc/ops/op_def.h"
#include "evoxc/trace/trace.h"
#include "evoxc/transforms/transforms.h"

namespace evoxc {

// Which same-position op differences merge into one switch class (an evoxc.row_switch op that
// computes each row with its own variant only). Off by default; `elementwise()` is the seed's
// switch_ops=True: the ElementwiseUnary, ElementwiseBinary and Comparison categories. Ops with
// attributes never switch.
struct SwitchOps {
  std::vector<OpCategory> categories;
  std::vector<std::string> op_names;
  bool enabled() const { return !categories.empty() || !op_names.empty(); }
  static SwitchOps none() { return {}; }
  static SwitchOps elementwise() {
    return {{OpCategory::ElementwiseUnary, OpCategory::ElementwiseBinary, OpCategory::Comparison}, {}};
  }
  bool allows(const OpDef& op) const;
};

// bands: None (one flat function axis), K contiguous bands merged independently (outputs
// concatenated in program order), or automatic: programs grouped by structural fingerprint (the
// sequence of their ops), each group merged on its own, rows put back in program order — chosen
// only when the cost model estimates it faster than the flat merge.
struct Bands {
  int64_t count = 0;  // 0: none (flat)
  bool automatic = false;
  static Bands none() { return {}; }
  static Bands of(int64_t k) { return {k, false}; }
  static Bands autodetect() { return {0, true}; }
};

// The static cost model of bands="auto": estimated seconds = dispatches * dispatch_seconds +
// elements produced * element_seconds. The defaults are the interpreter's, measured by
// `bench/calibrate_batch.py` (a graph of many tiny ops for the dispatch cost, one of few large
// elementwise ops for the element cost); another backend passes its own.
struct BatchCostModel {
  double dispatch_seconds = 18e-9;
  double element_seconds = 0.36e-9;
};

// How ops of different programs are paired.
//  Variant (the default): every program offers all its ready ops (operands computed) at each
//    step; ops equal across programs pair first, whatever their position, so sibling branches
//    written in another order per program collapse (the same op joins the class already holding
//    that variant); with switch_ops, the ready ops left unpaired then pair by arity into switch
//    classes. Unpaired ops wait while other programs still pair, so a program can catch up.
//  Occurrence: lock step in program order: the k-th step pairs each program's next op; the
//    merged graph depends only on the op sequences (byte-stable).
//  Auto: both, keeping whichever the cost model estimates faster (ties go to Variant).
enum class Alignment : uint8_t { Variant, Occurrence, Auto };
const char* alignment_name(Alignment a);

struct BatchOptions {
  // Per input leaf (prefix tree of the programs' input tree): 0 = mapped (each program gets its
  // own row of a (N, ...) input), None = shared by every program.
  AxisTree axes = AxisTree(0);
  // Per output leaf: 0 = the outputs stacked on a leading function axis; None = an output every
  // program computes identically, returned once (TransformError when programs differ there).
  AxisTree out_axes = AxisTree(0);
  SwitchOps switch_ops;
  Bands bands;
  Alignment alignment = Alignment::Variant;
  BatchCostModel cost_model;
};

// One switch class: its variants (op names) and, per variant, the rows (program indices) using it.
struct SwitchRecord {
  std::vector<std::string> variants;
  std::vector<std::vector<int64_t>> rows;
};

// What the merge did: transform metadata (not part of the graph, not saved with it).
struct BatchReport {
  int64_t programs = 0;
  int64_t value_classes = 0;   // batched values created by collapsed ops (one row per program in the group)
  int64_t shared_classes = 0;  // ops emitted once for every program (all operands shared)
  int64_t own_ops = 0;         // ops emitted for a single program (no other program had a matching op)
  std::vector<SwitchRecord> switched;
  int64_t muxes = 0;         // operand assemblies from several classes (slices + concatenate)
  int64_t output_muxes = 0;  // the part of `muxes` at the outputs
  int64_t program_ops = 0;   // ops of all programs together (excluding returns)
  int64_t emitted_ops = 0;   // ops of the merged graph (excluding the return)
  int64_t bands = 1;
  std::vector<int64_t> band_sizes;
  std::string alignment = "variant";  // the alignment used ("variant" or "occurrence")
  // The static cost model: elements produced by every op (work) and ops dispatched, for the
  // merged graph and for the programs run one by one.
  struct Cost {
    double work = 0;
    int64_t dispatches = 0;
  };
  Cost cost_estimate;
  Cost separate_cost;
  std::string to_string() const;
};

struct BatchResult {
  Graph graph;
  BatchReport report;
};

// Merges `programs` (non-empty; equal input and output trees and specs, TransformError naming
// the first differing program and path) into one graph: row i of every mapped output is program
// i's output, bit for bit as if it ran alone on the interpreter. Programs are aligned step by step
// (see Alignment): a group of programs whose ops match (same op, attributes, operand and result
// types; with switch_ops, any allowed variant) is emitted as one op over a leading axis of the
// group's rows, built with the vmap batching rules (an op of a group without a batching rule is a
// TransformError naming the op and the program); an op no other program matches is emitted for
// its program alone; operands coming from different groups are assembled with slices and a
// concatenate. full/constant ops differing only in their values stack into one (rows, ...)
// constant.
BatchResult batch_functions(const std::vector<Graph>& programs, const BatchOptions& options = {});

// Over traceable functions: called with the MAPPED trace arguments (mapped specs carry the function
// axis first, of extent fns.size()), it traces every function on the specs without that axis and
// merges them: batch_functions(fns, o)(args) = batch_functions({trace_dynamic(f, stripped args)...}, o).
using BatchFunction = std::function<BatchResult(const std::vector<TraceArg>& args)>;
BatchFunction batch_functions(std::vector<TraceFunction> fns, BatchOptions options = {});

}  // namespace evoxc
