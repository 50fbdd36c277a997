// The StableHLO writer that lowering rules use: SSA names, types, constants, broadcasting, symbolic extents, regions.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "evoxc/core/error.h"
#include "evoxc/core/tensor.h"
#include "evoxc/ir/ir.h"
#include "evoxc/ops/rule_table.h"

namespace evoxc::stablehlo {

// A value of the function being written: its SSA name ("%v3", "%arg0", "%v7#1") and type.
struct Val {
  std::string name;
  TensorType type;
};

class Emitter;

// One op's lowering: the values of its results, from its operands' values (and, for ops with
// regions, their captured values after the operands, as the interpreter orders them).
using Rule = std::function<std::vector<Val>(Emitter& e, const Operation& op, std::span<const Val> operands)>;
using Table = RuleTable<Rule, BackendError>;

// The table every rule family fills (rules_*.cpp), keyed by op id.
const Table& rules();

// "f32", "i1" (bool), "ui8", "bf16".
std::string element_type(DType t);
// "tensor<2x?xf32>", "tensor<f32>".
std::string tensor_type(const TensorType& t);
// "tensor<i64>" style helpers.
inline TensorType scalar_type(DType t) { return TensorType(t, Shape{}); }

class Emitter {
 public:
  explicit Emitter(std::string* out) : out_(out) {}

  // One op in generic form: `%vN = "stablehlo.<name>"(operands) <attrs> : (types) -> results`
  // (attrs is "{...}" or empty). A name with a dialect prefix ("chlo.erf") is written as it is.
  // Returns the results' values.
  std::vector<Val> op(const std::string& name, std::span<const Val> operands, const std::string& attrs,
                      std::span<const TensorType> results);
  Val op1(const std::string& name, std::span<const Val> operands, const std::string& attrs, const TensorType& result);
  Val op1(const std::string& name, std::initializer_list<Val> operands, const std::string& attrs,
          const TensorType& result) {
    return op1(name, std::span<const Val>(operands.begin(), operands.size()), attrs, result);
  }
  // The same with regions: `regions` writes each region's body (between the braces) by calling
  // region_block for each.
  std::vector<Val> op_with_regions(const std::string& name, std::span<const Val> operands, const std::string& attrs,
                                   std::span<const TensorType> results, size_t num_regions,
                                   const std::function<void(size_t region)>& body);
  // Inside op_with_regions' body: one block with arguments of `arg_types`; `fill(args)` writes
  // its ops and returns the values the block returns ("stablehlo.return").
  void region_block(std::span<const TensorType> arg_types,
                    const std::function<std::vector<Val>(std::span<const Val> args)>& fill);
  // Lowers the ops of an EvoXIR block (a region of a control-flow op) with `args` for its
  // arguments and returns the values of its terminator's operands.
  std::vector<Val> lower_block(const Block& b, std::span<const Val> args);

  // numpy broadcasting of `x` to `shape` (its dtype kept): x itself when the shapes are
  // equal; broadcast_in_dim, or dynamic_broadcast_in_dim when `shape` is symbolic.
  Val broadcast_to(const Val& x, const Shape& shape);
  // Elementwise conversion (x itself when the dtype is `to`).
  Val convert(const Val& x, DType to);
  // A tensor of `shape` with every element `value` (a double, int64 or bool attribute value
  // converted to `t` as `full` does); symbolic shapes broadcast a scalar constant.
  Val splat(const Attribute& value, DType t, const Shape& shape);
  // The host tensor as a dense constant (raw bytes in hex: exact for every dtype).
  Val constant(const Tensor& t);
  // An extent's value as a rank-0 tensor of `t` (i64 or i32): a constant, or read from an
  // input with get_dimension_size and combined with StableHLO arithmetic.
  Val extent(const DimExpr& d, DType t = DType::I64);
  // A rank-1 i64 shape tensor of `shape` (for the dynamic_* ops).
  Val shape_tensor(const Shape& shape);

  // Where symbol `name`'s value can be read: an input value and its axis (set by the module
  // writer from the inputs).
  void bind_symbol(const std::string& name, const Val& input, size_t axis);

  // Functions placed beside @main (stablehlo_call's module): `make(prefix, functions, before, after)` appends the
  // module's functions and its top-level alias definitions (those that go before the module and those after it),
  // every name starting with `prefix`, and returns the symbol to call. The same `key` (the module's text) is placed
  // once and gives the same symbol again.
  using EmbedFn = std::function<std::string(const std::string& prefix, std::string* functions,
                                            std::string* aliases_before, std::string* aliases_after)>;
  std::string embed(const std::string& key, const EmbedFn& make);
  const std::string& embedded_functions() const { return functions_; }
  const std::string& aliases_before() const { return aliases_before_; }
  const std::string& aliases_after() const { return aliases_after_; }

  // BackendError naming the op and its location.
  [[noreturn]] static void fail(const Operation& op, const std::string& why);

  // The op being lowered (set by lower_block around each rule), for messages.
  const Operation* current() const { return current_; }

 private:
  std::string fresh();
  void line(const std::string& text);
  std::string* out_;
  int depth_ = 2;
  int next_ = 0;
  const Operation* current_ = nullptr;
  struct SymbolSource {
    Val input;
    size_t axis;
  };
  std::map<std::string, SymbolSource> symbols_;
  std::map<std::string, std::string> embedded_;  // module text -> the symbol of its @main
  std::string functions_;
  std::string aliases_before_;
  std::string aliases_after_;
  // The StableHLO value of each EvoXIR value lowered so far (regions see their enclosing values).
  std::unordered_map<const Value*, Val> env_;
};

// "array<i64: 0, 1>" (an empty list gives "array<i64>").
std::string i64_array(std::span<const int64_t> v);
std::string i64_array(std::initializer_list<int64_t> v);

// The rule families (each in its own rules_<family>.cpp) fill the table.
void add_elementwise_rules(Table& t);
void add_reduce_linalg_rules(Table& t);
void add_structure_rules(Table& t);
void add_layout_rules(Table& t);
void add_control_rules(Table& t);
void add_extension_rules(Table& t);

}  // namespace evoxc::stablehlo
