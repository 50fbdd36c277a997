// Transform rules of the random family (src/ops/random.cpp): random_bits, random_split, random_fold_in.
//
// vmap: the ops take leading key axes as a batch of keys, each its own stream, so a batched key is one more batch
// axis to them (each row of a vmapped key draws its own numbers, as a loop over the keys would). jvp: their
// results are integers, so the tangent is zero; nothing is linear, so no transpose rules. A derivative with
// respect to a key is refused before any rule runs: keys are integers.
#include <vector>

#include "evoxc/ops/random.h"
#include "transforms/families.h"

namespace evoxc::transforms {
namespace {

using ST = SymbolicTensor;

std::vector<BatchArg> batch_key_op(BatchContext&, const Operation& op, std::span<const BatchArg> args) {
  return {BatchArg{emit_like(op, std::vector<ST>{args[0].v})[0], true}};
}

// fold_in: the key and the data both batched; a rank-0 (or batch-0-only) data broadcast to the key's batch shape.
std::vector<BatchArg> batch_fold_in(BatchContext& ctx, const Operation& op, std::span<const BatchArg> args) {
  ST key = ctx.materialize(args[0]);
  ST data = args[1].v;
  auto kind = random_alg::key_kind_of(key.type());
  std::vector<DimExpr> batch(key.shape().begin(), key.shape().end() - static_cast<std::ptrdiff_t>(kind.key_rank));
  Shape bs(std::move(batch));
  if (args[1].batched) {
    if (!(data.shape() == bs)) data = broadcast_in_dim(data, bs, {0});
  } else if (data.rank() != 0) {
    data = ctx.materialize(args[1]);
  }
  return {BatchArg{emit_like(op, std::vector<ST>{key, data})[0], true}};
}

}  // namespace

void install_random_rules(RuleTables& t) {
  t.batch.set("random_bits", batch_key_op);
  t.batch.set("random_split", batch_key_op);
  t.batch.set("random_fold_in", batch_fold_in);
  for (const char* op : {"random_bits", "random_split", "random_fold_in"}) t.jvp.set(op, zero_jvp);
}

}  // namespace evoxc::transforms
