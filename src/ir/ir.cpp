// Construction of EvoXIR values, operations, blocks, functions and modules.
#include "evoxc/ir/ir.h"

#include <mutex>
#include <unordered_map>

#include "evoxc/core/error.h"

namespace evoxc {

namespace {

struct OpInfoTable {
  std::vector<const OpInfo*> by_id;
  std::unordered_map<std::string_view, const OpInfo*> by_name;
  const OpInfo* terminator = nullptr;
};

OpInfoTable& op_table() {
  static OpInfoTable t;
  return t;
}

OpCatalogueLoader g_loader = nullptr;
std::once_flag g_loaded;

// Fills the table through the loader, once; later calls return at once.
const OpInfoTable& loaded_table() {
  if (g_loader) std::call_once(g_loaded, [] { g_loader(); });
  return op_table();
}

}  // namespace

void set_op_catalogue_loader(OpCatalogueLoader loader) { g_loader = loader; }

void register_op_info(OpInfo& info) {
  OpInfoTable& t = op_table();
  if (!t.by_name.emplace(info.name, &info).second)
    throw InternalError("op table: op '" + info.name + "' is registered twice");
  info.id = static_cast<uint32_t>(t.by_id.size());
  t.by_id.push_back(&info);
  if (info.terminator) {
    if (t.terminator)
      throw InternalError("op table: two terminators, '" + t.terminator->name + "' and '" + info.name + "'");
    t.terminator = &info;
  }
}

const OpInfo& terminator_op_info() {
  const OpInfoTable& t = loaded_table();
  if (!t.terminator) throw InternalError("op table: no terminator op is registered (is the op catalogue linked?)");
  return *t.terminator;
}

const OpInfo* find_op_info(std::string_view name) {
  const OpInfoTable& t = loaded_table();
  auto it = t.by_name.find(name);
  return it == t.by_name.end() ? nullptr : it->second;
}

const OpInfo& get_op_info(std::string_view name) {
  if (const OpInfo* i = find_op_info(name)) return *i;
  throw TypeError("unknown op '" + std::string(name) + "'; all_ops() lists the ops this build knows");
}

const std::vector<const OpInfo*>& registered_ops() { return loaded_table().by_id; }

std::string Location::to_string() const {
  if (!known()) return "<unknown>";
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

Value* Block::add_argument(TensorType type) {
  args_.push_back(std::make_unique<Value>(std::move(type), nullptr, this, static_cast<unsigned>(args_.size())));
  return args_.back().get();
}

Operation* Block::append(std::string_view name, std::vector<Value*> operands, std::vector<TensorType> result_types,
                         AttrMap attrs, Location loc, size_t num_regions) {
  return append(get_op_info(name), std::move(operands), std::move(result_types), std::move(attrs), std::move(loc),
                num_regions);
}

Operation* Block::append(const OpInfo& info, std::vector<Value*> operands, std::vector<TensorType> result_types,
                         AttrMap attrs, Location loc, size_t num_regions) {
  OpPtr op = Operation::create(info, operands, result_types, std::move(attrs), std::move(loc), num_regions, arena_);
  op->parent_ = this;
  ops_.push_back(std::move(op));
  return ops_.back().get();
}

Operation* Block::push_back(OpPtr op) {
  if (!op) throw InternalError("Block::push_back: null operation");
  if (op->parent_ != nullptr) throw InternalError("Block::push_back: evoxc." + op->name() + " is already in a block");
  if (op->arena_ != nullptr && op->arena_ != arena_)
    throw InternalError("Block::push_back: evoxc." + op->name() + " was made in another module's arena");
  op->parent_ = this;
  ops_.push_back(std::move(op));
  return ops_.back().get();
}

void Block::erase_last() {
  if (ops_.empty()) throw InternalError("Block::erase_last: the block is empty");
  ops_.pop_back();
}

Operation::Operation(const OpInfo& info, std::span<Value* const> operands, std::span<const TensorType> result_types,
                     AttrMap attrs, Location loc, size_t num_regions, Block* parent, Arena* arena)
    : info_(&info),
      arena_(arena),
      num_operands_(operands.size()),
      attrs_(std::move(attrs)),
      loc_(std::move(loc)),
      parent_(parent) {
  if (num_operands_ <= kInlineOperands) {
    for (size_t i = 0; i < num_operands_; ++i) inline_operands_[i] = operands[i];
  } else {
    many_operands_.assign(operands.begin(), operands.end());
  }
  for (const auto* v : this->operands())
    if (v == nullptr) throw InternalError("Operation " + info.name + ": null operand");
  make_results(result_types);
  regions_.reserve(num_regions);
  for (size_t i = 0; i < num_regions; ++i) regions_.push_back(std::make_unique<Region>(this, arena));
}

void Operation::make_results(std::span<const TensorType> types) {
  if (types.size() == 1) {
    single_.emplace(types[0], this, nullptr, 0u);
    single_ref_ = ResultRef(&*single_);
  } else {
    // Reserved once and never grown, so the values keep their addresses.
    many_.reserve(types.size());
    refs_.reserve(types.size());
    for (size_t i = 0; i < types.size(); ++i) {
      many_.emplace_back(types[i], this, nullptr, static_cast<unsigned>(i));
      refs_.emplace_back(&many_.back());
    }
  }
  num_results_ = types.size();
}

OpPtr Operation::create(const OpInfo& info, std::span<Value* const> operands, std::span<const TensorType> result_types,
                        AttrMap attrs, Location loc, size_t num_regions, Arena* arena) {
  if (arena == nullptr)
    return OpPtr(
        new Operation(info, operands, result_types, std::move(attrs), std::move(loc), num_regions, nullptr, nullptr));
  return OpPtr(arena->make<Operation>(info, operands, result_types, std::move(attrs), std::move(loc), num_regions,
                                      nullptr, arena));
}

void OpDeleter::operator()(Operation* op) const {
  const bool heap = op->arena_ == nullptr;  // read before the op is gone
  op->~Operation();
  if (heap) ::operator delete(op);
}

Operation* Operation::parent_op() const {
  if (parent_ == nullptr || parent_->parent() == nullptr) return nullptr;
  return parent_->parent()->parent_op();
}

void Operation::set_result_types(std::span<const TensorType> types) {
  if (num_results_ != 0) throw InternalError("Operation::set_result_types: evoxc." + name() + " already has results");
  make_results(types);
}

Function& Module::add_function(std::string name) {
  functions_.push_back(std::make_unique<Function>(std::move(name), arena_.get()));
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
