// StableHLO lowering rules: the structure family (shape, indexing, sorting, row_switch) and the creation ops iota,
// full and constant (the layout family is in rules_layout.cpp).
//
// Each rule writes evoxc's semantics (docs/semantics.md) out where StableHLO's differ or leave a case to the
// implementation: gather reads and dynamic_slice starts clamp (StableHLO clamps too, on int64 indices we convert
// to first), scatter drops out-of-range rows and applies duplicates in row-major order (StableHLO's schedule is
// implementation-defined, so order-dependent combinations are made order-free or applied in rounds), sorts are
// stable with NaN last and -0 == +0 (an explicit comparator), and symbolic extents go through the dynamic_* ops
// with shape tensors.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "backends/stablehlo/shape_rules.h"
#include "evoxc/ops/op_def.h"
#include "evoxc/ops/row_switch.h"

namespace evoxc::stablehlo {
namespace {

using namespace shape_rules;  // NOLINT(google-build-using-namespace): the families' shared helpers

// ---------------------------------------------------------------------------------------------
// Comparison in evoxc's sort order: ascending, NaN after every number, -0 == +0, false < true.

Val less_nan_last(Emitter& e, const Val& a, const Val& b) {
  Val lt = compare(e, a, b, "LT");
  if (!is_float(a.type.dtype)) return lt;
  // a < b, or a is a number and b is NaN.
  Val a_num = compare(e, a, a, "EQ");
  Val b_nan = compare(e, b, b, "NE");
  return binary(e, "or", lt, binary(e, "and", a_num, b_nan));
}

// A sort comparator's value: whether lhs comes before rhs, with lhs_k = a[2k] and rhs_k = a[2k + 1], comparing
// the first `num_keys` pairs lexicographically (ascending, or descending), then the last pair (the operands' index
// along the sorted axis, ascending) when they tie.
Val sort_before(Emitter& e, std::span<const Val> a, size_t num_keys, bool descending) {
  auto less = [&](size_t k, bool swap, bool desc) {
    const Val& l = a[2 * k];
    const Val& r = a[2 * k + 1];
    return swap != desc ? less_nan_last(e, r, l) : less_nan_last(e, l, r);
  };
  Val acc = less(a.size() / 2 - 1, false, false);
  for (size_t k = num_keys; k-- > 0;) {
    Val before = less(k, false, descending);
    Val after = less(k, true, descending);
    Val tie = logical_not(e, binary(e, "or", before, after));
    acc = binary(e, "or", before, binary(e, "and", tie, acc));
  }
  return acc;
}

// stablehlo.sort of `ops` along `dim` by the first `num_keys`, lexicographically; descending reverses the order of
// the keys, and equal keys keep their input order either way. The order is total: the operands' index along `dim`
// sorts with them as the last key, so a consumer that ignores is_stable (IREE measured so) sorts the same.
// Returns the sorted `ops`, followed by the sorted index (the permutation) when `with_index`.
std::vector<Val> sort(Emitter& e, const std::vector<Val>& in, size_t dim, size_t num_keys, bool descending,
                      bool with_index = false) {
  std::vector<Val> ops = in;
  ops.push_back(iota(e, in[0].type.shape, dim));
  std::vector<TensorType> types, args;
  for (const Val& v : ops) {
    types.push_back(v.type);
    args.emplace_back(v.type.dtype, Shape{});
    args.emplace_back(v.type.dtype, Shape{});
  }
  std::string attr = "{dimension = " + std::to_string(dim) + " : i64, is_stable = true}";
  std::vector<Val> out = e.op_with_regions("sort", ops, attr, types, 1, [&](size_t) {
    e.region_block(
        args, [&](std::span<const Val> a) -> std::vector<Val> { return {sort_before(e, a, num_keys, descending)}; });
  });
  if (!with_index) out.pop_back();
  return out;
}

// ---------------------------------------------------------------------------------------------
// Shape ops.

std::vector<Val> lower_reshape(Emitter& e, const Operation& op, std::span<const Val> in) {
  return {reshape(e, in[0], rtype(op).shape)};
}

std::vector<Val> lower_transpose(Emitter& e, const Operation& op, std::span<const Val> in) {
  const Ints& perm = attr_ints(attrs(op), "permutation", "transpose");
  if (perm == iota_ints(perm.size())) return {in[0]};
  return {e.op1("transpose", {in[0]}, "{permutation = " + i64_array(perm) + "}", rtype(op))};
}

std::vector<Val> lower_broadcast_in_dim(Emitter& e, const Operation& op, std::span<const Val> in) {
  return {broadcast_dims(e, in[0], rtype(op).shape, attr_ints(attrs(op), "broadcast_dimensions", "broadcast_in_dim"))};
}

std::vector<Val> lower_slice(Emitter& e, const Operation& op, std::span<const Val> in) {
  const Ints& start = attr_ints(attrs(op), "start_indices", "slice");
  const Shape& limit = attr_shape(attrs(op), "limit_indices", "slice");
  const Ints& strides = attr_ints(attrs(op), "strides", "slice");
  return {slice(e, in[0], start, limit.dims(), strides)};
}

std::vector<Val> lower_concatenate(Emitter& e, const Operation& op, std::span<const Val> in) {
  // Empty operands (a static zero extent on the axis) add nothing; StableHLO takes them, but fewer is simpler.
  auto axis = static_cast<size_t>(attr_int(attrs(op), "axis", "concatenate"));
  std::vector<Val> parts;
  for (const Val& v : in)
    if (!static_zero(v.type.shape[axis])) parts.push_back(v);
  if (parts.empty()) parts.push_back(in[0]);
  return {concatenate(e, parts, axis, rtype(op))};
}

// ---------------------------------------------------------------------------------------------
// Indexing.

// Per index vector (the last axis of idx), whether every component lies in [0, extent) of its operand axis.
Val rows_in_range(Emitter& e, const Val& idx, const Shape& operand, const Ints& axes) {
  size_t q = idx.type.rank();
  std::vector<Val> ext;
  TensorType one(DType::I64, Shape{1});
  for (int64_t a : axes) ext.push_back(e.op1("reshape", {e.extent(operand[static_cast<size_t>(a)])}, "", one));
  TensorType kt(DType::I64, Shape{static_cast<int64_t>(axes.size())});
  Val hi = ext.empty() ? vector_i64(e, {}) : concatenate(e, ext, 0, kt);
  Val ok = binary(e, "and", compare(e, idx, like(e, scalar_i64(e, 0), idx), "GE"),
                  compare(e, idx, e.broadcast_to(hi, idx.type.shape), "LT"));
  return reduce(e, ok, e.splat(Attribute(true), DType::Bool, Shape{}), {static_cast<int64_t>(q - 1)}, "and");
}

std::vector<Val> lower_gather(Emitter& e, const Operation& op, std::span<const Val> in) {
  const Ints& axes = attr_ints(attrs(op), "axes", "gather");
  const TensorType& rt = rtype(op);
  const Shape& xs = in[0].type.shape;
  size_t r = xs.rank(), nb = in[1].type.rank() - 1;
  // An empty indexed axis has nothing to clamp to: zeros.
  for (int64_t a : axes)
    if (static_zero(xs[static_cast<size_t>(a)])) return {zeros(e, rt)};
  Val idx = index_i64(e, in[1]);
  Val x = in[0];
  bool symbolic = false;
  for (int64_t a : axes) symbolic = symbolic || !xs[static_cast<size_t>(a)].is_const();
  if (symbolic) {
    // A symbolic indexed extent may be 0 at run time: clamp explicitly into [0, max(n - 1, 0)] and read from an
    // operand with one zero appended there, which is what an empty axis then gives.
    std::vector<Val> hi;
    TensorType one(DType::I64, Shape{1});
    for (int64_t a : axes) {
      DimExpr top = max(xs[static_cast<size_t>(a)] - DimExpr(1), DimExpr(0));
      hi.push_back(e.op1("reshape", {e.extent(top)}, "", one));
    }
    Val hv = concatenate(e, hi, 0, TensorType(DType::I64, Shape{static_cast<int64_t>(axes.size())}));
    idx = e.op1("clamp", {like(e, scalar_i64(e, 0), idx), idx, e.broadcast_to(hv, idx.type.shape)}, "", idx.type);
    x = pad_symbolic_axes(e, x, axes);
  }
  Ints sorted = axes;
  std::sort(sorted.begin(), sorted.end());
  Shape sizes = x.type.shape;
  for (int64_t a : axes) sizes[static_cast<size_t>(a)] = DimExpr(1);
  Ints offset = iota_ints(r - axes.size(), static_cast<int64_t>(nb));
  return {gather(e, x, idx, gather_dims(offset, sorted, axes, nb), sizes, rt)};
}

std::string scatter_dims(const Ints& window, const Ints& inserted, const Ints& to_operand, size_t ivd) {
  std::vector<std::string> parts;
  if (!window.empty()) parts.push_back("update_window_dims = " + ints_list(window));
  if (!inserted.empty()) parts.push_back("inserted_window_dims = " + ints_list(inserted));
  if (!to_operand.empty()) parts.push_back("scatter_dims_to_operand_dims = " + ints_list(to_operand));
  parts.push_back("index_vector_dim = " + std::to_string(ivd));
  std::string s = "#stablehlo.scatter<";
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? ", " : "") + parts[i];
  return s + ">";
}

// evoxc's combination of the current value a with an update b (docs/semantics.md, "Duplicate scatter indices").
Val scatter_combine(Emitter& e, const std::string& mode, const Val& a, const Val& b) {
  DType t = a.type.dtype;
  if (mode == "set") return b;
  if (t == DType::Bool) return binary(e, mode == "add" || mode == "max" ? "or" : "and", a, b);
  if (mode == "add" || mode == "mul") {
    const char* name = mode == "add" ? "add" : "multiply";
    if (t == DType::F16 || t == DType::BF16)  // in float32, rounded after each update
      return e.convert(binary(e, name, e.convert(a, DType::F32), e.convert(b, DType::F32)), t);
    return binary(e, name, a, b);  // integers wrap
  }
  bool is_max = mode == "max";
  if (!is_float(t)) return binary(e, is_max ? "maximum" : "minimum", a, b);
  // A NaN current value stays, a NaN update replaces; otherwise a > b ? a : b (max), a < b ? a : b (min), so a
  // tie (-0 and +0) takes the update.
  Val pick = select(e, compare(e, a, b, is_max ? "GT" : "LT"), a, b);
  pick = select(e, compare(e, b, b, "NE"), b, pick);
  return select(e, compare(e, a, a, "NE"), a, pick);
}

Val scatter(Emitter& e, const Val& x, const Val& idx, const Val& upd, const std::string& dnums,
            const std::string& mode) {
  Val ops[] = {x, idx, upd};
  return e
      .op_with_regions(
          "scatter", ops,
          "{indices_are_sorted = false, scatter_dimension_numbers = " + dnums + ", unique_indices = false}",
          std::span(&x.type, 1), 1,
          [&](size_t) {
            TensorType s(x.type.dtype, Shape{});
            TensorType args[] = {s, s};
            e.region_block(args, [&](std::span<const Val> a) -> std::vector<Val> {
              return {scatter_combine(e, mode, a[0], a[1])};
            });
          })
      .front();
}

// Scatter geometry shared by the steps of one scatter op.
struct ScatterPlan {
  Val idx;            // (batch..., K) int64
  Shape batch;        // the batch axes of idx
  Ints axes;          // operand axes of the index vector
  std::string dnums;  // for the operand scatter
  Shape space;        // the indexed extents (one zero appended where symbolic), in index-vector order
  Ints space_pad;
  Val rows;  // the row-major number of each index vector, shape batch
};

// p.idx with every row whose `mask` is false replaced by -1 (out of range, so a scatter skips it).
Val mask_rows(Emitter& e, const ScatterPlan& p, const Val& mask) {
  Shape column = p.batch;
  column.dims().emplace_back(1);
  return select(e, e.broadcast_to(reshape(e, mask, column), p.idx.type.shape), p.idx,
                like(e, scalar_i64(e, -1), p.idx));
}

// For each active row, whether it is the first (`last` false) or the last active row in row-major order that
// targets its position: the row numbers scattered with min/max (order-free) into the index space, read back.
Val pick_rows(Emitter& e, const ScatterPlan& p, const Val& active, bool last) {
  size_t nb = p.batch.rank(), K = p.axes.size();
  Val idx = mask_rows(e, p, active);
  Attribute init = last ? Attribute(int64_t{-1}) : Attribute(std::numeric_limits<int64_t>::max());
  Val owner = fill(e, init, DType::I64, p.space);
  owner = scatter(e, owner, idx, p.rows, scatter_dims({}, iota_ints(K), iota_ints(K), nb), last ? "max" : "min");
  // Inactive rows read a clamped position; they are masked below.
  Shape sizes(std::vector<DimExpr>(K, DimExpr(1)));
  Val got =
      gather(e, owner, idx, gather_dims({}, iota_ints(K), iota_ints(K), nb), sizes, TensorType(DType::I64, p.batch));
  return binary(e, "and", active, compare(e, got, p.rows, "EQ"));
}

// Scatter of `upd` into x at the int64 index vectors `idx` (last axis) on `axes` (non-empty).
Val scatter_rows(Emitter& e, const Val& x, const Val& idx, const Val& upd, const Ints& axes, const std::string& mode) {
  const Shape& xs = x.type.shape;
  size_t r = xs.rank(), nb = idx.type.rank() - 1;
  ScatterPlan p;
  p.idx = idx;
  p.axes = axes;
  p.batch = Shape(std::vector<DimExpr>(idx.type.shape.begin(), idx.type.shape.end() - 1));
  Ints sorted = axes;
  std::sort(sorted.begin(), sorted.end());
  p.dnums = scatter_dims(iota_ints(r - axes.size(), static_cast<int64_t>(nb)), sorted, axes, nb);
  // Out-of-range rows: StableHLO skips every update element whose position is out of bounds, and with whole
  // windows on the other axes that is exactly the rows evoxc drops.
  DimExpr count = p.batch.num_elements();
  bool one_row = count.is_const() && count.value() <= 1;
  bool order_free = mode != "set" && !is_float(x.type.dtype);  // wrapping ints and bool or/and commute
  if (one_row || order_free) return scatter(e, x, p.idx, upd, p.dnums, mode);
  for (int64_t a : axes) {
    const DimExpr& d = xs[static_cast<size_t>(a)];
    p.space.dims().push_back(d.is_const() ? d : d + DimExpr(1));
  }
  p.rows = reshape(e, iota(e, Shape{count}, 0), p.batch);
  Val in_range = rows_in_range(e, p.idx, xs, axes);
  if (mode == "set") {
    // Last wins: only the last in-range row of each position writes, so the writes have unique positions.
    Val winners = pick_rows(e, p, in_range, true);
    return scatter(e, x, mask_rows(e, p, winners), upd, p.dnums, "set");
  }
  // Float add/mul/min/max depend on the order of duplicates: apply them in rounds, each round the first
  // remaining row of every position (unique positions, so each round is order-free), until none remain. Rows
  // without duplicates finish in one round.
  TensorType carry[] = {x.type, in_range.type};
  Val init[] = {x, in_range};
  std::vector<Val> out = e.op_with_regions("while", init, "", carry, 2, [&](size_t region) {
    e.region_block(carry, [&](std::span<const Val> c) -> std::vector<Val> {
      if (region == 0) return {any_true(e, c[1])};
      Val first = pick_rows(e, p, c[1], false);
      Val res = scatter(e, c[0], mask_rows(e, p, first), upd, p.dnums, mode);
      return {res, binary(e, "and", c[1], logical_not(e, first))};
    });
  });
  return out[0];
}

std::vector<Val> lower_scatter(Emitter& e, const Operation& op, std::span<const Val> in) {
  const Ints& axes = attr_ints(attrs(op), "axes", "scatter");
  const std::string& mode = attr_string(attrs(op), "mode", "scatter");
  const Val& x = in[0];
  const Shape& xs = x.type.shape;
  // Every row is out of range when an indexed axis is empty (or there are no rows or no elements per row).
  for (int64_t a : axes)
    if (static_zero(xs[static_cast<size_t>(a)])) return {x};
  if (static_empty(in[2].type.shape)) return {x};
  Val idx = index_i64(e, in[1]);
  if (!axes.empty()) return {scatter_rows(e, x, idx, in[2], axes, mode)};
  // No indexed axes: every row updates the whole operand. As a scatter into a leading unit axis at index 0 the
  // rows have an index component, which the steps above mask to drop a row.
  Shape xs1 = xs;
  xs1.dims().insert(xs1.dims().begin(), DimExpr(1));
  Shape is1 = in[1].type.shape;
  is1[is1.rank() - 1] = DimExpr(1);
  Val res = scatter_rows(e, reshape(e, x, xs1), zeros(e, TensorType(DType::I64, is1)), in[2], {0}, mode);
  return {reshape(e, res, xs)};
}

std::vector<Val> lower_dynamic_slice(Emitter& e, const Operation& op, std::span<const Val> in) {
  // StableHLO clamps each start into [0, extent - size] as evoxc does; the starts go in as int64 so every index
  // dtype (uint64 beyond INT64_MAX included) clamps by its value.
  std::vector<Val> ops{in[0]};
  for (size_t i = 1; i < in.size(); ++i) ops.push_back(index_i64(e, in[i]));
  const Ints& sizes = attr_ints(attrs(op), "slice_sizes", "dynamic_slice");
  return {e.op1("dynamic_slice", ops, "{slice_sizes = " + i64_array(sizes) + "}", rtype(op))};
}

std::vector<Val> lower_dynamic_update_slice(Emitter& e, const Operation& op, std::span<const Val> in) {
  if (static_empty(in[1].type.shape)) return {in[0]};
  std::vector<Val> ops{in[0], in[1]};
  for (size_t i = 2; i < in.size(); ++i) ops.push_back(index_i64(e, in[i]));
  return {e.op1("dynamic_update_slice", ops, "", rtype(op))};
}

// ---------------------------------------------------------------------------------------------
// Sorting.

std::vector<Val> lower_sort(Emitter& e, const Operation& op, std::span<const Val> in) {
  auto dim = static_cast<size_t>(attr_int(attrs(op), "dimension", "sort"));
  auto keys = static_cast<size_t>(attr_int(attrs(op), "num_keys", "sort"));
  return sort(e, std::vector<Val>(in.begin(), in.end()), dim, keys, false);
}

std::vector<Val> lower_argsort(Emitter& e, const Operation& op, std::span<const Val> in) {
  auto dim = static_cast<size_t>(attr_int(attrs(op), "dimension", "argsort"));
  return {sort(e, {in[0]}, dim, 1, false, true)[1]};
}

std::vector<Val> lower_top_k(Emitter& e, const Operation& op, std::span<const Val> in) {
  int64_t k = attr_int(attrs(op), "k", "top_k");
  size_t last = in[0].type.rank() - 1;
  // A descending sort that keeps equal values in index order: the first k are evoxc's.
  std::vector<Val> s = sort(e, {in[0]}, last, 1, true, true);
  return {slice_axis(e, s[0], last, 0, DimExpr(k)), slice_axis(e, s[1], last, 0, DimExpr(k))};
}

std::vector<Val> lower_searchsorted(Emitter& e, const Operation& op, std::span<const Val> in) {
  bool right = attr_string(attrs(op), "side", "searchsorted") == "right";
  const TensorType& rt = rtype(op);
  const DimExpr& n = in[0].type.shape[0];
  if (static_zero(n)) return {zeros(e, rt)};
  const Val& v = in[1];
  size_t m = v.type.rank();
  // The interpreter's binary search (std::lower_bound / upper_bound) step by step for every value at once, so an
  // unsorted operand gives its answer too: first, len = 0, n; while len > 0: half = len / 2, mid = first + half;
  // go right (first = mid + 1, len -= half + 1) when a[mid] < v (left) or !(v < a[mid]) (right), else len = half.
  Val a = pad_symbolic_axes(e, in[0], {0});  // mid may equal a symbolic n once len is 0 (masked)
  auto step = [&](const Val& first, const Val& len) -> std::vector<Val> {
    Val zero = like(e, scalar_i64(e, 0), len);
    Val one = like(e, scalar_i64(e, 1), len);
    Val half = binary(e, "divide", len, like(e, scalar_i64(e, 2), len));
    Val mid = binary(e, "add", first, half);
    Val am = gather(e, a, mid, gather_dims({}, {0}, {0}, m), Shape{DimExpr(1)}, v.type);
    Val go = right ? logical_not(e, less_nan_last(e, v, am)) : less_nan_last(e, am, v);
    Val active = compare(e, len, zero, "GT");
    Val moved = binary(e, "and", active, go);
    Val nfirst = select(e, moved, binary(e, "add", mid, one), first);
    Val shrunk = select(e, go, binary(e, "subtract", binary(e, "subtract", len, half), one), half);
    return {nfirst, select(e, active, shrunk, len)};
  };
  Val first = zeros(e, rt);
  Val len = like(e, e.extent(n), first);
  if (n.is_const()) {
    // len at most n halves every step: bit_width(n) steps reach 0.
    for (uint64_t u = static_cast<uint64_t>(n.value()); u != 0; u >>= 1) {
      std::vector<Val> s = step(first, len);
      first = s[0];
      len = s[1];
    }
    return {first};
  }
  TensorType carry[] = {rt, rt};
  Val init[] = {first, len};
  return {e.op_with_regions("while", init, "", carry, 2, [&](size_t region) {
    e.region_block(carry, [&](std::span<const Val> c) -> std::vector<Val> {
      if (region == 0) return {any_true(e, compare(e, c[1], like(e, scalar_i64(e, 0), c[1]), "GT"))};
      return step(c[0], c[1]);
    });
  })[0]};
}

// ---------------------------------------------------------------------------------------------
// row_switch: each maximal run of rows with one variant is that variant's own lowering on the run's rows (the
// per-row operands sliced, the shared ones whole); the runs are concatenated back along the row axis.

std::vector<Val> lower_row_switch(Emitter& e, const Operation& op, std::span<const Val> in) {
  std::vector<const OpDef*> variants = row_switch_variants(attrs(op));
  const Ints& rows = attr_ints(attrs(op), "rows", "row_switch");
  const TensorType& rt = rtype(op);
  size_t rank = rt.rank();
  std::vector<Val> parts;
  for (size_t r0 = 0; r0 < rows.size();) {
    size_t r1 = r0 + 1;
    while (r1 < rows.size() && rows[r1] == rows[r0]) ++r1;
    std::vector<Val> args;
    for (const Val& v : in)
      args.push_back(
          v.type.rank() == rank ? slice_axis(e, v, 0, static_cast<int64_t>(r0), DimExpr(static_cast<int64_t>(r1))) : v);
    // A detached block holding the one variant op: the table lowers it as it lowers any op of a graph.
    const OpDef& def = *variants[static_cast<size_t>(rows[r0])];
    std::vector<TensorType> types;
    for (const Val& a : args) types.push_back(a.type);
    Block b;
    std::vector<Value*> vals;
    for (const TensorType& t : types) vals.push_back(b.add_argument(t));
    Operation* v = b.append(def, vals, infer_result_types(def, types, {}), {}, op.location());
    b.append(get_op("return"), {v->result(0)}, {});
    parts.push_back(e.lower_block(b, args).front());
    r0 = r1;
  }
  if (parts.empty()) return {zeros(e, rt)};
  return {concatenate(e, parts, 0, rt)};
}

// ---------------------------------------------------------------------------------------------
// Creation.

std::vector<Val> lower_iota(Emitter& e, const Operation& op, std::span<const Val>) {
  const TensorType& rt = rtype(op);
  auto dim = static_cast<size_t>(attr_int(attrs(op), "dimension", "iota"));
  // The count in int64, converted as the interpreter converts it: ints keep the low bits, float32/float64 round
  // once, float16/bfloat16 go through float32 (the interpreter's T(float(i))), bool is i != 0.
  Val i = iota(e, rt.shape, dim);
  switch (rt.dtype) {
    case DType::Bool: return {compare(e, i, zeros(e, i.type), "NE")};
    case DType::F16:
    case DType::BF16: return {e.convert(e.convert(i, DType::F32), rt.dtype)};
    default: return {e.convert(i, rt.dtype)};
  }
}

std::vector<Val> lower_full(Emitter& e, const Operation& op, std::span<const Val>) {
  const TensorType& rt = rtype(op);
  return {fill(e, attrs(op).at("value"), rt.dtype, rt.shape)};
}

std::vector<Val> lower_constant(Emitter& e, const Operation& op, std::span<const Val>) {
  return {e.constant(attr_tensor(attrs(op), "value", "constant"))};
}

}  // namespace

void add_structure_rules(Table& t) {
  auto set = [&](const char* name, Rule rule) { t.set(name, empty_guard(std::move(rule))); };
  set("reshape", lower_reshape);
  set("transpose", lower_transpose);
  set("broadcast_in_dim", lower_broadcast_in_dim);
  set("expand_dims", lower_reshape);
  set("squeeze", lower_reshape);
  set("slice", lower_slice);
  set("concatenate", lower_concatenate);
  set("gather", lower_gather);
  set("scatter", lower_scatter);
  set("dynamic_slice", lower_dynamic_slice);
  set("dynamic_update_slice", lower_dynamic_update_slice);
  set("sort", lower_sort);
  set("argsort", lower_argsort);
  set("top_k", lower_top_k);
  set("searchsorted", lower_searchsorted);
  set("row_switch", lower_row_switch);
  t.defer("postfix_eval",
          "a population held as op codes has no StableHLO form; export its programs as graphs instead "
          "(gp::to_graphs, evoxc.gp.Population.to_graphs, then batch_functions)");
  set("iota", lower_iota);
  set("full", lower_full);
  set("constant", lower_constant);
}

}  // namespace evoxc::stablehlo
