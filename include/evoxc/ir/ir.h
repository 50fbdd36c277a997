// EvoXIR: values, operations with attributes and regions, blocks, functions and modules.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "evoxc/core/shape.h"
#include "evoxc/ir/arena.h"
#include "evoxc/ir/attribute.h"

namespace evoxc {

// The type of every EvoXIR value: a ranked tensor with a dtype and symbolic extents.
struct TensorType {
  DType dtype = kDefaultFloat;
  Shape shape;
  TensorType() = default;
  TensorType(DType t, Shape s) : dtype(t), shape(std::move(s)) {}
  size_t rank() const { return shape.rank(); }
  // tensor<4x8xf32>
  std::string to_string() const { return tensor_type_string(shape, dtype); }
  friend bool operator==(const TensorType& a, const TensorType& b) { return a.dtype == b.dtype && a.shape == b.shape; }
  friend bool operator!=(const TensorType& a, const TensorType& b) { return !(a == b); }
};

// A source location; unknown when file is empty. Printed loc("f.cpp":6:0).
struct Location {
  std::string file;
  int line = 0;
  int column = 0;
  bool known() const { return !file.empty(); }
  std::string to_string() const;  // "f.cpp:6:0" or "<unknown>"
};

class Operation;
class Block;
class Region;

// Destroys an operation that Operation::create made: one carved from a module's arena is
// only destroyed (the arena frees its bytes with the module), one made on the heap (no arena:
// a detached op of no module) is also freed.
struct OpDeleter {
  void operator()(Operation* op) const;
};
using OpPtr = std::unique_ptr<Operation, OpDeleter>;

// The identity of a registered op as the IR sees it: its name and a dense id. The ops
// layer's OpDef derives from it and fills in the rest (traits, attribute schema,
// inference), so an Operation links to its definition without the IR knowing the
// catalogue. Every Operation refers to one; the name is resolved once, when the op is
// built or parsed, and an unknown name is an error there.
class OpInfo {
 public:
  OpInfo() = default;
  OpInfo(const OpInfo&) = default;
  OpInfo(OpInfo&&) = default;
  OpInfo& operator=(const OpInfo&) = default;
  OpInfo& operator=(OpInfo&&) = default;
  virtual ~OpInfo() = default;

  std::string name;             // IR name without "evoxc." ("add", "reduce_sum")
  uint32_t id = kUnregistered;  // dense: 0 .. num_registered_ops() - 1, in registration order
  bool terminator = false;      // ends a block (evoxc.return); exactly one registered op has it
  static constexpr uint32_t kUnregistered = UINT32_MAX;

  // Result types for these operands and attributes (ShapeError/TypeError naming the op).
  // `op` is the operation itself for ops whose results depend on their regions (control
  // flow); Builder passes it once the regions are built, otherwise nullptr.
  virtual std::vector<TensorType> infer_types(std::span<const TensorType> operands, const AttrMap& attrs,
                                              const Operation* op) const = 0;
};

// The op table of this process. The ops layer registers its catalogue through a loader it
// installs at static initialisation; the table is filled on first lookup, so no order of
// static initialisation matters. Lookups are thread-safe once the table is filled.
using OpCatalogueLoader = void (*)();
void set_op_catalogue_loader(OpCatalogueLoader loader);
// Registers one op (called by the loader): assigns the next dense id. InternalError on a
// duplicate name.
void register_op_info(OpInfo& info);
// nullptr when no op has that name.
const OpInfo* find_op_info(std::string_view name);
// TypeError "unknown op 'x'" when absent.
const OpInfo& get_op_info(std::string_view name);
// The block terminator (evoxc.return); InternalError when no catalogue registered one.
const OpInfo& terminator_op_info();
// The registered ops, indexed by id.
const std::vector<const OpInfo*>& registered_ops();
inline size_t num_registered_ops() { return registered_ops().size(); }

// An SSA value: an operation result or a block argument. Owned by its op or block.
class Value {
 public:
  Value(TensorType type, Operation* def, Block* block, unsigned index)
      : type_(std::move(type)), def_(def), block_(block), index_(index) {}
  const TensorType& type() const { return type_; }
  DType dtype() const { return type_.dtype; }
  const Shape& shape() const { return type_.shape; }
  // The defining operation; nullptr for a block argument.
  Operation* defining_op() const { return def_; }
  // The block whose argument this is; nullptr for an op result.
  Block* owner_block() const { return block_; }
  bool is_block_argument() const { return def_ == nullptr; }
  // Result number, or argument number for a block argument.
  unsigned index() const { return index_; }

