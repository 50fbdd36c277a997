// Decompositions of the random family (random_bits, random_split, random_fold_in) into unsigned integer
// arithmetic: what a compiled backend runs instead of the interpreter's kernels (src/interp/random.cpp), bit for
// bit the same stream (the algorithms and constants of include/evoxc/ops/random.h).
//
// A key of batch shape kb gives results of shape kb + shape: its words are sliced off the key's last axis and
// broadcast over the result, and each element's counter is its row-major position in `shape` (an iota over the
// element count, reshaped), so symbolic shapes need nothing else.
#include <vector>

#include "evoxc/ops/random.h"
#include "evoxc/transforms/decompose.h"
#include "transforms/families.h"

namespace evoxc::transforms {
namespace {

using ST = SymbolicTensor;
using Ints = std::vector<int64_t>;
namespace ra = random_alg;
constexpr DType U32 = DType::U32;
constexpr DType U64 = DType::U64;

ST u32(uint32_t v) { return fill(Shape{}, static_cast<int64_t>(v), U32); }
// A uint64 constant: its bits as an int64 attribute, which full converts back by wrapping (docs/semantics.md).
ST u64(uint64_t v) { return fill(Shape{}, static_cast<int64_t>(v), U64); }

ST rotl(const ST& x, int r) {
  return bitwise_or(left_shift(x, u32(static_cast<uint32_t>(r))),
                    shift_right_logical(x, u32(static_cast<uint32_t>(32 - r))));
}

// The key's word `w` (of its trailing axis) as a tensor of the batch shape, reinterpreted unsigned.
ST key_word(const ST& key, int64_t w, const ra::KeyKind& k) {
  DType ut = k.algorithm == ra::Algorithm::Splitmix64 ? U64 : U32;
  ST x = key.dtype() == ut ? key : bitcast_convert(key, ut);
  if (k.key_rank == 0) return x;
  size_t r = key.rank();
  Ints start(r, 0);
  start[r - 1] = w;
  Shape limit = key.shape();
  limit[r - 1] = DimExpr(w + 1);
  std::vector<DimExpr> bd(key.shape().begin(), key.shape().end() - 1);
  ST s =
      emit_op1(EVOXC_TOP("slice"), {x}, {{"start_indices", start}, {"limit_indices", limit}, {"strides", Ints(r, 1)}});
  return reshape(s, Shape(std::move(bd)));
}

// `x` (of the batch shape) broadcast to batch + tail.
ST over(const ST& x, const Shape& out) {
  Ints dims(x.rank());
  for (size_t i = 0; i < dims.size(); ++i) dims[i] = static_cast<int64_t>(i);
  if (x.shape() == out) return x;
  return broadcast_in_dim(x, out, dims);
}

// Each element's row-major position in the trailing `tail` axes of `out` (uint64), broadcast over the batch axes.
ST positions(const Shape& out, size_t batch_rank) {
  std::vector<DimExpr> tail(out.begin() + static_cast<std::ptrdiff_t>(batch_rank), out.end());
  Shape ts(std::move(tail));
  ST flat = iota(Shape{ts.num_elements()}, 0, U64);
  ST p = reshape(flat, ts);
  Ints dims;
  for (size_t i = 0; i < ts.rank(); ++i) dims.push_back(static_cast<int64_t>(batch_rank + i));
  if (batch_rank == 0) return p;
  return broadcast_in_dim(p, out, dims);
}

ST hi32(const ST& x64) { return convert(shift_right_logical(x64, fill(Shape{}, int64_t{32}, U64)), U32); }
ST lo32(const ST& x64) { return convert(x64, U32); }
ST join64(const ST& hi, const ST& lo) {
  return bitwise_or(left_shift(convert(hi, U64), fill(Shape{}, int64_t{32}, U64)), convert(lo, U64));
}

void threefry(const ST& k0, const ST& k1, ST& x0, ST& x1) {
  ST ks[3] = {k0, k1, bitwise_xor(bitwise_xor(k0, k1), u32(ra::kThreefryParity))};
  x0 = add(x0, ks[0]);
  x1 = add(x1, ks[1]);
  for (int g = 0; g < 5; ++g) {
    for (int r = 0; r < 4; ++r) {
      x0 = add(x0, x1);
      x1 = bitwise_xor(rotl(x1, ra::kThreefryRot[(g % 2) * 4 + r]), x0);
    }
    x0 = add(x0, ks[(g + 1) % 3]);
    x1 = add(add(x1, ks[(g + 2) % 3]), u32(static_cast<uint32_t>(g + 1)));
  }
}

void philox(ST k0, ST k1, ST c[4]) {
  for (int r = 0; r < 10; ++r) {
    if (r > 0) {
      k0 = add(k0, u32(ra::kPhiloxW0));
      k1 = add(k1, u32(ra::kPhiloxW1));
    }
    ST p0 = multiply(convert(c[0], U64), u64(ra::kPhiloxM0)), p1 = multiply(convert(c[2], U64), u64(ra::kPhiloxM1));
    ST n0 = bitwise_xor(bitwise_xor(hi32(p1), c[1]), k0), n2 = bitwise_xor(bitwise_xor(hi32(p0), c[3]), k1);
    c[0] = n0;
    c[1] = lo32(p1);
    c[2] = n2;
    c[3] = lo32(p0);
  }
}

ST mix(const ST& z0) {
  ST z = multiply(bitwise_xor(z0, shift_right_logical(z0, fill(Shape{}, int64_t{30}, U64))), u64(ra::kMixMul1));
  z = multiply(bitwise_xor(z, shift_right_logical(z, fill(Shape{}, int64_t{27}, U64))), u64(ra::kMixMul2));
  return bitwise_xor(z, shift_right_logical(z, fill(Shape{}, int64_t{31}, U64)));
}

ST as_dtype(const ST& x, DType t) { return x.dtype() == t ? x : convert(x, t); }

std::vector<ST> decompose_bits(const Operation& op, std::span<const ST> in) {
  const TensorType& rt = op.result(0)->type();
  ra::KeyKind k = ra::key_kind_of(op.operand(0)->type());
  size_t br = in[0].rank() - k.key_rank;
  const Shape& out = rt.shape;
  bool wide = rt.dtype == U64;
  ST pos = positions(out, br);
  switch (k.algorithm) {
    case ra::Algorithm::Splitmix64: {
      ST s = over(key_word(in[0], 0, k), out);
      ST one = u64(1);
      if (wide) return {mix(add(s, multiply(add(pos, one), u64(ra::kGolden))))};
      ST z = mix(add(s, multiply(add(shift_right_logical(pos, one), one), u64(ra::kGolden))));
      ST odd = not_equal(bitwise_and(pos, one), u64(0));
      ST word = select(odd, hi32(z), lo32(z));
      return {as_dtype(word, rt.dtype)};
    }
    case ra::Algorithm::Threefry2x32: {
      ST x0 = hi32(pos), x1 = lo32(pos);
      threefry(over(key_word(in[0], 0, k), out), over(key_word(in[0], 1, k), out), x0, x1);
      if (wide) return {join64(x0, x1)};
      return {as_dtype(bitwise_xor(x0, x1), rt.dtype)};
    }
    case ra::Algorithm::Philox4x32: {
      ST per = u64(wide ? 2 : 4);
      ST q = wide ? shift_right_logical(pos, u64(1)) : shift_right_logical(pos, u64(2));
      ST j = bitwise_and(pos, subtract(per, u64(1)));
      ST c[4] = {lo32(q), hi32(q), over(key_word(in[0], 2, k), out), over(key_word(in[0], 3, k), out)};
      philox(over(key_word(in[0], 0, k), out), over(key_word(in[0], 1, k), out), c);
      auto pick = [&](const ST& sel, const ST& a, const ST& b) { return select(sel, a, b); };
      if (wide) {
        ST first = equal(j, u64(0));
        return {join64(pick(first, c[0], c[2]), pick(first, c[1], c[3]))};
      }
      ST w = pick(equal(j, u64(0)), c[0], pick(equal(j, u64(1)), c[1], pick(equal(j, u64(2)), c[2], c[3])));
      return {as_dtype(w, rt.dtype)};
    }
  }
  return {};
}

// Child j of each key (j: uint64 of the batch + tail shape `out`, the key words broadcast to it), as the key's
// words stacked on a new last axis (threefry, philox) or one uint64 (splitmix64), in the key's dtype.
ST child(const ST& key, const ra::KeyKind& k, const ST& j, const Shape& out) {
  DType kt = key.dtype();
  auto as_key = [&](const ST& x) { return x.dtype() == kt ? x : bitcast_convert(x, kt); };
  auto stack = [&](std::vector<ST> words) {
    std::vector<ST> parts;
    for (const ST& w : words) parts.push_back(expand_dims(as_key(w), Axes{static_cast<int64_t>(out.rank())}));
    return concatenate(parts, static_cast<int64_t>(out.rank()));
  };
  switch (k.algorithm) {
    case ra::Algorithm::Splitmix64: {
      ST t = bitwise_xor(mix(over(key_word(key, 0, k), out)), u64(ra::kSplitDomain));
      return as_key(mix(add(t, multiply(add(j, u64(1)), u64(ra::kGolden)))));
    }
    case ra::Algorithm::Threefry2x32: {
      ST x0 = hi32(j), x1 = lo32(j);
      threefry(over(key_word(key, 0, k), out), over(key_word(key, 1, k), out), x0, x1);
      return stack({x0, x1});
    }
    case ra::Algorithm::Philox4x32: {
      ST c[4] = {lo32(j), hi32(j), over(key_word(key, 2, k), out), over(key_word(key, 3, k), out)};
      philox(over(key_word(key, 0, k), out), over(key_word(key, 1, k), out), c);
      return stack({c[0], c[1], c[2], c[3]});
    }
  }
  return key;
}

std::vector<ST> decompose_split(const Operation& op, std::span<const ST> in) {
  ra::KeyKind k = ra::key_kind_of(op.operand(0)->type());
  size_t br = in[0].rank() - k.key_rank;
  std::vector<DimExpr> od(in[0].shape().begin(), in[0].shape().begin() + static_cast<std::ptrdiff_t>(br));
  od.emplace_back(attr_int(op, "num"));
  Shape out(std::move(od));
  return {child(in[0], k, positions(out, br), out)};
}

std::vector<ST> decompose_fold_in(const Operation& op, std::span<const ST> in) {
  ra::KeyKind k = ra::key_kind_of(op.operand(0)->type());
  size_t br = in[0].rank() - k.key_rank;
  std::vector<DimExpr> od(in[0].shape().begin(), in[0].shape().begin() + static_cast<std::ptrdiff_t>(br));
  Shape out(std::move(od));
  ST d = in[1];
  // The data as JAX's fold_in takes it: uint32 for the 32-bit algorithms (then widened), uint64 for splitmix64.
  ST j = k.algorithm == ra::Algorithm::Splitmix64 ? convert(d, U64) : convert(convert(d, U32), U64);
  if (j.rank() == 0 && out.rank() > 0) j = broadcast_to(j, out);
  return {child(in[0], k, j, out)};
}

}  // namespace

void install_random_decompositions(DecomposeTable& t) {
  t.set("random_bits", decompose_bits);
  t.set("random_split", decompose_split);
  t.set("random_fold_in", decompose_fold_in);
}

}  // namespace evoxc::transforms
