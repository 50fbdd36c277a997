// EvoXIR: values, operations with attributes and regions, blocks, functions and modules.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "evoxc/core/shape.h"
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

// One straight-line list of operations with typed arguments. The last operation of a
// complete block is a terminator (evoxc.return).
class Block {
 public:
  explicit Block(Region* parent = nullptr) : parent_(parent) {}
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;

  Value* add_argument(TensorType type);
  const std::vector<std::unique_ptr<Value>>& arguments() const { return args_; }
  Value* argument(size_t i) const { return args_.at(i).get(); }
  size_t num_arguments() const { return args_.size(); }

  // Creates an operation at the end of the block. `name` is the op name without the
  // "evoxc." prefix ("add", "reduce_sum"). No inference or checking happens here: the
  // trace layer infers types and the verifier checks them.
  Operation* append(std::string name, std::vector<Value*> operands, std::vector<TensorType> result_types,
                    AttrMap attrs = {}, Location loc = {}, size_t num_regions = 0);
  const std::vector<std::unique_ptr<Operation>>& operations() const { return ops_; }
  Operation* terminator() const { return ops_.empty() ? nullptr : ops_.back().get(); }
  Region* parent() const { return parent_; }

 private:
  Region* parent_;
  std::vector<std::unique_ptr<Value>> args_;
  std::vector<std::unique_ptr<Operation>> ops_;
};

// A region holds exactly one block (EvoXIR has no CFG inside a region; control flow
// is structured as ops with regions).
class Region {
 public:
  explicit Region(Operation* parent = nullptr) : parent_(parent), block_(this) {}
  Block& block() { return block_; }
  const Block& block() const { return block_; }
  Operation* parent_op() const { return parent_; }

 private:
  Operation* parent_;
  Block block_;
};

class Operation {
 public:
  Operation(std::string name, std::vector<Value*> operands, const std::vector<TensorType>& result_types, AttrMap attrs,
            Location loc, size_t num_regions, Block* parent);
  Operation(const Operation&) = delete;
  Operation& operator=(const Operation&) = delete;

  const std::string& name() const { return name_; }
  const std::vector<Value*>& operands() const { return operands_; }
  Value* operand(size_t i) const { return operands_.at(i); }
  size_t num_operands() const { return operands_.size(); }
  const std::vector<std::unique_ptr<Value>>& results() const { return results_; }
  Value* result(size_t i = 0) const { return results_.at(i).get(); }
  size_t num_results() const { return results_.size(); }
  const AttrMap& attributes() const { return attrs_; }
  AttrMap& attributes() { return attrs_; }
  const Location& location() const { return loc_; }
  const std::vector<std::unique_ptr<Region>>& regions() const { return regions_; }
  Region& region(size_t i) const { return *regions_.at(i); }
  Block* parent_block() const { return parent_; }

 private:
  std::string name_;
  std::vector<Value*> operands_;
  std::vector<std::unique_ptr<Value>> results_;
  AttrMap attrs_;
  Location loc_;
  std::vector<std::unique_ptr<Region>> regions_;
  Block* parent_;
};

// A function: one region whose block arguments are the inputs and whose terminator's
// operands are the outputs.
class Function {
 public:
  explicit Function(std::string name) : name_(std::move(name)) {}
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

 private:
  std::string name_;
  int version_;
  std::vector<std::unique_ptr<Function>> functions_;
};

// The EvoXIR format version this build reads and writes.
inline constexpr int kIrVersion = 1;

}  // namespace evoxc
