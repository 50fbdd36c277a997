// SymbolicTensor (an SSA value inside a trace), Operand (what op functions accept) and the trace context.
#pragma once

#include <memory>
#include <source_location>
#include <string>
#include <string_view>
#include <vector>

#include "evoxc/core/tensor.h"
#include "evoxc/ir/graph.h"

namespace evoxc {

class TraceContext;

// A value of the graph being traced: dtype, symbolic shape, SSA identity — and no data.
// Arithmetic on it appends operations to the trace it belongs to.
class SymbolicTensor {
 public:
  SymbolicTensor() = default;
  SymbolicTensor(TraceContext* ctx, Value* v) : ctx_(ctx), value_(v) {}

  bool defined() const { return value_ != nullptr; }
  const TensorType& type() const;
  DType dtype() const { return type().dtype; }
  const Shape& shape() const { return type().shape; }
  size_t rank() const { return type().rank(); }
  Value* value() const { return value_; }
  TraceContext* context() const { return ctx_; }

  // Branching on a symbolic value cannot be traced: always a TraceError that points at cond.
  explicit operator bool() const;

 private:
  TraceContext* ctx_ = nullptr;
  Value* value_ = nullptr;
};

// An operand of an op function: a SymbolicTensor or a host scalar (weakly typed, see
// docs/semantics.md). Converting a Tensor is a TraceError: host data enters a graph only
// as an input (TensorSpec) or through evoxc::constant.
class Operand {
 public:
  enum class Kind : uint8_t { Tensor, Bool, Int, Float };
  Operand(SymbolicTensor t) : kind_(Kind::Tensor), tensor_(t) {}          // NOLINT
  Operand(bool v) : kind_(Kind::Bool), i_(v) {}                           // NOLINT
  Operand(int v) : kind_(Kind::Int), i_(v) {}                             // NOLINT
  Operand(long v) : kind_(Kind::Int), i_(v) {}                            // NOLINT
  Operand(long long v) : kind_(Kind::Int), i_(v) {}                       // NOLINT
  Operand(unsigned v) : kind_(Kind::Int), i_(static_cast<int64_t>(v)) {}  // NOLINT
  Operand(float v) : kind_(Kind::Float), f_(v) {}                         // NOLINT
  Operand(double v) : kind_(Kind::Float), f_(v) {}                        // NOLINT
  Operand(const Tensor& t);                                               // NOLINT: throws TraceError

  Kind kind() const { return kind_; }
  bool is_tensor() const { return kind_ == Kind::Tensor; }
  const SymbolicTensor& tensor() const { return tensor_; }
  int64_t int_value() const { return i_; }
  double float_value() const { return kind_ == Kind::Float ? f_ : static_cast<double>(i_); }

 private:
  Kind kind_;
  SymbolicTensor tensor_;
  int64_t i_ = 0;
  double f_ = 0;
};

// The trace being built on this thread: the module, the block ops go into, and the
// warnings it raised. trace() creates one; op functions find it through their operands
// (or, for ops without tensor operands, as the innermost active trace on this thread).
class TraceContext {
 public:
  TraceContext();
  ~TraceContext();
  TraceContext(const TraceContext&) = delete;
  TraceContext& operator=(const TraceContext&) = delete;

  // The innermost trace active on this thread; TraceError when there is none.
  static TraceContext& current();
  static TraceContext* current_or_null();

  Module& module() { return *module_; }
  std::shared_ptr<Module> module_ptr() { return module_; }
  Function& main() { return *main_; }
  Block& block() { return *blocks_.back(); }
  void push_block(Block* b) { blocks_.push_back(b); }
  void pop_block() { blocks_.pop_back(); }

  SymbolicTensor add_input(const TensorSpec& spec);

  // Appends an op after inferring its result types with the registry; ShapeError/TypeError
  // from inference get the source location appended.
  std::vector<SymbolicTensor> emit(std::string_view op, const std::vector<SymbolicTensor>& operands, AttrMap attrs,
                                   const std::source_location& loc);
  SymbolicTensor emit1(std::string_view op, const std::vector<SymbolicTensor>& operands, AttrMap attrs,
                       const std::source_location& loc) {
    return emit(op, operands, std::move(attrs), loc).at(0);
  }

 private:
  std::shared_ptr<Module> module_;
  Function* main_;
  std::vector<Block*> blocks_;
  TraceContext* outer_;
};

// Where the tracer reports warnings (constant() embedding host data). The default prints
// one line to stderr; pass nullptr to restore it.
using WarningHandler = void (*)(const std::string& message);
void set_warning_handler(WarningHandler handler);
void warn(const std::string& message);

// The location recorded for ops: the file's base name, line and column.
Location make_location(const std::source_location& loc);

}  // namespace evoxc
