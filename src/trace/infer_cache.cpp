// The trace layer's use of the ops layer's result-type memo: emission without re-inference.
#include "infer_cache.h"

#include <array>

#include "evoxc/ops/infer_memo.h"

namespace evoxc::trace_internal {

Operation* create_memoized(Builder& b, const OpDef& op, std::span<Value* const> operands) {
  if (!memoizable(op, operands.size(), false)) return b.create(op, operands);
  std::array<const TensorType*, kMemoMaxOperands> types{};
  for (size_t i = 0; i < operands.size(); ++i) types[i] = &operands[i]->type();
  std::span<const TensorType* const> key(types.data(), operands.size());
  if (const auto* r = memoized_result_types(op, key)) return b.create_typed(op, operands, *r);
  Operation* created = b.create(op, operands);
  std::vector<TensorType> results;
  for (const auto& v : created->results()) results.push_back(v->type());
  remember_result_types(op, key, results);
  return created;
}

size_t memoized_signatures() { return evoxc::memoized_signatures(); }

}  // namespace evoxc::trace_internal
