// mlir lowering rules: the reduce_linalg family (reductions, scans, dot, conv, trace and the factorizations).
//
// Reductions are linalg.generic ops with "reduction" iterators into a filled init; float sums and products
// mark their combiner fastmath<reassoc> (the one numeric liberty: the compiler drops it below O2). Scans
// carry a running slice through an scf.for over the scanned axis. The decompositions are written as the
// scalar loops of LAPACK's unblocked routines (getf2, potf2, trsm, geqr2/org2r) over tensor.extract/insert,
// one matrix of the collapsed batch at a time, so they equal the interpreter's LAPACK results up to rounding.
// They stay native here, not expanded by their EvoXIR decompositions (src/transforms/decompose_linalg.cpp),
// because in-place scalar loops beat whole-matrix masked steps: solve 64x64 158 us against 1,028 us, det 45
// against 657, qr 64x48 86 against 367 (docs/backends.md). norm, matrix_rank and matrix_exp, which gain
// nothing from a kernel of their own, are expanded (matrix_exp into matmuls and this solve).
// What evoxc defines beyond the arithmetic follows docs/semantics.md and the interpreter (src/interp/).
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "backends/mlir/emitter.h"
#include "evoxc/ops/families.h"

namespace evoxc::mlir_backend {
namespace {

using Ints = std::vector<int64_t>;
using Axes = std::vector<bool>;  // per operand axis: reduced or not

// Half floats accumulate in float32 and round once (semantics); every other type in itself.
DType acc_type(DType t) { return t == DType::F16 || t == DType::BF16 ? DType::F32 : t; }

const TensorType& result_type(const Operation& op, size_t i = 0) { return op.result(i)->type(); }

std::string dname(size_t i) { return "d" + std::to_string(i); }

using Names = std::vector<std::string>;

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
  return s;
}

// "d0, d1, ..., d{n-1}".
std::string identity_map(size_t n) {
  std::vector<std::string> v;
  for (size_t i = 0; i < n; ++i) v.push_back(dname(i));
  return join(v);
}

Axes axes_of(const Operation& op, size_t rank, const char* name = "axes") {
  Axes red(rank, false);
  for (int64_t a : attr_ints(op.attributes(), name, op.name())) red[static_cast<size_t>(a)] = true;
  return red;
}

// The reduced shape: reduced axes dropped, or kept with extent 1 (keepdims).
Shape reduced_shape(const Shape& s, const Axes& red, bool keep) {
  Shape out;
  for (size_t i = 0; i < s.rank(); ++i) {
    if (!red[i])
      out.dims().push_back(s[i]);
    else if (keep)
      out.dims().push_back(DimExpr(1));
  }
  return out;
}

// The output map of a reduction over the operand's loop dims: "d0, d2", or "d0, 0, d2" with keepdims.
std::string reduced_map(const Axes& red, bool keep) {
  std::vector<std::string> v;
  for (size_t i = 0; i < red.size(); ++i) {
    if (!red[i])
      v.push_back(dname(i));
    else if (keep)
      v.push_back("0");
  }
  return join(v);
}

// ---- scalar constants and combiners ----

// The type's lowest and highest values: the identities of maximum and minimum.
Scalar lowest(Body& b, DType t) {
  if (is_float(t)) return b.f(-std::numeric_limits<double>::infinity(), t);
  if (t == DType::Bool) return b.b(false);
  if (is_unsigned_int(t)) return b.i(0, t);
  return b.i(bit_width(t) == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (bit_width(t) - 1)), t);
}
Scalar highest(Body& b, DType t) {
  if (is_float(t)) return b.f(std::numeric_limits<double>::infinity(), t);
  if (t == DType::Bool) return b.b(true);
  if (is_unsigned_int(t)) return b.i(-1, t);  // converted as `full` does: all bits set
  return b.i(bit_width(t) == 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (bit_width(t) - 1)) - 1, t);
}
Scalar zero(Body& b, DType t) {
  if (is_float(t)) return b.f(0.0, t);
  return t == DType::Bool ? b.b(false) : b.i(0, t);
}
Scalar one(Body& b, DType t) {
  if (is_float(t)) return b.f(1.0, t);
  return t == DType::Bool ? b.b(true) : b.i(1, t);
}

using Comb = Combiner;

Scalar identity(Body& b, Comb c, DType t) {
  switch (c) {
    case Comb::Sum: return zero(b, t);
    case Comb::Prod: return one(b, t);
    case Comb::Max: return lowest(b, t);
    case Comb::Min: return highest(b, t);
    case Comb::Or: return b.b(false);
    case Comb::And: return b.b(true);
  }
  throw InternalError("mlir: unknown combiner");
}

const char* kReassoc = "fastmath<reassoc>";

// acc (op) x. Integers wrap (arith is modular); maximum/minimum propagate NaN (numpy's maximum); on bool
// sum/max are or and prod/min are and. `reassoc` marks float sums and products reassociable.
Scalar combine(Body& b, Comb c, const Scalar& acc, const Scalar& x, bool reassoc = true) {
  DType t = acc.dtype;
  bool f = is_float(t), bl = t == DType::Bool, s = is_signed_int(t);
  std::string flags = reassoc ? kReassoc : "";
  switch (c) {
    case Comb::Sum: return f ? b.bin("arith.addf", acc, x, flags) : b.bin(bl ? "arith.ori" : "arith.addi", acc, x);
    case Comb::Prod: return f ? b.bin("arith.mulf", acc, x, flags) : b.bin(bl ? "arith.andi" : "arith.muli", acc, x);
    case Comb::Max: return b.bin(f ? "arith.maximumf" : bl ? "arith.ori" : s ? "arith.maxsi" : "arith.maxui", acc, x);
    case Comb::Min: return b.bin(f ? "arith.minimumf" : bl ? "arith.andi" : s ? "arith.minsi" : "arith.minui", acc, x);
    case Comb::Or: return b.bin("arith.ori", acc, x);
    case Comb::And: return b.bin("arith.andi", acc, x);
  }
  throw InternalError("mlir: unknown combiner");
}

// NaN test (x != x).
Scalar is_nan(Body& b, const Scalar& x) { return b.cmpf("uno", x, x); }

// An `index` scalar as an integer of dtype t.
Scalar index_as(Body& b, const std::string& idx, DType t) {
  std::string r = b.fresh();
  b.line(r + " = arith.index_cast " + idx + " : index to " + element_type(t));
  return {r, t};
}

// ---- generic reductions ----

using ReduceBody = std::function<Scalar(Body&, std::span<const Scalar> ins, const Scalar& acc)>;

// A linalg.generic over the loop dims of an operand of rank `rank`: `ins` with their maps, reducing the
// axes in `red` into `init` (a scalar filled into the reduced shape, keepdims or not).
Val reduce_generic(Emitter& e, std::span<const Val> ins, std::span<const std::string> maps, const Shape& loops,
                   const Axes& red, bool keep, const Scalar& init, const ReduceBody& body) {
  Val out = e.fill(init, TensorType(init.dtype, reduced_shape(loops, red, keep)));
  std::vector<std::string> its;
  for (bool r : red) its.push_back(r ? "reduction" : "parallel");
  size_t n = ins.size();
  return e.generic(ins, maps, out, reduced_map(red, keep), its,
                   [&](Body& b, std::span<const Scalar> a) { return body(b, a.subspan(0, n), a[n]); });
}

// x reduced with one combiner over `red`, in dtype `acc` (elements converted with Body::convert).
Val reduce(Emitter& e, const Val& x, const Axes& red, bool keep, Comb c, DType acc, bool reassoc = true) {
  Body top(e);
  Scalar init = identity(top, c, acc);
  std::string m = identity_map(x.type.shape.rank());
  return reduce_generic(e, std::span(&x, 1), std::span(&m, 1), x.type.shape, red, keep, init,
                        [&](Body& b, std::span<const Scalar> in, const Scalar& a) {
                          return combine(b, c, a, b.convert(in[0], acc), reassoc);
                        });
}

// An elementwise map from values of the non-keepdims reduced shape to `rt` (that shape, or with keepdims
// the operand's rank with unit extents at the reduced axes).
Val finish(Emitter& e, std::span<const Val> ins, const Axes& red, bool keep, const TensorType& rt,
           const std::function<Scalar(Body&, std::span<const Scalar>)>& f) {
  if (!keep) return e.map(ins, rt, f);
  std::vector<std::string> maps(ins.size(), reduced_map(red, false));
  std::vector<std::string> its(red.size(), "parallel");
  Val out = e.empty(rt);
  size_t n = ins.size();
  return e.generic(ins, maps, out, identity_map(red.size()), its,
                   [&](Body& b, std::span<const Scalar> a) { return f(b, a.subspan(0, n)); });
}

// The element converted to dtype t (half floats: f32 rounded once; f64 results of f32-computed ops
// go through float first as the interpreter's st<T>(float(x)) does).
Val convert_to(Emitter& e, const Val& v, const TensorType& rt) {
  if (v.type.dtype == rt.dtype && v.type.shape == rt.shape) return v;
  return e.map({v}, rt, [&](Body& b, std::span<const Scalar> x) { return b.convert(x[0], rt.dtype); });
}

// A tensor of t filled with zeros.
Val zeros(Emitter& e, const TensorType& t) {
  Body top(e);
  return e.fill(zero(top, t.dtype), t);
}

std::vector<Val> lower_reduction(Emitter& e, const Operation& op, std::span<const Val> in, Comb c) {
  const TensorType& rt = result_type(op);
  DType t = in[0].type.dtype;
  Axes red = axes_of(op, in[0].type.rank());
  bool keep = attr_bool(op.attributes(), "keepdims", op.name());
  // Max/min compare half floats in float32 too (exact both ways).
  DType a = acc_type(t);
  return {convert_to(e, reduce(e, in[0], red, keep, c, a), rt)};
}

// The product of the reduced extents as a float of dtype t.
Scalar count_of(Emitter& e, const Shape& s, const Axes& red, DType t) {
  DimExpr n(1);
  for (size_t i = 0; i < s.rank(); ++i)
    if (red[i]) n = n * s[i];
  Body top(e);
  if (auto c = n.as_const()) return top.f(static_cast<double>(*c), t);
  Scalar i = index_as(top, e.extent(n), DType::I64);
  return top.cast("arith.sitofp", i, t);
}

