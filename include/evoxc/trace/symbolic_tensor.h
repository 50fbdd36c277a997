// SymbolicTensor (an SSA value inside a trace), Operand (what op functions accept), the trace context and location
// scopes.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <source_location>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "evoxc/core/tensor.h"
#include "evoxc/ir/builder.h"
#include "evoxc/ir/graph.h"

namespace evoxc {

class TraceContext;

// A value of the graph being traced: dtype, symbolic shape, SSA identity — and no data.
// Arithmetic on it appends operations to the trace it belongs to.
//
// A SymbolicTensor is only usable inside its own trace while that trace is the innermost
// one active on this thread: using it (type(), shape(), value(), context(), any op function,
// returning it) after its trace ended, inside a nested trace, or on another thread is a
// TraceError. It records its trace's pointer and generation (a process-unique number each
// TraceContext gets), so a new trace that happens to reuse the address of an ended one is
// still told apart. Copying is free: no reference counting.
class SymbolicTensor {
 public:
  SymbolicTensor() = default;

  bool defined() const { return value_ != nullptr; }
  const TensorType& type() const { return checked()->type(); }
  DType dtype() const { return type().dtype; }
  const Shape& shape() const { return type().shape; }
  size_t rank() const { return type().rank(); }
  // The IR value (checked like every use).
  Value* value() const { return checked(); }
  // The trace this value belongs to (checked: it is then the innermost active trace).
  TraceContext* context() const {
    checked();
    return ctx_;
  }
  // The generation of the trace it was made in (0 for an undefined SymbolicTensor).
  uint64_t generation() const { return gen_; }

  // Branching on a symbolic value cannot be traced: always a TraceError that points at cond.
  explicit operator bool() const;

 private:
  friend class TraceContext;
  SymbolicTensor(TraceContext* ctx, uint64_t gen, Value* v) : ctx_(ctx), gen_(gen), value_(v) {}
  // The value, after checking that this tensor belongs to the innermost live trace.
  Value* checked() const;

  TraceContext* ctx_ = nullptr;
  uint64_t gen_ = 0;
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

// The trace being built on this thread: the module, a Builder that inserts into the
// innermost block being traced (main's body, or a control-flow region), the location
// recorded for new ops, and the rank-0 host-scalar constants already emitted per block.
// trace() creates one; op functions find it through their operands (or, for ops without
// tensor operands, as the innermost active trace on this thread). Traces nest: creating a
// TraceContext makes it the innermost active trace until it is destroyed (destroy in
// reverse order of creation).
class TraceContext {
 public:
  TraceContext();
  ~TraceContext();
  TraceContext(const TraceContext&) = delete;
  TraceContext& operator=(const TraceContext&) = delete;

  // The innermost trace active on this thread; TraceError when there is none.
  static TraceContext& current();
  static TraceContext* current_or_null();

  // The trace `t` belongs to, checked like every use; the TraceError names `op` and `loc`.
  static TraceContext& of(const SymbolicTensor& t, const OpInfo& op, const std::source_location& loc);

  // Unique in this process (a global counter), never 0.
  uint64_t generation() const { return gen_; }
  Module& module() { return *module_; }
  std::shared_ptr<Module> module_ptr() { return module_; }
  Function& main() { return *main_; }
  // The block ops go into, and the Builder that inserts there.
  Block& block() { return builder_.block(); }
  Builder& builder() { return builder_; }

  // Traces into `b` (a region of a detached control-flow op) until pop_block(). Rank-0
  // scalar constants are shared within one block only, so a region never captures one.
  void push_block(Block& b);
  void pop_block();

  SymbolicTensor add_input(const TensorSpec& spec);
  // The SymbolicTensor of a value of this trace's module (a block argument the caller added).
  SymbolicTensor wrap(Value* v) { return SymbolicTensor(this, gen_, v); }
  // The value of `t` for an operand of `op`: TraceError naming op and location when `t` is
  // undefined or not of this trace.
  Value* use(const SymbolicTensor& t, const OpInfo& op);

  // Appends `op` through the Builder (result types from the op's inference; ShapeError/
  // TypeError from inference name the location) at the location of `loc` — or of the
  // active LocationScope. Resolve `op` once per call site (a function-local static), not
  // per call: the name overloads look the op up every time.
  std::vector<SymbolicTensor> emit(const OpInfo& op, std::span<const SymbolicTensor> operands, AttrMap attrs,
                                   const std::source_location& loc);
  std::vector<SymbolicTensor> emit(const OpInfo& op, std::initializer_list<SymbolicTensor> operands, AttrMap attrs,
                                   const std::source_location& loc) {
    return emit(op, std::span<const SymbolicTensor>(operands.begin(), operands.size()), std::move(attrs), loc);
  }
  SymbolicTensor emit1(const OpInfo& op, std::span<const SymbolicTensor> operands, AttrMap attrs,
                       const std::source_location& loc);
  SymbolicTensor emit1(const OpInfo& op, std::initializer_list<SymbolicTensor> operands, AttrMap attrs,
                       const std::source_location& loc) {
    return emit1(op, std::span<const SymbolicTensor>(operands.begin(), operands.size()), std::move(attrs), loc);
  }
  std::vector<SymbolicTensor> emit(std::string_view op, std::span<const SymbolicTensor> operands, AttrMap attrs,
                                   const std::source_location& loc);
  SymbolicTensor emit1(std::string_view op, std::initializer_list<SymbolicTensor> operands, AttrMap attrs,
                       const std::source_location& loc);

