// The IR rewriting kit: Builder, cloning of ops, regions, functions and modules, region captures.
#include "evoxc/ir/builder.h"

#include <unordered_set>

#include "evoxc/core/error.h"

namespace evoxc {

std::vector<TensorType> Builder::infer(const OpInfo& info, std::span<Value* const> operands, const AttrMap& attrs,
                                       const Operation* op) const {
  std::vector<TensorType> types;
  types.reserve(operands.size());
  for (const Value* v : operands) types.push_back(v->type());
  try {
    return info.infer_types(types, attrs, op);
  } catch (const ShapeError& e) {
    if (!loc_.known()) throw;
    throw ShapeError(std::string(e.what()) + " (at " + loc_.to_string() + ")");
  } catch (const TypeError& e) {
    if (!loc_.known()) throw;
    throw TypeError(std::string(e.what()) + " (at " + loc_.to_string() + ")");
  }
}

Operation* Builder::create(const OpInfo& info, std::span<Value* const> operands, AttrMap attrs) {
  std::vector<TensorType> results = infer(info, operands, attrs, nullptr);
  return block_->push_back(Operation::create(info, operands, results, std::move(attrs), loc_, 0, block_->arena()));
}

Operation* Builder::create(std::string_view name, std::vector<Value*> operands, AttrMap attrs) {
  return create(get_op_info(name), std::move(operands), std::move(attrs));
}

Operation* Builder::create_typed(const OpInfo& info, std::span<Value* const> operands,
                                 std::span<const TensorType> result_types, AttrMap attrs, size_t num_regions) {
  return block_->push_back(
      Operation::create(info, operands, result_types, std::move(attrs), loc_, num_regions, block_->arena()));
}

OpPtr Builder::create_detached(const OpInfo& info, std::vector<Value*> operands, AttrMap attrs,
                               size_t num_regions) const {
  return Operation::create(info, std::move(operands), {}, std::move(attrs), loc_, num_regions, block_->arena());
}

Operation* Builder::insert(OpPtr op) {
  if (op->num_results() == 0) {
    std::vector<TensorType> results = infer(op->info(), op->operands(), op->attributes(), op.get());
    op->set_result_types(results);
  }
  return block_->push_back(std::move(op));
}

Operation* Builder::create_return(std::vector<Value*> values) {
  return block_->append(terminator_op_info(), std::move(values), {}, {}, loc_);
}

OpPtr clone_detached(const Operation& op, const ValueMap& map, Arena* arena) {
  // Operands and result types gathered on the stack for the common case (every elementwise op):
  // a clone touches no allocator but the arena.
  constexpr size_t kInline = 4;
  Value* operand_buf[kInline];
  std::vector<Value*> many_operands;
  std::span<Value* const> operands;
  if (op.num_operands() <= kInline) {
    for (size_t i = 0; i < op.num_operands(); ++i) operand_buf[i] = map.lookup_or_self(op.operand(i));
    operands = {operand_buf, op.num_operands()};
  } else {
    many_operands.reserve(op.num_operands());
    for (const Value* v : op.operands()) many_operands.push_back(map.lookup_or_self(v));
    operands = many_operands;
  }
  std::vector<TensorType> many_types;
  std::span<const TensorType> types;
  if (op.num_results() == 1) {
    types = {&op.result(0)->type(), 1};
  } else {
    many_types.reserve(op.num_results());
    for (const auto& r : op.results()) many_types.push_back(r->type());
    types = many_types;
  }
  return Operation::create(op.info(), operands, types, op.attributes(), op.location(), op.regions().size(), arena);
}

Operation* clone_op(Builder& b, const Operation& op, ValueMap& map) {
  OpPtr clone = clone_detached(op, map, b.block().arena());
  for (size_t i = 0; i < op.regions().size(); ++i) clone_region(op.region(i), clone->region(i), map);
  Operation* inserted = b.block().push_back(std::move(clone));
  for (size_t i = 0; i < op.num_results(); ++i) map.map(op.result(i), inserted->result(i));
  return inserted;
}

void clone_region(const Region& src, Region& dst, ValueMap& map) {
  const Block& from = src.block();
  Block& to = dst.block();
  if (to.num_arguments() != 0 || to.num_operations() != 0)
    throw InternalError("clone_region: the destination region is not empty");
  for (const auto& a : from.arguments()) map.map(a.get(), to.add_argument(a->type()));
  Builder b(to);
  for (const auto& op : from.operations()) clone_op(b, *op, map);
}

std::vector<Value*> inline_block(Builder& b, const Block& src, std::span<Value* const> args, ValueMap& map) {
  if (args.size() != src.num_arguments())
    throw InternalError("inline_block: " + std::to_string(args.size()) + " arguments for a block of " +
                        std::to_string(src.num_arguments()));
  for (size_t i = 0; i < args.size(); ++i) map.map(src.argument(i), args[i]);
  const Operation* term = src.terminator();
  for (const auto& op : src.operations())
    if (op.get() != term) clone_op(b, *op, map);
  std::vector<Value*> out;
  if (term)
    for (const Value* v : term->operands()) out.push_back(map.lookup_or_self(v));
  return out;
}

Function& clone_function(const Function& f, Module& dst, const std::string& name) {
  Function& g = dst.add_function(name);
  g.result_types() = f.result_types();
  ValueMap map;
  clone_region(f.body(), g.body(), map);
  return g;
}

std::shared_ptr<Module> clone_module(const Module& m) {
  auto out = std::make_shared<Module>(m.name(), m.version());
  for (const auto& f : m.functions()) clone_function(*f, *out, f->name());
  return out;
}

std::vector<const Value*> captured_values(const Operation& op) {
  // Everything defined inside the regions, at any depth.
  std::unordered_set<const Value*> inside;
  std::vector<const Operation*> stack{&op};
  while (!stack.empty()) {
    const Operation* o = stack.back();
    stack.pop_back();
    for (const auto& r : o->regions()) {
      const Block& b = r->block();
      for (const auto& a : b.arguments()) inside.insert(a.get());
      for (const auto& inner : b.operations()) {
        for (const auto& res : inner->results()) inside.insert(res.get());
        stack.push_back(inner.get());
      }
    }
  }
  // Deterministic order: walk the regions in program order.
  std::vector<const Value*> out;
  std::unordered_set<const Value*> seen;
  auto walk = [&](auto&& self, const Operation& o) -> void {
    for (const auto& r : o.regions())
      for (const auto& inner : r->block().operations()) {
        for (const Value* v : inner->operands())
          if (!inside.count(v) && seen.insert(v).second) out.push_back(v);
        self(self, *inner);
      }
  };
  walk(walk, op);
  return out;
}

std::unordered_map<const Value*, size_t> count_uses(const Function& f) {
  std::unordered_map<const Value*, size_t> uses;
  auto walk = [&](auto&& self, const Block& b) -> void {
    for (const auto& op : b.operations()) {
      for (const Value* v : op->operands()) ++uses[v];
      for (const auto& r : op->regions()) self(self, r->block());
    }
  };
  walk(walk, f.entry());
  return uses;
}

}  // namespace evoxc