// sum / count in the accumulator type, rounded once; empty: 0 / 0 = NaN.
std::vector<Val> lower_mean(Emitter& e, const Operation& op, std::span<const Val> in) {
  const TensorType& rt = result_type(op);
  DType t = in[0].type.dtype, a = acc_type(t);
  Axes red = axes_of(op, in[0].type.rank());
  bool keep = attr_bool(op.attributes(), "keepdims", op.name());
  Val s = reduce(e, in[0], red, keep, Comb::Sum, a);
  Scalar n = count_of(e, in[0].type.shape, red, a);
  return {
      e.map({s}, rt, [&](Body& b, std::span<const Scalar> x) { return b.narrow(b.bin("arith.divf", x[0], n), t); })};
}

// argmax/argmin: the extreme value m (NaN the most extreme: maximumf/minimumf propagate it), then the
// first index whose element equals m (or is NaN when m is). Bool compares false < true (or/and).
std::vector<Val> lower_arg(Emitter& e, const Operation& op, std::span<const Val> in, bool is_max) {
  const TensorType& rt = result_type(op);
  const Val& x = in[0];
  size_t rank = x.type.rank();
  size_t axis = static_cast<size_t>(attr_int(op.attributes(), "axis", op.name()));
  bool keep = attr_bool(op.attributes(), "keepdims", op.name());
  Axes red(rank, false);
  red[axis] = true;
  DType a = acc_type(x.type.dtype);
  Val m = reduce(e, x, red, false, is_max ? Comb::Max : Comb::Min, a);
  DType it = rt.dtype;
  Body top(e);
  Scalar none = highest(top, it);
  Val ins[2] = {x, m};
  std::string maps[2] = {identity_map(rank), reduced_map(red, false)};
  return {reduce_generic(e, ins, maps, x.type.shape, red, keep, none,
                         [&](Body& b, std::span<const Scalar> v, const Scalar& acc) {
                           Scalar xv = b.convert(v[0], a);
                           Scalar hit = is_float(a) ? b.bin("arith.ori", b.cmpf("oeq", xv, v[1]),
                                                            b.bin("arith.andi", is_nan(b, xv), is_nan(b, v[1])))
                                                    : b.cmpi("eq", xv, v[1]);
                           Scalar i = index_as(b, b.index(static_cast<int>(axis)), it);
                           return b.bin("arith.minsi", acc, b.select(hit, i, none));
                         })};
}

// m + log(sum(exp(x - m))) in float64, rounded once; a non-finite m (empty or all -inf: -inf; +inf; NaN,
// which maximumf propagates) is the result itself.
std::vector<Val> lower_logsumexp(Emitter& e, const Operation& op, std::span<const Val> in) {
  const TensorType& rt = result_type(op);
  const Val& x = in[0];
  DType t = x.type.dtype, d = DType::F64;
  size_t rank = x.type.rank();
  Axes red = axes_of(op, rank);
  bool keep = attr_bool(op.attributes(), "keepdims", op.name());
  Val m = reduce(e, x, red, false, Comb::Max, d);
  Body top(e);
  Val ins[2] = {x, m};
  std::string maps[2] = {identity_map(rank), reduced_map(red, false)};
  Val s = reduce_generic(e, ins, maps, x.type.shape, red, false, zero(top, d),
                         [&](Body& b, std::span<const Scalar> v, const Scalar& acc) {
                           Scalar ex = b.un("math.exp", b.bin("arith.subf", b.convert(v[0], d), v[1]));
                           return b.bin("arith.addf", acc, ex, kReassoc);
                         });
  Scalar inf = top.f(std::numeric_limits<double>::infinity(), d);
  Val ms[2] = {m, s};
  return {finish(e, ms, red, keep, rt, [&](Body& b, std::span<const Scalar> v) {
    Scalar r = b.bin("arith.addf", v[0], b.un("math.log", v[1]));
    Scalar finite = b.cmpf("olt", b.un("math.absf", v[0]), inf);
    return b.convert(b.select(finite, r, v[0]), t);
  })};
}

// ---- scans ----

// Writes `scf.for %k = lo to hi` carrying `init` (name, type pairs); body gets the induction variable and
// the carried names and returns the yielded names. Returns the results' names.
struct Carried {
  std::string name, type;
};
Carried carried(const Val& v) { return {v.name, tensor_type(v.type)}; }
Carried carried(const Scalar& s) { return {s.name, element_type(s.dtype)}; }
Carried carried_index(const std::string& name) { return {name, "index"}; }

std::vector<std::string> loop(
    Emitter& e, const std::string& lo, const std::string& hi, const std::vector<Carried>& init,
    const std::function<std::vector<std::string>(const std::string& iv, const std::vector<std::string>& args)>& body) {
  std::string r = e.fresh("%for"), iv = e.fresh("%k");
  std::string step = e.index_constant(1);
  std::vector<std::string> args, types, inits;
  for (const Carried& c : init) {
    args.push_back(e.fresh("%c"));
    types.push_back(c.type);
    inits.push_back(args.back() + " = " + c.name);
  }
  std::string head = init.empty() ? "" : r + ":" + std::to_string(init.size()) + " = ";
  head += "scf.for " + iv + " = " + lo + " to " + hi + " step " + step;
  if (!init.empty()) head += " iter_args(" + join(inits) + ") -> (" + join(types) + ")";
  e.line(head + " {");
  e.indent([&] {
    std::vector<std::string> ys = body(iv, args);
    if (ys.empty())
      e.line("scf.yield");
    else
      e.line("scf.yield " + join(ys) + " : " + join(types));
  });
  e.line("}");
  std::vector<std::string> out;
  for (size_t i = 0; i < init.size(); ++i) out.push_back(r + "#" + std::to_string(i));
  return out;
}

// The offsets/sizes/strides of the slice of x at `pos` along `axis` (extent 1 there), and its type.
struct SliceAt {
  std::string spec;
  TensorType type;
};
SliceAt slice_at(const TensorType& t, size_t axis, const std::vector<std::string>& extents, const std::string& pos) {
  std::vector<std::string> offs, sizes, strides;
  Shape s = t.shape;
  for (size_t i = 0; i < s.rank(); ++i) {
    offs.push_back(i == axis ? pos : "0");
    sizes.push_back(i == axis ? "1" : s[i].is_const() ? std::to_string(s[i].value()) : extents[i]);
    strides.push_back("1");
  }
  s[axis] = DimExpr(1);
  return {"[" + join(offs) + "] [" + join(sizes) + "] [" + join(strides) + "]", TensorType(t.dtype, s)};
}

// Inclusive scan along `axis` (from the end with `reverse`): an scf.for over the axis carrying the
// output and the running slice (in the accumulator type; each stored element rounds once).
Val scan(Emitter& e, const Val& x, size_t axis, bool reverse, Comb c, DType acc) {
  const Shape& s = x.type.shape;
  std::vector<std::string> ext;
  for (size_t i = 0; i < s.rank(); ++i) ext.push_back(s[i].is_const() ? "" : e.extent(s[i]));
  std::string n = e.extent(s[axis]);
  std::string zero_i = e.index_constant(0),
              last = e.assign("arith.subi " + n + ", " + e.index_constant(1) + " : index");
  Shape rs = s;
  rs[axis] = DimExpr(1);
  Body top(e);
  Val run = e.fill(identity(top, c, acc), TensorType(acc, rs));
  Val out = e.empty(x.type);
  std::vector<std::string> res =
      loop(e, zero_i, n, {carried(out), carried(run)}, [&](const std::string& k, const std::vector<std::string>& a) {
        std::string pos = reverse ? e.assign("arith.subi " + last + ", " + k + " : index") : k;
        SliceAt sl = slice_at(x.type, axis, ext, pos);
        Val row{e.assign("tensor.extract_slice " + x.name + sl.spec + " : " + tensor_type(x.type) + " to " +
                         tensor_type(sl.type)),
                sl.type};
        // The running slice is updated in place (outs = the carried tensor): scf.for's bufferization wants
        // each yielded tensor to be its iteration argument's buffer.
        Val prev{a[1], TensorType(acc, rs)};
        std::string im = identity_map(s.rank());
        std::vector<std::string> its(s.rank(), "parallel");
        Val next = e.generic(
            std::span(&row, 1), std::span(&im, 1), prev, im, its,
            [&](Body& b, std::span<const Scalar> v) { return combine(b, c, v[1], b.convert(v[0], acc), false); });
        Val stored = convert_to(e, next, sl.type);
        std::string o = e.assign("tensor.insert_slice " + stored.name + " into " + a[0] + sl.spec + " : " +
                                 tensor_type(sl.type) + " into " + tensor_type(x.type));
        return std::vector<std::string>{o, next.name};
      });
  return {res[0], x.type};
}

std::vector<Val> lower_scan(Emitter& e, const Operation& op, std::span<const Val> in, Comb c) {
  size_t axis = static_cast<size_t>(attr_int(op.attributes(), "axis", op.name()));
  bool reverse = attr_bool(op.attributes(), "reverse", op.name());
  return {scan(e, in[0], axis, reverse, c, acc_type(in[0].type.dtype))};
}

// ---- dot ----

// A contraction: loops = result dims then the contracting dims; each operand's map names them.
// Accumulates in the accumulator type (half floats in float32, rounded once; integers wrap in their own
// width, which equals the interpreter's wider unsigned sum truncated).
Val contraction(Emitter& e, const Val& a, const std::string& amap, const Val& b, const std::string& bmap,
                const TensorType& rt, size_t ncontract) {
  DType t = rt.dtype, acc = acc_type(t);
  size_t R = rt.rank();
  Body top(e);
  Val init = e.fill(zero(top, acc), TensorType(acc, rt.shape));
  std::vector<std::string> its(R, "parallel");
  for (size_t i = 0; i < ncontract; ++i) its.push_back("reduction");
  Val ins[2] = {a, b};
  std::string maps[2] = {amap, bmap};
  Val r = e.generic(ins, maps, init, identity_map(R), its, [&](Body& bd, std::span<const Scalar> v) {
    Scalar x = bd.convert(v[0], acc), y = bd.convert(v[1], acc);
    if (is_float(acc)) return bd.bin("arith.addf", v[2], bd.bin("arith.mulf", x, y), kReassoc);
    if (acc == DType::Bool) return bd.bin("arith.ori", v[2], bd.bin("arith.andi", x, y));
    return bd.bin("arith.addi", v[2], bd.bin("arith.muli", x, y));
  });
  return convert_to(e, r, rt);
}

int64_t position(const Ints& v, int64_t x) {
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] == x) return static_cast<int64_t>(i);
  return -1;
}

