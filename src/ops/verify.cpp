// The full verifier: structural checks, then every op's name, attributes and result types against inference.
#include <array>
#include <span>
#include <string>
#include <vector>

#include "evoxc/core/error.h"
#include "evoxc/ops/infer_memo.h"
#include "evoxc/ops/op_def.h"

namespace evoxc {
namespace {

std::string where(const Operation& op) { return "op '" + op.name() + "' at " + op.location().to_string(); }

void verify_op(const Operation& op);

// VerifyError unless the op's result types are `want`, what inference gives.
void check_results(const Operation& op, const std::vector<TensorType>& want) {
  if (want.size() != op.num_results())
    throw VerifyError(where(op) + ": has " + std::to_string(op.num_results()) + " results, inference gives " +
                      std::to_string(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    const TensorType& have = op.result(i)->type();
    if (have != want[i])
      throw VerifyError(where(op) + ": result " + std::to_string(i) + " has type " + have.to_string() +
                        ", inference gives " + want[i].to_string());
  }
}

void verify_block(const Block& b) {
  for (const auto& op : b.operations()) verify_op(*op);
}

void verify_op(const Operation& op) {
  // Every Operation refers to a registered OpInfo; a test-only op of the IR tests is not an
  // OpDef of the catalogue and is rejected here.
  const OpDef* def = op.op_id() < num_ops() ? &op_def(op) : nullptr;
  if (!def) throw VerifyError("unknown op '" + op.name() + "' at " + op.location().to_string());
  if (def->num_regions >= 0 && op.regions().size() != static_cast<size_t>(def->num_regions))
    throw VerifyError(where(op) + ": has " + std::to_string(op.regions().size()) + " regions, expected " +
                      std::to_string(def->num_regions));
  for (const Value* v : op.operands())
    if (!v) throw VerifyError(where(op) + ": has a null operand");
  // Most ops of a population repeat a few signatures: the memo answers those without
  // re-running inference (a hit is the result of an earlier successful inference).
  const bool memo = memoizable(*def, op.num_operands(), !op.attributes().empty());
  std::array<const TensorType*, kMemoMaxOperands> key_types{};
  std::span<const TensorType* const> key;
  if (memo) {
    for (size_t i = 0; i < op.num_operands(); ++i) key_types[i] = &op.operand(i)->type();
    key = std::span<const TensorType* const>(key_types.data(), op.num_operands());
    if (const std::vector<TensorType>* known = memoized_result_types(*def, key)) {
      check_results(op, *known);
      return;
    }
  }
  std::vector<TensorType> operand_types;
  operand_types.reserve(op.num_operands());
  for (const Value* v : op.operands()) operand_types.push_back(v->type());
  std::vector<TensorType> inferred;
  try {
    inferred = infer_result_types(*def, operand_types, op.attributes());
    if (def->infer_regions) inferred = def->infer_regions(operand_types, op.attributes(), op);
  } catch (const ShapeError& e) {
    throw VerifyError(std::string(e.what()) + " (at " + op.location().to_string() + ")");
  } catch (const TypeError& e) {
    throw VerifyError(std::string(e.what()) + " (at " + op.location().to_string() + ")");
  }
  check_results(op, inferred);
  if (memo) remember_result_types(*def, key, inferred);
  for (const auto& r : op.regions()) verify_block(r->block());
}

}  // namespace

void verify(const Graph& g) {
  verify_structure(g);
  for (const auto& f : g.module().functions()) verify_block(f->entry());
}

}  // namespace evoxc
