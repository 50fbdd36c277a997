// The IR rewriting kit: a Builder that inserts ops with inferred result types at an explicit
// location, a value map, cloning of ops, regions and graphs, and region captures.
#pragma once

#include <memory>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "evoxc/core/flat_table.h"
#include "evoxc/ir/graph.h"
#include "evoxc/ir/ir.h"

namespace evoxc {

// Old value -> new value, for cloning and rewriting. Lookups of unmapped values return
// nullptr (lookup) or the value itself (lookup_or_self: a value from an enclosing scope
// that the rewrite keeps). Flat (PtrMap): every transform maps every value of a program.
class ValueMap {
 public:
  void map(const Value* from, Value* to) { map_[from] = to; }
  Value* lookup(const Value* v) const {
    Value* const* to = map_.find(v);
    return to != nullptr ? *to : nullptr;
  }
  Value* lookup_or_self(const Value* v) const {
    Value* to = lookup(v);
    return to != nullptr ? to : const_cast<Value*>(v);  // NOLINT: the IR hands out mutable values
  }
  bool contains(const Value* v) const { return map_.contains(v); }
  size_t size() const { return map_.size(); }
  void reserve(size_t n) { map_.reserve(n); }
  void clear() { map_.clear(); }

 private:
  PtrMap<const Value*, Value*> map_;
};

// Inserts operations at the end of one block. It holds no thread-local or global state:
// every op gets the builder's current location, which the caller sets explicitly.
// Result types come from the op's inference (OpInfo::infer_types); a ShapeError or
// TypeError from inference gets the location appended.
class Builder {
 public:
  explicit Builder(Block& block, Location loc = {}) : block_(&block), loc_(std::move(loc)) {}

  Block& block() const { return *block_; }
  void set_block(Block& block) { block_ = &block; }
  const Location& location() const { return loc_; }
  void set_location(Location loc) { loc_ = std::move(loc); }

  // An op with inferred result types, appended to the block.
  Operation* create(const OpInfo& info, std::vector<Value*> operands, AttrMap attrs = {}) {
    return create(info, std::span<Value* const>(operands), std::move(attrs));
  }
  Operation* create(const OpInfo& info, std::span<Value* const> operands, AttrMap attrs = {});
  Operation* create(std::string_view name, std::vector<Value*> operands, AttrMap attrs = {});
  // The same, returning the first result.
  Value* create1(const OpInfo& info, std::vector<Value*> operands, AttrMap attrs = {}) {
    return create(info, std::move(operands), std::move(attrs))->result(0);
  }
  Value* create1(std::string_view name, std::vector<Value*> operands, AttrMap attrs = {}) {
    return create(name, std::move(operands), std::move(attrs))->result(0);
  }
  // An op with the given result types (no inference; the verifier checks them later).
  Operation* create_typed(const OpInfo& info, std::span<Value* const> operands,
                          std::span<const TensorType> result_types, AttrMap attrs = {}, size_t num_regions = 0);

  // An op with regions, built before it is inserted: create it detached, fill its
  // regions (a Builder on region(i).block()), then insert() it, which infers its result
  // types from operands, attributes and regions. So a control-flow body is built once.
  OpPtr create_detached(const OpInfo& info, std::vector<Value*> operands, AttrMap attrs, size_t num_regions) const;
  Operation* insert(OpPtr op);

  // Appends the block's terminator (evoxc.return) with `values` as its operands.
  Operation* create_return(std::vector<Value*> values);

 private:
  std::vector<TensorType> infer(const OpInfo& info, std::span<Value* const> operands, const AttrMap& attrs,
                                const Operation* op) const;
  Block* block_;
  Location loc_;
};

// A copy of `op` with its operands remapped through `map` (unmapped ones kept), the same
// result types, attributes and location, and empty regions; not inserted anywhere. `arena`:
// the destination block's (Block::arena()).
OpPtr clone_detached(const Operation& op, const ValueMap& map, Arena* arena);

// Clones `op` at the end of the builder's block, keeping its location. Operands are
// remapped through `map` (an unmapped operand is kept: a value of an enclosing scope);
// the clone's results are added to `map`. Regions are cloned recursively.
Operation* clone_op(Builder& b, const Operation& op, ValueMap& map);

// Clones `op` at the end of the builder's block with its operands remapped through `map`
// (unmapped ones kept), the same result types, attributes and location, and for each region
// an entry block with arguments of the same types (mapped in `map`); `fill(src, dst)` then
// writes each region's ops, so a pass can rewrite region bodies as it does the outer block.
// The clone's results are not mapped: the pass decides whether they replace the op's.
template <typename Fill>
Operation* clone_shell(Builder& b, const Operation& op, ValueMap& map, Fill&& fill) {
  b.set_location(op.location());
  Operation* c = b.block().push_back(clone_detached(op, map, b.block().arena()));
  for (size_t i = 0; i < op.regions().size(); ++i) {
    const Block& rb = op.region(i).block();
    Block& cb = c->region(i).block();
    for (const auto& a : rb.arguments()) map.map(a.get(), cb.add_argument(a->type()));
    fill(rb, cb);
  }
  return c;
}

// Clones the block of `src` into the empty region `dst`: new block arguments of the same
// types (mapped in `map`) and a clone of every op, terminator included.
void clone_region(const Region& src, Region& dst, ValueMap& map);

// Clones the ops of `src` except its terminator into the builder's block, with src's
// arguments mapped to `args`; returns the values the terminator would return. (Inlining.)
std::vector<Value*> inline_block(Builder& b, const Block& src, std::span<Value* const> args, ValueMap& map);

// A deep copy of a function into `dst` under `name`.
Function& clone_function(const Function& f, Module& dst, const std::string& name);

// A deep copy of a graph with a module of its own, which the caller may then rewrite.
std::shared_ptr<Module> clone_module(const Module& m);

// Values used inside an op's regions (at any depth) but defined outside them, in
// first-use order: what a region-holding op captures from its enclosing scope.
std::vector<const Value*> captured_values(const Operation& op);

// The number of uses of every op result and block argument in a function (including
// uses from nested regions), keyed by value.
std::unordered_map<const Value*, size_t> count_uses(const Function& f);

}  // namespace evoxc