// XLA DotGeneral: result dims = batch, lhs free, rhs free; loops add the contracting dims after them.
std::vector<Val> lower_dot_general(Emitter& e, const Operation& op, std::span<const Val> in) {
  const AttrMap& at = op.attributes();
  const std::string& n = op.name();
  const Ints &lc = attr_ints(at, "lhs_contracting_dims", n), &rc = attr_ints(at, "rhs_contracting_dims", n);
  const Ints &lb = attr_ints(at, "lhs_batch_dims", n), &rb = attr_ints(at, "rhs_batch_dims", n);
  const TensorType& rt = result_type(op);
  size_t R = rt.rank(), ra = in[0].type.rank(), rr = in[1].type.rank();
  size_t lfree = ra - lb.size() - lc.size();
  auto map_of = [&](size_t rank, const Ints& batch, const Ints& contract, size_t free_start) {
    std::vector<std::string> v;
    size_t f = free_start;
    for (size_t i = 0; i < rank; ++i) {
      int64_t b = position(batch, static_cast<int64_t>(i)), c = position(contract, static_cast<int64_t>(i));
      if (b >= 0)
        v.push_back(dname(static_cast<size_t>(b)));
      else if (c >= 0)
        v.push_back(dname(R + static_cast<size_t>(c)));
      else
        v.push_back(dname(f++));
    }
    return join(v);
  };
  std::string am = map_of(ra, lb, lc, lb.size()), bm = map_of(rr, rb, rc, lb.size() + lfree);
  return {contraction(e, in[0], am, in[1], bm, rt, lc.size())};
}

// A float32/float64 matrix product handed to BLAS's gemm (evoxc_gemm_* in blas_runtime.cpp, as the
// interpreter does): the operands as buffers of any strides, the product in a fresh buffer. Linalg's
// loop nest, even vectorised by LLVM, was 12x (64^2) to 100x (512^2) slower than BLAS.
// `b_fresh`: b is a tensor this lowering made for the product alone (conv's patch matrix), which nothing else reads,
// so it needs no copy (Emitter::read_buffer).
Val blas_matmul(Emitter& e, const Val& a, const Val& b, const TensorType& rt, bool b_fresh = false) {
  std::string el = element_type(rt.dtype);
  std::string fn = "@evoxc_gemm_" + el;
  std::string dyn = "tensor<?x?x" + el + ">", view = "memref<?x?x" + el + ", strided<[?, ?], offset: ?>>",
              buf = "memref<?x?x" + el + ">";
  e.declare("func.func private " + fn + "(" + view + ", " + view + ", " + buf + ") attributes {llvm.emit_c_interface}");
  std::string av = e.read_buffer(a, dyn, view), bv = e.read_buffer(b, dyn, view, !b_fresh);
  std::string c = e.assign("memref.alloc(" + e.extent(rt.shape[0]) + ", " + e.extent(rt.shape[1]) + ") : " + buf);
  e.line("func.call " + fn + "(" + av + ", " + bv + ", " + c + ") : (" + view + ", " + view + ", " + buf + ") -> ()");
  std::string r = e.assign("bufferization.to_tensor " + c + " restrict writable : " + buf + " to " + dyn);
  return {e.assign("tensor.cast " + r + " : " + dyn + " to " + tensor_type(rt)), rt};
}

// A stack of float32/float64 matrix products (both operands of rank >= 2, batch dims broadcast
// right-aligned): a sequential scf.for nest over the result's batch dims with one gemm per matrix, as
// the interpreter computes it. Each operand's matrix is a rank-reducing slice (an extent-1 batch dim of
// an operand reads index 0); the product is inserted into the result.
Val blas_batched_matmul(Emitter& e, const Operation& op, const Val& a, const Val& b, const TensorType& rt) {
  size_t R = rt.rank(), nb = R - 2;
  Names ivs;
  auto matrix = [&](const Val& x, const DimExpr& rows, const DimExpr& cols) {
    size_t r = x.type.rank(), own = r - 2;
    Names offs, sizes, ones;
    for (size_t i = 0; i < own; ++i) {
      size_t d = nb - own + i;
      if (x.type.shape[i] == rt.shape[d])
        offs.push_back(ivs[d]);
      else if (x.type.shape[i].as_const() == std::optional<int64_t>(1))
        offs.push_back("0");
      else
        Emitter::fail(op, "a batch extent does not broadcast to the result's");
      sizes.push_back("1");
    }
    offs.insert(offs.end(), {"0", "0"});
    sizes.push_back(e.size(rows));
    sizes.push_back(e.size(cols));
    ones.assign(r, "1");
    TensorType mt(x.type.dtype, Shape({rows, cols}));
    return Val{e.assign("tensor.extract_slice " + x.name + "[" + join(offs) + "] [" + join(sizes) + "] [" + join(ones) +
                        "] : " + tensor_type(x.type) + " to " + tensor_type(mt)),
               mt};
  };
  const DimExpr &m = rt.shape[R - 2], &n = rt.shape[R - 1], &k = a.type.shape[a.type.rank() - 1];
  // Statically empty (MLIR rejects the slices' offsets there): no product, or a sum over nothing.
  auto none = [](const DimExpr& d) { return d.as_const() == std::optional<int64_t>(0); };
  if (std::any_of(rt.shape.begin(), rt.shape.end(), none) || none(k)) return zeros(e, rt);
  std::function<std::string(size_t, const std::string&)> level = [&](size_t l, const std::string& acc) {
    if (l == nb) {
      Val p = blas_matmul(e, matrix(a, m, k), matrix(b, k, n), TensorType(rt.dtype, Shape({m, n})));
      Names offs = ivs, sizes(nb, "1");
      offs.insert(offs.end(), {"0", "0"});
      sizes.push_back(e.size(m));
      sizes.push_back(e.size(n));
      return e.assign("tensor.insert_slice " + p.name + " into " + acc + "[" + join(offs) + "] [" + join(sizes) +
                      "] [" + join(Names(R, "1")) + "] : " + tensor_type(p.type) + " into " + tensor_type(rt));
    }
    return loop(e, e.index_constant(0), e.extent(rt.shape[l]), {Carried{acc, tensor_type(rt)}},
                [&](const std::string& iv, const std::vector<std::string>& args) {
                  ivs.push_back(iv);
                  std::string r = level(l + 1, args[0]);
                  ivs.pop_back();
                  return std::vector<std::string>{r};
                })[0];
  };
  return {level(0, e.empty(rt).name), rt};
}

// numpy matmul: batch dims broadcast right-aligned (an extent 1 reads index 0), a 1-D operand contracts
// its only axis and contributes no free dim. The contracting loop is the last.
std::vector<Val> lower_dot(Emitter& e, const Operation& op, std::span<const Val> in) {
  const TensorType& rt = result_type(op);
  const Val &a = in[0], &b = in[1];
  size_t ra = a.type.rank(), rb = b.type.rank(), R = rt.rank();
  if (ra >= 2 && rb >= 2 && (rt.dtype == DType::F32 || rt.dtype == DType::F64) && a.type.dtype == rt.dtype &&
      b.type.dtype == rt.dtype)
    return {R == 2 ? blas_matmul(e, a, b, rt) : blas_batched_matmul(e, op, a, b, rt)};
  std::string k = dname(R);
  // The batch dims of an operand against the result's first `nb` dims.
  auto batch = [&](const Shape& s, size_t count, size_t nb, std::vector<std::string>& v) {
    for (size_t i = 0; i < count; ++i) {
      size_t dim = nb - count + i;
      if (s[i] == rt.shape[dim])
        v.push_back(dname(dim));
      else if (s[i].as_const() == std::optional<int64_t>(1))
        v.push_back("0");
      else
        Emitter::fail(op, "a batch extent does not broadcast to the result's");
    }
  };
  std::vector<std::string> am, bm;
  if (ra == 1) {
    am.push_back(k);
  } else {
    size_t nb = rb == 1 ? R - 1 : R - 2;
    batch(a.type.shape, ra - 2, nb, am);
    am.push_back(dname(nb));
    am.push_back(k);
  }
  if (rb == 1) {
    bm.push_back(k);
  } else {
    size_t nb = ra == 1 ? R - 1 : R - 2;
    batch(b.type.shape, rb - 2, nb, bm);
    bm.push_back(k);
    bm.push_back(dname(R - 1));
  }
  return {contraction(e, a, join(am), b, join(bm), rt, 1)};
}

// float64 to dtype t as the interpreter stores it: through the computation type (float for all but f64).
Scalar store_from_f64(Body& b, const Scalar& x, DType t) {
  if (t == DType::F64) return x;
  return b.convert(b.cast("arith.truncf", x, DType::F32), t);
}

// numpy.trace: over axis1 and axis2 the elements with j - i == offset; integers wrap in their type,
// floats sum in float64 in order along the diagonal and round once.
std::vector<Val> lower_trace(Emitter& e, const Operation& op, std::span<const Val> in) {
  const AttrMap& at = op.attributes();
  int64_t off = attr_int(at, "offset", op.name());
  size_t a1 = static_cast<size_t>(attr_int(at, "axis1", op.name()));
  size_t a2 = static_cast<size_t>(attr_int(at, "axis2", op.name()));
  const Val& x = in[0];
  DType t = x.type.dtype, acc = is_float(t) ? DType::F64 : t;
  size_t rank = x.type.rank();
  Axes red(rank, false);
  red[a1] = red[a2] = true;
  Body top(e);
  Scalar z = zero(top, acc);
  std::string offc = e.index_constant(off);
  std::string m = identity_map(rank);
  Val s = reduce_generic(e, std::span(&x, 1), std::span(&m, 1), x.type.shape, red, false, z,
                         [&](Body& b, std::span<const Scalar> v, const Scalar& a) {
                           std::string i = b.index(static_cast<int>(a1)), j = b.index(static_cast<int>(a2));
                           std::string d = b.fresh(), on = b.fresh();
                           b.line(d + " = arith.subi " + j + ", " + i + " : index");
                           b.line(on + " = arith.cmpi eq, " + d + ", " + offc + " : index");
                           Scalar y = b.select({on, DType::Bool}, b.convert(v[0], acc), z);
                           return combine(b, Comb::Sum, a, y, false);
                         });
  if (!is_float(t)) return {s};
  return {e.map({s}, result_type(op), [&](Body& b, std::span<const Scalar> v) { return store_from_f64(b, v[0], t); })};
}

// ---- conv ----

