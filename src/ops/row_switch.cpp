// The row_switch op: one elementwise variant per row of the leading axis, from a static row -> variant table.
// batch_functions emits it where merged programs run different elementwise ops at one position.
#include "evoxc/ops/row_switch.h"

#include <cstdint>
#include <string>
#include <vector>

#include "ops/registry.h"

namespace evoxc::ops_detail {
namespace {

constexpr const char* kOp = "row_switch";

bool switchable(OpCategory c) {
  return c == OpCategory::ElementwiseUnary || c == OpCategory::ElementwiseBinary || c == OpCategory::Comparison;
}

std::string arity(const OpDef& v) {
  std::string n = std::to_string(v.min_operands);
  if (v.max_operands != v.min_operands) n += " or " + std::to_string(v.max_operands);
  return n + (v.min_operands == 1 && v.max_operands == 1 ? " operand" : " operands");
}

// One variant's result type over the operands, its own inference's error prefixed with this op.
TensorType variant_type(const OpDef& v, std::span<const TensorType> ops) {
  try {
    std::vector<TensorType> r = infer_result_types(v, ops, {});
    if (r.size() != 1)
      throw InternalError(op_label(kOp) + ": variant '" + v.name + "' gives " + std::to_string(r.size()) + " results");
    return r[0];
  } catch (const ShapeError& e) {
    throw ShapeError(op_label(kOp) + ": variant '" + v.name + "': " + e.what());
  } catch (const TypeError& e) {
    throw TypeError(op_label(kOp) + ": variant '" + v.name + "': " + e.what() +
                    "; variants take no attributes, so ops that need one cannot be variants");
  }
}

std::vector<TensorType> infer(std::span<const TensorType> ops, const AttrMap& attrs) {
  const std::vector<int64_t>& rows = attr_ints(attrs, "rows", kOp);
  std::vector<const OpDef*> defs = row_switch_variants(attrs);
  const auto n = static_cast<int>(ops.size());
  for (const OpDef* v : defs) {
    const std::string& name = v->name;
    if (!switchable(v->category))
      throw TypeError(op_label(kOp) + ": variant '" + name + "' is a " + op_category_name(v->category) +
                      " op; variants must be elementwise_unary, elementwise_binary or comparison ops");
    if (n < v->min_operands || n > v->max_operands)
      throw TypeError(op_label(kOp) + " takes as many operands as each of its variants: variant '" + name + "' takes " +
                      arity(*v) + ", got " + std::to_string(n));
  }
  TensorType r = variant_type(*defs[0], ops);
  for (size_t i = 1; i < defs.size(); ++i) {
    TensorType ri = variant_type(*defs[i], ops);
    if (ri != r)
      throw TypeError(op_label(kOp) + ": variants '" + defs[0]->name + "' and '" + defs[i]->name +
                      "' give different result types (" + r.to_string() + " and " + ri.to_string() +
                      "); every variant must give the same type");
  }
  if (r.rank() == 0)
    throw ShapeError(op_label(kOp) + ": the result " + r.to_string() +
                     " has no leading row axis; per-row operands have rank >= 1 with one row per entry of 'rows'");
  const DimExpr& lead = r.shape[0];
  if (!lead.is_const())
    throw ShapeError(op_label(kOp) + ": the leading (row) extent of the result " + r.to_string() +
                     " is symbolic; it must be static, one row per entry of 'rows'");
  if (lead.value() != static_cast<int64_t>(rows.size()))
    throw ShapeError(op_label(kOp) + ": 'rows' has " + std::to_string(rows.size()) + " entries but the result " +
                     r.to_string() + " has " + std::to_string(lead.value()) + " rows; give one variant index per row");
  for (size_t k = 0; k < ops.size(); ++k) {
    if (ops[k].rank() == r.rank() && ops[k].shape[0] != lead)
      throw ShapeError(op_label(kOp) + ": operand " + std::to_string(k) + " (" + ops[k].to_string() +
                       ") has the result's rank, so it is per-row and needs leading extent " +
                       std::to_string(lead.value()) + "; an operand shared by every row has a lower rank");
  }
  for (size_t i = 0; i < rows.size(); ++i)
    if (rows[i] < 0 || rows[i] >= static_cast<int64_t>(defs.size()))
      throw ShapeError(op_label(kOp) + ": 'rows' entry " + std::to_string(i) + " is " + std::to_string(rows[i]) +
                       ", outside [0, " + std::to_string(defs.size()) + "), the indices of 'variants'");
  return {r};
}

}  // namespace

void register_row_switch_ops(OpTable& t) {
  OpDef d;
  d.name = kOp;
  // Row r depends on its row index, not only on operand elements at its position, so the op is
  // not elementwise: vmap's leading axis would shift the rows the table names.
  d.category = OpCategory::Structure;
  d.min_operands = 1;
  d.max_operands = 3;
  d.operand_dtypes = DTypeClass::Any;
  d.attrs = {{"variants", AttrKind::String}, {"rows", AttrKind::Ints}};
  d.infer = infer;
  d.doc =
      "row r of the result is variants[rows[r]] (an elementwise unary, binary or comparison op) on row r of each "
      "per-row operand (leading extent len(rows)) and on each shared operand (lower rank); the variants' one result "
      "type";
  // No linearity: it holds for some tables (add, subtract) and not others, and traits hold for every table.
  // The sample mixes a run of two rows with a single row, on variants nonlinear in each operand alone.
  d.sample = [](DType t) {
    std::string variants = t == DType::Bool ? "logical_and,logical_or" : "add,maximum";
    TensorType x(t, Shape{3, 2});
    return OpSample{{x, x}, {{"variants", variants}, {"rows", std::vector<int64_t>{1, 1, 0}}}};
  };
  t.add(std::move(d));
}

}  // namespace evoxc::ops_detail

namespace evoxc {

std::vector<const OpDef*> row_switch_variants(const AttrMap& attrs) {
  const std::string& spec = attr_string(attrs, "variants", "row_switch");
  std::vector<const OpDef*> defs;
  size_t start = 0;
  while (true) {
    size_t comma = spec.find(',', start);
    std::string name = spec.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const OpDef* v = find_op(name);
    if (v == nullptr)
      throw TypeError(ops_detail::op_label("row_switch") + ": unknown variant '" + name + "' in 'variants' (\"" + spec +
                      "\"); it takes comma-separated names of registered ops, without spaces");
    defs.push_back(v);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return defs;
}

std::string row_switch_spec(std::span<const uint32_t> op_ids) {
  std::string spec;
  for (size_t i = 0; i < op_ids.size(); ++i) spec += (i ? "," : "") + op_def(op_ids[i]).name;
  return spec;
}

}  // namespace evoxc
