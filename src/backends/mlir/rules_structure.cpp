// mlir lowering rules: the structure family (shape, indexing, sorting) and the creation ops iota, full and constant
// (the layout family is in rules_layout.cpp).
//
// Each rule keeps evoxc's semantics (docs/semantics.md) in upstream MLIR that the backend's pipeline lowers as is:
// - shape ops are tensor.reshape / extract_slice / insert_slice and linalg.generic with affine maps;
// - gather is a linalg.generic over the result whose body computes the source index from linalg.index and reads
//   it with tensor.extract (guarded by scf.if where there may be nothing to read);
// - scatter is a sequential scf.for nest over the index rows in row-major order, which is exactly evoxc's
//   duplicate semantics (last wins, float combinations in row order);
// - sorts find the stable sort permutation in evoxc's order (NaN last, -0 == +0, false < true) by comparing
//   (keys, position), a strict total order: short or symbolic rows by counting each element's rank (linalg.generic
//   reductions, O(n^2) per row), long static rows through a bitonic network (O(n log^2 n)); the operands are then
//   read through the permutation;
// - searchsorted runs the interpreter's binary search (std::lower_bound/upper_bound) per value in an scf.while,
//   so an unsorted operand gives the interpreter's answer too.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "backends/mlir/shape_rules.h"
#include "evoxc/ops/op_def.h"

