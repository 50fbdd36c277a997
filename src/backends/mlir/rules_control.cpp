// mlir lowering rules: control flow (cond -> scf.if / scf.index_switch, while_loop -> scf.while, scan -> scf.while
// over its steps with extract_slice/insert_slice) and row_switch (each run of rows lowered by its variant's own rule).
//
// Regions are written inline: scf regions are not isolated from above, so a value the EvoXIR region captures
// is read directly under the name the enclosing block gave it (Emitter::lower_block finds it in its map).
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "backends/mlir/emitter.h"
#include "evoxc/ops/op_def.h"
#include "evoxc/ops/row_switch.h"

namespace evoxc::mlir_backend {
namespace {

std::vector<TensorType> result_types(const Operation& op) {
  std::vector<TensorType> ts;
  for (const auto& r : op.results()) ts.push_back(r->type());
  return ts;
}

std::string join_types(std::span<const TensorType> ts) {
  std::string s;
  for (size_t i = 0; i < ts.size(); ++i) s += (i ? ", " : "") + tensor_type(ts[i]);
  return s;
}

std::string join_names(std::span<const Val> vs) {
  std::string s;
  for (size_t i = 0; i < vs.size(); ++i) s += (i ? ", " : "") + vs[i].name;
  return s;
}

// The head of an op with `n` results ("%v3:2 = ", "%v3 = ", or nothing) and the values it names.
struct Results {
  std::string head;
  std::vector<Val> vals;
};
Results name_results(Emitter& e, std::span<const TensorType> types) {
  Results r;
  if (types.empty()) return r;
  std::string base = e.fresh();
  r.head = base + (types.size() > 1 ? ":" + std::to_string(types.size()) : "") + " = ";
  for (size_t i = 0; i < types.size(); ++i)
    r.vals.push_back({types.size() > 1 ? base + "#" + std::to_string(i) : base, types[i]});
  return r;
}

// `scf.yield` of a region's values (types written out so a yielded captured value needs no lookup).
void yield(Emitter& e, std::span<const Val> vs) {
  std::vector<TensorType> ts;
  for (const Val& v : vs) ts.push_back(v.type);
  e.line(vs.empty() ? std::string("scf.yield") : "scf.yield " + join_names(vs) + " : " + join_types(ts));
}

// The element of a rank-0 tensor as a scalar SSA name.
std::string extract_scalar(Emitter& e, const Val& v) {
  return e.assign("tensor.extract " + v.name + "[] : " + tensor_type(v.type));
}

// Axis `a` of `v` as a slice size: the literal when static, else `tensor.dim` (which is what the
// tensor type's `?` is at run time).
std::string size_of_axis(Emitter& e, const Val& v, size_t a) {
  if (auto c = v.type.shape[a].as_const()) return std::to_string(*c);
  return e.assign("tensor.dim " + v.name + ", " + e.index_constant(static_cast<int64_t>(a)) + " : " +
                  tensor_type(v.type));
}

// "[o0, 0, 0][s0, s1, s2][1, 1, 1]": a slice along the leading axis from `offset` of `lead` rows,
// the other axes whole with `sizes`.
std::string slice_spec(const std::string& offset, const std::string& lead, std::span<const std::string> sizes) {
  std::string offs = offset, szs = lead, strides = "1";
  for (const std::string& s : sizes) {
    offs += ", 0";
    szs += ", " + s;
    strides += ", 1";
  }
  return "[" + offs + "][" + szs + "][" + strides + "]";
}

// ---- loops ----
//
// The pipeline's one-shot bufferization keeps every loop-carried tensor in one buffer for the whole loop: a
// value a loop region yields must bufferize to its iteration argument's buffer ("Yield operand #i is not
// equivalent to the corresponding iter bbArg" otherwise; `allow-return-allocs-from-loops` would lift that).
// So the carried buffers are the loop's own: each initial value is copied into a fresh one before the loop
// (the loop then never writes into the caller's inputs or a value still read after it), and each step's new
// value is copied into its iteration argument's buffer at the end of the step.

// A fresh buffer holding `v`'s value.
Val fresh_copy(Emitter& e, const Val& v) {
  return {e.assign("bufferization.alloc_tensor() copy(" + v.name + ") : " + tensor_type(v.type)), v.type};
}

std::vector<Val> loop_inits(Emitter& e, std::span<const Val> vs) {
  std::vector<Val> out;
  for (const Val& v : vs) out.push_back(fresh_copy(e, v));
  return out;
}

// The step's new carry `next` written into the iteration arguments `args`' buffers. A new value may share a
// buffer with another argument (a swapped carry, a view of one): every value that is not its own argument
// unchanged is first copied out, so no argument is overwritten while another value still reads it.
std::vector<Val> carry_into(Emitter& e, std::span<const Val> args, std::span<const Val> next) {
  std::vector<Val> staged(next.begin(), next.end());
  for (size_t i = 0; i < next.size(); ++i)
    if (next[i].name != args[i].name) staged[i] = fresh_copy(e, next[i]);
  std::vector<Val> out;
  for (size_t i = 0; i < next.size(); ++i) {
    if (next[i].name == args[i].name) {
      out.push_back(args[i]);
      continue;
    }
    std::string t = tensor_type(args[i].type);
    out.push_back({e.assign("bufferization.materialize_in_destination " + staged[i].name + " in " + args[i].name +
                            " : (" + t + ", " + t + ") -> " + t),
                   args[i].type});
  }
  return out;
}

// ---- cond ----

// Every region takes the operands after the predicate as its block arguments; only the selected
// region runs. A bool predicate is scf.if; an index is clamped into [0, N-1] (docs/semantics.md),
// in its own width so a huge int64 never wraps, and picks a case of scf.index_switch (the last
// region is the default, which the clamp makes exactly index N-1).
std::vector<Val> cond_rule(Emitter& e, const Operation& op, std::span<const Val> in) {
  std::vector<Val> args(in.begin() + 1, in.begin() + static_cast<std::ptrdiff_t>(op.num_operands()));
  std::vector<TensorType> types = result_types(op);
  std::string arrow = types.empty() ? "" : " -> (" + join_types(types) + ")";
  auto region = [&](size_t r) { e.indent([&] { yield(e, e.lower_block(op.region(r).block(), args)); }); };
  const Val& pred = in[0];
  std::string p = extract_scalar(e, pred);
  if (pred.type.dtype == DType::Bool) {
    Results res = name_results(e, types);
    e.line(res.head + "scf.if " + p + arrow + " {");
    region(0);
    e.line("} else {");
    region(1);
    e.line("}");
    return res.vals;
  }
  size_t n = op.regions().size();
  std::string ty = element_type(pred.type.dtype);
  std::string lo = e.assign("arith.constant 0 : " + ty);
  std::string hi = e.assign("arith.constant " + std::to_string(n - 1) + " : " + ty);
  std::string clamped =
      e.assign("arith.minsi " + e.assign("arith.maxsi " + p + ", " + lo + " : " + ty) + ", " + hi + " : " + ty);
  std::string idx = e.assign("arith.index_cast " + clamped + " : " + ty + " to index");
  Results res = name_results(e, types);
  e.line(res.head + "scf.index_switch " + idx + (types.empty() ? "" : " -> " + join_types(types)));
  for (size_t r = 0; r + 1 < n; ++r) {
    e.line("case " + std::to_string(r) + " {");
    region(r);
    e.line("}");
  }
  e.line("default {");
  region(n - 1);
  e.line("}");
  return res.vals;
}

// ---- run limits ----

// The run-limit tick of loop `op` before a body iteration (backends/mlir/loop_budget.h), an i1: the op and
// its location as a string constant of the module, for the RunLimitError's message.
std::string loop_tick(Emitter& e, const Operation& op) {
  std::string where = "evoxc." + op.name() + " at " + op.location().to_string();
  std::string text;
  for (unsigned char ch : where) {
    if (std::isalnum(ch) || std::strchr(" .:_-/<>()[],", ch)) {
      text += static_cast<char>(ch);
    } else {
      static const char* hex = "0123456789ABCDEF";
      text += '\\';
      text += hex[ch >> 4];
      text += hex[ch & 15];
    }
  }
  std::string global = e.fresh("@evoxc_loop_");
  e.declare("llvm.mlir.global internal constant " + global + "(\"" + text + "\\00\") : !llvm.array<" +
            std::to_string(where.size() + 1) + " x i8>");
  e.declare("func.func private @evoxc_loop_tick(!llvm.ptr) -> i1");
  std::string ptr = e.assign("llvm.mlir.addressof " + global + " : !llvm.ptr");
  return e.assign("func.call @evoxc_loop_tick(" + ptr + ") : (!llvm.ptr) -> i1");
}

// Whether loop `op` runs one more body iteration, an i1: `more` (its own test) and then the run's limits,
// ticked only when `more` holds, so the count is the body's iterations, as on the interpreter.
std::string go_on(Emitter& e, const Operation& op, const std::string& more) {
  std::string go = e.fresh();
  e.line(go + " = scf.if " + more + " -> (i1) {");
  e.indent([&] { e.line("scf.yield " + loop_tick(e, op) + " : i1"); });
  e.line("} else {");
  e.indent([&] { e.line("scf.yield " + e.assign("arith.constant false") + " : i1"); });
  e.line("}");
  return go;
}

// ---- while_loop ----

// scf.while evaluates its `before` region (EvoXIR's cond) on the carry before every step, so zero
// steps give the initial carry, as evoxc's loop does.
std::vector<Val> while_rule(Emitter& e, const Operation& op, std::span<const Val> in) {
  std::vector<TensorType> carry = result_types(op);
  std::vector<Val> init = loop_inits(e, in.subspan(0, carry.size()));
  std::vector<Val> before, after;
  std::string inits, block;
  for (size_t i = 0; i < carry.size(); ++i) {
    before.push_back({e.fresh("%w"), carry[i]});
    after.push_back({e.fresh("%w"), carry[i]});
    inits += (i ? ", " : "") + before[i].name + " = " + init[i].name;
    block += (i ? ", " : "") + after[i].name + ": " + tensor_type(carry[i]);
  }
  std::string types = join_types(carry);
  Results res = name_results(e, carry);
  e.line(res.head + "scf.while (" + inits + ") : (" + types + ") -> (" + types + ") {");
  e.indent([&] {
    std::vector<Val> p = e.lower_block(op.region(0).block(), before);
    std::string go = go_on(e, op, extract_scalar(e, p[0]));
    e.line("scf.condition(" + go + ") " + join_names(before) + " : " + types);
  });
  e.line("} do {");
  e.line("^bb0(" + block + "):");
  e.indent([&] { yield(e, carry_into(e, after, e.lower_block(op.region(1).block(), after))); });
  e.line("}");
  return res.vals;
}

// ---- scan ----

// scan: an scf.while over t in [0, length) carrying (t, carry..., ys...); step t reads row t (length-1-t
// when reversed) of each xs with a rank-reducing extract_slice and writes each y into the same row of
// its stacked result with insert_slice, so the rows are exactly the interpreter's. A zero-length
// scan runs no step: the carry comes back and every ys is empty.
std::vector<Val> scan_rule(Emitter& e, const Operation& op, std::span<const Val> in) {
  auto num_carry = static_cast<size_t>(attr_int(op.attributes(), "num_carry", "scan"));
  bool reverse = op.attributes().count("reverse") && attr_bool(op.attributes(), "reverse", "scan");
  std::vector<TensorType> results = result_types(op);
  size_t num_ys = results.size() - num_carry;
  std::vector<Val> xs(in.begin() + static_cast<std::ptrdiff_t>(num_carry),
                      in.begin() + static_cast<std::ptrdiff_t>(op.num_operands()));
  const Block& body = op.region(0).block();

  // The trip count: the `length` attribute, else the first xs's leading extent (read off the
  // tensor, which is what a symbolic extent is at run time). A given length and a symbolic xs extent
  // are not checked against each other here: at the top level the executable's per-call checks (the
  // interpreter's) raise a ValidationError first; inside a region the loop stops at the shortest xs,
  // so a mismatch never reads past an xs (the rows of the ys it does not reach are left unwritten).
  std::string length;
  bool zero = false;
  if (op.attributes().count("length")) {
    int64_t n = attr_int(op.attributes(), "length", "scan");
    zero = n == 0;
    length = e.index_constant(n);
    for (const Val& x : xs)
      if (!x.type.shape[0].is_const())
        length = e.assign("arith.minsi " + length + ", " + size_of_axis(e, x, 0) + " : index");
  } else {
    if (xs.empty()) Emitter::fail(op, "a scan without xs needs a 'length' attribute");
    auto c = xs[0].type.shape[0].as_const();
    zero = c && *c == 0;
    length = c ? e.index_constant(*c) : size_of_axis(e, xs[0], 0);
  }

  std::vector<Val> carry(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(num_carry));
  std::vector<Val> init;
  for (size_t j = 0; j < num_ys; ++j) init.push_back(e.empty(results[num_carry + j]));
  // A statically empty scan: no loop, so no slice of a zero-row tensor is written at all.
  if (zero || results.empty()) {
    carry.insert(carry.end(), init.begin(), init.end());
    return carry;
  }
  // The ys start as fresh tensor.empty buffers (every row gets written), the carry as copies.
  std::vector<Val> copies = loop_inits(e, carry);
  init.insert(init.begin(), copies.begin(), copies.end());

  // An scf.while carrying the step index with the state: it steps while t < length and the run's limits
  // allow one more iteration (ticked only then, as on the interpreter), so a limit stops a long scan at
  // once; an scf.for could only skip its remaining steps.
  std::vector<Val> state, after;
  std::string zero_idx = e.index_constant(0), one_idx = e.index_constant(1);
  std::string t0 = e.fresh("%t"), t = e.fresh("%t");
  std::string inits = t0 + " = " + zero_idx, block = t + ": index";
  for (size_t i = 0; i < init.size(); ++i) {
    state.push_back({e.fresh("%it"), init[i].type});
    after.push_back({e.fresh("%it"), init[i].type});
    inits += ", " + state[i].name + " = " + init[i].name;
    block += ", " + after[i].name + ": " + tensor_type(init[i].type);
  }
  std::string types = "index, " + join_types(results);
  std::string all = e.fresh();
  e.line(all + ":" + std::to_string(results.size() + 1) + " = scf.while (" + inits + ") : (" + types + ") -> (" +
         types + ") {");
  e.indent([&] {
    std::string go = go_on(e, op, e.assign("arith.cmpi slt, " + t0 + ", " + length + " : index"));
    e.line("scf.condition(" + go + ") " + t0 + ", " + join_names(state) + " : " + types);
  });
  e.line("} do {");
  e.line("^bb0(" + block + "):");
  e.indent([&] {
    std::string row = t;
    if (reverse)
      row = e.assign("arith.subi " + e.assign("arith.subi " + length + ", " + one_idx + " : index") + ", " + t +
                     " : index");
    std::vector<Val> args(after.begin(), after.begin() + static_cast<std::ptrdiff_t>(num_carry));
    for (size_t k = 0; k < xs.size(); ++k) {
      const Val& x = xs[k];
      // The row's type is the region's argument type; its sizes are literal where that is static.
      const TensorType& item = body.argument(num_carry + k)->type();
      std::vector<std::string> sizes;
      for (size_t a = 1; a < x.type.shape.rank(); ++a) {
        auto c = item.shape[a - 1].as_const();
        sizes.push_back(c ? std::to_string(*c) : size_of_axis(e, x, a));
      }
      args.push_back({e.assign("tensor.extract_slice " + x.name + slice_spec(row, "1", sizes) + " : " +
                               tensor_type(x.type) + " to " + tensor_type(item)),
                      item});
    }
    std::vector<Val> outs = e.lower_block(body, args);
    // The ys rows first: a y may be the old carry, whose buffer carry_into then overwrites.
    std::vector<Val> rows;
    for (size_t j = 0; j < num_ys; ++j) {
      const Val& y = outs[num_carry + j];
      const Val& ys = after[num_carry + j];
      std::vector<std::string> sizes;
      for (size_t a = 0; a < y.type.shape.rank(); ++a) sizes.push_back(size_of_axis(e, y, a));
      rows.push_back({e.assign("tensor.insert_slice " + y.name + " into " + ys.name + slice_spec(row, "1", sizes) +
                               " : " + tensor_type(y.type) + " into " + tensor_type(ys.type)),
                      ys.type});
    }
    std::vector<Val> next = carry_into(e, std::span<const Val>(after).subspan(0, num_carry),
                                       std::span<const Val>(outs).subspan(0, num_carry));
    next.insert(next.end(), rows.begin(), rows.end());
    std::string t1 = e.assign("arith.addi " + t + ", " + one_idx + " : index");
    std::vector<TensorType> ts;
    for (const Val& v : next) ts.push_back(v.type);
    e.line("scf.yield " + t1 + ", " + join_names(next) + " : index, " + join_types(ts));
  });
  e.line("}");
  std::vector<Val> out;
  for (size_t i = 0; i < results.size(); ++i) out.push_back({all + "#" + std::to_string(i + 1), results[i]});
  return out;
}

// ---- row_switch ----
//
// Each maximal run of consecutive rows with one variant is that variant's own rule on the run's rows (per-row
// operands sliced to the run, shared ones whole), written into its rows of the result: only the row's variant
// is computed for it, bit-identical to the variant alone (docs/semantics.md). Few runs are written out one by
// one (static shapes: each a loop nest the compiler sees whole); many runs (a merged population whose rows
// alternate variants) would make the module, and its compile time, grow with the runs, so they become one
// scf.for over a constant table of runs with an scf.index_switch on the variant: the module grows with the
// variants used, and each run costs one loop nest writing straight into its rows of the result.
//
// A merged population is a chain of such ops (one per position of the programs). Consecutive many-run
// row_switch ops of one block over the same rows loop over one shared partition (the common refinement of
// their runs) and mark their loops with one `evoxc.row_runs` group: iteration k of each then reads, of the
// group's earlier results, only the rows iteration k of those wrote, so codegen can run the whole group in
// blocks of the partition on the pool, each block running every member over its rows (RowRuns in
// codegen/compile_mlir.cpp).

constexpr size_t kMaxUnrolledRuns = 8;

struct Run {
  int64_t start, count, variant;
};

std::vector<Run> runs_of(const std::vector<int64_t>& rows) {
  std::vector<Run> runs;
  for (size_t r0 = 0; r0 < rows.size();) {
    size_t r1 = r0 + 1;
    while (r1 < rows.size() && rows[r1] == rows[r0]) ++r1;
    runs.push_back({static_cast<int64_t>(r0), static_cast<int64_t>(r1 - r0), rows[r0]});
    r0 = r1;
  }
  return runs;
}

// The loop of a group of consecutive many-run row_switch ops: the rows' shared partition (the common
// refinement of the members' runs; `variant` unused) and the group's name.
struct RowGroup {
  std::vector<Run> segments;
  std::string name;
};

bool is_row_switch(const Operation& op) {
  static const OpInfo& row_switch = get_op("row_switch");
  return &op.info() == &row_switch;
}

const std::vector<int64_t>& rows_attr(const Operation& op) { return attr_ints(op.attributes(), "rows", "row_switch"); }

// The group `op` belongs to, worked out at its first member (ops are lowered in block order). A member
// takes none of the group's earlier results whole (a lower-rank operand is read whole, not by rows).
const RowGroup& row_group(Emitter& e, const Operation& op) {
  if (const auto* g = e.recall<RowGroup>(&op)) return *g;
  std::vector<const Operation*> members{&op};
  std::vector<int64_t> starts;  // of every member's runs
  for (const Run& r : runs_of(rows_attr(op))) starts.push_back(r.start);
  size_t n = rows_attr(op).size();
  if (const Block* b = op.parent_block()) {
    const auto& ops = b->operations();
    // Each op's position in its block, worked out once per block (a block can hold many groups).
    using Positions = std::unordered_map<const Operation*, size_t>;
    const Positions* pos = e.recall<Positions>(b);
    if (!pos) {
      auto p = std::make_shared<Positions>();
      for (size_t i = 0; i < ops.size(); ++i) (*p)[ops[i].get()] = i;
      pos = e.remember<Positions>(b, p);
    }
    std::vector<const Value*> results{op.result(0)};
    for (auto it = ops.begin() + static_cast<std::ptrdiff_t>(pos->at(&op)) + 1; it != ops.end(); ++it) {
      const Operation& next = **it;
      if (!is_row_switch(next) || rows_attr(next).size() != n) break;
      std::vector<Run> runs = runs_of(rows_attr(next));
      size_t rank = next.result(0)->type().shape.rank();
      bool whole = std::any_of(next.operands().begin(), next.operands().end(), [&](const Value* v) {
        return v->type().shape.rank() != rank && std::find(results.begin(), results.end(), v) != results.end();
      });
      if (runs.size() <= kMaxUnrolledRuns || whole) break;
      members.push_back(&next);
      results.push_back(next.result(0));
      for (const Run& r : runs) starts.push_back(r.start);
    }
  }
  std::sort(starts.begin(), starts.end());
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  auto group = std::make_shared<RowGroup>();
  for (size_t i = 0; i < starts.size(); ++i)
    group->segments.push_back(
        {starts[i], (i + 1 < starts.size() ? starts[i + 1] : static_cast<int64_t>(n)) - starts[i], 0});
  group->name = e.fresh("row_runs");
  for (const Operation* m : members) e.remember<RowGroup>(m, group);
  return *group;
}

// Rows [start, start + count) of a per-row operand (the other axes whole), with `lead` its leading extent.
Val rows_of(Emitter& e, const Val& v, const std::string& start, const std::string& count, const DimExpr& lead) {
  std::vector<std::string> sizes;
  Shape s{lead};
  for (size_t a = 1; a < v.type.shape.rank(); ++a) {
    sizes.push_back(size_of_axis(e, v, a));
    s.dims().push_back(v.type.shape[a]);
  }
  TensorType part(v.type.dtype, s);
  return {e.assign("tensor.extract_slice " + v.name + slice_spec(start, count, sizes) + " : " + tensor_type(v.type) +
                   " to " + tensor_type(part)),
          part};
}

// `part` written into rows [start, start + count) of `acc`.
Val insert_rows(Emitter& e, const Val& part, const Val& acc, const std::string& start, const std::string& count) {
  std::vector<std::string> sizes;
  for (size_t a = 1; a < part.type.shape.rank(); ++a) sizes.push_back(size_of_axis(e, part, a));
  return {e.assign("tensor.insert_slice " + part.name + " into " + acc.name + slice_spec(start, count, sizes) + " : " +
                   tensor_type(part.type) + " into " + tensor_type(acc.type)),
          acc.type};
}

// The variant op alone on `args`: a detached block holding it, lowered by the table as any op is.
Val lower_variant(Emitter& e, const Operation& op, const OpDef& def, std::span<const Val> args) {
  std::vector<TensorType> types;
  for (const Val& a : args) types.push_back(a.type);
  Block b;
  std::vector<Value*> vals;
  for (const TensorType& ty : types) vals.push_back(b.add_argument(ty));
  Operation* v = b.append(def, vals, infer_result_types(def, types, {}), {}, op.location());
  b.append(get_op("return"), {v->result(0)}, {});
  return e.lower_block(b, args).front();
}

std::vector<Val> row_switch_rule(Emitter& e, const Operation& op, std::span<const Val> in) {
  std::vector<const OpDef*> variants = row_switch_variants(op.attributes());
  std::vector<Run> runs = runs_of(attr_ints(op.attributes(), "rows", "row_switch"));
  const TensorType& rt = op.result(0)->type();
  size_t rank = rt.shape.rank();
  auto per_row = [&](const Val& v) { return v.type.shape.rank() == rank; };
  Val acc = e.empty(rt);
  if (runs.size() <= kMaxUnrolledRuns) {
    for (const Run& run : runs) {
      std::string start = std::to_string(run.start), count = std::to_string(run.count);
      std::vector<Val> args;
      for (const Val& v : in) args.push_back(per_row(v) ? rows_of(e, v, start, count, DimExpr(run.count)) : v);
      Val part = lower_variant(e, op, *variants[static_cast<size_t>(run.variant)], args);
      acc = insert_rows(e, part, acc, start, count);
    }
    return {acc};
  }

  // The table of the group's segments as int64 constants (start, count, variant), read per step.
  const RowGroup& group = row_group(e, op);
  const std::vector<int64_t>& rows = rows_attr(op);
  std::vector<Run> segments = group.segments;
  for (Run& s : segments) s.variant = rows[static_cast<size_t>(s.start)];
  auto table = [&](auto field) {
    std::vector<int64_t> v;
    for (const Run& s : segments) v.push_back(field(s));
    return e.constant(Tensor::from_vector<int64_t>(v, {static_cast<int64_t>(v.size())}));
  };
  Val starts = table([](const Run& r) { return r.start; });
  Val counts = table([](const Run& r) { return r.count; });
  Val which = table([](const Run& r) { return r.variant; });
  std::vector<int64_t> used;
  for (const Run& s : segments)
    if (std::find(used.begin(), used.end(), s.variant) == used.end()) used.push_back(s.variant);
  std::sort(used.begin(), used.end());

  std::string zero = e.index_constant(0), one = e.index_constant(1);
  std::string n = e.index_constant(static_cast<int64_t>(segments.size()));
  std::string k = e.fresh("%k"), it = e.fresh("%it");
  std::string result = e.fresh();
  e.line(result + " = scf.for " + k + " = " + zero + " to " + n + " step " + one + " iter_args(" + it + " = " +
         acc.name + ") -> (" + tensor_type(rt) + ") {");
  e.indent([&] {
    auto read = [&](const Val& t) {
      std::string x = e.assign("tensor.extract " + t.name + "[" + k + "] : " + tensor_type(t.type));
      return e.assign("arith.index_cast " + x + " : i64 to index");
    };
    std::string start = read(starts), count = read(counts), variant = read(which);
    // The run's row count is a fresh symbol read off its first per-row slice, so the variants' rules
    // see (and size their results by) an extent like any symbolic one.
    DimExpr lead = DimExpr::symbol(e.fresh("row_switch_run").substr(1));
    std::vector<Val> args;
    bool bound = false;
    for (const Val& v : in) {
      if (!per_row(v)) {
        args.push_back(v);
        continue;
      }
      args.push_back(rows_of(e, v, start, count, lead));
      if (!bound) e.bind_symbol(lead.name(), args.back(), 0);
      bound = true;
    }
    // Each case writes its rows into the result itself: the variant's result then lands in place
    // (empty-tensor elimination turns its init into a slice of the result) instead of in a fresh
    // buffer copied after the switch.
    std::string next = e.fresh();
    e.line(next + " = scf.index_switch " + variant + " -> " + tensor_type(rt));
    for (size_t c = 0; c < used.size(); ++c) {
      e.line(c + 1 < used.size() ? "case " + std::to_string(used[c]) + " {" : std::string("default {"));
      e.indent([&] {
        Val y = lower_variant(e, op, *variants[static_cast<size_t>(used[c])], args);
        Val written = insert_rows(e, y, {it, rt}, start, count);
        yield(e, {&written, 1});
      });
      e.line("}");
    }
    Val out{next, rt};
    yield(e, {&out, 1});
  });
  e.line("} {evoxc.row_runs = \"" + group.name + "\"}");
  return {{result, rt}};
}

// postfix_eval: one call into the interpreter's PostfixEngine (postfix_runtime.cpp), so a population of programs
// as data evaluates with the same kernels, bit for bit, and compiles in constant time whatever its programs. The
// operands go as rank-2 buffers (x and the result with their case dims collapsed); the primitive table is a
// NUL-terminated byte global, and a second global caches the engine built for it on the first call. Both are
// named by the table's hash and the dtype, so ops sharing a table share them. Errors (bad codes) go to the
// call's error sink and raise when the program returns.
std::vector<Val> postfix_rule(Emitter& e, const Operation& op, std::span<const Val> in) {
  const std::string& prims = attr_string(op.attributes(), "primitives", "postfix_eval");
  const Val& x = in[3];
  const DType t = x.type.dtype;
  const std::string el = element_type(t);
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : prims) h = (h ^ c) * 1099511628211ULL;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  const std::string id = el + "_" + std::to_string(static_cast<int>(t)) + "_" + hex;
  const std::string text = "@evoxc_postfix_text_" + id, slot = "@evoxc_postfix_slot_" + id;
  const std::string n = std::to_string(prims.size() + 1);
  std::string bytes;
  for (char c : prims) bytes += std::to_string(static_cast<int>(static_cast<signed char>(c))) + ", ";
  e.declare("memref.global \"private\" constant " + text + " : memref<" + n + "xi8> = dense<[" + bytes + "0]>");
  e.declare("memref.global \"private\" " + slot + " : memref<1xi64> = dense<0>");
  const std::string fn = "@evoxc_postfix_eval_" + el;
  const std::string iview = "memref<?x?xi32, strided<[?, ?], offset: ?>>",
                    view = "memref<?x?x" + el + ", strided<[?, ?], offset: ?>>", buf = "memref<?x?x" + el + ">",
                    params = "(" + iview + ", " + iview + ", " + view + ", " + view + ", " + buf +
                             ", memref<?xi8>, memref<1xi64>, i32, !llvm.ptr)",
                    sig = params + " -> ()";
  e.declare("func.func private " + fn + params + " attributes {llvm.emit_c_interface}");
  auto as_view = [&](const Val& v, const std::string& elem, const std::string& type) {
    return e.read_buffer(v, "tensor<?x?x" + elem + ">", type);
  };
  // x as (V, cases): its case dims collapsed (none: one case).
  DimExpr cases = DimExpr(1);
  for (size_t a = 1; a < x.type.shape.rank(); ++a) cases = cases * x.type.shape[a];
  const DimExpr programs = in[0].type.shape[0];
  Val x2 = e.reshape(x, Shape({x.type.shape[0], cases}));
  std::string codes = as_view(in[0], "i32", iview), args = as_view(in[1], "i32", iview);
  std::string consts = as_view(in[2], el, view), xs = as_view(x2, el, view);
  std::string out = e.assign("memref.alloc(" + e.extent(programs) + ", " + e.extent(cases) + ") : " + buf);
  std::string tg = e.assign("memref.get_global " + text + " : memref<" + n + "xi8>");
  std::string tc = e.assign("memref.cast " + tg + " : memref<" + n + "xi8> to memref<?xi8>");
  std::string sg = e.assign("memref.get_global " + slot + " : memref<1xi64>");
  std::string dt = e.assign("arith.constant " + std::to_string(static_cast<int>(t)) + " : i32");
  e.line("func.call " + fn + "(" + codes + ", " + args + ", " + consts + ", " + xs + ", " + out + ", " + tc + ", " +
         sg + ", " + dt + ", " + e.error_sink() + ") : " + sig);
  const std::string dyn = "tensor<?x?x" + el + ">";
  std::string r = e.assign("bufferization.to_tensor " + out + " restrict writable : " + buf + " to " + dyn);
  TensorType flat(t, Shape({programs, cases}));
  Val rows{e.assign("tensor.cast " + r + " : " + dyn + " to " + tensor_type(flat)), flat};
  return {e.reshape(rows, op.result(0)->type().shape)};
}

}  // namespace

void add_control_rules(Table& t) {
  t.set("cond", cond_rule);
  t.set("while_loop", while_rule);
  t.set("scan", scan_rule);
  t.set("row_switch", row_switch_rule);
  t.set("postfix_eval", postfix_rule);
}

}  // namespace evoxc::mlir_backend