 private:
  TensorType type_;
  Operation* def_;
  Block* block_;
  unsigned index_;
};

// What Operation::results() yields: a handle to a result the operation owns (get(), ->).
class ResultRef {
 public:
  explicit ResultRef(Value* v = nullptr) : v_(v) {}
  Value* get() const { return v_; }
  Value* operator->() const { return v_; }
  Value& operator*() const { return *v_; }

 private:
  Value* v_;
};

// One straight-line list of operations with typed arguments. The last operation of a
// complete block is a terminator (evoxc.return).
class Block {
 public:
  explicit Block(Region* parent = nullptr, Arena* arena = nullptr) : parent_(parent), arena_(arena) {}
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;

  Value* add_argument(TensorType type);
  const std::vector<std::unique_ptr<Value>>& arguments() const { return args_; }
  Value* argument(size_t i) const { return args_.at(i).get(); }
  size_t num_arguments() const { return args_.size(); }

  // Creates an operation at the end of the block with the given result types. `name` is
  // the op name without the "evoxc." prefix ("add", "reduce_sum"), resolved here (TypeError
  // when unknown). No inference or checking happens here: Builder infers result types and
  // the verifier checks them.
  Operation* append(std::string_view name, std::vector<Value*> operands, std::vector<TensorType> result_types,
                    AttrMap attrs = {}, Location loc = {}, size_t num_regions = 0);
  Operation* append(const OpInfo& info, std::vector<Value*> operands, std::vector<TensorType> result_types,
                    AttrMap attrs = {}, Location loc = {}, size_t num_regions = 0);
  // Moves a detached operation (Operation::create) to the end of the block. It must come from
  // this block's arena or the heap (InternalError otherwise: the op would outlive its bytes).
  Operation* push_back(OpPtr op);
  // Removes the last operation, whose results nothing may use yet (for a rewrite that has
  // just appended an op and then finds it redundant).
  void erase_last();
  const std::vector<OpPtr>& operations() const { return ops_; }
  size_t num_operations() const { return ops_.size(); }
  Operation* terminator() const { return ops_.empty() ? nullptr : ops_.back().get(); }
  Region* parent() const { return parent_; }
  // The arena of the module this block belongs to (nullptr for a block of a heap-made op).
  Arena* arena() const { return arena_; }

 private:
  Region* parent_;
  Arena* arena_;
  std::vector<std::unique_ptr<Value>> args_;
  std::vector<OpPtr> ops_;
};

// A region holds exactly one block (EvoXIR has no CFG inside a region; control flow
// is structured as ops with regions).
class Region {
 public:
  explicit Region(Operation* parent = nullptr, Arena* arena = nullptr) : parent_(parent), block_(this, arena) {}
  Block& block() { return block_; }
  const Block& block() const { return block_; }
  Operation* parent_op() const { return parent_; }

 private:
  Operation* parent_;
  Block block_;
};

class Operation {
 public:
  Operation(const OpInfo& info, std::span<Value* const> operands, std::span<const TensorType> result_types,
            AttrMap attrs, Location loc, size_t num_regions, Block* parent, Arena* arena = nullptr);
  Operation(const Operation&) = delete;
  Operation& operator=(const Operation&) = delete;

  // A detached operation (no parent block yet): its regions can be filled before it is
  // inserted with Block::push_back, so a control-flow body is built exactly once. With an
  // arena (the destination block's) it is carved from it, its regions' ops too; without, from
  // the heap.
  static OpPtr create(const OpInfo& info, std::span<Value* const> operands, std::span<const TensorType> result_types,
                      AttrMap attrs, Location loc, size_t num_regions = 0, Arena* arena = nullptr);