// N-d cross-correlation: loops (N, O, out spatial..., C/groups, window...). The rhs is read through its map;
// the lhs element of input channel g * Cg + ci at xd = o * stride + k * rhs_dilation - pad_low (per spatial
// dim) through tensor.extract, where a padded, cropped-away or lhs-dilation hole position reads 0 (its
// index clamped into range so the read stays inside the buffer).
// The conv's attributes and the input extents its window reads check against.
struct ConvWindow {
  Ints strides, pad, ldil, rdil;
  std::vector<std::string> in_ext;  // input spatial extents (the loop form's bounds checks)
};

// In a body: the input element at batch `nb`, channel `ch`, out position `os[i]` and window offset `k[i]`
// per spatial dim (xd = os * stride + k * rhs_dilation - pad_low), in dtype `acc`; 0 where that position is
// padding, cropped away or an lhs-dilation hole (the index clamped into range so the read stays inside).
Scalar window_read(Body& b, const Val& x, const ConvWindow& cw, const std::string& nb, const std::string& ch,
                   const std::vector<std::string>& os, const std::vector<std::string>& k, DType acc) {
  auto idx = [&](const std::string& op_, const std::string& l, const std::string& rr) {
    std::string s = b.fresh();
    b.line(s + " = " + op_ + " " + l + ", " + rr + " : index");
    return s;
  };
  auto cmp = [&](const std::string& pred, const std::string& l, const std::string& rr) {
    std::string s = b.fresh();
    b.line(s + " = arith.cmpi " + pred + ", " + l + ", " + rr + " : index");
    return Scalar{s, DType::Bool};
  };
  Emitter& e = b.emitter();
  std::string c0 = e.index_constant(0), c1 = e.index_constant(1);
  std::vector<std::string> ix{nb, ch};
  Scalar ok = b.b(true);
  for (size_t i = 0; i < os.size(); ++i) {
    std::string xd = idx("arith.subi",
                         idx("arith.addi", idx("arith.muli", os[i], e.index_constant(cw.strides[i])),
                             idx("arith.muli", k[i], e.index_constant(cw.rdil[i]))),
                         e.index_constant(cw.pad[2 * i]));
    std::string ld = e.index_constant(cw.ldil[i]);
    std::string q = idx("arith.divsi", xd, ld);
    Scalar inside = b.bin("arith.andi", cmp("sge", xd, c0), cmp("eq", idx("arith.remsi", xd, ld), c0));
    inside = b.bin("arith.andi", inside, cmp("slt", q, cw.in_ext[i]));
    ok = b.bin("arith.andi", ok, inside);
    // clamp into [0, extent - 1] so the read stays in the buffer (extent 0: no loop runs)
    ix.push_back(idx("arith.maxsi", idx("arith.minsi", q, idx("arith.subi", cw.in_ext[i], c1)), c0));
  }
  std::string xv = b.fresh();
  b.line(xv + " = tensor.extract " + x.name + "[" + join(ix) + "] : " + tensor_type(x.type));
  return b.select(ok, b.convert({xv, x.type.dtype}, acc), zero(b, acc));
}

// An ungrouped float32/float64 conv as the interpreter computes it, through BLAS's gemm: the input is
// written into a zero tensor at its lhs dilation and positive padding (negative padding crops: an
// offset in the reads), then the windows gathered into a patch matrix laid out (C, window..., N, out
// spatial...) by one linalg.generic whose read is an affine map (no bounds checks; the innermost loop
// walks an output row, so it vectorises at unit stride), the kernel viewed as (O, C * window) times that
// matrix, and the (O, N * out positions) product transposed to (N, O, out spatial...).
Val conv_gemm(Emitter& e, const Val& x, const Val& w, const TensorType& rt, const ConvWindow& cw) {
  size_t n = rt.rank() - 2;
  DType t = rt.dtype;
  // The padded input and where x goes in it.
  std::vector<DimExpr> pdims{x.type.shape[0], x.type.shape[1]};
  Names offs{"0", "0"}, sizes{e.size(x.type.shape[0]), e.size(x.type.shape[1])}, steps{"1", "1"};
  std::vector<int64_t> shift;  // per spatial dim: where dilated index 0 is read from, past the cropping
  for (size_t i = 0; i < n; ++i) {
    const DimExpr& h = x.type.shape[2 + i];
    int64_t lo = cw.pad[2 * i], hi = cw.pad[2 * i + 1], l = cw.ldil[i];
    DimExpr dilated = max((h - DimExpr(1)) * DimExpr(l) + DimExpr(1), DimExpr(0));
    pdims.push_back(dilated + DimExpr(std::max<int64_t>(lo, 0) + std::max<int64_t>(hi, 0)));
    offs.push_back(std::to_string(std::max<int64_t>(lo, 0)));
    sizes.push_back(e.size(h));
    steps.push_back(std::to_string(l));
    shift.push_back(std::max<int64_t>(-lo, 0));
  }
  Body top(e);
  Val padded0 = e.fill(zero(top, t), TensorType(t, Shape(pdims)));
  Val padded{
      e.assign("tensor.insert_slice " + x.name + " into " + padded0.name + "[" + join(offs) + "] [" + join(sizes) +
               "] [" + join(steps) + "] : " + tensor_type(x.type) + " into " + tensor_type(padded0.type)),
      padded0.type};
  // Patches (C, window..., N, out spatial...): loop d0 = c, d(1+i) = window offset i, d(1+n) = batch,
  // d(2+n+i) = out position i.
  std::vector<DimExpr> qd{x.type.shape[1]};
  for (size_t i = 0; i < n; ++i) qd.push_back(w.type.shape[2 + i]);
  qd.push_back(x.type.shape[0]);
  for (size_t i = 0; i < n; ++i) qd.push_back(rt.shape[2 + i]);
  Shape qs(qd);
  Names read{dname(1 + n), dname(0)};
  for (size_t i = 0; i < n; ++i)
    read.push_back(dname(2 + n + i) + " * " + std::to_string(cw.strides[i]) + " + " + dname(1 + i) + " * " +
                   std::to_string(cw.rdil[i]) + " + " + std::to_string(shift[i]));
  std::string rmap = join(read);
  Val patches =
      e.generic(std::span(&padded, 1), std::span(&rmap, 1), e.empty(TensorType(t, qs)), identity_map(qs.rank()),
                Names(qs.rank(), "parallel"), [](Body&, std::span<const Scalar> v) { return v[0]; });
  // Collapses dims [0, split) and [split, rank) of v into two.
  auto collapse = [&](const Val& v, size_t split) {
    DimExpr rows(1), cols(1);
    Names g0, g1;
    for (size_t i = 0; i < v.type.rank(); ++i) {
      (i < split ? rows : cols) = (i < split ? rows : cols) * v.type.shape[i];
      (i < split ? g0 : g1).push_back(std::to_string(i));
    }
    TensorType ct(t, Shape({rows, cols}));
    return Val{e.assign("tensor.collapse_shape " + v.name + " [[" + join(g0) + "], [" + join(g1) +
                        "]] : " + tensor_type(v.type) + " into " + tensor_type(ct)),
               ct};
  };
  Val pm = collapse(patches, 1 + n), wm = collapse(w, 1);
  Val prod = blas_matmul(e, wm, pm, TensorType(t, Shape({w.type.shape[0], pm.type.shape[1]})), true);
  // (O, N * out positions) -> (O, N, out spatial...) -> (N, O, out spatial...)
  std::vector<DimExpr> ed{w.type.shape[0], x.type.shape[0]};
  for (size_t i = 0; i < n; ++i) ed.push_back(rt.shape[2 + i]);
  Shape es(ed);
  Names g1, out_shape;
  for (size_t i = 1; i < n + 2; ++i) g1.push_back(std::to_string(i));
  for (const DimExpr& d : es) out_shape.push_back(e.size(d));
  TensorType et(t, es);
  Val expanded{e.assign("tensor.expand_shape " + prod.name + " [[0], [" + join(g1) + "]] output_shape [" +
                        join(out_shape) + "] : " + tensor_type(prod.type) + " into " + tensor_type(et)),
               et};
  Names back{dname(1), dname(0)};
  for (size_t i = 0; i < n; ++i) back.push_back(dname(2 + i));
  std::string map = join(back);
  return e.generic(std::span(&expanded, 1), std::span(&map, 1), e.empty(rt), identity_map(n + 2),
                   Names(n + 2, "parallel"), [](Body&, std::span<const Scalar> v) { return v[0]; });
}

// N-d cross-correlation. Ungrouped float32/float64: conv_gemm. Otherwise loops (N, O, out spatial...,
// C/groups, window...): the rhs is read through its map, the lhs element of input channel g * Cg + ci
// through window_read.
std::vector<Val> lower_conv(Emitter& e, const Operation& op, std::span<const Val> in) {
  const AttrMap& at = op.attributes();
  const std::string& name = op.name();
  const TensorType& rt = result_type(op);
  ConvWindow cw{attr_ints(at, "window_strides", name),
                attr_ints(at, "padding", name),
                attr_ints(at, "lhs_dilation", name),
                attr_ints(at, "rhs_dilation", name),
                {}};
  int64_t groups = attr_int(at, "feature_group_count", name);
  const Val &x = in[0], &w = in[1];
  size_t n = rt.rank() - 2;
  DType acc = acc_type(rt.dtype);
  // An empty input (a padded window reads only zeros) or result is zeros: no element exists to clamp a read into.
  auto none = [](const DimExpr& d) { return d.as_const() == std::optional<int64_t>(0); };
  if (std::any_of(x.type.shape.begin(), x.type.shape.end(), none) ||
      std::any_of(rt.shape.begin(), rt.shape.end(), none))
    return {zeros(e, rt)};
  if (groups == 1 && (rt.dtype == DType::F32 || rt.dtype == DType::F64) && x.type.dtype == rt.dtype &&
      w.type.dtype == rt.dtype)
    return {conv_gemm(e, x, w, rt, cw)};
  for (size_t i = 0; i < n; ++i) cw.in_ext.push_back(e.extent(x.type.shape[2 + i]));
  // loop dims: 0 batch, 1 out feature, 2..2+n out spatial, 2+n input feature in group, 3+n.. window
  std::vector<std::string> wmap{dname(1), dname(2 + n)};
  for (size_t i = 0; i < n; ++i) wmap.push_back(dname(3 + n + i));
  std::vector<std::string> its(2 + n, "parallel");
  for (size_t i = 0; i <= n; ++i) its.push_back("reduction");
  // Extents read in the body: out features per group, input features per group.
  std::string og = e.assign("arith.divui " + e.extent(w.type.shape[0]) + ", " + e.index_constant(groups) + " : index");
  std::string cg = e.extent(w.type.shape[1]);
  Body top(e);
  Val init = e.fill(zero(top, acc), TensorType(acc, rt.shape));
  std::string wm = join(wmap);
  Val r = e.generic(std::span(&w, 1), std::span(&wm, 1), init, identity_map(2 + n), its,
                    [&](Body& b, std::span<const Scalar> v) {
                      std::string o = b.index(1), ci = b.index(static_cast<int>(2 + n));
                      std::string ch = b.fresh(), base = b.fresh(), grp = b.fresh();
                      b.line(grp + " = arith.divui " + o + ", " + og + " : index");
                      b.line(base + " = arith.muli " + grp + ", " + cg + " : index");
                      b.line(ch + " = arith.addi " + base + ", " + ci + " : index");
                      std::vector<std::string> os, k;
                      for (size_t i = 0; i < n; ++i) {
                        os.push_back(b.index(static_cast<int>(2 + i)));
                        k.push_back(b.index(static_cast<int>(3 + n + i)));
                      }
                      Scalar xz = window_read(b, x, cw, b.index(0), ch, os, k, acc), ws = b.convert(v[0], acc);
                      if (is_float(acc)) return b.bin("arith.addf", v[1], b.bin("arith.mulf", xz, ws), kReassoc);
                      return b.bin("arith.addi", v[1], b.bin("arith.muli", xz, ws));
                    });
  return {convert_to(e, r, rt)};
}

