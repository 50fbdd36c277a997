// The MLIR writer that mlir lowering rules use: tensor values, linalg.generic with numpy broadcasting, scalar bodies,
// extents, regions.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "evoxc/core/error.h"
#include "evoxc/core/flat_table.h"
#include "evoxc/core/tensor.h"
#include "evoxc/ir/ir.h"
#include "evoxc/ops/rule_table.h"

namespace evoxc::mlir_backend {

// A tensor value of the function being written: its SSA name and type.
struct Val {
  std::string name;
  TensorType type;
};

// A scalar SSA value (inside a linalg region or between tensor ops): its name and evoxc dtype
// (the MLIR type is signless: the dtype says how to read the bits).
struct Scalar {
  std::string name;
  DType dtype;
};

class Emitter;

// One op's lowering: its results' values from its operands' values (ops with regions: the
// captured values follow the operands, as the interpreter orders them).
using Rule = std::function<std::vector<Val>(Emitter& e, const Operation& op, std::span<const Val> operands)>;
using Table = RuleTable<Rule, BackendError>;

class Body;

// An elementwise op's scalar form: its result element from its operands' elements (numpy broadcasting is the
// caller's). An op with one is fusible: Emitter::lower_block writes a chain of such ops as one linalg.generic.
struct ScalarRule {
  std::function<Scalar(Body& b, const Operation& op, std::span<const Scalar> x)> fn;
  // A few integer or float instructions, no division or math call: recomputed in every fused loop that reads
  // it instead of stored once and loaded by each (the protected division's mask, shared by a population's
  // programs).
  bool cheap = false;
};
using ScalarTable = RuleTable<ScalarRule, BackendError>;

// What the rule families fill: the lowering of every op, keyed by op id, and the scalar forms of the
// elementwise ones.
struct Tables {
  Table ops{"mlir"};
  ScalarTable scalar{"mlir-fused"};
  // Ops whose lowering reads operand 0 only through Emitter::generic, element by element (the reductions): a fused
  // loop whose value only such an op reads is computed inside that op's loop instead of stored.
  RuleTable<bool, BackendError> reads_elements{"mlir-fused-reader"};
};
const Tables& tables();
inline const Table& rules() { return tables().ops; }
inline const ScalarTable& scalar_rules() { return tables().scalar; }
// Whether a conversion from `from` to `to` keeps every element's bits, so that unfused it reuses its operand's tensor.
using KeepsTensor = bool (*)(const Operation& op, DType from, DType to);
// Sets an elementwise op's scalar rule and, as its lowering, one linalg.generic of it (Emitter::map), or the
// operand's own tensor where `keeps` says the elements stay as they are.
void set_elementwise(Tables& t, const char* name, ScalarRule rule, KeepsTensor keeps = nullptr);

// "f32", "i1" (bool), "i8" (int8 and uint8: MLIR's integers are signless), "bf16".
std::string element_type(DType t);
// "tensor<2x?xf32>", "tensor<f32>".
std::string tensor_type(const TensorType& t);
// "affine_map<(d0, d1) -> (results)>" over `loops` dims.
std::string affine_map(size_t loops, const std::string& results);

// Writes scalar ops in one region (linalg body, scf body). All helpers take and give Scalars.
class Body {
 public:
  explicit Body(Emitter& e) : e_(e) {}
  Emitter& emitter() { return e_; }

