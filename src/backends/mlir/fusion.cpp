// Loop fusion in the mlir lowering: chains of elementwise ops of one shape become one linalg.generic.
//
// Every elementwise op used to be its own linalg.generic, and MLIR's linalg-fuse-elementwise-ops joined only a
// producer with one user: a value read twice (a protected division's operand, a mask a merged population's
// programs share) stayed a loop of its own with a stored tensor — bool tensors stored and reloaded one byte per
// lane. The 500-tree GP population lowered to 7,341 generics that fused into ~1,100 loops, and LLVM spent most
// of its compile on them. Here the lowering fuses first, as XLA's loop fusion does, from the ops' scalar rules
// (ScalarRule, one table keyed by op id):
//  - walking the block backwards, an elementwise op joins the fused loops of its users when every user is in a
//    fused loop of the same shape: absorbed when that is one loop, recomputed in each when the op is cheap (a
//    splat, `full`, joins loops of any shape: it is one constant in each);
//  - otherwise (a user that is not elementwise, another shape, the block's result, several loops reading an
//    expensive op, a loop at its size cap) the op is a root: its loop is written where it stands and its value
//    stored.
// A fused loop reads its roots' and other ops' values as inputs (broadcast by indexing maps) and computes each
// member once per element, in block order: the same scalar code as unfused, so the results are the same bits.
// A root whose value only a reduction reads (Tables::reads_elements) is not stored either: its loop is computed in
// the reduction's own loop (Emitter::generic expands it), so a program's prediction and its loss are one loop.
#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "backends/mlir/emitter.h"
#include "evoxc/core/flat_table.h"
#include "evoxc/core/small_vector.h"