// ---- decompositions: scalar loops over one matrix of the collapsed batch at a time ----

// Scalar code in loop bodies: index arithmetic, element reads and writes of carried tensors.
struct Code {
  Emitter& e;
  Body b;
  explicit Code(Emitter& em) : e(em), b(em) {}
  std::string c(int64_t v) { return e.index_constant(v); }
  std::string iop(const char* op, const std::string& x, const std::string& y) {
    return e.assign(std::string(op) + " " + x + ", " + y + " : index");
  }
  std::string add(const std::string& x, const std::string& y) { return iop("arith.addi", x, y); }
  std::string sub(const std::string& x, const std::string& y) { return iop("arith.subi", x, y); }
  Scalar icmp(const char* pred, const std::string& x, const std::string& y) {
    return {e.assign(std::string("arith.cmpi ") + pred + ", " + x + ", " + y + " : index"), DType::Bool};
  }
  std::string iselect(const Scalar& cond, const std::string& x, const std::string& y) {
    return e.assign("arith.select " + cond.name + ", " + x + ", " + y + " : index");
  }
  Scalar get(const Val& t, const std::vector<std::string>& idx) {
    return {e.assign("tensor.extract " + t.name + "[" + join(idx) + "] : " + tensor_type(t.type)), t.type.dtype};
  }
  Val put(const Scalar& v, const Val& t, const std::vector<std::string>& idx) {
    return {e.assign("tensor.insert " + v.name + " into " + t.name + "[" + join(idx) + "] : " + tensor_type(t.type)),
            t.type};
  }
  Scalar f(double v, DType t) { return b.f(v, t); }
  Scalar absf(const Scalar& x) { return b.un("math.absf", x); }
  Scalar mul(const Scalar& x, const Scalar& y) { return b.bin("arith.mulf", x, y); }
  Scalar fadd(const Scalar& x, const Scalar& y) { return b.bin("arith.addf", x, y); }
  Scalar fsub(const Scalar& x, const Scalar& y) { return b.bin("arith.subf", x, y); }
  Scalar div(const Scalar& x, const Scalar& y) { return b.bin("arith.divf", x, y); }
  // |x| is inf or NaN
  Scalar infinite(const Scalar& x) {
    return b.cmpf("uge", absf(x), f(std::numeric_limits<double>::infinity(), x.dtype));
  }
};

// A tensor value carried through loops: rebinds its name, keeps its type.
Val named(const std::string& name, const TensorType& t) { return {name, t}; }

// t with its leading `nb` dims as one (B, rest...); nb = 0 adds a unit dim.
TensorType lead_type(const TensorType& t, size_t nb) {
  const Shape& s = t.shape;
  DimExpr B(1);
  for (size_t i = 0; i < nb; ++i) B = B * s[i];
  Shape out{B};
  for (size_t i = nb; i < s.rank(); ++i) out.dims().push_back(s[i]);
  return TensorType(t.dtype, out);
}

// The leading `nb` dims of x collapsed into one (B, rest...); nb = 0 adds a unit dim.
Val collapse_lead(Emitter& e, const Val& x, size_t nb) {
  const Shape& s = x.type.shape;
  size_t r = s.rank(), k = r - nb;
  TensorType t = lead_type(x.type, nb);
  if (nb == 1) return {x.name, t};
  std::vector<std::string> groups;
  if (nb == 0) {
    std::vector<std::string> sizes{"1"};
    for (size_t i = 0; i < k; ++i) {
      groups.push_back(i == 0 ? "[0, 1]" : "[" + std::to_string(i + 1) + "]");
      sizes.push_back(s[i].is_const() ? std::to_string(s[i].value()) : e.extent(s[i]));
    }
    return {e.assign("tensor.expand_shape " + x.name + " [" + join(groups) + "] output_shape [" + join(sizes) +
                     "] : " + tensor_type(x.type) + " into " + tensor_type(t)),
            t};
  }
  std::vector<std::string> lead;
  for (size_t i = 0; i < nb; ++i) lead.push_back(std::to_string(i));
  groups.push_back("[" + join(lead) + "]");
  for (size_t i = nb; i < r; ++i) groups.push_back("[" + std::to_string(i) + "]");
  return {e.assign("tensor.collapse_shape " + x.name + " [" + join(groups) + "] : " + tensor_type(x.type) + " into " +
                   tensor_type(t)),
          t};
}

// The inverse of collapse_lead: (B, rest...) back to `full` (whose leading `nb` dims B stands for).
Val expand_lead(Emitter& e, const Val& y, const TensorType& full, size_t nb) {
  const Shape& s = full.shape;
  size_t r = s.rank();
  TensorType t(y.type.dtype, s);
  if (nb == 1) return {y.name, t};
  std::vector<std::string> groups;
  if (nb == 0) {
    for (size_t i = 0; i < r; ++i) groups.push_back(i == 0 ? "[0, 1]" : "[" + std::to_string(i + 1) + "]");
    return {e.assign("tensor.collapse_shape " + y.name + " [" + join(groups) + "] : " + tensor_type(y.type) + " into " +
                     tensor_type(t)),
            t};
  }
  std::vector<std::string> lead, sizes;
  for (size_t i = 0; i < nb; ++i) lead.push_back(std::to_string(i));
  groups.push_back("[" + join(lead) + "]");
  for (size_t i = nb; i < r; ++i) groups.push_back("[" + std::to_string(i) + "]");
  for (size_t i = 0; i < r; ++i) sizes.push_back(s[i].is_const() ? std::to_string(s[i].value()) : e.extent(s[i]));
  return {e.assign("tensor.expand_shape " + y.name + " [" + join(groups) + "] output_shape [" + join(sizes) +
                   "] : " + tensor_type(y.type) + " into " + tensor_type(t)),
          t};
}

// x converted to dtype t (elementwise) and collapsed to (B, M, N).
Val matrices(Emitter& e, const Val& x, DType t) {
  Val c = convert_to(e, x, TensorType(t, x.type.shape));
  return collapse_lead(e, c, x.type.rank() - 2);
}

// A (B, P, Q) result of the computation type back to the op's result type (batch dims restored, rounded once).
Val result_from(Emitter& e, const Val& y, const TensorType& rt, size_t nb) {
  Val full = expand_lead(e, y, TensorType(y.type.dtype, rt.shape), nb);
  if (full.type.dtype == rt.dtype) return full;
  return e.map({full}, rt, [&](Body& b, std::span<const Scalar> v) { return b.convert(v[0], rt.dtype); });
}

// The extent `axis` of the 3-D value x: a literal for a static one, else tensor.dim of x itself (the
// collapsed batch extent is no symbol of the inputs).
std::string dim_of(Emitter& e, const Val& x, size_t axis) {
  const DimExpr& d = x.type.shape[axis];
  if (d.is_const()) return e.index_constant(d.value());
  return e.assign("tensor.dim " + x.name + ", " + e.index_constant(static_cast<int64_t>(axis)) + " : " +
                  tensor_type(x.type));
}