  // Emits a copy of an op whose result types are already known (a transform re-emitting a
  // verified op over operands of the same types): no inference. The caller vouches for the
  // types; the transform's final verification still checks them.
  std::vector<SymbolicTensor> emit_typed(const OpInfo& op, std::span<const SymbolicTensor> operands, AttrMap attrs,
                                         std::span<const TensorType> result_types, const std::source_location& loc);

  // A rank-0 `full` of `value` (bool, int64 or double) in dtype `t`, emitted once per block
  // and shared by later uses of the same value and dtype in that block.
  SymbolicTensor scalar(const Attribute& value, DType t, const std::source_location& loc);

  // Points the Builder at the location ops are recorded with: the active LocationScope's, or
  // else `loc`'s. Emission calls it; callers that build ops on builder() directly call it first.
  void locate(const std::source_location& loc);
  // Sets the Builder's location directly (a terminator without location); the next emission
  // locates again.
  void set_location(Location loc);
  // The location an op emitted now from `loc` would get (for messages).
  Location location_of(const std::source_location& loc);

 private:
  friend class LocationScope;
  friend class SymbolicTensor;
  // TraceError explaining why `t` cannot be used here; `where` names the op and location (or is empty).
  [[noreturn]] static void misuse(const SymbolicTensor& t, const std::string& where);
  const std::string& file_name(const char* path);
  // Builder::create, with the result types of attribute-free ops memoized across traces; with
  // `result_types`, those types as given (no inference).
  Operation* create(const OpInfo& op, std::span<const SymbolicTensor> operands, AttrMap attrs,
                    const std::span<const TensorType>* result_types = nullptr);

  struct Scalar {
    DType dtype;
    uint8_t kind;   // Attribute index: bool, int64_t or double
    uint64_t bits;  // the value's bits (so -0.0 and 0.0, or two NaNs, are told apart)
    Value* value;
  };

  // A workload builds hundreds of small traces per generation, so beyond the module the
  // per-trace state allocates nothing until a region is pushed or a scalar is emitted.
  uint64_t gen_;
  TraceContext* outer_;
  std::shared_ptr<Module> module_;
  Function* main_;
  Builder builder_;
  std::vector<Block*> blocks_;        // pushed region blocks, innermost last (main's body is below them)
  std::vector<Scalar> scalars_;       // per block, innermost block's last
  std::vector<size_t> scalar_begin_;  // where each pushed block's scalars start (main's at 0)
  // source_location file name -> base name, for the few files one trace is written in.
  static constexpr size_t kFiles = 4;
  std::pair<const char*, std::string> files_[kFiles];
  size_t num_files_ = 0;
  // What the Builder's location was last set from, so consecutive ops from one call site
  // (or under one scope) do not set it again.
  enum class Located : uint8_t { None, Source, Scope };
  Located located_ = Located::None;
  const char* src_file_ = nullptr;
  uint32_t src_line_ = 0;
  uint32_t src_column_ = 0;
  const Location* scope_ = nullptr;  // the innermost active LocationScope's location
};

// While alive, every op traced into `ctx` is recorded at `loc` instead of the C++ call site
// (a binding sets the Python file:line here). Scopes nest (the innermost wins) and must be
// destroyed in reverse order of creation, inside the trace.
class LocationScope {
 public:
  LocationScope(TraceContext& ctx, Location loc);
  ~LocationScope();
  LocationScope(const LocationScope&) = delete;
  LocationScope& operator=(const LocationScope&) = delete;
  // Moves the scope to another location (the next source line) without a new scope.
  void set(Location loc);
  const Location& location() const { return loc_; }

 private:
  TraceContext& ctx_;
  Location loc_;
  const Location* outer_;
};

// Where the tracer reports warnings (constant() embedding host data). The default prints
// one line to stderr; pass nullptr to restore it.
using WarningHandler = void (*)(const std::string& message);
void set_warning_handler(WarningHandler handler);
void warn(const std::string& message);

// The location recorded for ops: the file's base name, line and column.
Location make_location(const std::source_location& loc);

}  // namespace evoxc