  // `%s = <name> %a, %b : T` (result type = the operands' unless `result` is given).
  Scalar bin(const std::string& name, const Scalar& a, const Scalar& b, const std::string& flags = "");
  Scalar un(const std::string& name, const Scalar& a, const std::string& flags = "");
  // `%s = <name> %a : T1 to T2` (arith casts).
  Scalar cast(const std::string& name, const Scalar& a, DType to);
  // `%s = arith.cmpf <pred>, ...` / `arith.cmpi`: i1 result.
  Scalar cmpf(const std::string& pred, const Scalar& a, const Scalar& b);
  Scalar cmpi(const std::string& pred, const Scalar& a, const Scalar& b);
  Scalar select(const Scalar& c, const Scalar& a, const Scalar& b);
  // A constant of dtype t (floats written exactly, as hex bits).
  Scalar f(double v, DType t);
  Scalar i(int64_t v, DType t);
  Scalar b(bool v);
  // `value` converted to `t` exactly as evoxc's `full` converts it (bool: value != 0).
  Scalar splat(const Attribute& value, DType t);
  // The iteration index of loop dimension d (linalg.index) as an `index` scalar.
  std::string index(int d);
  // evoxc's convert (docs/semantics.md): saturating float->int, NaN->0, bool as != 0.
  Scalar convert(const Scalar& a, DType to);
  // f16/bf16 -> f32 (math in f32, rounded once on the way back); other types unchanged.
  Scalar widen(const Scalar& a);
  Scalar narrow(const Scalar& a, DType to);
  // Writes a raw line (already indented by the emitter).
  void line(const std::string& text);
  std::string fresh();

 private:
  Emitter& e_;
};

class Emitter {
 public:
  explicit Emitter(std::string* out) : out_(out) {}

  // numpy broadcasting of `operands` to `result`'s shape through indexing maps (no copies);
  // `f` writes the scalar body from the operands' elements and returns the result element.
  Val map(std::span<const Val> operands, const TensorType& result,
          const std::function<Scalar(Body&, std::span<const Scalar>)>& f);
  Val map(std::initializer_list<Val> operands, const TensorType& result,
          const std::function<Scalar(Body&, std::span<const Scalar>)>& f) {
    return map(std::span<const Val>(operands.begin(), operands.size()), result, f);
  }
  // A linalg.generic over `loops` dims: each input with its affine map ("(d0, d1) -> (d1)"
  // without the dims part: "d1"), an output initialised by `init` (a Val of the output type),
  // iterators "parallel"/"reduction"; `f` gets the inputs' elements then the output's.
  Val generic(std::span<const Val> inputs, std::span<const std::string> input_maps, const Val& init,
              const std::string& output_map, std::span<const std::string> iterators,
              const std::function<Scalar(Body&, std::span<const Scalar>)>& f);
  // tensor.empty of `t` (dynamic extents from extent()).
  Val empty(const TensorType& t);
  // A read-only buffer of tensor `v` (cast to `dyn_type`, a tensor type of dynamic extents) as `view_type`, for a
  // call into the runtime, taken from a copy: One-Shot Bufferize does not count a to_buffer as a read of its
  // tensor, so an op between two such reads could write into the tensor's buffer in place (a chain of matmuls read
  // an overwritten operand); the copy is a read it sees.
  // `copy` false: `v` is a tensor the caller made for this read alone (nothing else reads it), taken as it is.
  std::string read_buffer(const Val& v, const std::string& dyn_type, const std::string& view_type, bool copy = true);
  // A tensor of `t` with every element `v` (linalg.fill).
  Val fill(const Scalar& v, const TensorType& t);
  // The host tensor as a dense constant (hex bytes: exact for every dtype).
  Val constant(const Tensor& t);
  // A tensor of `shape` filled with `value` converted to `t` exactly as evoxc's `full` does.
  Val splat(const Attribute& value, DType t, const Shape& shape);
  // An extent as an `index` SSA value (tensor.dim of the input it comes from, plus arithmetic).
  std::string extent(const DimExpr& d);
  // An extent as a slice size or static shape list writes it: the literal when static, else extent(d).
  std::string size(const DimExpr& d);
  // The `index` constant.
  std::string index_constant(int64_t v);
  // `%r = <text> : <type>` with a fresh name; returns the name. `text` follows the `=`.
  std::string assign(const std::string& text);
  // A raw line at the current depth.
  void line(const std::string& text);
  std::string fresh(const char* prefix = "%v");

  // Regions: `body` writes the region's lines one level deeper.
  void indent(const std::function<void()>& body);
  // Lowers the ops of an EvoXIR block with `args` for its arguments; returns its terminator's operands.
  // Elementwise ops of one shape (those with a ScalarRule) are fused first (fusion.cpp): each chain that
  // ends in a value read by anything else becomes one linalg.generic computing the chain element by element.
  std::vector<Val> lower_block(const Block& b, std::span<const Val> args);