  const OpInfo& info() const { return *info_; }
  uint32_t op_id() const { return info_->id; }
  const std::string& name() const { return info_->name; }
  bool is_terminator() const { return info_->terminator; }
  std::span<Value* const> operands() const {
    return {num_operands_ <= kInlineOperands ? inline_operands_ : many_operands_.data(), num_operands_};
  }
  Value* operand(size_t i) const {
    if (i >= num_operands_) throw std::out_of_range("Operation::operand: no operand " + std::to_string(i));
    return operands()[i];
  }
  size_t num_operands() const { return num_operands_; }
  std::span<const ResultRef> results() const { return {num_results_ == 1 ? &single_ref_ : refs_.data(), num_results_}; }
  Value* result(size_t i = 0) const {
    if (i >= num_results_) throw std::out_of_range("Operation::result: no result " + std::to_string(i));
    return results()[i].get();
  }
  size_t num_results() const { return num_results_; }
  const AttrMap& attributes() const { return attrs_; }
  AttrMap& attributes() { return attrs_; }
  const Location& location() const { return loc_; }
  const std::vector<std::unique_ptr<Region>>& regions() const { return regions_; }
  Region& region(size_t i) const { return *regions_.at(i); }
  Block* parent_block() const { return parent_; }
  // The operation whose region holds this one; nullptr at function level or when detached.
  Operation* parent_op() const;

  // Adds results to an operation that has none yet (a detached control-flow op whose
  // result types are known only once its regions are built). InternalError otherwise.
  void set_result_types(std::span<const TensorType> types);

 private:
  friend class Block;
  friend struct OpDeleter;
  const OpInfo* info_;
  Arena* arena_;  // where this op's bytes live; nullptr: the heap
  // Up to kInlineOperands operands (every elementwise op) live inside the operation.
  static constexpr size_t kInlineOperands = 3;
  size_t num_operands_ = 0;
  Value* inline_operands_[kInlineOperands] = {};
  std::vector<Value*> many_operands_;
  void make_results(std::span<const TensorType> types);
  // A single result (most ops) lives inside the operation, so building an op allocates
  // neither a result list nor the value; several results live in `many_`.
  size_t num_results_ = 0;
  std::optional<Value> single_;
  ResultRef single_ref_;
  std::vector<Value> many_;
  std::vector<ResultRef> refs_;
  AttrMap attrs_;
  Location loc_;
  std::vector<std::unique_ptr<Region>> regions_;
  Block* parent_;
};

// A function: one region whose block arguments are the inputs and whose terminator's
// operands are the outputs.
class Function {
 public:
  explicit Function(std::string name, Arena* arena = nullptr) : name_(std::move(name)), body_(nullptr, arena) {}
  const std::string& name() const { return name_; }
  Region& body() { return body_; }
  const Region& body() const { return body_; }
  Block& entry() { return body_.block(); }
  const Block& entry() const { return body_.block(); }
  // Declared result types (printed after ->).
  std::vector<TensorType>& result_types() { return result_types_; }
  const std::vector<TensorType>& result_types() const { return result_types_; }

 private:
  std::string name_;
  Region body_;
  std::vector<TensorType> result_types_;
};

// A module: named functions; "main" is the entry point.
class Module {
 public:
  explicit Module(std::string name = "main", int version = 1) : name_(std::move(name)), version_(version) {}
  const std::string& name() const { return name_; }
  int version() const { return version_; }
  Function& add_function(std::string name);
  const std::vector<std::unique_ptr<Function>>& functions() const { return functions_; }
  // The function named "main"; InternalError when absent.
  const Function& main() const;
  Function& main();
  // Where the module's operations live (see Arena).
  Arena& arena() const { return *arena_; }

 private:
  std::string name_;
  int version_;
  // Declared before the functions, so it is destroyed after every op carved from it.
  std::unique_ptr<Arena> arena_ = std::make_unique<Arena>();
  std::vector<std::unique_ptr<Function>> functions_;
};

// The EvoXIR format version this build reads and writes.
inline constexpr int kIrVersion = 1;

}  // namespace evoxc
