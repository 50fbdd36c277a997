// mlir lowering rules of the layout family (src/ops/layout.cpp): pad, tril, triu, diagonal, flip, roll, tile,
// repeat, one_hot, arange and linspace.
//
// Ops whose source index is not affine (flip, roll, tile, repeat, pad modes, diagonal) are a linalg.generic over
// the result whose body computes the source index from linalg.index and reads it with tensor.extract (guarded by
// scf.if where there may be nothing to read).
#include <algorithm>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "backends/common/constant_fold.h"
#include "backends/mlir/shape_rules.h"

namespace evoxc::mlir_backend {
namespace {

using namespace shape_rules;  // NOLINT(google-build-using-namespace): the families' shared helpers

// Layout ops: the result read from the operand through a per-axis index map.

// For each result axis, the operand index read for result index j (written inside the body); an empty function
// for an axis read as is.
using AxisFn = std::function<std::string(Emitter&, const std::string& j)>;

Val map_axes(Emitter& e, const Val& x, const TensorType& rt, const std::vector<AxisFn>& axes) {
  if (rt.shape.rank() == 0) return x;
  return generate(e, rt, [&](Body& b, const Names& j) {
    Emitter& em = b.emitter();
    Names src;
    for (size_t i = 0; i < j.size(); ++i) src.push_back(axes[i] ? axes[i](em, j[i]) : j[i]);
    return extract(em, x, src);
  });
}

// pad in the modes that read the operand (edge, reflect, symmetric): operand index map(j - low) on extent n.
// Padding is only applied on axes that the interpreter checks are non-empty at run time.
AxisFn pad_axis(Emitter& e, const std::string& mode, int64_t low, const DimExpr& n) {
  std::string nv = e.extent(max(n, DimExpr(1)));
  std::string lowv = e.index_constant(low);
  std::string zero = e.index_constant(0), one = e.index_constant(1), two = e.index_constant(2);
  std::string nm1 = iop(e, "arith.subi", nv, one);
  if (mode == "edge")
    return [=](Emitter& em, const std::string& j) { return iclamp(em, iop(em, "arith.subi", j, lowv), zero, nm1); };
  if (mode == "reflect") {
    // period 2(n - 1) (at least 1: n = 1 repeats the element), reflected without repeating the edge
    std::string p = iop(e, "arith.maxsi", iop(e, "arith.muli", nm1, two), one);
    return [=](Emitter& em, const std::string& j) {
      std::string r = ipmod(em, iop(em, "arith.subi", j, lowv), p);
      return iselect(em, icmp(em, "slt", r, nv), r, iop(em, "arith.subi", p, r));
    };
  }
  // symmetric: period 2n, the edge repeated
  std::string p = iop(e, "arith.muli", nv, two);
  std::string pm1 = iop(e, "arith.subi", p, one);
  return [=](Emitter& em, const std::string& j) {
    std::string r = ipmod(em, iop(em, "arith.subi", j, lowv), p);
    return iselect(em, icmp(em, "slt", r, nv), r, iop(em, "arith.subi", pm1, r));
  };
}

std::vector<Val> lower_pad(Emitter& e, const Operation& op, std::span<const Val> in) {
  const std::string& mode = attr_string(attrs(op), "mode", "pad");
  const Ints& low = attr_ints(attrs(op), "low", "pad");
  const Ints& high = attr_ints(attrs(op), "high", "pad");
  const Val& x = in[0];
  const Shape& s = x.type.shape;
  size_t r = s.rank();
  Ints interior(r, 0);
  if (attrs(op).count("interior")) interior = attr_ints(attrs(op), "interior", "pad");
  const TensorType& rt = rtype(op);
  if (mode != "constant") {
    std::vector<AxisFn> axes(r);
    for (size_t i = 0; i < r; ++i)
      if (low[i] != 0 || high[i] != 0) axes[i] = pad_axis(e, mode, low[i], s[i]);
    return {map_axes(e, x, rt, axes)};
  }
  // Constant mode: result index j reads operand q = j - low when q is in range (and a multiple of interior + 1,
  // then q / (interior + 1)), else the value.
  Names n = extents(e, s);
  Names lows, steps;
  for (size_t i = 0; i < r; ++i) {
    lows.push_back(e.index_constant(low[i]));
    steps.push_back(e.index_constant(interior[i] + 1));
  }
  std::string zero = e.index_constant(0);
  Val ins[] = {in[1]};
  std::string maps[] = {""};
  std::vector<std::string> its(r, "parallel");
  return {e.generic(ins, maps, e.empty(rt), dims_list(r), its, [&](Body& b, std::span<const Scalar> a) {
    Emitter& em = b.emitter();
    std::string ok = em.assign("arith.constant true");
    Names src;
    for (size_t i = 0; i < r; ++i) {
      std::string q = iop(em, "arith.subi", b.index(static_cast<int>(i)), lows[i]);
      std::string good = icmp(em, "sge", q, zero);
      if (interior[i] > 0) {
        good = em.assign("arith.andi " + good + ", " + icmp(em, "eq", iop(em, "arith.remsi", q, steps[i]), zero) +
                         " : i1");
        q = iop(em, "arith.divsi", q, steps[i]);
      }
      good = em.assign("arith.andi " + good + ", " + icmp(em, "slt", q, n[i]) + " : i1");
      ok = em.assign("arith.andi " + ok + ", " + good + " : i1");
      src.push_back(q);
    }
    return guarded(
        em, ok, x.type.dtype, [&] { return extract(em, x, src); }, [&] { return a[0]; });
  })};
}

std::vector<Val> lower_flip(Emitter& e, const Operation& op, std::span<const Val> in) {
  const Ints& flip = attr_ints(attrs(op), "axes", "flip");
  if (flip.empty()) return {in[0]};
  std::vector<AxisFn> axes(in[0].type.rank());
  for (int64_t a : flip) {
    std::string nm1 = iop(e, "arith.subi", e.extent(in[0].type.shape[static_cast<size_t>(a)]), e.index_constant(1));
    axes[static_cast<size_t>(a)] = [=](Emitter& em, const std::string& j) { return iop(em, "arith.subi", nm1, j); };
  }
  return {map_axes(e, in[0], rtype(op), axes)};
}

std::vector<Val> lower_roll(Emitter& e, const Operation& op, std::span<const Val> in) {
  const Ints& shifts = attr_ints(attrs(op), "shifts", "roll");
  const Ints& roll = attr_ints(attrs(op), "axes", "roll");
  std::vector<AxisFn> axes(in[0].type.rank());
  for (size_t k = 0; k < roll.size(); ++k) {
    // result[(i + shift) mod n] = x[i]: result j reads (j - s) mod n with s = shift mod n (n at least 1 so the
    // remainder is defined; an empty axis has no j).
    const DimExpr& n = in[0].type.shape[static_cast<size_t>(roll[k])];
    std::string nv = e.extent(max(n, DimExpr(1)));
    std::string s = ipmod(e, e.index_constant(shifts[k]), nv);
    std::string base = iop(e, "arith.subi", nv, s);  // j + n - s stays non-negative
    axes[static_cast<size_t>(roll[k])] = [=](Emitter& em, const std::string& j) {
      return iop(em, "arith.remsi", iop(em, "arith.addi", j, base), nv);
    };
  }
  return {map_axes(e, in[0], rtype(op), axes)};
}

std::vector<Val> lower_tile(Emitter& e, const Operation& op, std::span<const Val> in) {
  const Ints& reps = attr_ints(attrs(op), "reps", "tile");
  std::vector<AxisFn> axes(in[0].type.rank());
  for (size_t i = 0; i < reps.size(); ++i) {
    if (reps[i] == 1) continue;
    std::string nv = e.extent(max(in[0].type.shape[i], DimExpr(1)));
    axes[i] = [=](Emitter& em, const std::string& j) { return iop(em, "arith.remsi", j, nv); };
  }
  return {map_axes(e, in[0], rtype(op), axes)};
}

std::vector<Val> lower_repeat(Emitter& e, const Operation& op, std::span<const Val> in) {
  const Ints& reps = attr_ints(attrs(op), "repeats", "repeat");
  auto axis = static_cast<size_t>(attr_int(attrs(op), "axis", "repeat"));
  std::vector<AxisFn> axes(in[0].type.rank());
  if (reps.size() == 1) {
    // each element r times in place: j / r (r = 0 leaves the axis empty)
    std::string rv = e.index_constant(std::max<int64_t>(reps[0], 1));
    axes[axis] = [=](Emitter& em, const std::string& j) { return iop(em, "arith.divsi", j, rv); };
  } else {
    // one count per element of a static axis: the source of each result position from a table
    Ints src;
    for (size_t i = 0; i < reps.size(); ++i)
      src.insert(src.end(), static_cast<size_t>(reps[i]), static_cast<int64_t>(i));
    if (src.empty()) return {map_axes(e, in[0], rtype(op), axes)};  // an empty result: nothing is read
    Val table = e.constant(Tensor::from_vector<int64_t>(src, {static_cast<int64_t>(src.size())}));
    axes[axis] = [=](Emitter& em, const std::string& j) { return to_index(em, extract(em, table, {j})); };
  }
  return {map_axes(e, in[0], rtype(op), axes)};
}

std::vector<Val> lower_tri(Emitter& e, const Operation& op, std::span<const Val> in, bool lower) {
  int64_t k = attr_int(attrs(op), "k", lower ? "tril" : "triu");
  const TensorType& rt = rtype(op);
  size_t R = rt.rank();
  std::string kv = e.index_constant(k);
  Val ins[] = {in[0]};
  std::string maps[] = {dims_list(R)};
  std::vector<std::string> its(R, "parallel");
  return {e.generic(ins, maps, e.empty(rt), dims_list(R), its, [&](Body& b, std::span<const Scalar> a) {
    Emitter& em = b.emitter();
    // kept: tril j - i <= k, triu j - i >= k (over the last two axes)
    std::string d = iop(em, "arith.subi", b.index(static_cast<int>(R - 1)), b.index(static_cast<int>(R - 2)));
    Scalar keep{icmp(em, lower ? "sle" : "sge", d, kv), DType::Bool};
    return b.select(keep, a[0], zero_of(b, rt.dtype));
  })};
}

std::vector<Val> lower_diagonal(Emitter& e, const Operation& op, std::span<const Val> in) {
  int64_t offset = attr_int(attrs(op), "offset", "diagonal");
  auto a1 = static_cast<size_t>(attr_int(attrs(op), "axis1", "diagonal"));
  auto a2 = static_cast<size_t>(attr_int(attrs(op), "axis2", "diagonal"));
  const Val& x = in[0];
  std::string o1 = e.index_constant(std::max<int64_t>(-offset, 0));
  std::string o2 = e.index_constant(std::max<int64_t>(offset, 0));
  // The result has the other axes in order, then the diagonal i: x[.., i + max(-offset, 0), .., i + max(offset, 0)].
  return {generate(e, rtype(op), [&](Body& b, const Names& j) {
    Emitter& em = b.emitter();
    Names src(x.type.rank());
    size_t k = 0;
    for (size_t i = 0; i < src.size(); ++i)
      if (i != a1 && i != a2) src[i] = j[k++];
    src[a1] = iop(em, "arith.addi", j.back(), o1);
    src[a2] = iop(em, "arith.addi", j.back(), o2);
    return extract(em, x, src);
  })};
}

std::vector<Val> lower_one_hot(Emitter& e, const Operation& op, std::span<const Val> in) {
  const TensorType& rt = rtype(op);
  size_t m = in[0].type.rank();
  Val ins[] = {in[0]};
  std::string maps[] = {dims_list(m)};
  std::vector<std::string> its(m + 1, "parallel");
  return {e.generic(ins, maps, e.empty(rt), dims_list(m + 1), its, [&](Body& b, std::span<const Scalar> a) {
    // Compared in int64: signed and unsigned indices widen exactly; a uint64 above INT64_MAX wraps negative
    // and, like a negative index, matches no class.
    Scalar x = b.convert(a[0], DType::I64);
    Scalar c = from_index(b.emitter(), b.index(static_cast<int>(m)));
    return b.convert(b.cmpi("eq", x, c), rt.dtype);
  })};
}

// arange and linspace are static: short ones are the interpreter's values as a constant; long ones are the
// interpreter's formula (value i is start + i * step in wrapping int64 for an all-int arange into an int dtype,
// otherwise in double, linspace's ints floored and its last value stop, then converted), which is exact here
// because nothing reassociates or contracts it (no fast-math flags; LLVM fuses no separate fmul and fadd).
constexpr int64_t kMaxRangeConstant = int64_t{1} << 12;

double num_attr(const Attribute& a) {
  if (const auto* i = std::get_if<int64_t>(&a)) return static_cast<double>(*i);
  return std::get<double>(a);
}

std::vector<Val> lower_range(Emitter& e, const Operation& op, bool arange) {
  const TensorType& rt = rtype(op);
  const AttrMap& a = attrs(op);
  int64_t n = rt.shape[0].value();
  if (n <= kMaxRangeConstant) return {e.constant(backends::fold_on_interp(op))};
  auto is_int_attr = [&](const char* name) { return std::holds_alternative<int64_t>(a.at(name)); };
  bool exact_int = arange && is_int(rt.dtype) && is_int_attr("start") && is_int_attr("stop") && is_int_attr("step");
  double start = num_attr(a.at("start")), stop = num_attr(a.at("stop")), step = 0;
  bool last_is_stop = false;
  if (arange) {
    step = num_attr(a.at("step"));
  } else {
    int64_t num = attr_int(a, "num", "linspace");
    bool endpoint = attr_bool(a, "endpoint", "linspace");
    int64_t div = endpoint ? num - 1 : num;
    step = div > 0 ? (stop - start) / static_cast<double>(div) : 0.0;
    last_is_stop = endpoint && num > 1;
  }
  return {generate(e, rt, [&](Body& b, const Names& j) {
    Scalar i = from_index(b.emitter(), j[0]);
    if (exact_int) {
      Scalar v = b.bin("arith.addi", b.bin("arith.muli", i, b.i(std::get<int64_t>(a.at("step")), DType::I64)),
                       b.i(std::get<int64_t>(a.at("start")), DType::I64));
      return b.convert(v, rt.dtype);  // the low bits
    }
    Scalar v = b.bin("arith.addf", b.f(start, DType::F64),
                     b.bin("arith.mulf", b.cast("arith.sitofp", i, DType::F64), b.f(step, DType::F64)));
    if (last_is_stop) v = b.select(b.cmpi("eq", i, b.i(n - 1, DType::I64)), b.f(stop, DType::F64), v);
    if (!arange && is_int(rt.dtype)) v = b.un("math.floor", v);
    if (rt.dtype == DType::F16 || rt.dtype == DType::BF16) return b.convert(b.convert(v, DType::F32), rt.dtype);
    return b.convert(v, rt.dtype);
  })};
}

}  // namespace

void add_layout_rules(Tables& t) {
  t.ops.set("pad", lower_pad);
  t.ops.set("tril",
            [](Emitter& e, const Operation& op, std::span<const Val> in) { return lower_tri(e, op, in, true); });
  t.ops.set("triu",
            [](Emitter& e, const Operation& op, std::span<const Val> in) { return lower_tri(e, op, in, false); });
  t.ops.set("diagonal", lower_diagonal);
  t.ops.set("flip", lower_flip);
  t.ops.set("roll", lower_roll);
  t.ops.set("tile", lower_tile);
  t.ops.set("repeat", lower_repeat);
  t.ops.set("one_hot", lower_one_hot);
  t.ops.set("arange", [](Emitter& e, const Operation& op, std::span<const Val>) { return lower_range(e, op, true); });
  t.ops.set("linspace",
            [](Emitter& e, const Operation& op, std::span<const Val>) { return lower_range(e, op, false); });
}

}  // namespace evoxc::mlir_backend