// LU with partial pivoting of one matrix `bi` of A (B, M, N), as LAPACK's getf2: the pivot is the first
// row of largest |a[i, k]| at or below k (compared with >, so a NaN wins only in row k), rows k and p swap
// (in A, in `perm` and in every rhs), a nonzero pivot scales the column below by its reciprocal (by
// division below the smallest normal), then the rank-1 update of the trailing matrix.
struct LuState {
  Val a, piv, perm;
  std::vector<Val> rhs;
};
LuState lu_one(Emitter& e, const std::string& bi, LuState st, const std::string& m, const std::string& n,
               const std::string& kmin) {
  Code cd(e);
  DType ft = st.a.type.dtype;
  double sfmin = ft == DType::F64 ? std::numeric_limits<double>::min() : std::numeric_limits<float>::min();
  std::string c0 = cd.c(0), c1 = cd.c(1);
  // perm = iota(M)
  {
    auto r = loop(e, c0, m, {carried(st.perm)}, [&](const std::string& i, const std::vector<std::string>& a) {
      Val p = named(a[0], st.perm.type);
      return std::vector<std::string>{cd.put(index_as(cd.b, i, DType::I32), p, {bi, i}).name};
    });
    st.perm.name = r[0];
  }
  std::vector<Carried> carry{carried(st.a), carried(st.piv), carried(st.perm)};
  for (const Val& v : st.rhs) carry.push_back(carried(v));
  auto res = loop(e, c0, kmin, carry, [&](const std::string& k, const std::vector<std::string>& a) {
    Val A = named(a[0], st.a.type), P = named(a[1], st.piv.type), Pm = named(a[2], st.perm.type);
    std::vector<Val> R;
    for (size_t i = 0; i < st.rhs.size(); ++i) R.push_back(named(a[3 + i], st.rhs[i].type));
    std::string k1 = cd.add(k, c1);
    Scalar best = cd.absf(cd.get(A, {bi, k, k}));
    auto pv =
        loop(e, k1, m, {carried_index(k), carried(best)}, [&](const std::string& i, const std::vector<std::string>& c) {
          Scalar v = cd.absf(cd.get(A, {bi, i, k}));
          Scalar gt = cd.b.cmpf("ogt", v, {c[1], ft});
          return std::vector<std::string>{cd.iselect(gt, i, c[0]), cd.b.select(gt, v, {c[1], ft}).name};
        });
    std::string p = pv[0];
    P = cd.put(index_as(cd.b, p, DType::I32), P, {bi, k});
    // Swap rows k and p of A and of each rhs (a no-op when p == k).
    auto swap_rows = [&](const Val& X, const std::string& cols) {
      auto r = loop(e, c0, cols, {carried(X)}, [&](const std::string& j, const std::vector<std::string>& c) {
        Val Y = named(c[0], X.type);
        Scalar u = cd.get(Y, {bi, k, j}), w = cd.get(Y, {bi, p, j});
        Y = cd.put(w, Y, {bi, k, j});
        Y = cd.put(u, Y, {bi, p, j});
        return std::vector<std::string>{Y.name};
      });
      return named(r[0], X.type);
    };
    A = swap_rows(A, n);
    for (Val& v : R) v = swap_rows(v, dim_of(e, v, 2));
    {
      Scalar u = cd.get(Pm, {bi, k}), w = cd.get(Pm, {bi, p});
      Pm = cd.put(w, Pm, {bi, k});
      Pm = cd.put(u, Pm, {bi, p});
    }
    Scalar piv = cd.get(A, {bi, k, k});
    Scalar nz = cd.b.cmpf("une", piv, cd.f(0.0, ft));
    Scalar big = cd.b.cmpf("oge", cd.absf(piv), cd.f(sfmin, ft));
    Scalar rcp = cd.div(cd.f(1.0, ft), piv);
    auto sc = loop(e, k1, m, {carried(A)}, [&](const std::string& i, const std::vector<std::string>& c) {
      Val Y = named(c[0], A.type);
      Scalar v = cd.get(Y, {bi, i, k});
      Scalar s = cd.b.select(nz, cd.b.select(big, cd.mul(v, rcp), cd.div(v, piv)), v);
      return std::vector<std::string>{cd.put(s, Y, {bi, i, k}).name};
    });
    A = named(sc[0], A.type);
    auto up = loop(e, k1, m, {carried(A)}, [&](const std::string& i, const std::vector<std::string>& c) {
      Val Y = named(c[0], A.type);
      Scalar l = cd.get(Y, {bi, i, k});
      auto row = loop(e, k1, n, {carried(Y)}, [&](const std::string& j, const std::vector<std::string>& c2) {
        Val Z = named(c2[0], A.type);
        Scalar v = cd.fsub(cd.get(Z, {bi, i, j}), cd.mul(l, cd.get(Z, {bi, k, j})));
        return std::vector<std::string>{cd.put(v, Z, {bi, i, j}).name};
      });
      return row;
    });
    A = named(up[0], A.type);
    std::vector<std::string> out{A.name, P.name, Pm.name};
    for (const Val& v : R) out.push_back(v.name);
    return out;
  });
  st.a.name = res[0];
  st.piv.name = res[1];
  st.perm.name = res[2];
  for (size_t i = 0; i < st.rhs.size(); ++i) st.rhs[i].name = res[3 + i];
  return st;
}

// Solves with the factored matrix of one batch element (getrs after the swaps): the unit-lower then
// the upper substitution of every column of X (B, N, K), each in the order of the reference trsm.
Val lu_substitute(Emitter& e, const std::string& bi, const Val& LU, Val X, const std::string& n) {
  Code cd(e);
  DType ft = LU.type.dtype;
  std::string c0 = cd.c(0), c1 = cd.c(1);
  std::string ncols = dim_of(e, X, 2);
  auto r = loop(e, c0, ncols, {carried(X)}, [&](const std::string& col, const std::vector<std::string>& a) {
    Val Y = named(a[0], X.type);
    auto fw = loop(e, c0, n, {carried(Y)}, [&](const std::string& i, const std::vector<std::string>& c) {
      Val Z = named(c[0], X.type);
      auto s = loop(e, c0, i, {carried(cd.get(Z, {bi, i, col}))},
                    [&](const std::string& j, const std::vector<std::string>& d) {
                      return std::vector<std::string>{
                          cd.fsub({d[0], ft}, cd.mul(cd.get(Z, {bi, j, col}), cd.get(LU, {bi, i, j}))).name};
                    });
      return std::vector<std::string>{cd.put({s[0], ft}, Z, {bi, i, col}).name};
    });
    Y = named(fw[0], X.type);
    auto bw = loop(e, c0, n, {carried(Y)}, [&](const std::string& ii, const std::vector<std::string>& c) {
      Val Z = named(c[0], X.type);
      std::string i = cd.sub(cd.sub(n, c1), ii);
      std::string i1 = cd.add(i, c1);
      // X[i] -= U[i, j] X[j] for j from the last down to i + 1, then X[i] /= U[i, i]
      auto s = loop(e, i1, n, {carried(cd.get(Z, {bi, i, col}))},
                    [&](const std::string& jj, const std::vector<std::string>& d) {
                      std::string j = cd.sub(cd.add(n, i), jj);  // n - 1 - (jj - i - 1)
                      return std::vector<std::string>{
                          cd.fsub({d[0], ft}, cd.mul(cd.get(Z, {bi, j, col}), cd.get(LU, {bi, i, j}))).name};
                    });
      Scalar x = cd.div({s[0], ft}, cd.get(LU, {bi, i, i}));
      return std::vector<std::string>{cd.put(x, Z, {bi, i, col}).name};
    });
    return bw;
  });
  return named(r[0], X.type);
}

// The batch loop: for each matrix bi of the collapsed batch, `body` updates the carried tensors.
std::vector<Val> per_matrix(Emitter& e, const Val& lead, const std::vector<Val>& carry,
                            const std::function<std::vector<Val>(const std::string& bi, std::vector<Val>)>& body) {
  std::string B = dim_of(e, lead, 0);
  std::vector<Carried> cs;
  // Each carried tensor starts as a copy in a buffer of its own: the loops write into it in place, and
  // without the copy one-shot-bufferize may write into a function argument (the caller's input) or into a
  // view of one (a reshaped input).
  for (const Val& v : carry)
    cs.push_back(
        {e.assign("bufferization.alloc_tensor() copy(" + v.name + ") : " + tensor_type(v.type)), tensor_type(v.type)});
  auto r = loop(e, e.index_constant(0), B, cs, [&](const std::string& bi, const std::vector<std::string>& a) {
    std::vector<Val> vs;
    for (size_t i = 0; i < carry.size(); ++i) vs.push_back(named(a[i], carry[i].type));
    std::vector<std::string> out;
    for (const Val& v : body(bi, vs)) out.push_back(v.name);
    return out;
  });
  std::vector<Val> out;
  for (size_t i = 0; i < carry.size(); ++i) out.push_back(named(r[i], carry[i].type));
  return out;
}

TensorType with_dtype(const TensorType& t, DType d) { return TensorType(d, t.shape); }

// lu: (lu, pivots, permutation); half floats factor in float32.
std::vector<Val> lower_lu(Emitter& e, const Operation& op, std::span<const Val> in) {
  DType t = in[0].type.dtype, ft = acc_type(t);
  size_t nb = in[0].type.rank() - 2;
  Val A = matrices(e, in[0], ft);
  std::string m = dim_of(e, A, 1), n = dim_of(e, A, 2);
  std::string kmin = e.assign("arith.minsi " + m + ", " + n + " : index");
  TensorType pt = lead_type(result_type(op, 1), nb), mt = lead_type(result_type(op, 2), nb);
  Val piv = zeros(e, pt), perm = zeros(e, mt);
  auto out = per_matrix(e, A, {A, piv, perm}, [&](const std::string& bi, std::vector<Val> v) {
    LuState s = lu_one(e, bi, {v[0], v[1], v[2], {}}, m, n, kmin);
    return std::vector<Val>{s.a, s.piv, s.perm};
  });
  return {result_from(e, out[0], result_type(op, 0), nb), expand_lead(e, out[1], result_type(op, 1), nb),
          expand_lead(e, out[2], result_type(op, 2), nb)};
}

// solve (a x = b) and inv (b = I): getrf then getrs; a zero pivot divides by zero there (inf/NaN, as LAPACK).
std::vector<Val> lower_solve(Emitter& e, const Operation& op, std::span<const Val> in, bool inverse) {
  const TensorType& rt = result_type(op);
  DType t = rt.dtype, ft = acc_type(t);
  size_t nb = in[0].type.rank() - 2;
  Val A = matrices(e, in[0], ft);
  std::string n = dim_of(e, A, 1);
  Val X;
  if (inverse) {
    TensorType xt = A.type;
    X = e.map({A}, xt, [&](Body& b, std::span<const Scalar>) {
      std::string i = b.index(1), j = b.index(2), eq = b.fresh();
      b.line(eq + " = arith.cmpi eq, " + i + ", " + j + " : index");
      return b.select({eq, DType::Bool}, b.f(1.0, ft), b.f(0.0, ft));
    });
  } else {
    X = matrices(e, in[1], ft);
  }
  TensorType pt(DType::I32, Shape{A.type.shape[0], A.type.shape[1]});
  Val piv = zeros(e, pt), perm = zeros(e, pt);
  auto out = per_matrix(e, A, {A, piv, perm, X}, [&](const std::string& bi, std::vector<Val> v) {
    LuState s = lu_one(e, bi, {v[0], v[1], v[2], {v[3]}}, n, n, n);
    Val x = lu_substitute(e, bi, s.a, s.rhs[0], n);
    return std::vector<Val>{s.a, s.piv, s.perm, x};
  });
  return {result_from(e, out[3], rt, nb)};
}