namespace evoxc::mlir_backend {
namespace {

using namespace shape_rules;  // NOLINT(google-build-using-namespace): the families' shared helpers

// ---------------------------------------------------------------------------------------------
// Shape ops.

std::vector<Val> lower_reshape(Emitter& e, const Operation& op, std::span<const Val> in) {
  return {e.reshape(in[0], rtype(op).shape)};
}

// A linalg.generic copying x into `rt` through one affine input map (transpose, broadcast).
Val affine_copy(Emitter& e, const Val& x, const std::string& map, const TensorType& rt) {
  size_t R = rt.shape.rank();
  std::vector<std::string> its(R, "parallel");
  Val ins[] = {x};
  std::string maps[] = {map};
  return e.generic(ins, maps, e.empty(rt), dims_list(R), its, [](Body&, std::span<const Scalar> a) { return a[0]; });
}

std::vector<Val> lower_transpose(Emitter& e, const Operation& op, std::span<const Val> in) {
  const Ints& perm = attr_ints(attrs(op), "permutation", "transpose");
  // Result axis j is operand axis perm[j]: operand axis i is read at loop dim pos[i].
  Ints pos(perm.size());
  bool identity = true;
  for (size_t j = 0; j < perm.size(); ++j) {
    pos[static_cast<size_t>(perm[j])] = static_cast<int64_t>(j);
    identity = identity && perm[j] == static_cast<int64_t>(j);
  }
  if (identity) return {in[0]};
  std::string map;
  for (size_t i = 0; i < pos.size(); ++i) map += (i ? ", d" : "d") + std::to_string(pos[i]);
  return {affine_copy(e, in[0], map, rtype(op))};
}

std::vector<Val> lower_broadcast_in_dim(Emitter& e, const Operation& op, std::span<const Val> in) {
  const Ints& dims = attr_ints(attrs(op), "broadcast_dimensions", "broadcast_in_dim");
  const TensorType& rt = rtype(op);
  const Shape& s = in[0].type.shape;
  std::string map;
  for (size_t i = 0; i < s.rank(); ++i) {
    const DimExpr& to = rt.shape[static_cast<size_t>(dims[i])];
    // An extent that stays reads along the loop dim; a unit extent that grows reads its one element.
    std::string m = s[i] == to ? "d" + std::to_string(dims[i]) : "0";
    if (m == "0" && s[i].as_const() != std::optional<int64_t>(1))
      Emitter::fail(op, "operand axis " + std::to_string(i) + " neither matches nor is 1");
    map += (i ? ", " : "") + m;
  }
  return {affine_copy(e, in[0], map, rt)};
}

std::vector<Val> lower_slice(Emitter& e, const Operation& op, std::span<const Val> in) {
  const Ints& start = attr_ints(attrs(op), "start_indices", "slice");
  const Ints& strides = attr_ints(attrs(op), "strides", "slice");
  const TensorType& rt = rtype(op);
  if (rt.shape == in[0].type.shape && std::all_of(strides.begin(), strides.end(), [](int64_t s) { return s == 1; }))
    return {in[0]};
  Names offs, sizes, steps;
  for (size_t i = 0; i < start.size(); ++i) {
    offs.push_back(std::to_string(start[i]));
    sizes.push_back(e.size(rt.shape[i]));
    steps.push_back(std::to_string(strides[i]));
  }
  return {{e.assign("tensor.extract_slice " + in[0].name + "[" + join(offs) + "] [" + join(sizes) + "] [" +
                    join(steps) + "] : " + tensor_type(in[0].type) + " to " + tensor_type(rt)),
           rt}};
}

// `part` written into `into` at `offsets` (whole extents of part, unit strides).
Val insert(Emitter& e, const Val& part, const Val& into, const Names& offsets) {
  Names sizes, ones;
  for (const DimExpr& d : part.type.shape) {
    sizes.push_back(e.size(d));
    ones.push_back("1");
  }
  return {
      e.assign("tensor.insert_slice " + part.name + " into " + into.name + "[" + join(offsets) + "] [" + join(sizes) +
               "] [" + join(ones) + "] : " + tensor_type(part.type) + " into " + tensor_type(into.type)),
      into.type};
}

// One tensor.concat rather than a chain of insert_slices: One-Shot Bufferize's analysis walks such a
// chain back to its start for every link, so stacking the 500 results of a merged population took
// minutes to analyse (a single concat: 0.3 s for the whole program).
std::vector<Val> lower_concatenate(Emitter& e, const Operation& op, std::span<const Val> in) {
  auto axis = static_cast<size_t>(attr_int(attrs(op), "axis", "concatenate"));
  const TensorType& rt = rtype(op);
  std::vector<const Val*> parts;
  for (const Val& part : in)
    if (!static_zero(part.type.shape[axis])) parts.push_back(&part);
  if (parts.empty()) return {e.empty(rt)};
  if (parts.size() == 1 && parts[0]->type.shape == rt.shape) return {*parts[0]};
  Names names, types;
  for (const Val* part : parts) {
    names.push_back(part->name);
    types.push_back(tensor_type(part->type));
  }
  return {{e.assign("tensor.concat dim(" + std::to_string(axis) + ") " + join(names) + " : (" + join(types) + ") -> " +
                    tensor_type(rt)),
           rt}};
}

// ---------------------------------------------------------------------------------------------
// Indexing.

std::vector<Val> lower_gather(Emitter& e, const Operation& op, std::span<const Val> in) {
  const Ints& axes = attr_ints(attrs(op), "axes", "gather");
  const TensorType& rt = rtype(op);
  const Val& x = in[0];
  const Val& idx = in[1];
  const Shape& xs = x.type.shape;
  size_t r = xs.rank(), nb = idx.type.rank() - 1, K = axes.size();
  for (int64_t a : axes)  // nothing to clamp to: zeros
    if (static_zero(xs[static_cast<size_t>(a)])) return {e.splat(Attribute(int64_t{0}), rt.dtype, rt.shape)};
  // The indexed extents, and whether one may be empty at run time (then the result is zeros).
  Names top;
  std::string nonempty;
  std::string zero = e.index_constant(0), one = e.index_constant(1);
  for (int64_t a : axes) {
    const DimExpr& n = xs[static_cast<size_t>(a)];
    std::string nv = e.extent(n);
    top.push_back(iop(e, "arith.subi", nv, one));
    if (n.is_const()) continue;
    std::string ok = icmp(e, "sgt", nv, zero);
    nonempty = nonempty.empty() ? ok : e.assign("arith.andi " + nonempty + ", " + ok + " : i1");
  }
  Names comps;
  for (size_t k = 0; k < K; ++k) comps.push_back(e.index_constant(static_cast<int64_t>(k)));
  return {generate(e, rt, [&](Body& b, const Names& j) {
    Emitter& em = b.emitter();
    auto read = [&] {
      Names src(r);
      Names at(j.begin(), j.begin() + static_cast<std::ptrdiff_t>(nb));
      at.push_back("");
      for (size_t k = 0; k < K; ++k) {
        at.back() = comps[k];
        std::string v = to_index(em, index_i64(b, extract(em, idx, at)));
        src[static_cast<size_t>(axes[k])] = iclamp(em, v, zero, top[k]);
      }
      size_t q = nb;
      for (size_t i = 0; i < r; ++i)
        if (src[i].empty()) src[i] = j[q++];
      return extract(em, x, src);
    };
    if (nonempty.empty()) return read();
    return guarded(em, nonempty, x.type.dtype, read, [&] { return zero_of(b, x.type.dtype); });
  })};
}

// A nest of scf.for loops over `ext` (index values) carrying one tensor of type t; `body` gets the induction
// variables and the carried tensor and gives the updated tensor.
std::string loop_nest(Emitter& e, const Names& ext, const std::string& init, const TensorType& t,
                      const std::function<std::string(const Names&, const std::string&)>& body) {
  std::string zero = e.index_constant(0), one = e.index_constant(1), tt = tensor_type(t);
  Names ivs;
  std::function<std::string(size_t, const std::string&)> level = [&](size_t l, const std::string& in) {
    if (l == ext.size()) return body(ivs, in);
    std::string r = e.fresh(), iv = e.fresh("%i"), acc = e.fresh("%t");
    e.line(r + " = scf.for " + iv + " = " + zero + " to " + ext[l] + " step " + one + " iter_args(" + acc + " = " + in +
           ") -> (" + tt + ") {");
    ivs.push_back(iv);
    e.indent([&] { e.line("scf.yield " + level(l + 1, acc) + " : " + tt); });
    ivs.pop_back();
    e.line("}");
    return r;
  };
  return level(0, init);
}

// evoxc's combination of the current value a with an update u (docs/semantics.md, "Duplicate scatter indices").
Scalar scatter_combine(Body& b, const std::string& mode, const Scalar& a, const Scalar& u) {
  DType t = a.dtype;
  if (mode == "set") return u;
  if (t == DType::Bool) return b.bin(mode == "add" || mode == "max" ? "arith.ori" : "arith.andi", a, u);
  if (mode == "add" || mode == "mul") {
    if (!is_float(t)) return b.bin(mode == "add" ? "arith.addi" : "arith.muli", a, u);  // wraps
    // float16/bfloat16 in float32, rounded after each update
    return b.narrow(b.bin(mode == "add" ? "arith.addf" : "arith.mulf", b.widen(a), b.widen(u)), t);
  }
  bool is_max = mode == "max";
  if (!is_float(t)) {
    const char* name =
        is_signed_int(t) ? (is_max ? "arith.maxsi" : "arith.minsi") : (is_max ? "arith.maxui" : "arith.minui");
    return b.bin(name, a, u);
  }
  // A NaN current value stays, a NaN update replaces; otherwise a > u ? a : u (max), a < u ? a : u (min), so a tie
  // (-0 and +0) takes the update.
  Scalar pick = b.select(b.cmpf(is_max ? "ogt" : "olt", a, u), a, u);
  pick = b.select(b.cmpf("uno", u, u), u, pick);
  return b.select(b.cmpf("uno", a, a), a, pick);
}

std::vector<Val> lower_scatter(Emitter& e, const Operation& op, std::span<const Val> in) {
  const Ints& axes = attr_ints(attrs(op), "axes", "scatter");
  const std::string& mode = attr_string(attrs(op), "mode", "scatter");
  const Val& x = in[0];
  const Val& idx = in[1];
  const Val& upd = in[2];
  const Shape& xs = x.type.shape;
  size_t r = xs.rank(), nb = idx.type.rank() - 1, K = axes.size();
  Names batch, rest;
  for (size_t i = 0; i < nb; ++i) batch.push_back(e.extent(idx.type.shape[i]));
  for (size_t i = nb; i < upd.type.rank(); ++i) rest.push_back(e.extent(upd.type.shape[i]));
  Names ext64, comps;
  for (size_t k = 0; k < K; ++k) {
    ext64.push_back(from_index(e, e.extent(xs[static_cast<size_t>(axes[k])])).name);
    comps.push_back(e.index_constant(static_cast<int64_t>(k)));
  }
  Body b(e);
  Scalar zero64 = b.i(0, DType::I64);
  // Rows one at a time in row-major order: out-of-range rows are skipped, duplicates combine in that order.
  std::string out = loop_nest(e, batch, x.name, x.type, [&](const Names& bi, const std::string& acc) {
    Names at = bi, src(r);
    at.push_back("");
    std::string ok;
    for (size_t k = 0; k < K; ++k) {
      at.back() = comps[k];
      Scalar v = index_i64(b, extract(e, idx, at));
      Scalar good = b.bin("arith.andi", b.cmpi("sge", v, zero64), b.cmpi("slt", v, {ext64[k], DType::I64}));
      ok = ok.empty() ? good.name : b.bin("arith.andi", {ok, DType::Bool}, good).name;
      src[static_cast<size_t>(axes[k])] = to_index(e, v);
    }
    auto write = [&](const std::string& into) {
      return loop_nest(e, rest, into, x.type, [&](const Names& wi, const std::string& cur) {
        Names dst = src;
        size_t q = 0;
        for (size_t i = 0; i < r; ++i)
          if (dst[i].empty()) dst[i] = wi[q++];
        Names ui = bi;
        ui.insert(ui.end(), wi.begin(), wi.end());
        Scalar u = extract(e, upd, ui);
        Scalar a = extract(e, {cur, x.type}, dst);
        Scalar c = scatter_combine(b, mode, a, u);
        return e.assign("tensor.insert " + c.name + " into " + cur + "[" + join(dst) + "] : " + tensor_type(x.type));
      });
    };
    if (ok.empty()) return write(acc);
    std::string res = e.fresh(), tt = tensor_type(x.type);
    e.line(res + " = scf.if " + ok + " -> (" + tt + ") {");
    e.indent([&] { e.line("scf.yield " + write(acc) + " : " + tt); });
    e.line("} else {");
    e.indent([&] { e.line("scf.yield " + acc + " : " + tt); });
    e.line("}");
    return res;
  });
  return {{out, x.type}};
}

// The starts of a dynamic slice (rank-0 index tensors), each clamped into [0, extent - size].
Names clamped_starts(Emitter& e, std::span<const Val> starts, const Shape& operand, const Shape& window) {
  Body b(e);
  Names out;
  std::string zero = e.index_constant(0);
  for (size_t i = 0; i < starts.size(); ++i) {
    std::string s = to_index(e, index_i64(b, extract(e, starts[i], {})));
    out.push_back(iclamp(e, s, zero, e.extent(operand[i] - window[i])));
  }
  return out;
}

std::vector<Val> lower_dynamic_slice(Emitter& e, const Operation& op, std::span<const Val> in) {
  const TensorType& rt = rtype(op);
  Names starts = clamped_starts(e, in.subspan(1), in[0].type.shape, rt.shape);
  Names sizes, ones;
  for (const DimExpr& d : rt.shape) {
    sizes.push_back(e.size(d));
    ones.push_back("1");
  }
  return {{e.assign("tensor.extract_slice " + in[0].name + "[" + join(starts) + "] [" + join(sizes) + "] [" +
                    join(ones) + "] : " + tensor_type(in[0].type) + " to " + tensor_type(rt)),
           rt}};
}

std::vector<Val> lower_dynamic_update_slice(Emitter& e, const Operation&, std::span<const Val> in) {
  Names starts = clamped_starts(e, in.subspan(2), in[0].type.shape, in[1].type.shape);
  return {insert(e, in[1], in[0], starts)};
}

// ---------------------------------------------------------------------------------------------
// Sorting.

// a before b in evoxc's order: ascending, every NaN after every number, -0 == +0, false < true.
Scalar less(Body& b, const Scalar& a, const Scalar& c) {
  if (is_float(a.dtype))
    return b.bin("arith.ori", b.cmpf("olt", a, c), b.bin("arith.andi", b.cmpf("ord", a, a), b.cmpf("uno", c, c)));
  return b.cmpi(is_signed_int(a.dtype) ? "slt" : "ult", a, c);
}

// Whether the element with keys `a` comes before the one with keys `c` (lexicographic; `descending` reverses the
// key order), `tie` deciding between equal keys: a strict total order when `tie` is (stable by position).
Scalar key_before(Body& b, std::span<const Scalar> a, std::span<const Scalar> c, bool descending, Scalar tie) {
  Scalar before = tie;
  for (size_t k = a.size(); k-- > 0;) {
    Scalar lt = descending ? less(b, c[k], a[k]) : less(b, a[k], c[k]);
    Scalar gt = descending ? less(b, a[k], c[k]) : less(b, c[k], a[k]);
    Scalar neither = b.bin("arith.xori", b.bin("arith.ori", lt, gt), b.b(true));
    before = b.bin("arith.ori", lt, b.bin("arith.andi", neither, before));
  }
  return before;
}

// The stable sort permutation by counting: rank[i] = #{j : j before i}, then src[p] = the i of rank p. O(n^2) per
// row but any extent (symbolic included); for short rows.
Val permutation_by_rank(Emitter& e, std::span<const Val> keys, size_t dim, bool descending, const DimExpr& m) {
  const Shape& s = keys[0].type.shape;
  size_t R = s.rank();
  // loop dims d0..d_{R-1} (dim is i) and dR (j)
  std::string at_i = dims_list(R), at_j;
  for (size_t d = 0; d < R; ++d) at_j += (d ? ", d" : "d") + std::to_string(d == dim ? R : d);
  std::vector<Val> ins;
  std::vector<std::string> maps;
  for (const Val& k : keys) {
    ins.push_back(k);
    maps.push_back(at_i);
    ins.push_back(k);
    maps.push_back(at_j);
  }
  std::vector<std::string> its(R + 1, "parallel");
  its[R] = "reduction";
  Body b0(e);
  TensorType it(DType::I64, s);
  Val rank = e.generic(ins, maps, e.fill(b0.i(0, DType::I64), it), at_i, its, [&](Body& b, std::span<const Scalar> a) {
    Emitter& em = b.emitter();
    std::vector<Scalar> xi, xj;
    for (size_t k = 0; k < keys.size(); ++k) {
      xi.push_back(a[2 * k]);
      xj.push_back(a[2 * k + 1]);
    }
    Scalar earlier{icmp(em, "ult", b.index(static_cast<int>(R)), b.index(static_cast<int>(dim))), DType::Bool};
    Scalar before = key_before(b, xj, xi, descending, earlier);
    return b.bin("arith.addi", a.back(), b.convert(before, DType::I64));
  });
  // src[p] = the i whose rank is p: loop dims as above with dim = p and dR = i.
  Shape out = s;
  out[dim] = m;
  Val rk[] = {rank};
  std::string rmaps[] = {at_j};
  return e.generic(rk, rmaps, e.fill(b0.i(0, DType::I64), TensorType(DType::I64, out)), at_i, its,
                   [&](Body& b, std::span<const Scalar> a) {
                     Emitter& em = b.emitter();
                     Scalar p = from_index(em, b.index(static_cast<int>(dim)));
                     Scalar i = from_index(em, b.index(static_cast<int>(R)));
                     Scalar hit = b.cmpi("eq", a[0], p);
                     return b.bin("arith.addi", a[1], b.select(hit, i, b.i(0, DType::I64)));
                   });
}

// The stable sort permutation by a bitonic network over positions (extent n, padded to a power of two m):
// log2(m)(log2(m) + 1) / 2 compare-exchange passes of a linalg.generic; comparing (keys, position) makes the
// order total, so the unstable network gives the stable order. Padding positions (>= n) sort last.
Val permutation_by_network(Emitter& e, std::span<const Val> keys, size_t dim, bool descending, const DimExpr& count) {
  const Shape& s = keys[0].type.shape;
  const DimExpr& n = s[dim];
  std::string zero = e.index_constant(0), one = e.index_constant(1);
  std::string nv = e.extent(n), last = iop(e, "arith.subi", nv, one);
  Shape ps = s;
  std::string levels;  // log2(m): m = 2^levels >= n
  if (n.is_const()) {
    int64_t l = 0;
    while ((int64_t{1} << l) < n.value()) ++l;
    ps[dim] = DimExpr(int64_t{1} << l);
    levels = e.index_constant(l);
  } else {
    // levels = bit width of max(n, 1) - 1 (0 for n <= 1: no passes, so an empty row reads nothing); the padded
    // extent is a fresh symbol read from the first permutation tensor, so later tensors of its type find it.
    Scalar w = from_index(e, iop(e, "arith.subi", iop(e, "arith.maxsi", nv, one), one));
    Scalar lz{e.assign("math.ctlz " + w.name + " : i64"), DType::I64};
    levels = iop(e, "arith.subi", e.index_constant(64), to_index(e, lz));
    std::string name = e.fresh("sort_extent");
    ps[dim] = DimExpr::symbol(name);
    Names dyn;
    for (size_t d = 0; d < ps.rank(); ++d)
      if (!ps[d].is_const()) dyn.push_back(d == dim ? iop(e, "arith.shli", one, levels) : e.extent(s[d]));
    e.bind_symbol(name,
                  {e.assign("tensor.empty(" + join(dyn) + ") : " + tensor_type(TensorType(DType::I64, ps))),
                   TensorType(DType::I64, ps)},
                  dim);
  }
  TensorType pt(DType::I64, ps);
  Val perm = generate(e, pt, [&](Body& b, const Names& j) { return from_index(b.emitter(), j[dim]); });
  // Whether position pa (an i64 element of perm) comes before pb in the row of `at`.
  auto before = [&](Body& b, const Names& at, const Scalar& pa, const Scalar& pb) {
    Emitter& em = b.emitter();
    std::string ia = to_index(em, pa), ib = to_index(em, pb);
    Scalar pad{em.assign("arith.ori " + icmp(em, "sge", ia, nv) + ", " + icmp(em, "sge", ib, nv) + " : i1"),
               DType::Bool};
    Names ra = at, rb = at;
    ra[dim] = iop(em, "arith.minsi", ia, last);  // a padding position reads a real element, then is ignored
    rb[dim] = iop(em, "arith.minsi", ib, last);
    std::vector<Scalar> ka, kb;
    for (const Val& k : keys) {
      ka.push_back(extract(em, k, ra));
      kb.push_back(extract(em, k, rb));
    }
    Scalar earlier = b.cmpi("slt", pa, pb);
    return b.select(pad, earlier, key_before(b, ka, kb, descending, earlier));
  };
  // The passes as two scf.for loops (k = 2^p for p = 1..log2(m), jj = 2^(p-1-q) for q = 0..p-1): one body in the
  // program however long the rows, where unrolled passes would multiply LLVM's work.
  std::string top = iop(e, "arith.addi", levels, one);
  std::string tt = tensor_type(pt);
  std::string outer = e.fresh(), p = e.fresh("%i"), pin = e.fresh("%t");
  e.line(outer + " = scf.for " + p + " = " + one + " to " + top + " step " + one + " iter_args(" + pin + " = " +
         perm.name + ") -> (" + tt + ") {");
  e.indent([&] {
    std::string kv = iop(e, "arith.shli", one, p);
    std::string inner = e.fresh(), q = e.fresh("%i"), qin = e.fresh("%t");
    e.line(inner + " = scf.for " + q + " = " + zero + " to " + p + " step " + one + " iter_args(" + qin + " = " + pin +
           ") -> (" + tt + ") {");
    e.indent([&] {
      std::string jv = iop(e, "arith.shli", one, iop(e, "arith.subi", iop(e, "arith.subi", p, q), one));
      Val src{qin, pt};
      // Element i pairs with l = i ^ jj; the pair is ascending when (i & k) == 0. The lower element of an
      // ascending pair (and the upper of a descending one) keeps the earlier of the two.
      Val next = generate(e, pt, [&](Body& b, const Names& at) {
        Emitter& em = b.emitter();
        std::string i = at[dim];
        std::string l = iop(em, "arith.xori", i, jv);
        Names at_l = at;
        at_l[dim] = l;
        Scalar a = extract(em, src, at), c = extract(em, src, at_l);
        Scalar c_first = before(b, at, c, a);
        Scalar low{icmp(em, "ult", i, l), DType::Bool};
        Scalar asc{icmp(em, "eq", iop(em, "arith.andi", i, kv), zero), DType::Bool};
        Scalar keep_first = b.cmpi("eq", low, asc);
        Scalar first = b.select(c_first, c, a), second = b.select(c_first, a, c);
        return b.select(keep_first, first, second);
      });
      // Copied back into the carried tensor: one-shot bufferization wants each yield to be its iteration
      // argument, and the pass cannot run in place (it reads partners it would overwrite).
      std::string back =
          e.assign("linalg.copy ins(" + next.name + " : " + tt + ") outs(" + qin + " : " + tt + ") -> " + tt);
      e.line("scf.yield " + back + " : " + tt);
    });
    e.line("}");
    e.line("scf.yield " + inner + " : " + tt);
  });
  e.line("}");
  perm = {outer, pt};
  if (count == ps[dim]) return perm;
  Names offs(ps.rank(), "0"), sizes, ones(ps.rank(), "1");
  for (size_t d = 0; d < ps.rank(); ++d) sizes.push_back(e.size(d == dim ? count : s[d]));
  Shape rs = s;
  rs[dim] = count;
  TensorType rt(DType::I64, rs);
  return {e.assign("tensor.extract_slice " + perm.name + "[" + join(offs) + "] [" + join(sizes) + "] [" + join(ones) +
                   "] : " + tensor_type(pt) + " to " + tensor_type(rt)),
          rt};
}

// Static rows up to this extent sort by counting (fewer passes); longer or symbolic rows through the network.
constexpr int64_t kMaxCountingSort = 32;

// The stable sort permutation of `keys` along `dim`: element p of each row of the result (extent `count` <= n on
// dim) is the operand position of the p-th element in sorted order.
Val sort_permutation(Emitter& e, std::span<const Val> keys, size_t dim, bool descending, const DimExpr& count) {
  const DimExpr& n = keys[0].type.shape[dim];
  if (!n.is_const() || n.value() > kMaxCountingSort) return permutation_by_network(e, keys, dim, descending, count);
  return permutation_by_rank(e, keys, dim, descending, count);
}

// x's elements in the order of `perm` (int64 operand positions along dim, perm's shape).
Val take_along(Emitter& e, const Val& x, const Val& perm, size_t dim) {
  size_t R = perm.type.rank();
  Val ins[] = {perm};
  std::string maps[] = {dims_list(R)};
  std::vector<std::string> its(R, "parallel");
  return e.generic(ins, maps, e.empty(TensorType(x.type.dtype, perm.type.shape)), dims_list(R), its,
                   [&](Body& b, std::span<const Scalar> a) {
                     Emitter& em = b.emitter();
                     Names src;
                     for (size_t d = 0; d < R; ++d)
                       src.push_back(d == dim ? to_index(em, a[0]) : b.index(static_cast<int>(d)));
                     return extract(em, x, src);
                   });
}

std::vector<Val> lower_sort(Emitter& e, const Operation& op, std::span<const Val> in) {
  auto dim = static_cast<size_t>(attr_int(attrs(op), "dimension", "sort"));
  auto keys = static_cast<size_t>(attr_int(attrs(op), "num_keys", "sort"));
  Val perm = sort_permutation(e, in.subspan(0, keys), dim, false, in[0].type.shape[dim]);
  std::vector<Val> out;
  for (const Val& x : in) out.push_back(take_along(e, x, perm, dim));
  return out;
}

std::vector<Val> lower_argsort(Emitter& e, const Operation& op, std::span<const Val> in) {
  auto dim = static_cast<size_t>(attr_int(attrs(op), "dimension", "argsort"));
  return {sort_permutation(e, in.subspan(0, 1), dim, false, in[0].type.shape[dim])};
}

std::vector<Val> lower_top_k(Emitter& e, const Operation& op, std::span<const Val> in) {
  int64_t k = attr_int(attrs(op), "k", "top_k");
  size_t last = in[0].type.rank() - 1;
  // descending with NaN largest (NaN-last order reversed), ties lowest index first: the first k of that order
  Val perm = sort_permutation(e, in.subspan(0, 1), last, true, DimExpr(k));
  return {take_along(e, in[0], perm, last), perm};
}

std::vector<Val> lower_searchsorted(Emitter& e, const Operation& op, std::span<const Val> in) {
  bool right = attr_string(attrs(op), "side", "searchsorted") == "right";
  const Val& a = in[0];
  const Val& v = in[1];
  size_t m = v.type.rank();
  std::string zero = e.index_constant(0), one = e.index_constant(1), two = e.index_constant(2);
  std::string n = e.extent(a.type.shape[0]);
  Val ins[] = {v};
  std::string maps[] = {dims_list(m)};
  std::vector<std::string> its(m, "parallel");
  // The interpreter's std::lower_bound / upper_bound step by step: first = 0, len = n; while len > 0: half =
  // len / 2, mid = first + half; go right (first = mid + 1, len -= half + 1) when a[mid] < v (left) or
  // !(v < a[mid]) (right), else len = half.
  return {e.generic(ins, maps, e.empty(rtype(op)), dims_list(m), its, [&](Body& b, std::span<const Scalar> x) {
    Emitter& em = b.emitter();
    std::string r = em.fresh(), f = em.fresh("%f"), l = em.fresh("%l");
    em.line(r + ":2 = scf.while (" + f + " = " + zero + ", " + l + " = " + n +
            ") : (index, index) -> (index, index) {");
    em.indent([&] { em.line("scf.condition(" + icmp(em, "sgt", l, zero) + ") " + f + ", " + l + " : index, index"); });
    std::string f2 = em.fresh("%f"), l2 = em.fresh("%l");
    em.line("} do {");
    em.line("^bb0(" + f2 + ": index, " + l2 + ": index):");
    em.indent([&] {
      std::string half = iop(em, "arith.divsi", l2, two);
      std::string mid = iop(em, "arith.addi", f2, half);
      Scalar am = extract(em, a, {mid});
      Scalar go = right ? b.bin("arith.xori", less(b, x[0], am), b.b(true)) : less(b, am, x[0]);
      std::string nf = iselect(em, go.name, iop(em, "arith.addi", mid, one), f2);
      std::string nl = iselect(em, go.name, iop(em, "arith.subi", iop(em, "arith.subi", l2, half), one), half);
      em.line("scf.yield " + nf + ", " + nl + " : index, index");
    });
    em.line("}");
    return from_index(em, r + "#0");
  })};
}

// ---------------------------------------------------------------------------------------------
// Creation.

std::vector<Val> lower_iota(Emitter& e, const Operation& op, std::span<const Val>) {
  const TensorType& rt = rtype(op);
  auto dim = static_cast<int>(attr_int(attrs(op), "dimension", "iota"));
  // The count in int64, converted as the interpreter converts it: ints keep the low bits, float32/float64 round
  // once, float16/bfloat16 go through float32 (its T(float(i))), bool is i != 0.
  return {generate(e, rt, [&](Body& b, const Names& j) {
    Scalar i = from_index(b.emitter(), j[static_cast<size_t>(dim)]);
    if (rt.dtype == DType::F16 || rt.dtype == DType::BF16) return b.convert(b.convert(i, DType::F32), rt.dtype);
    return b.convert(i, rt.dtype);
  })};
}

std::vector<Val> lower_full(Emitter& e, const Operation& op, std::span<const Val>) {
  return {e.splat(attrs(op).at("value"), rtype(op).dtype, rtype(op).shape)};
}

std::vector<Val> lower_constant(Emitter& e, const Operation& op, std::span<const Val>) {
  return {e.constant(attr_tensor(attrs(op), "value", "constant"))};
}

}  // namespace

void add_structure_rules(Tables& t) {
  t.ops.set("reshape", lower_reshape);
  t.ops.set("transpose", lower_transpose);
  t.ops.set("broadcast_in_dim", lower_broadcast_in_dim);
  t.ops.set("expand_dims", lower_reshape);
  t.ops.set("squeeze", lower_reshape);
  t.ops.set("slice", lower_slice);
  t.ops.set("concatenate", lower_concatenate);
  t.ops.set("gather", lower_gather);
  t.ops.set("scatter", lower_scatter);
  t.ops.set("dynamic_slice", lower_dynamic_slice);
  t.ops.set("dynamic_update_slice", lower_dynamic_update_slice);
  t.ops.set("sort", lower_sort);
  t.ops.set("argsort", lower_argsort);
  t.ops.set("top_k", lower_top_k);
  t.ops.set("searchsorted", lower_searchsorted);
  t.ops.set("iota", lower_iota);
  t.ops.set("full", lower_full);
  // Inside a fused loop a splat is one constant: the loops reading it need not load it.
  t.scalar.set("full", {[](Body& b, const Operation& op, std::span<const Scalar>) {
                          return b.splat(attrs(op).at("value"), rtype(op).dtype);
                        },
                        true});
  t.ops.set("constant", lower_constant);
}

}  // namespace evoxc::mlir_backend
