// OpDefs for key-based random numbers: random_bits, random_split, random_fold_in. A key's type names its algorithm
// (include/evoxc/ops/random.h); leading axes of a key are a batch of keys, each its own stream. None is linear or
// differentiable: their results are integers.
#include "evoxc/ops/random.h"

#include <string>
#include <vector>

#include "ops/registry.h"

namespace evoxc {
namespace random_alg {

std::optional<KeyKind> key_kind(const TensorType& t) {
  if (t.dtype == DType::I64 || t.dtype == DType::U64) return KeyKind{Algorithm::Splitmix64, 0, 1};
  if (t.dtype != DType::I32 && t.dtype != DType::U32) return std::nullopt;
  if (t.rank() == 0) return std::nullopt;
  auto last = t.shape[t.rank() - 1].as_const();
  if (last && *last == 2) return KeyKind{Algorithm::Threefry2x32, 1, 2};
  if (last && *last == 4) return KeyKind{Algorithm::Philox4x32, 1, 4};
  return std::nullopt;
}

KeyKind key_kind_of(const TensorType& t) {
  std::optional<KeyKind> k = key_kind(t);
  if (!k) throw InternalError("random: " + t.to_string() + " is not a key, though inference accepted it");
  return *k;
}

const char* algorithm_name(Algorithm a) {
  switch (a) {
    case Algorithm::Splitmix64: return "splitmix64";
    case Algorithm::Threefry2x32: return "threefry2x32";
    case Algorithm::Philox4x32: return "philox4x32_10";
  }
  return "?";
}

}  // namespace random_alg

namespace ops_detail {
namespace {

using random_alg::KeyKind;

// The key's kind, or a TypeError naming the op and what a key is.
KeyKind key_of(const std::string& op, const TensorType& key) {
  auto k = random_alg::key_kind(key);
  if (!k)
    throw TypeError(op_label(op) + ": operand 0 is not a random key: " + random_alg::kKeyTypes + ", got " +
                    std::string(dtype_name(key.dtype)) + "[" + key.shape.to_string() + "]");
  return *k;
}

// The key's batch axes (all but its trailing key axis).
Shape batch_of(const TensorType& key, const KeyKind& k) {
  std::vector<DimExpr> d(key.shape.begin(), key.shape.end() - static_cast<std::ptrdiff_t>(k.key_rank));
  return Shape(std::move(d));
}

Shape concat(const Shape& a, const Shape& b) {
  std::vector<DimExpr> d(a.begin(), a.end());
  d.insert(d.end(), b.begin(), b.end());
  return Shape(std::move(d));
}

// A valid key of dtype t: a (3,) batch of splitmix64 keys, or one threefry2x32 key per row of (3, 2).
TensorType sample_key(DType t) {
  bool wide = t == DType::I64 || t == DType::U64;
  return TensorType(t, wide ? Shape{3} : Shape{3, 2});
}

std::vector<TensorType> infer_bits(std::span<const TensorType> ops, const AttrMap& attrs) {
  KeyKind k = key_of("random_bits", ops[0]);
  const Shape& shape = attr_shape(attrs, "shape", "random_bits");
  check_shape_attr("random_bits", "shape", shape);
  DType t = attr_dtype(attrs, "dtype", "random_bits");
  if (t != DType::U8 && t != DType::U16 && t != DType::U32 && t != DType::U64)
    throw TypeError(op_label("random_bits") + ": dtype must be uint8, uint16, uint32 or uint64, got " +
                    std::string(dtype_name(t)) + " (convert or bitcast the bits afterwards)");
  return {TensorType(t, concat(batch_of(ops[0], k), shape))};
}

std::vector<TensorType> infer_split(std::span<const TensorType> ops, const AttrMap& attrs) {
  KeyKind k = key_of("random_split", ops[0]);
  int64_t num = attr_int(attrs, "num", "random_split");
  if (num < 0 || num > (int64_t{1} << 40))
    throw ShapeError(op_label("random_split") + ": num must lie in [0, 2^40], got " + std::to_string(num));
  Shape out = batch_of(ops[0], k);
  out.dims().emplace_back(num);
  for (size_t i = ops[0].rank() - k.key_rank; i < ops[0].rank(); ++i) out.dims().push_back(ops[0].shape[i]);
  return {TensorType(ops[0].dtype, std::move(out))};
}

std::vector<TensorType> infer_fold_in(std::span<const TensorType> ops, const AttrMap&) {
  KeyKind k = key_of("random_fold_in", ops[0]);
  if (!is_int(ops[1].dtype))
    throw TypeError(op_label("random_fold_in") + ": data must have an int dtype, got " +
                    std::string(dtype_name(ops[1].dtype)));
  Shape batch = batch_of(ops[0], k);
  if (ops[1].rank() != 0 && !(ops[1].shape == batch))
    throw ShapeError(op_label("random_fold_in") + ": data must be rank 0 or have the key's batch shape (" +
                     batch.to_string() + "), got (" + ops[1].shape.to_string() + ")");
  return {ops[0]};
}

OpDef& random_op(OpTable& t, const char* name, int operands, InferFn infer, std::string doc) {
  OpDef d;
  d.name = name;
  d.category = OpCategory::Random;
  d.min_operands = d.max_operands = operands;
  d.operand_dtypes = DTypeClass::Key;
  d.infer = std::move(infer);
  d.doc = std::move(doc);
  return t.add(std::move(d));
}

}  // namespace

void register_random_ops(OpTable& t) {
  OpDef& bits = random_op(t, "random_bits", 1, infer_bits,
                          "the key's stream of random bits: key batch + `shape` (static or symbolic) of `dtype` "
                          "(uint8/16/32/64); the same key gives the same bits everywhere");
  bits.attrs = {{"shape", AttrKind::Shape}, {"dtype", AttrKind::DType}};
  bits.sample = [](DType t) { return OpSample{{sample_key(t)}, {{"shape", Shape{2, 3}}, {"dtype", DType::U32}}}; };
  OpDef& split = random_op(t, "random_split", 1, infer_split,
                           "`num` new keys from one: key batch + (num,) + key shape, same dtype");
  split.attrs = {{"num", AttrKind::Int}};
  split.sample = [](DType t) { return OpSample{{sample_key(t)}, {{"num", int64_t{3}}}}; };
  OpDef& fold = random_op(t, "random_fold_in", 2, infer_fold_in,
                          "a new key from a key and an int (rank 0 or one per key of the batch): the key's type");
  fold.sample = [](DType t) { return OpSample{{sample_key(t), TensorType(DType::I32, Shape{})}, {}}; };
}

}  // namespace ops_detail
}  // namespace evoxc
