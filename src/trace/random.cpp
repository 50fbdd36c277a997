// evoxc::random (include/evoxc/trace/random.h): keys, the three random ops, and the samplers written over their bits
// with JAX's formulas (so threefry2x32 keys give jax.random's uniform values bit for bit).
#include "evoxc/trace/random.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "emit.h"
#include "evoxc/core/error.h"
#include "evoxc/trace/control.h"
#include "evoxc/trace/indexing.h"
#include "evoxc/trace/layout.h"

namespace evoxc::random {

namespace {

constexpr DType U32 = DType::U32;
constexpr DType U64 = DType::U64;

TraceContext& ctx_of(const SymbolicTensor& x) {
  if (!x.defined()) throw TraceError("use of an undefined (default-constructed) SymbolicTensor");
  return *x.context();
}

void require_key(const SymbolicTensor& key, const char* fn) {
  if (!random_alg::key_kind(key.type()))
    throw TypeError(std::string("evoxc.random.") + fn + ": not a random key: " + random_alg::kKeyTypes + ", got " +
                    std::string(dtype_name(key.dtype())) + "[" + key.shape().to_string() +
                    "]; make one with evoxc.random.key(seed)");
}

void require_float(DType t, const char* fn) {
  if (!is_float(t))
    throw TypeError(std::string("evoxc.random.") + fn + ": dtype must be a float dtype, got " +
                    std::string(dtype_name(t)));
}

// An Operand as a tensor of dtype t (a host scalar becomes a rank-0 constant).
SymbolicTensor value(const Operand& v, DType t) {
  if (v.is_tensor()) return v.tensor().dtype() == t ? v.tensor() : convert(v.tensor(), t);
  if (v.kind() == Operand::Kind::Float) return fill(Shape{}, v.float_value(), t);
  return fill(Shape{}, v.int_value(), t);
}

// A uint64 constant: its bits as an int64 attribute, which full converts back by wrapping (docs/semantics.md).
SymbolicTensor u64(uint64_t v) { return fill(Shape{}, static_cast<int64_t>(v), U64); }

// The smallest positive normal number of a float dtype (numpy's finfo(t).tiny).
double tiny(DType t) {
  switch (t) {
    case DType::F16: return 6.103515625e-05;
    case DType::F64: return std::numeric_limits<double>::min();
    default: return static_cast<double>(std::numeric_limits<float>::min());  // float32 and bfloat16
  }
}

Shape shape_of(const Operand& v) { return v.is_tensor() ? v.tensor().shape() : Shape{}; }

}  // namespace

Algorithm algorithm_from_name(std::string_view name) {
  if (name == "splitmix64") return Algorithm::Splitmix64;
  if (name == "threefry2x32") return Algorithm::Threefry2x32;
  if (name == "philox4x32_10" || name == "philox4x32") return Algorithm::Philox4x32;
  throw ValidationError("evoxc.random: unknown algorithm '" + std::string(name) +
                        "'; the algorithms are splitmix64 (the default), threefry2x32 and philox4x32_10");
}

Tensor key(int64_t seed, Algorithm algorithm) {
  auto s = static_cast<uint64_t>(seed);
  auto lo = static_cast<uint32_t>(s), hi = static_cast<uint32_t>(s >> 32);
  switch (algorithm) {
    case Algorithm::Splitmix64: return Tensor::from_vector<int64_t>({seed}, {});
    case Algorithm::Threefry2x32: return Tensor::from_vector<uint32_t>({hi, lo}, {2});
    case Algorithm::Philox4x32: return Tensor::from_vector<uint32_t>({lo, hi, 0, 0}, {4});
  }
  throw InternalError("evoxc.random.key: unknown algorithm");
}

SymbolicTensor key(const SymbolicTensor& seed, Algorithm algorithm, SrcLoc loc) {
  if (seed.rank() != 0 || !is_int(seed.dtype()))
    throw TypeError("evoxc.random.key: the seed must be a rank-0 int, got " + std::string(dtype_name(seed.dtype())) +
                    "[" + seed.shape().to_string() + "]");
  SymbolicTensor s = convert(seed, DType::I64, loc);
  if (algorithm == Algorithm::Splitmix64) return s;
  SymbolicTensor u = bitcast_convert(s, U64, loc);
  SymbolicTensor lo = convert(u, U32, loc);
  SymbolicTensor hi = convert(shift_right_logical(u, fill(Shape{}, int64_t{32}, U64), loc), U32, loc);
  auto one = [&](const SymbolicTensor& w) { return reshape(w, Shape{1}, loc); };
  if (algorithm == Algorithm::Threefry2x32) return concatenate({one(hi), one(lo)}, 0, loc);
  SymbolicTensor z = fill(Shape{1}, int64_t{0}, U32, loc);
  return concatenate({one(lo), one(hi), z, z}, 0, loc);
}

SymbolicTensor split(const SymbolicTensor& key, int64_t num, SrcLoc loc) {
  require_key(key, "split");
  return ctx_of(key).emit1(EVOXC_OP("random_split"), {key}, {{"num", num}}, loc);
}

SymbolicTensor fold_in(const SymbolicTensor& key, const Operand& data, SrcLoc loc) {
  require_key(key, "fold_in");
  SymbolicTensor d;
  if (data.is_tensor()) {
    d = data.tensor();
    if (!is_int(d.dtype()))
      throw TypeError("evoxc.random.fold_in: data must be an int, got " + std::string(dtype_name(d.dtype())));
    if (d.dtype() != DType::I32 && d.dtype() != DType::U32 && d.dtype() != DType::I64 && d.dtype() != DType::U64)
      d = convert(d, DType::I64, loc);
  } else {
    if (data.kind() == Operand::Kind::Float) throw TypeError("evoxc.random.fold_in: data must be an int");
    d = fill(Shape{}, data.int_value(), DType::I64, loc);
  }
  return ctx_of(key).emit1(EVOXC_OP("random_fold_in"), {key, d}, {}, loc);
}

SymbolicTensor bits(const SymbolicTensor& key, const Shape& shape, DType dtype, SrcLoc loc) {
  require_key(key, "bits");
  return ctx_of(key).emit1(EVOXC_OP("random_bits"), {key}, {{"dtype", dtype}, {"shape", shape}}, loc);
}

SymbolicTensor uniform(const SymbolicTensor& key, const Shape& shape, DType dtype, const Operand& minval,
                       const Operand& maxval, SrcLoc loc) {
  require_float(dtype, "uniform");
  // JAX's _uniform: the top mantissa bits of a draw under the exponent of 1.0, minus 1 ([0, 1) on a 2^-nmant grid).
  SymbolicTensor f;
  auto from_bits = [&](DType ut, int shift, uint64_t one_bits) {
    SymbolicTensor b = bits(key, shape, dtype == DType::BF16 ? DType::U8 : ut, loc);
    if (b.dtype() != ut) b = convert(b, ut, loc);
    SymbolicTensor one = ut == U64 ? u64(one_bits) : fill(Shape{}, static_cast<int64_t>(one_bits), ut, loc);
    SymbolicTensor m = bitwise_or(shift_right_logical(b, fill(Shape{}, int64_t{shift}, ut, loc), loc), one, loc);
    return subtract(bitcast_convert(m, dtype, loc), fill(Shape{}, 1.0, dtype, loc), loc);
  };
  switch (dtype) {
    case DType::F64: f = from_bits(U64, 12, 0x3FF0000000000000ULL); break;
    case DType::F32: f = from_bits(U32, 9, 0x3F800000u); break;
    case DType::F16: f = from_bits(DType::U16, 6, 0x3C00u); break;
    default: f = from_bits(DType::U16, 1, 0x3F80u); break;  // bfloat16: 8 bits, 7 of them mantissa
  }
  SymbolicTensor lo = value(minval, dtype), hi = value(maxval, dtype);
  SymbolicTensor r = add(multiply(f, subtract(hi, lo, loc), loc), lo, loc);
  r = maximum(lo, r, loc);
  if (!(r.shape() == f.shape())) r = broadcast_to(r, f.shape(), loc);
  return r;
}

namespace {

// XLA's float32 erf_inv (Giles 2010, single precision), which jax.random.normal runs for float32 on CPU: a degree-8
// polynomial in w - 2.5 or sqrt(w) - 3, w = -log1p(-x^2). Elementwise ops that fuse, where the erf_inv op polishes to
// double accuracy (several times slower); its error (a few float32 ULP) is JAX's own.
SymbolicTensor erf_inv_f32(const SymbolicTensor& x, SrcLoc loc) {
  static constexpr float kSmall[9] = {2.81022636e-08f,  3.43273939e-07f, -3.5233877e-06f,
                                      -4.39150654e-06f, 0.00021858087f,  -0.00125372503f,
                                      -0.00417768164f,  0.246640727f,    1.50140941f};
  static constexpr float kLarge[9] = {-0.000200214257f, 0.000100950558f, 0.00134934322f,
                                      -0.00367342844f,  0.00573950773f,  -0.0076224613f,
                                      0.00943887047f,   1.00167406f,     2.83297682f};
  auto k = [&](float v) { return fill(Shape{}, static_cast<double>(v), DType::F32, loc); };
  SymbolicTensor w = negative(log1p(negative(multiply(x, x, loc), loc), loc), loc);
  SymbolicTensor lt = less(w, k(5.0f), loc);
  SymbolicTensor z = where(lt, subtract(w, k(2.5f), loc), subtract(sqrt(w, loc), k(3.0f), loc), loc);
  SymbolicTensor p = where(lt, k(kSmall[0]), k(kLarge[0]), loc);
  for (int i = 1; i < 9; ++i) p = add(where(lt, k(kSmall[i]), k(kLarge[i]), loc), multiply(p, z, loc), loc);
  return multiply(p, x, loc);
}

}  // namespace

SymbolicTensor normal(const SymbolicTensor& key, const Shape& shape, DType dtype, SrcLoc loc) {
  require_float(dtype, "normal");
  // JAX's formula: sqrt(2) erf_inv(u) on u uniform in (-1, 1); 16-bit floats draw their own bits and compute in
  // float32, as XLA's erf_inv does for them.
  SymbolicTensor lo = nextafter(fill(Shape{}, -1.0, dtype, loc), fill(Shape{}, 0.0, dtype, loc), loc);
  SymbolicTensor u = uniform(key, shape, dtype, lo, 1.0, loc);
  if (dtype == DType::F64) return multiply(fill(Shape{}, std::sqrt(2.0), dtype, loc), erf_inv(u, loc), loc);
  SymbolicTensor u32 = dtype == DType::F32 ? u : convert(u, DType::F32, loc);
  SymbolicTensor r = multiply(fill(Shape{}, std::sqrt(2.0), DType::F32, loc), erf_inv_f32(u32, loc), loc);
  return dtype == DType::F32 ? r : convert(r, dtype, loc);
}

SymbolicTensor randint(const SymbolicTensor& key, const Shape& shape, const Operand& minval, const Operand& maxval,
                       DType dtype, SrcLoc loc) {
  if (!is_int(dtype))
    throw TypeError("evoxc.random.randint: dtype must be an int dtype, got " + std::string(dtype_name(dtype)));
  // The span in uint64 (exact for every pair of int64 bounds), 1 where maxval <= minval; a 64-bit draw modulo the
  // span (bias below span / 2^64).
  SymbolicTensor lo = value(minval, DType::I64), hi = value(maxval, DType::I64);
  SymbolicTensor ulo = bitcast_convert(lo, U64, loc), uhi = bitcast_convert(hi, U64, loc);
  SymbolicTensor span = where(greater(hi, lo, loc), subtract(uhi, ulo, loc), u64(1), loc);
  SymbolicTensor off = remainder(bits(key, shape, U64, loc), span, loc);
  SymbolicTensor r = convert(add(ulo, off, loc), dtype, loc);
  return r;
}

SymbolicTensor bernoulli(const SymbolicTensor& key, const Operand& p, std::optional<Shape> shape, SrcLoc loc) {
  DType t = p.is_tensor() && is_float(p.tensor().dtype()) ? p.tensor().dtype() : DType::F32;
  Shape s = shape ? *shape : shape_of(p);
  return less(uniform(key, s, t, 0.0, 1.0, loc), value(p, t), loc);
}

SymbolicTensor gumbel(const SymbolicTensor& key, const Shape& shape, DType dtype, SrcLoc loc) {
  require_float(dtype, "gumbel");
  SymbolicTensor u = uniform(key, shape, dtype, tiny(dtype), 1.0, loc);
  return negative(log(negative(log(u, loc), loc), loc), loc);
}

SymbolicTensor exponential(const SymbolicTensor& key, const Shape& shape, DType dtype, SrcLoc loc) {
  require_float(dtype, "exponential");
  SymbolicTensor u = uniform(key, shape, dtype, 0.0, 1.0, loc);
  return negative(log1p(negative(u, loc), loc), loc);
}

SymbolicTensor categorical(const SymbolicTensor& key, const SymbolicTensor& logits, int64_t axis,
                           std::optional<Shape> shape, SrcLoc loc) {
  require_float(logits.dtype(), "categorical");
  auto r = static_cast<int64_t>(logits.rank());
  if (r == 0 || axis < -r || axis >= r)
    throw ShapeError("evoxc.random.categorical: axis " + std::to_string(axis) + " is out of range for logits of rank " +
                     std::to_string(r));
  auto a = static_cast<size_t>(axis < 0 ? axis + r : axis);
  std::vector<DimExpr> batch;
  for (size_t i = 0; i < logits.rank(); ++i)
    if (i != a) batch.push_back(logits.shape()[i]);
  Shape s = shape ? *shape : Shape(batch);
  if (s.rank() < batch.size())
    throw ShapeError("evoxc.random.categorical: shape (" + s.to_string() + ") must end with the logits' batch shape (" +
                     Shape(batch).to_string() + ")");
  size_t prefix = s.rank() - batch.size();
  for (size_t i = 0; i < batch.size(); ++i)
    if (!(s[prefix + i] == batch[i]))
      throw ShapeError("evoxc.random.categorical: shape (" + s.to_string() +
                       ") must end with the logits' batch shape (" + Shape(batch).to_string() + ")");
  std::vector<DimExpr> gs(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(prefix));
  gs.insert(gs.end(), logits.shape().begin(), logits.shape().end());
  SymbolicTensor g = add(gumbel(key, Shape(gs), logits.dtype(), loc), logits, loc);
  return argmax(g, static_cast<int64_t>(prefix + a), false, loc);
}

SymbolicTensor truncated_normal(const SymbolicTensor& key, const Operand& lower, const Operand& upper,
                                std::optional<Shape> shape, DType dtype, SrcLoc loc) {
  require_float(dtype, "truncated_normal");
  SymbolicTensor lo = value(lower, dtype), hi = value(upper, dtype);
  Shape s = shape ? *shape : add(lo, hi, loc).shape();  // the bounds' broadcast shape
  SymbolicTensor sqrt2 = fill(Shape{}, std::sqrt(2.0), dtype, loc);
  SymbolicTensor a = erf(divide(lo, sqrt2, loc), loc), b = erf(divide(hi, sqrt2, loc), loc);
  SymbolicTensor u = uniform(key, s, dtype, a, b, loc);
  SymbolicTensor out = multiply(sqrt2, dtype == DType::F32 ? erf_inv_f32(u, loc) : erf_inv(u, loc), loc);
  SymbolicTensor inf = fill(Shape{}, std::numeric_limits<double>::infinity(), dtype, loc);
  return clip(out, nextafter(lo, inf, loc), nextafter(hi, negative(inf, loc), loc), loc);
}

SymbolicTensor permutation(const SymbolicTensor& key, int64_t n, SrcLoc loc) {
  if (n < 0) throw ShapeError("evoxc.random.permutation: n must be non-negative, got " + std::to_string(n));
  // A stable sort of 64-bit random keys: ties (probability below n^2 / 2^65) keep index order.
  return argsort(bits(key, Shape{n}, U64, loc), 0, loc);
}

SymbolicTensor permutation(const SymbolicTensor& key, const SymbolicTensor& x, int64_t axis, SrcLoc loc) {
  auto r = static_cast<int64_t>(x.rank());
  if (r == 0 || axis < -r || axis >= r)
    throw ShapeError("evoxc.random.permutation: axis " + std::to_string(axis) + " is out of range for rank " +
                     std::to_string(r));
  auto a = static_cast<size_t>(axis < 0 ? axis + r : axis);
  SymbolicTensor order = argsort(bits(key, Shape{x.shape()[a]}, U64, loc), 0, loc);
  return take(x, order, static_cast<int64_t>(a), "clip", loc);
}

namespace {

SymbolicTensor flat_reshape(const SymbolicTensor& x, const Shape& s, SrcLoc loc) {
  return x.shape() == s ? x : reshape(x, s, loc);
}

// Samplers built from several draws or a loop take one key; vmap gives them a batch.
void require_single_key(const SymbolicTensor& key, const char* fn) {
  require_key(key, fn);
  if (key.rank() != random_alg::key_kind_of(key.type()).key_rank)
    throw ShapeError(std::string("evoxc.random.") + fn + ": takes one key, got a batch of shape (" +
                     key.shape().to_string() + "); map it over the keys with vmap");
}

// Key i of split(key, n) for one key: shape (n,) + key shape, all static.
SymbolicTensor nth_key(const SymbolicTensor& keys, int64_t i, SrcLoc loc) {
  std::vector<int64_t> start(keys.rank(), 0), limit;
  for (const DimExpr& d : keys.shape()) limit.push_back(d.value());
  start[0] = i;
  limit[0] = i + 1;
  return reshape(slice(keys, start, limit, {}, loc),
                 Shape(std::vector<DimExpr>(keys.shape().begin() + 1, keys.shape().end())), loc);
}

}  // namespace

SymbolicTensor choice(const SymbolicTensor& key, int64_t n, const Shape& shape, bool replace,
                      std::optional<SymbolicTensor> p, SrcLoc loc) {
  require_single_key(key, "choice");
  if (n < 0) throw ShapeError("evoxc.random.choice: the population must be non-negative, got " + std::to_string(n));
  if (p) {
    if (p->rank() != 1 || !(p->shape()[0] == DimExpr(n)))
      throw ShapeError("evoxc.random.choice: p must have shape (" + std::to_string(n) + ",), got (" +
                       p->shape().to_string() + ")");
    require_float(p->dtype(), "choice");
  }
  DimExpr count = shape.num_elements();
  if (replace) {
    if (!p) return randint(key, shape, 0, n, DType::I64, loc);
    // Inverse CDF: the first running sum above u * total (JAX's choice with p).
    SymbolicTensor cum = cumsum(*p, 0, false, loc);
    SymbolicTensor total = slice(cum, {n - 1}, {n}, {}, loc);
    SymbolicTensor u = uniform(key, shape, p->dtype(), 0.0, 1.0, loc);
    SymbolicTensor r =
        multiply(reshape(total, Shape{}, loc), subtract(fill(Shape{}, 1.0, p->dtype(), loc), u, loc), loc);
    SymbolicTensor flat = searchsorted(cum, flat_reshape(r, Shape{count}, loc), "left", loc);
    return flat_reshape(minimum(flat, fill(Shape{}, n - 1, DType::I64, loc), loc), shape, loc);
  }
  auto k = count.as_const();
  if (!k) throw ShapeError("evoxc.random.choice: without replacement the draw shape must be static");
  if (*k > n)
    throw ShapeError("evoxc.random.choice: cannot draw " + std::to_string(*k) + " of " + std::to_string(n) +
                     " without replacement");
  if (!p) return flat_reshape(slice(permutation(key, n, loc), {0}, {*k}, {}, loc), shape, loc);
  // Gumbel top-k: the k largest of log p + Gumbel noise are a draw without replacement in proportion to p.
  SymbolicTensor g = add(gumbel(key, Shape{n}, p->dtype(), loc), log(*p, loc), loc);
  return flat_reshape(top_k(g, *k, loc).second, shape, loc);
}

SymbolicTensor choice(const SymbolicTensor& key, const SymbolicTensor& a, const Shape& shape, bool replace,
                      std::optional<SymbolicTensor> p, int64_t axis, SrcLoc loc) {
  auto r = static_cast<int64_t>(a.rank());
  if (r == 0 || axis < -r || axis >= r)
    throw ShapeError("evoxc.random.choice: axis " + std::to_string(axis) + " is out of range for rank " +
                     std::to_string(r));
  auto ax = static_cast<size_t>(axis < 0 ? axis + r : axis);
  auto n = a.shape()[ax].as_const();
  if (!n) throw ShapeError("evoxc.random.choice: the population axis must be static");
  SymbolicTensor idx = choice(key, *n, shape, replace, p, loc);
  return take(a, idx, static_cast<int64_t>(ax), "clip", loc);
}

SymbolicTensor gamma(const SymbolicTensor& key, const Operand& a, std::optional<Shape> shape, DType dtype, SrcLoc loc) {
  require_float(dtype, "gamma");
  require_single_key(key, "gamma");
  SymbolicTensor alpha = value(a, dtype);
  Shape s = shape ? *shape : alpha.shape();
  alpha = broadcast_to(alpha, s, loc);
  auto k = [&](double v) { return fill(Shape{}, v, dtype, loc); };
  SymbolicTensor boost = less(alpha, k(1.0), loc);
  SymbolicTensor a1 = where(boost, add(alpha, k(1.0), loc), alpha, loc);
  SymbolicTensor d = subtract(a1, k(1.0 / 3.0), loc);
  SymbolicTensor c = divide(k(1.0), sqrt(multiply(k(9.0), d, loc), loc), loc);
  SymbolicTensor keys = split(key, 2, loc);
  auto row = [&](const SymbolicTensor& ks, int64_t i) { return nth_key(ks, i, loc); };
  SymbolicTensor loop_key = row(keys, 0), boost_key = row(keys, 1);
  // Rounds until every element is accepted; each round draws fresh (z, u) for all elements from
  // fold_in(loop_key, round) and keeps the first accepted value of each.
  std::vector<SymbolicTensor> init = {zeros_like(alpha, loc), fill(s, false, DType::Bool, loc),
                                      fill(Shape{}, int64_t{0}, DType::I64, loc)};
  auto out = while_loop(
      [&](const std::vector<SymbolicTensor>& st) { return logical_not(all(st[1], {}, false, loc), loc); },
      [&](const std::vector<SymbolicTensor>& st) {
        SymbolicTensor rk = split(fold_in(loop_key, st[2], loc), 2, loc);
        SymbolicTensor z = normal(row(rk, 0), s, dtype, loc), u = uniform(row(rk, 1), s, dtype, 0.0, 1.0, loc);
        SymbolicTensor v1 = add(k(1.0), multiply(c, z, loc), loc);
        SymbolicTensor v = multiply(multiply(v1, v1, loc), v1, loc);
        SymbolicTensor z2 = multiply(k(0.5), multiply(z, z, loc), loc);
        // log u < z^2/2 + d - d v + d log v (v > 0)
        SymbolicTensor rhs = add(subtract(add(z2, d, loc), multiply(d, v, loc), loc),
                                 multiply(d, log(where(greater(v, k(0.0), loc), v, k(1.0), loc), loc), loc), loc);
        SymbolicTensor ok = logical_and(greater(v, k(0.0), loc), less(log(u, loc), rhs, loc), loc);
        SymbolicTensor take_now = logical_and(ok, logical_not(st[1], loc), loc);
        return std::vector<SymbolicTensor>{where(take_now, multiply(d, v, loc), st[0], loc), logical_or(st[1], ok, loc),
                                           add(st[2], fill(Shape{}, int64_t{1}, DType::I64, loc), loc)};
      },
      init, loc);
  SymbolicTensor x = out[0];
  // a < 1: Gamma(a) = Gamma(a + 1) u^(1/a).
  SymbolicTensor ub = uniform(boost_key, s, dtype, 0.0, 1.0, loc);
  SymbolicTensor scale = where(boost, power(ub, divide(k(1.0), alpha, loc), loc), k(1.0), loc);
  return multiply(x, scale, loc);
}

SymbolicTensor multinomial(const SymbolicTensor& key, int64_t n, const SymbolicTensor& p, std::optional<Shape> shape,
                           SrcLoc loc) {
  require_single_key(key, "multinomial");
  require_float(p.dtype(), "multinomial");
  if (p.rank() == 0) throw ShapeError("evoxc.random.multinomial: p needs a category axis");
  if (n < 0) throw ShapeError("evoxc.random.multinomial: n must be non-negative, got " + std::to_string(n));
  auto cats = p.shape()[p.rank() - 1].as_const();
  if (!cats) throw ShapeError("evoxc.random.multinomial: the category axis must be static");
  std::vector<DimExpr> batch(p.shape().begin(), p.shape().end() - 1);
  Shape bs = shape ? *shape : Shape(batch);
  // n categorical draws per row (categorical's prefix axis in front), then their one-hot counts.
  std::vector<DimExpr> ds{DimExpr(n)};
  ds.insert(ds.end(), bs.begin(), bs.end());
  SymbolicTensor draws = categorical(key, log(p, loc), -1, Shape(ds), loc);
  return sum(one_hot(draws, *cats, DType::I64, loc), {0}, false, loc);
}

}  // namespace evoxc::random