  // Where symbol `name`'s value can be read: an input and its axis.
  void bind_symbol(const std::string& name, const Val& input, size_t axis);

  // A module-level line (an external function's declaration), written once before @main.
  void declare(const std::string& line) { declarations_.insert(line); }
  const std::set<std::string>& declarations() const { return declarations_; }

  // What a rule works out once for several ops and reads back at each (row_switch's shared partition
  // of rows), keyed by whatever it is about; kept as long as the emitter.
  template <class T>
  const T* recall(const void* key) const {
    auto it = notes_.find(key);
    return it == notes_.end() ? nullptr : static_cast<const T*>(it->second.get());
  }
  template <class T>
  const T* remember(const void* key, std::shared_ptr<const T> note) {
    const T* p = note.get();
    notes_[key] = std::move(note);
    return p;
  }

  // x with the same elements in row-major order and shape `to` (static or symbolic extents).
  Val reshape(const Val& x, const Shape& to);

  // The per-call error sink (an `!llvm.ptr` argument of @main after the outputs, added once a rule asks for
  // it): runtime functions that compiled code calls report errors there (runtime_errors.h) instead of
  // unwinding through compiled frames; the executable raises them when the call returns.
  const std::string& error_sink() {
    uses_error_sink_ = true;
    return kErrorSink;
  }
  bool uses_error_sink() const { return uses_error_sink_; }
  static inline const std::string kErrorSink = "%errors";

  // The indexing map ("d0, 0") that reads an operand of type `operand` broadcast to `result`'s shape.
  static std::string broadcast_map(const TensorType& operand, const TensorType& result);

  // BackendError naming the op and its location.
  [[noreturn]] static void fail(const Operation& op, const std::string& why);
  const Operation* current() const { return current_; }

 private:
  std::string* out_;
  int depth_ = 2;
  int next_ = 0;
  const Operation* current_ = nullptr;
  struct SymbolSource {
    Val input;
    size_t axis;
  };
  std::map<std::string, SymbolSource> symbols_;
  std::unordered_map<const Value*, Val> env_;
  std::set<std::string> declarations_;
  std::unordered_map<const void*, std::shared_ptr<const void>> notes_;
  bool uses_error_sink_ = false;
  friend class Body;
  // One fused loop (fusion.cpp): `members` in block order, the last its root.
  Val lower_fused(std::span<const Operation* const> members);
  // A lowered value's tensor; InternalError when `v` has none yet.
  const Val& value_of(const Value* v) const;
  // The values `members` read from outside themselves, in first-read order.
  static std::vector<const Value*> fused_inputs(std::span<const Operation* const> members);
  // Writes `members`' scalar code into the current body, reading each outside value from `external`; returns the
  // last member's element.
  Scalar fused_body(std::span<const Operation* const> members, const PtrMap<const Value*, Scalar>& external);
  // A fed value's loop (FusionPlan::Role::Fed) by the placeholder name lower_block gave the value: generic()
  // computes it in the body of the loop that reads it.
  std::unordered_map<std::string, std::vector<const Operation*>> fed_;
};

// How lower_block lowers each op of a block: on its own, as the root of a fused loop (the ops it reads in
// `members`, itself last), or only inside the fused loops of the roots that read it (fusion.cpp).
struct FusionPlan {
  // Fed: a root whose value only a Tables::reads_elements op reads, its loop computed inside that op's loop.
  enum class Role : uint8_t { Alone, Root, Member, Fed };
  std::vector<Role> role;                              // per op of the block
  std::vector<std::vector<const Operation*>> members;  // per op: a root's loop, in block order
};
FusionPlan plan_fusion(const Block& b);

// The rule families (rules_<family>.cpp) fill the tables.
void add_elementwise_rules(Tables& t);  // unary ops
void add_binary_rules(Tables& t);       // binary, comparison, select, clamp, convert, bitcast_convert
void add_reduce_linalg_rules(Tables& t);
void add_structure_rules(Tables& t);
void add_layout_rules(Tables& t);
void add_control_rules(Table& t);
void add_extension_rules(Table& t);  // external_call (a host kernel), stablehlo_call deferred

}  // namespace evoxc::mlir_backend
