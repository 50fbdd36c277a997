// Control op family: the block terminator `return` and structured control flow with regions (cond, while_loop, scan).
#include <string>
#include <vector>

#include "ops/registry.h"

namespace evoxc::ops_detail {

namespace {

std::string types_text(std::span<const TensorType> ts) {
  std::string s = "(";
  for (size_t i = 0; i < ts.size(); ++i) s += (i ? ", " : "") + ts[i].to_string();
  return s + ")";
}

std::vector<TensorType> arg_types(const Block& b) {
  std::vector<TensorType> t;
  for (const auto& a : b.arguments()) t.push_back(a->type());
  return t;
}

// The types a region's block returns; TypeError when the block has no return (the
// structural verifier reports that first in practice).
std::vector<TensorType> returned_types(const std::string& op, const Block& b, const std::string& what) {
  const Operation* t = b.terminator();
  if (!t || !t->is_terminator()) throw TypeError(op_label(op) + ": " + what + " does not end with evoxc.return");
  std::vector<TensorType> r;
  for (const Value* v : t->operands()) r.push_back(v->type());
  return r;
}

// TypeError unless the region's block arguments have exactly the types `want`.
void require_args(const std::string& op, const Block& b, std::span<const TensorType> want, const std::string& what) {
  std::vector<TensorType> have = arg_types(b);
  if (have.size() != want.size())
    throw TypeError(op_label(op) + ": " + what + " takes " + std::to_string(have.size()) + " block arguments " +
                    types_text(have) + ", expected " + std::to_string(want.size()) + " " + types_text(want));
  for (size_t i = 0; i < have.size(); ++i)
    if (have[i] != want[i])
      throw TypeError(op_label(op) + ": block argument " + std::to_string(i) + " of " + what + " has type " +
                      have[i].to_string() + ", expected " + want[i].to_string());
}

void require_returns(const std::string& op, std::span<const TensorType> have, std::span<const TensorType> want,
                     const std::string& what, const std::string& expected_from) {
  if (have.size() != want.size())
    throw TypeError(op_label(op) + ": " + what + " returns " + std::to_string(have.size()) + " values " +
                    types_text(have) + ", expected " + std::to_string(want.size()) + " " + types_text(want) + " (" +
                    expected_from + ")");
  for (size_t i = 0; i < have.size(); ++i)
    if (have[i] != want[i])
      throw TypeError(op_label(op) + ": " + what + " returns " + have[i].to_string() + " at result " +
                      std::to_string(i) + " where " + expected_from + " gives " + want[i].to_string());
}

bool is_index_dtype(DType t) { return t == DType::I32 || t == DType::I64; }

// cond: operand 0 selects the region; the rest are every region's block arguments.
std::vector<TensorType> cond_infer(std::span<const TensorType> ops, const AttrMap&) {
  const TensorType& p = ops[0];
  if (p.rank() != 0 || !(p.dtype == DType::Bool || is_index_dtype(p.dtype)))
    throw TypeError(op_label("cond") + ": operand 0 (the predicate) must be a rank-0 bool, int32 or int64, got " +
                    p.to_string());
  return {};
}

std::vector<TensorType> cond_infer_regions(std::span<const TensorType> ops, const AttrMap&, const Operation& op) {
  size_t n = op.regions().size();
  if (ops[0].dtype == DType::Bool && n != 2)
    throw TypeError(op_label("cond") + ": a bool predicate needs 2 regions (true, false), got " + std::to_string(n));
  if (n == 0) throw TypeError(op_label("cond") + ": needs at least one region (branch)");
  std::span<const TensorType> args = ops.subspan(1);
  std::vector<TensorType> first;
  for (size_t r = 0; r < n; ++r) {
    const Block& b = op.region(r).block();
    std::string what = "branch " + std::to_string(r);
    require_args("cond", b, args, what);
    std::vector<TensorType> ret = returned_types("cond", b, what);
    if (r == 0)
      first = ret;
    else
      require_returns("cond", ret, first, what, "branch 0");
  }
  return first;
}

// block_call: a named custom op whose one region is its portable body (the operands are its block arguments).
std::vector<TensorType> block_infer(std::span<const TensorType>, const AttrMap& attrs) {
  const std::string& name = attr_string(attrs, "block", "block_call");
  if (name.empty()) throw TypeError(op_label("block_call") + ": the block's name must not be empty");
  return {};
}

std::vector<TensorType> block_infer_regions(std::span<const TensorType> ops, const AttrMap&, const Operation& op) {
  const Block& b = op.region(0).block();
  require_args("block_call", b, ops, "the portable body");
  return returned_types("block_call", b, "the portable body");
}

std::vector<TensorType> while_infer(std::span<const TensorType> ops, const AttrMap&) {
  return {ops.begin(), ops.end()};
}

std::vector<TensorType> while_infer_regions(std::span<const TensorType> ops, const AttrMap&, const Operation& op) {
  const Block& c = op.region(0).block();
  const Block& b = op.region(1).block();
  require_args("while_loop", c, ops, "the cond region");
  require_args("while_loop", b, ops, "the body region");
  std::vector<TensorType> pred = returned_types("while_loop", c, "the cond region");
  if (pred.size() != 1 || pred[0] != TensorType(DType::Bool, Shape()))
    throw TypeError(op_label("while_loop") + ": the cond region must return one tensor<i1>, got " + types_text(pred));
  require_returns("while_loop", returned_types("while_loop", b, "the body region"), ops, "the body region",
                  "the carry");
  return {ops.begin(), ops.end()};
}

struct ScanSig {
  size_t num_carry;
  DimExpr length;
};

ScanSig scan_sig(std::span<const TensorType> ops, const AttrMap& attrs) {
  int64_t nc = attr_int(attrs, "num_carry", "scan");
  if (nc < 0 || static_cast<size_t>(nc) > ops.size())
    throw TypeError(op_label("scan") + ": num_carry = " + std::to_string(nc) + " must lie in [0, " +
                    std::to_string(ops.size()) + "] (the number of operands)");
  auto carry = static_cast<size_t>(nc);
  for (size_t i = carry; i < ops.size(); ++i)
    if (ops[i].rank() == 0)
      throw ShapeError(op_label("scan") + ": xs operand " + std::to_string(i) + " is " + ops[i].to_string() +
                       "; every xs must have rank >= 1 (it is scanned along axis 0)");
  DimExpr len;
  if (attrs.count("length")) {
    int64_t l = attr_int(attrs, "length", "scan");
    if (l < 0) throw ShapeError(op_label("scan") + ": length = " + std::to_string(l) + " must be non-negative");
    len = DimExpr(l);
  } else {
    if (carry == ops.size()) throw ShapeError(op_label("scan") + ": without xs the 'length' attribute is required");
    len = ops[carry].shape[0];
  }
  for (size_t i = carry; i < ops.size(); ++i) {
    const DimExpr& l = ops[i].shape[0];
    // Symbolic extents against a static length are checked when the program runs.
    if (l != len && (l.is_const() || !attrs.count("length")))
      throw ShapeError(op_label("scan") + ": xs operand " + std::to_string(i) + " has leading extent " + l.to_string() +
                       ", but the scan length is " + len.to_string() +
                       "; every xs must have the scan length as its leading extent");
  }
  return {carry, len};
}

std::vector<TensorType> scan_infer(std::span<const TensorType> ops, const AttrMap& attrs) {
  if (attrs.count("reverse")) (void)attr_bool(attrs, "reverse", "scan");
  scan_sig(ops, attrs);
  return {};
}

std::vector<TensorType> scan_infer_regions(std::span<const TensorType> ops, const AttrMap& attrs, const Operation& op) {
  ScanSig sig = scan_sig(ops, attrs);
  std::vector<TensorType> args(ops.begin(), ops.begin() + static_cast<std::ptrdiff_t>(sig.num_carry));
  for (size_t i = sig.num_carry; i < ops.size(); ++i) {
    std::vector<DimExpr> d(ops[i].shape.begin() + 1, ops[i].shape.end());
    args.emplace_back(ops[i].dtype, Shape(d));
  }
  const Block& b = op.region(0).block();
  require_args("scan", b, args, "the body region");
  std::vector<TensorType> ret = returned_types("scan", b, "the body region");
  if (ret.size() < sig.num_carry)
    throw TypeError(op_label("scan") + ": the body region returns " + std::to_string(ret.size()) +
                    " values, fewer than the " + std::to_string(sig.num_carry) + " carry values");
  require_returns("scan", std::span<const TensorType>(ret).first(sig.num_carry), ops.first(sig.num_carry),
                  "the body region", "the carry");
  std::vector<TensorType> out(ops.begin(), ops.begin() + static_cast<std::ptrdiff_t>(sig.num_carry));
  for (size_t i = sig.num_carry; i < ret.size(); ++i) {
    std::vector<DimExpr> d{sig.length};
    d.insert(d.end(), ret[i].shape.begin(), ret[i].shape.end());
    out.emplace_back(ret[i].dtype, Shape(d));
  }
  return out;
}

}  // namespace

// Traits: none. Whether cond, while_loop or scan is linear depends on its regions, and return
// only hands values on. Samples pass `infer` (the checks that need no regions); a test that
// builds the op fills its regions itself (tests/ops/control_test.cpp).
void register_control_ops(OpTable& t) {
  {
    OpDef d;
    d.name = "cond";
    d.category = OpCategory::ControlFlow;
    d.min_operands = 1;
    d.max_operands = -1;
    d.num_regions = -1;
    d.infer = cond_infer;
    d.infer_regions = cond_infer_regions;
    d.doc =
        "runs one region: operand 0 is a rank-0 bool (region 0 when true, region 1 when false) or an int32/int64 "
        "index (region i, clamped into range); the other operands (any dtype) are every region's block arguments; "
        "every region returns the op's result types";
    d.sample = [](DType t) { return OpSample{{TensorType(DType::Bool, Shape()), TensorType(t, sample_shape())}, {}}; };
    t.add(std::move(d));
  }
  {
    OpDef d;
    d.name = "while_loop";
    d.category = OpCategory::ControlFlow;
    d.min_operands = 1;
    d.max_operands = -1;
    d.num_regions = 2;
    d.infer = while_infer;
    d.infer_regions = while_infer_regions;
    d.doc =
        "loops while region 0 (carry) -> tensor<i1> is true, replacing the carry with region 1 (carry) -> carry; "
        "operands (any dtype) are the initial carry, results the final carry";
    d.sample = sample_operands(1);
    t.add(std::move(d));
  }
  {
    OpDef d;
    d.name = "scan";
    d.category = OpCategory::ControlFlow;
    d.min_operands = 0;
    d.max_operands = -1;
    d.num_regions = 1;
    d.attrs = {{"num_carry", AttrKind::Int}, {"length", AttrKind::Int, false}, {"reverse", AttrKind::Bool, false}};
    d.infer = scan_infer;
    d.infer_regions = scan_infer_regions;
    d.doc =
        "operands carry (num_carry) then xs (any dtype, scanned along axis 0); region (carry, x slices) -> (carry, "
        "y slices) runs length times (reverse: last slice first); results the final carry and ys stacked on a "
        "new leading axis of extent length";
    // One carry and one xs of scan length 3.
    d.sample = sample_shapes({sample_shape(), {3, 2}}, {{"num_carry", int64_t{1}}});
    t.add(std::move(d));
  }
  {
    OpDef d;
    d.name = "block_call";
    d.category = OpCategory::ControlFlow;
    d.min_operands = 0;
    d.max_operands = -1;
    d.num_regions = 1;
    d.attrs = {{"block", AttrKind::String}};
    d.infer = block_infer;
    d.infer_regions = block_infer_regions;
    d.inline_region = true;
    d.doc =
        "a custom op (evoxc.block): its name (`block`) and its portable body, the region (operands) -> results, any dtypes; a "
        "backend runs an implementation registered under the name where it has one, the body otherwise";
    d.sample = sample_operands(1, {{"block", std::string("sample_block")}});
    t.add(std::move(d));
  }
  OpDef d;
  d.name = "return";
  d.terminator = true;
  d.category = OpCategory::Terminator;
  d.min_operands = 0;
  d.max_operands = -1;
  d.operand_dtypes = DTypeClass::Any;
  d.infer = [](std::span<const TensorType>, const AttrMap&) { return std::vector<TensorType>{}; };
  d.doc = "ends a block; its operands (any number, any dtype) are the block's results; no results of its own";
  d.sample = sample_operands(2);
  t.add(std::move(d));
}

}  // namespace evoxc::ops_detail