// det: the product of U's diagonal, negated per row swap, in the interpreter's order (0x0: 1).
// slogdet: sign and sum of log|u|; a zero pivot gives (0, -inf), a NaN on U's diagonal (NaN, NaN).
std::vector<Val> lower_det(Emitter& e, const Operation& op, std::span<const Val> in, bool slog) {
  DType t = in[0].type.dtype, ft = acc_type(t);
  size_t nb = in[0].type.rank() - 2;
  Val A = matrices(e, in[0], ft);
  std::string n = dim_of(e, A, 1);
  TensorType pt(DType::I32, Shape{A.type.shape[0], A.type.shape[1]});
  TensorType bt(ft, Shape{A.type.shape[0]});
  Val piv = zeros(e, pt), perm = zeros(e, pt), r0 = zeros(e, bt), r1 = zeros(e, bt);
  auto out = per_matrix(e, A, {A, piv, perm, r0, r1}, [&](const std::string& bi, std::vector<Val> v) {
    LuState s = lu_one(e, bi, {v[0], v[1], v[2], {}}, n, n, n);
    Code cd(e);
    Scalar one_ = cd.f(1.0, ft), zero_ = cd.f(0.0, ft);
    Scalar nan_flag = cd.b.b(false);
    auto acc = loop(e, cd.c(0), n, {carried(one_), carried(one_), carried(zero_), carried(nan_flag)},
                    [&](const std::string& i, const std::vector<std::string>& a) {
                      Scalar sign{a[0], ft}, det{a[1], ft}, logabs{a[2], ft}, nan{a[3], DType::Bool};
                      Scalar u = cd.get(s.a, {bi, i, i});
                      Scalar swapped = cd.icmp(
                          "ne", cd.e.assign("arith.index_cast " + cd.get(s.piv, {bi, i}).name + " : i32 to index"), i);
                      sign = cd.b.select(swapped, cd.b.un("arith.negf", sign), sign);
                      det = cd.b.select(swapped, cd.b.un("arith.negf", det), det);
                      det = cd.mul(det, u);
                      nan = cd.b.bin("arith.ori", nan, is_nan(cd.b, u));
                      sign = cd.b.select(cd.b.cmpf("olt", u, zero_), cd.b.un("arith.negf", sign), sign);
                      sign = cd.b.select(cd.b.cmpf("oeq", u, zero_), zero_, sign);
                      logabs = cd.fadd(logabs, cd.b.un("math.log", cd.absf(u)));
                      return std::vector<std::string>{sign.name, det.name, logabs.name, nan.name};
                    });
    Scalar sign{acc[0], ft}, det{acc[1], ft}, logabs{acc[2], ft}, nan{acc[3], DType::Bool};
    Scalar qn = cd.f(std::numeric_limits<double>::quiet_NaN(), ft);
    sign = cd.b.select(nan, qn, sign);
    logabs = cd.b.select(nan, qn, logabs);
    logabs = cd.b.select(cd.b.cmpf("oeq", sign, zero_), cd.f(-std::numeric_limits<double>::infinity(), ft), logabs);
    Val o0 = cd.put(slog ? sign : det, v[3], {bi});
    Val o1 = cd.put(logabs, v[4], {bi});
    return std::vector<Val>{s.a, s.piv, s.perm, o0, o1};
  });
  Val d0 = result_from(e, out[3], result_type(op, 0), nb);
  if (!slog) return {d0};
  return {d0, result_from(e, out[4], result_type(op, 1), nb)};
}

// cholesky as potf2: column j of L from the triangle `lower` names (the other is never read), the
// diagonal's square root, the column below scaled by its reciprocal; a pivot that is not > 0 or a
// non-finite factor entry makes the whole matrix NaN. The other triangle of the result is 0.
std::vector<Val> lower_cholesky(Emitter& e, const Operation& op, std::span<const Val> in) {
  bool lower = attr_bool(op.attributes(), "lower", op.name());
  const TensorType& rt = result_type(op);
  DType ft = acc_type(rt.dtype);
  size_t nb = in[0].type.rank() - 2;
  Val A = matrices(e, in[0], ft);
  std::string n = dim_of(e, A, 1);
  Val L0 = zeros(e, A.type);
  auto out = per_matrix(e, A, {L0}, [&](const std::string& bi, std::vector<Val> v) {
    Code cd(e);
    std::string c0 = cd.c(0), c1 = cd.c(1);
    // element (i, j), i >= j, of the triangle read / of the factor in the result
    auto a_at = [&](const std::string& i, const std::string& j) {
      return lower ? cd.get(A, {bi, i, j}) : cd.get(A, {bi, j, i});
    };
    auto l_at = [&](const Val& L, const std::string& i, const std::string& j) {
      return lower ? cd.get(L, {bi, i, j}) : cd.get(L, {bi, j, i});
    };
    auto l_put = [&](const Scalar& x, const Val& L, const std::string& i, const std::string& j) {
      return lower ? cd.put(x, L, {bi, i, j}) : cd.put(x, L, {bi, j, i});
    };
    auto dot = [&](const Val& L, const std::string& i, const std::string& j, const Scalar& init) {
      auto r = loop(e, c0, j, {carried(init)}, [&](const std::string& k, const std::vector<std::string>& a) {
        return std::vector<std::string>{cd.fsub({a[0], ft}, cd.mul(l_at(L, i, k), l_at(L, j, k))).name};
      });
      return Scalar{r[0], ft};
    };
    auto cols = loop(e, c0, n, {carried(v[0]), carried(cd.b.b(false))},
                     [&](const std::string& j, const std::vector<std::string>& a) {
                       Val L = named(a[0], A.type);
                       Scalar bad{a[1], DType::Bool};
                       Scalar ajj = dot(L, j, j, a_at(j, j));
                       bad = cd.b.bin("arith.ori", bad, cd.b.cmpf("ule", ajj, cd.f(0.0, ft)));  // not > 0, or NaN
                       Scalar d = cd.b.un("math.sqrt", ajj);
                       L = l_put(d, L, j, j);
                       Scalar r = cd.div(cd.f(1.0, ft), d);
                       auto below = loop(e, cd.add(j, c1), n, {carried(L), carried(bad)},
                                         [&](const std::string& i, const std::vector<std::string>& c) {
                                           Val L2 = named(c[0], A.type);
                                           Scalar x = cd.mul(dot(L2, i, j, a_at(i, j)), r);
                                           Scalar bad2 = cd.b.bin("arith.ori", {c[1], DType::Bool}, cd.infinite(x));
                                           return std::vector<std::string>{l_put(x, L2, i, j).name, bad2.name};
                                         });
                       Scalar bad3 = cd.b.bin("arith.ori", {below[1], DType::Bool}, cd.infinite(d));
                       return std::vector<std::string>{below[0], bad3.name};
                     });
    Scalar bad{cols[1], DType::Bool};
    Val L = named(cols[0], A.type);
    Scalar qn = cd.f(std::numeric_limits<double>::quiet_NaN(), ft);
    auto fin = loop(e, c0, n, {carried(L)}, [&](const std::string& i, const std::vector<std::string>& a) {
      return loop(
          e, c0, n, {carried(named(a[0], A.type))}, [&](const std::string& j, const std::vector<std::string>& c) {
            Val Z = named(c[0], A.type);
            return std::vector<std::string>{cd.put(cd.b.select(bad, qn, cd.get(Z, {bi, i, j})), Z, {bi, i, j}).name};
          });
    });
    return std::vector<Val>{named(fin[0], A.type)};
  });
  return {result_from(e, out[0], rt, nb)};
}

// triangular_solve, reduced to a left-side solve T X = B per column: with left_side T = op(a) and the
// columns of X are b's; otherwise x op(a) = b is op(a)^T x^T = b^T, so T = op(a)^T and the "columns" are
// b's rows. T's lower-ness is lower XOR (the transposes). Each element subtracts T(i, k) X(k) in the order
// of the reference trsm (k ascending for a lower T, descending for an upper one), then divides by T(i, i)
// unless unit_diagonal.
std::vector<Val> lower_triangular_solve(Emitter& e, const Operation& op, std::span<const Val> in) {
  const AttrMap& at = op.attributes();
  const std::string& nm = op.name();
  bool left = attr_bool(at, "left_side", nm), lower = attr_bool(at, "lower", nm);
  bool trans = attr_bool(at, "transpose_a", nm), unit = attr_bool(at, "unit_diagonal", nm);
  const TensorType& rt = result_type(op);
  DType ft = acc_type(rt.dtype);
  size_t nb = in[1].type.rank() - 2;
  Val A = matrices(e, in[0], ft), X0 = matrices(e, in[1], ft);
  bool eff_trans = left ? trans : !trans;
  bool t_lower = lower != eff_trans;
  std::string m = dim_of(e, A, 1), ncols = dim_of(e, X0, left ? 2 : 1);
  auto out = per_matrix(e, A, {X0}, [&](const std::string& bi, std::vector<Val> v) {
    Code cd(e);
    std::string c0 = cd.c(0), c1 = cd.c(1), last = cd.sub(m, c1);
    auto T = [&](const std::string& i, const std::string& k) {
      return eff_trans ? cd.get(A, {bi, k, i}) : cd.get(A, {bi, i, k});
    };
    auto at_ = [&](const std::string& i, const std::string& c) {
      return left ? std::vector<std::string>{bi, i, c} : std::vector<std::string>{bi, c, i};
    };
    auto r = loop(e, c0, ncols, {carried(v[0])}, [&](const std::string& c, const std::vector<std::string>& a) {
      return loop(
          e, c0, m, {carried(named(a[0], X0.type))}, [&](const std::string& ii, const std::vector<std::string>& b) {
            Val X = named(b[0], X0.type);
            std::string i = t_lower ? ii : cd.sub(last, ii);
            // k over [0, i) ascending (lower) or (i, m) descending (upper)
            std::string lo = t_lower ? c0 : cd.add(i, c1), hi = t_lower ? i : m;
            auto s =
                loop(e, lo, hi, {carried(cd.get(X, at_(i, c)))},
                     [&](const std::string& kk, const std::vector<std::string>& d) {
                       std::string k = t_lower ? kk : cd.sub(cd.add(m, i), kk);  // m - 1 - (kk - i - 1)
                       return std::vector<std::string>{cd.fsub({d[0], ft}, cd.mul(T(i, k), cd.get(X, at_(k, c)))).name};
                     });
            Scalar x{s[0], ft};
            if (!unit) x = cd.div(x, T(i, i));
            return std::vector<std::string>{cd.put(x, X, at_(i, c)).name};
          });
    });
    return std::vector<Val>{named(r[0], X0.type)};
  });
  return {result_from(e, out[0], rt, nb)};
}

