// Construction of EvoXIR values, operations, blocks, functions and modules.
#include "evoxc/ir/ir.h"

#include "evoxc/core/error.h"

namespace evoxc {

std::string Location::to_string() const {
  if (!known()) return "<unknown>";
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

Value* Block::add_argument(TensorType type) {
  args_.push_back(std::make_unique<Value>(std::move(type), nullptr, this, static_cast<unsigned>(args_.size())));
  return args_.back().get();
}

Operation* Block::append(std::string name, std::vector<Value*> operands, std::vector<TensorType> result_types,
                         AttrMap attrs, Location loc, size_t num_regions) {
  ops_.push_back(std::make_unique<Operation>(std::move(name), std::move(operands), result_types, std::move(attrs),
                                             std::move(loc), num_regions, this));
  return ops_.back().get();
}

Operation::Operation(std::string name, std::vector<Value*> operands, const std::vector<TensorType>& result_types,
                     AttrMap attrs, Location loc, size_t num_regions, Block* parent)
    : name_(std::move(name)),
      operands_(std::move(operands)),
      attrs_(std::move(attrs)),
      loc_(std::move(loc)),
      parent_(parent) {
  for (const auto* v : operands_)
    if (v == nullptr) throw InternalError("Operation " + name_ + ": null operand");
  results_.reserve(result_types.size());
  for (size_t i = 0; i < result_types.size(); ++i)
    results_.push_back(std::make_unique<Value>(result_types[i], this, nullptr, static_cast<unsigned>(i)));
  regions_.reserve(num_regions);
  for (size_t i = 0; i < num_regions; ++i) regions_.push_back(std::make_unique<Region>(this));
}

Function& Module::add_function(std::string name) {
  functions_.push_back(std::make_unique<Function>(std::move(name)));
  return *functions_.back();
}

const Function& Module::main() const {
  for (const auto& f : functions_)
    if (f->name() == "main") return *f;
  throw InternalError("Module @" + name_ + " has no main function");
}
Function& Module::main() {
  for (auto& f : functions_)
    if (f->name() == "main") return *f;
  throw InternalError("Module @" + name_ + " has no main function");
}

}  // namespace evoxc