namespace evoxc::mlir_backend {
namespace {

// A fused loop's body grows no larger: LLVM's scheduling and register allocation grow faster than linearly
// with a loop body.
constexpr size_t kMaxLoopOps = 256;

bool fusible(const Operation& op) {
  return op.num_results() == 1 && op.regions().empty() && !op.is_terminator() &&
         scalar_rules().find(op.op_id()) != nullptr;
}

// Adds the ops of this block that `op` (or an op nested in its regions) reads to `users` under user `k`.
void record_uses(const Operation& op, uint32_t k, const PtrMap<const Operation*, uint32_t>& index,
                 std::vector<SmallVector<uint32_t, 4>>& users) {
  for (const Value* v : op.operands()) {
    if (const Operation* def = v->defining_op())
      if (const uint32_t* d = index.find(def)) users[*d].push_back(k);
  }
  for (const auto& region : op.regions())
    for (const auto& inner : region->block().operations()) record_uses(*inner, k, index, users);
}

// Whether `op`'s value is read by `reader` alone (every entry of `users` is reader's index `u`), as the operand
// reader's lowering reads element by element (Tables::reads_elements).
bool feeds_only(const Operation& op, const Operation& reader, std::span<const uint32_t> users, uint32_t u) {
  if (!tables().reads_elements.find(reader.op_id())) return false;
  if (std::any_of(users.begin(), users.end(), [u](uint32_t v) { return v != u; })) return false;
  const auto operands = reader.operands();
  return operands[0] == op.result(0) && std::count(operands.begin(), operands.end(), op.result(0)) == 1;
}

}  // namespace

FusionPlan plan_fusion(const Block& b) {
  const auto& ops = b.operations();
  const auto n = static_cast<uint32_t>(ops.size());
  FusionPlan plan;
  plan.role.assign(n, FusionPlan::Role::Alone);
  plan.members.resize(n);
  PtrMap<const Operation*, uint32_t> index;
  index.reserve(n);
  for (uint32_t k = 0; k < n; ++k) index[ops[k].get()] = k;
  std::vector<SmallVector<uint32_t, 4>> users(n);
  for (uint32_t k = 0; k < n; ++k) record_uses(*ops[k], k, index, users);

  // The loops, by the op index of their root; the loops each op is computed in.
  std::vector<SmallVector<uint32_t, 2>> loops_of(n);
  SmallVector<uint32_t, 8> loops;
  for (uint32_t k = n; k-- > 0;) {
    const Operation& op = *ops[k];
    if (!fusible(op)) continue;
    const Shape& shape = op.result(0)->shape();
    // An op without operands (a splat) is the same value at every element: it joins loops of any shape it
    // broadcasts to.
    const bool uniform = op.num_operands() == 0;
    bool root = users[k].empty();  // an unused op is still written, as every op is
    bool fed = false;
    loops.clear();
    for (uint32_t u : users[k]) {
      if (plan.role[u] == FusionPlan::Role::Alone) {
        root = true;
        fed = feeds_only(op, *ops[u], users[k], u);
        break;
      }
      for (uint32_t r : loops_of[u]) {
        if ((!uniform && ops[r]->result(0)->shape() != shape) || plan.members[r].size() >= kMaxLoopOps) {
          root = true;
          break;
        }
        if (std::find(loops.begin(), loops.end(), r) == loops.end()) loops.push_back(r);
      }
      if (root) break;
    }
    if (!root && loops.size() > 1 && !scalar_rules().get(op).cheap) root = true;
    if (root) {
      plan.role[k] = fed ? FusionPlan::Role::Fed : FusionPlan::Role::Root;
      loops_of[k].push_back(k);
      plan.members[k].push_back(&op);
      continue;
    }
    plan.role[k] = FusionPlan::Role::Member;
    for (uint32_t r : loops) {
      loops_of[k].push_back(r);
      plan.members[r].push_back(&op);
    }
  }
  // Members were gathered walking backwards.
  for (auto& m : plan.members) std::reverse(m.begin(), m.end());
  return plan;
}

std::vector<const Value*> Emitter::fused_inputs(std::span<const Operation* const> members) {
  PtrSet inside;
  for (const Operation* op : members) inside.insert(op->result(0));
  std::vector<const Value*> reads;
  PtrSet seen;
  for (const Operation* op : members)
    for (const Value* v : op->operands())
      if (!inside.contains(v) && !seen.contains(v)) {
        seen.insert(v);
        reads.push_back(v);
      }
  return reads;
}

Scalar Emitter::fused_body(std::span<const Operation* const> members, const PtrMap<const Value*, Scalar>& external) {
  const Operation* saved = current_;
  PtrMap<const Value*, Scalar> scalars;
  scalars.reserve(members.size());
  Body b(*this);
  SmallVector<Scalar, 4> x;
  for (const Operation* op : members) {
    x.clear();
    for (const Value* v : op->operands()) {
      const Scalar* s = scalars.find(v);
      if (!s) s = external.find(v);
      if (!s) throw InternalError("mlir: a fused loop reads a value that is not defined");
      x.push_back(*s);
    }
    current_ = op;
    Scalar y = scalar_rules().get(*op).fn(b, *op, x);
    if (element_type(y.dtype) != element_type(op->result(0)->dtype()))
      throw InternalError("mlir: the scalar rule of evoxc." + op->name() + " gives " + element_type(y.dtype));
    scalars[op->result(0)] = {y.name, op->result(0)->dtype()};
  }
  current_ = saved;
  return *scalars.find(members.back()->result(0));
}

Val Emitter::lower_fused(std::span<const Operation* const> members) {
  const std::vector<const Value*> reads = fused_inputs(members);
  std::vector<Val> inputs;
  inputs.reserve(reads.size());
  for (const Value* v : reads) inputs.push_back(value_of(v));
  return map(inputs, members.back()->result(0)->type(), [&](Body&, std::span<const Scalar> a) {
    PtrMap<const Value*, Scalar> external;
    for (size_t i = 0; i < reads.size(); ++i) external[reads[i]] = a[i];
    return fused_body(members, external);
  });
}

}  // namespace evoxc::mlir_backend