// QR as LAPACK's geqr2 and org2r (geqrf and orgqr are their blocked forms, equal up to rounding): for each
// column k a Householder reflector as dlarfg makes it (beta = -sign(alpha) |(alpha, x)|, tau = (beta -
// alpha) / beta, v = x / (alpha - beta); x = 0 gives tau = 0, H = I) applied to the columns right of k
// as dlarf does (w = v^T A, A += v (-tau w)); Q from the reflectors applied last to first to the
// identity's first columns. So R's diagonal signs are LAPACK's (semantics).
std::vector<Val> lower_qr(Emitter& e, const Operation& op, std::span<const Val> in) {
  const TensorType& qt = result_type(op, 0);
  const TensorType& rt = result_type(op, 1);
  DType ft = acc_type(rt.dtype);
  size_t nb = in[0].type.rank() - 2;
  Val A = matrices(e, in[0], ft);
  std::string m = dim_of(e, A, 1), n = dim_of(e, A, 2);
  std::string kmin = e.assign("arith.minsi " + m + ", " + n + " : index");
  TensorType q3 = lead_type(with_dtype(qt, ft), nb), r3 = lead_type(with_dtype(rt, ft), nb);
  Val Q0 = zeros(e, q3), R0 = zeros(e, r3);
  TensorType taut(ft, Shape{A.type.shape[0], min(A.type.shape[1], A.type.shape[2])});
  Val tau0 = zeros(e, taut);
  auto out = per_matrix(e, A, {A, tau0, Q0, R0}, [&](const std::string& bi, std::vector<Val> v) {
    Code cd(e);
    std::string c0 = cd.c(0), c1 = cd.c(1);
    Scalar z = cd.f(0.0, ft);
    auto fac =
        loop(e, c0, kmin, {carried(v[0]), carried(v[1])}, [&](const std::string& k, const std::vector<std::string>& a) {
          Val X = named(a[0], A.type), taus = named(a[1], taut);
          std::string k1 = cd.add(k, c1);
          Scalar alpha = cd.get(X, {bi, k, k});
          auto ss = loop(e, k1, m, {carried(z)}, [&](const std::string& i, const std::vector<std::string>& d) {
            Scalar x = cd.get(X, {bi, i, k});
            return std::vector<std::string>{cd.fadd({d[0], ft}, cd.mul(x, x)).name};
          });
          Scalar xnorm = cd.b.un("math.sqrt", {ss[0], ft});
          Scalar nz = cd.b.cmpf("une", xnorm, z);
          Scalar h = cd.b.un("math.sqrt", cd.fadd(cd.mul(alpha, alpha), cd.mul(xnorm, xnorm)));
          Scalar beta = cd.b.select(cd.b.cmpf("olt", alpha, z), h, cd.b.un("arith.negf", h));
          Scalar tau = cd.b.select(nz, cd.div(cd.fsub(beta, alpha), beta), z);
          Scalar inv = cd.div(cd.f(1.0, ft), cd.fsub(alpha, beta));
          auto sc = loop(e, k1, m, {carried(X)}, [&](const std::string& i, const std::vector<std::string>& d) {
            Val Y = named(d[0], A.type);
            Scalar x = cd.get(Y, {bi, i, k});
            return std::vector<std::string>{cd.put(cd.b.select(nz, cd.mul(x, inv), x), Y, {bi, i, k}).name};
          });
          X = named(sc[0], A.type);
          Scalar apply = cd.b.cmpf("une", tau, z);
          Scalar ntau = cd.b.un("arith.negf", tau);
          // H applied to columns k+1.. : w = A[k, c] + sum_{i>k} v_i A[i, c]; A[i, c] += v_i (-tau w)
          auto cols = loop(e, k1, n, {carried(X)}, [&](const std::string& c, const std::vector<std::string>& d) {
            Val Y = named(d[0], A.type);
            auto w = loop(e, k1, m, {carried(cd.get(Y, {bi, k, c}))},
                          [&](const std::string& i, const std::vector<std::string>& g) {
                            return std::vector<std::string>{
                                cd.fadd({g[0], ft}, cd.mul(cd.get(Y, {bi, i, k}), cd.get(Y, {bi, i, c}))).name};
                          });
            Scalar tw = cd.mul(ntau, {w[0], ft});
            Scalar top = cd.get(Y, {bi, k, c});
            Y = cd.put(cd.b.select(apply, cd.fadd(top, tw), top), Y, {bi, k, c});
            auto rows = loop(e, k1, m, {carried(Y)}, [&](const std::string& i, const std::vector<std::string>& g) {
              Val Z = named(g[0], A.type);
              Scalar old = cd.get(Z, {bi, i, c});
              Scalar nw = cd.fadd(old, cd.mul(cd.get(Z, {bi, i, k}), tw));
              return std::vector<std::string>{cd.put(cd.b.select(apply, nw, old), Z, {bi, i, c}).name};
            });
            return rows;
          });
          X = named(cols[0], A.type);
          X = cd.put(cd.b.select(nz, beta, alpha), X, {bi, k, k});
          taus = cd.put(tau, taus, {bi, k});
          return std::vector<std::string>{X.name, taus.name};
        });
    Val F = named(fac[0], A.type), taus = named(fac[1], taut);
    // R: the upper triangle of the factored matrix's first rows.
    std::string rr = dim_of(e, v[3], 1);
    auto R = loop(e, c0, rr, {carried(v[3])}, [&](const std::string& i, const std::vector<std::string>& a) {
      return loop(e, i, n, {carried(named(a[0], r3))}, [&](const std::string& j, const std::vector<std::string>& d) {
        return std::vector<std::string>{cd.put(cd.get(F, {bi, i, j}), named(d[0], r3), {bi, i, j}).name};
      });
    });
    // Q: the columns past K of the identity, then the reflectors from the last to the first (org2r).
    std::string qc = dim_of(e, v[2], 2);
    auto Qi = loop(e, kmin, qc, {carried(v[2])}, [&](const std::string& j, const std::vector<std::string>& a) {
      return std::vector<std::string>{cd.put(cd.f(1.0, ft), named(a[0], q3), {bi, j, j}).name};
    });
    std::string klast = cd.sub(kmin, c1);
    auto Q =
        loop(e, c0, kmin, {carried(named(Qi[0], q3))}, [&](const std::string& ii, const std::vector<std::string>& a) {
          Val Y = named(a[0], q3);
          std::string i = cd.sub(klast, ii), i1 = cd.add(i, c1);
          Scalar tau = cd.get(taus, {bi, i});
          Scalar apply = cd.b.cmpf("une", tau, z);
          Scalar ntau = cd.b.un("arith.negf", tau);
          auto cols = loop(e, i1, qc, {carried(Y)}, [&](const std::string& c, const std::vector<std::string>& d) {
            Val Z = named(d[0], q3);
            auto w = loop(e, i1, m, {carried(cd.get(Z, {bi, i, c}))},
                          [&](const std::string& r, const std::vector<std::string>& g) {
                            return std::vector<std::string>{
                                cd.fadd({g[0], ft}, cd.mul(cd.get(F, {bi, r, i}), cd.get(Z, {bi, r, c}))).name};
                          });
            Scalar tw = cd.mul(ntau, {w[0], ft});
            Scalar top = cd.get(Z, {bi, i, c});
            Z = cd.put(cd.b.select(apply, cd.fadd(top, tw), top), Z, {bi, i, c});
            return loop(e, i1, m, {carried(Z)}, [&](const std::string& r, const std::vector<std::string>& g) {
              Val W = named(g[0], q3);
              Scalar old = cd.get(W, {bi, r, c});
              Scalar nw = cd.fadd(old, cd.mul(cd.get(F, {bi, r, i}), tw));
              return std::vector<std::string>{cd.put(cd.b.select(apply, nw, old), W, {bi, r, c}).name};
            });
          });
          Y = named(cols[0], q3);
          auto col = loop(e, i1, m, {carried(Y)}, [&](const std::string& r, const std::vector<std::string>& g) {
            Val W = named(g[0], q3);
            return std::vector<std::string>{cd.put(cd.mul(ntau, cd.get(F, {bi, r, i})), W, {bi, r, i}).name};
          });
          Y = named(col[0], q3);
          Y = cd.put(cd.fsub(cd.f(1.0, ft), tau), Y, {bi, i, i});
          return std::vector<std::string>{Y.name};
        });
    return std::vector<Val>{F, taus, named(Q[0], q3), named(R[0], r3)};
  });
  return {result_from(e, out[2], qt, nb), result_from(e, out[3], rt, nb)};
}

}  // namespace

void add_reduce_linalg_rules(Tables& tables) {
  Table& t = tables.ops;
  // The reductions read their operand only in reduce()'s linalg.generic, element by element: a fused loop feeding
  // one is computed inside it.
  auto red = [&](const char* name, Comb c) {
    t.set(name,
          [c](Emitter& e, const Operation& op, std::span<const Val> in) { return lower_reduction(e, op, in, c); });
    tables.reads_elements.set(name, true);
  };
  for (const CombinerOp& r : kReductionOps) red(r.op, r.combiner);
  t.set("reduce_mean", lower_mean);
  tables.reads_elements.set("reduce_mean", true);
  t.set("argmax", [](Emitter& e, const Operation& op, std::span<const Val> in) { return lower_arg(e, op, in, true); });
  t.set("argmin", [](Emitter& e, const Operation& op, std::span<const Val> in) { return lower_arg(e, op, in, false); });
  auto sc = [&t](const char* name, Comb c) {
    t.set(name, [c](Emitter& e, const Operation& op, std::span<const Val> in) { return lower_scan(e, op, in, c); });
  };
  for (const CombinerOp& s : kScanOps) sc(s.op, s.combiner);
  t.set("reduce_logsumexp", lower_logsumexp);
  t.set("dot", lower_dot);
  t.set("dot_general", lower_dot_general);
  t.set("trace", lower_trace);
  t.set("conv", lower_conv);
  t.set("cholesky", lower_cholesky);
  t.set("triangular_solve", lower_triangular_solve);
  t.set("lu", lower_lu);
  t.set("solve",
        [](Emitter& e, const Operation& op, std::span<const Val> in) { return lower_solve(e, op, in, false); });
  t.set("inv", [](Emitter& e, const Operation& op, std::span<const Val> in) { return lower_solve(e, op, in, true); });
  t.set("det", [](Emitter& e, const Operation& op, std::span<const Val> in) { return lower_det(e, op, in, false); });
  t.set("slogdet", [](Emitter& e, const Operation& op, std::span<const Val> in) { return lower_det(e, op, in, true); });
  t.set("qr", lower_qr);
  t.defer("eigh", std::string("no symmetric eigensolver is written for the mlir backend, and ") + kEighDeferral);
  t.defer("svd", std::string("no SVD is written for the mlir backend, and ") + kSvdDeferral);
}

}  // namespace evoxc::mlir_backend
