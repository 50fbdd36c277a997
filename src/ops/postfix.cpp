// The postfix_eval op: a population of expression programs held as data (op codes, operand slots, per-program
// constants) evaluated over shared fitness cases; and the parser of its primitive table (include/evoxc/ops/postfix.h).
#include "evoxc/ops/postfix.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "ops/registry.h"

namespace evoxc {
namespace {

constexpr int kMaxArgs = 16;

bool primitive_op(const OpDef& d) {
  if (d.category == OpCategory::ElementwiseUnary || d.category == OpCategory::ElementwiseBinary ||
      d.category == OpCategory::Comparison)
    return true;
  return d.name == "select";
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t at = s.find(sep, start);
    out.push_back(s.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) break;
    start = at + 1;
  }
  return out;
}

}  // namespace

std::vector<PostfixPrimitive> parse_postfix_primitives(const std::string& spec, const std::string& op) {
  const std::string who = "op '" + op + "': primitive ";
  std::vector<PostfixPrimitive> prims;
  if (spec.empty()) return prims;
  for (const std::string& entry : split(spec, ';')) {
    size_t eq = entry.find('=');
    if (eq == std::string::npos || eq == 0)
      throw TypeError(who + "entry \"" + entry + "\" is not name=body (entries are separated by ';')");
    PostfixPrimitive p;
    p.name = entry.substr(0, eq);
    const std::string body = entry.substr(eq + 1);
    const std::string here = who + "'" + p.name + "' (\"" + body + "\"): ";
    if (body.empty()) throw TypeError(here + "the body is empty");
    int depth = 0;
    for (const std::string& tok : split(body, ' ')) {
      PostfixToken t;
      if (tok.empty()) throw TypeError(here + "tokens are separated by single spaces");
      if (tok[0] == '$') {
        char* end = nullptr;
        long k = std::strtol(tok.c_str() + 1, &end, 10);
        if (tok.size() < 2 || *end != '\0' || k < 0 || k >= kMaxArgs)
          throw TypeError(here + "'" + tok + "' is not an argument $0 .. $" + std::to_string(kMaxArgs - 1));
        t.kind = PostfixToken::Kind::Arg;
        t.arg = static_cast<int>(k);
        p.arity = std::max(p.arity, t.arg + 1);
        ++depth;
      } else if ((tok[0] >= '0' && tok[0] <= '9') || tok[0] == '-' || tok[0] == '+' || tok[0] == '.') {
        char* end = nullptr;
        double v = std::strtod(tok.c_str(), &end);
        if (*end != '\0') throw TypeError(here + "'" + tok + "' is not a number");
        t.kind = PostfixToken::Kind::Literal;
        t.literal = v;
        ++depth;
      } else {
        const OpDef* d = find_op(tok);
        if (d == nullptr) throw TypeError(here + "unknown op '" + tok + "'");
        if (!primitive_op(*d))
          throw TypeError(here + "op '" + tok + "' is a " + op_category_name(d->category) +
                          " op; a primitive body may use elementwise unary, binary and comparison ops and select");
        t.kind = PostfixToken::Kind::Op;
        t.op = d;
        if (depth < d->min_operands)
          throw TypeError(here + "'" + tok + "' takes " + std::to_string(d->min_operands) +
                          " operands but the stack holds " + std::to_string(depth));
        depth -= d->min_operands - 1;
      }
      p.depth = std::max(p.depth, depth);
      p.body.push_back(t);
    }
    if (depth != 1) throw TypeError(here + "leaves " + std::to_string(depth) + " values; a body leaves exactly one");
    if (p.arity == 0) throw TypeError(here + "uses no argument ($0, $1, ...)");
    prims.push_back(std::move(p));
  }
  return prims;
}

std::vector<DType> postfix_body_types(const PostfixPrimitive& p, DType t, const std::string& op) {
  std::vector<DType> stack, steps;
  for (const PostfixToken& tok : p.body) {
    if (tok.kind != PostfixToken::Kind::Op) {
      stack.push_back(t);
    } else {
      const auto n = static_cast<size_t>(tok.op->min_operands);
      std::vector<TensorType> operands;
      for (size_t i = stack.size() - n; i < stack.size(); ++i) operands.emplace_back(stack[i], Shape{});
      std::vector<TensorType> r;
      try {
        r = infer_result_types(*tok.op, operands, {});
      } catch (const Error& e) {
        throw TypeError("op '" + op + "': primitive '" + p.name + "' on " + std::string(dtype_name(t)) +
                        " values: " + e.what());
      }
      stack.resize(stack.size() - n);
      stack.push_back(r.at(0).dtype);
    }
    steps.push_back(stack.back());
  }
  if (stack.back() != t)
    throw TypeError("op '" + op + "': primitive '" + p.name + "' gives " + std::string(dtype_name(stack.back())) +
                    " on " + std::string(dtype_name(t)) + " values; a primitive must give the values' dtype");
  return steps;
}

}  // namespace evoxc

namespace evoxc::ops_detail {
namespace {

constexpr const char* kOp = "postfix_eval";

void require_rank(const TensorType& t, size_t rank, const char* what, const char* layout) {
  if (t.rank() != rank)
    throw ShapeError(op_label(kOp) + ": " + what + " " + t.to_string() + " must have rank " + std::to_string(rank) +
                     " " + layout);
}

std::vector<TensorType> infer(std::span<const TensorType> ops, const AttrMap& attrs) {
  const TensorType &codes = ops[0], &args = ops[1], &consts = ops[2], &x = ops[3];
  if (codes.dtype != DType::I32 || args.dtype != DType::I32)
    throw TypeError(op_label(kOp) + ": codes and args must be int32, got " + std::string(dtype_name(codes.dtype)) +
                    " and " + std::string(dtype_name(args.dtype)));
  require_rank(codes, 2, "codes", "(programs, length)");
  require_rank(args, 2, "args", "(programs, length), like codes");
  require_rank(consts, 2, "consts", "(programs, constants per program)");
  if (x.rank() < 1)
    throw ShapeError(op_label(kOp) + ": x " + x.to_string() + " must have rank >= 1 (variables, cases...)");
  if (codes.shape != args.shape)
    throw ShapeError(op_label(kOp) + ": args " + args.to_string() + " must have the shape of codes " +
                     codes.to_string());
  if (consts.shape[0] != codes.shape[0])
    throw ShapeError(op_label(kOp) + ": consts " + consts.to_string() + " must have one row per program of codes " +
                     codes.to_string());
  if (consts.dtype != x.dtype)
    throw TypeError(op_label(kOp) + ": consts (" + std::string(dtype_name(consts.dtype)) + ") and x (" +
                    std::string(dtype_name(x.dtype)) + ") must have one dtype, the values' dtype");
  std::vector<PostfixPrimitive> prims = parse_postfix_primitives(attr_string(attrs, "primitives", kOp), kOp);
  for (const PostfixPrimitive& p : prims) (void)postfix_body_types(p, x.dtype, kOp);
  std::vector<DimExpr> out{codes.shape[0]};
  for (size_t i = 1; i < x.rank(); ++i) out.push_back(x.shape[i]);
  return {TensorType(x.dtype, Shape(std::move(out)))};
}

}  // namespace

void register_postfix_ops(OpTable& t) {
  OpDef d;
  d.name = kOp;
  // Not elementwise and not linear: each program is its own function of x and of its constants.
  d.category = OpCategory::Structure;
  d.min_operands = 4;
  d.max_operands = 4;
  // Mixed operand kinds (int32 codes, values of the dtype the primitives accept): inference checks each.
  d.operand_dtypes = DTypeClass::Any;
  d.attrs = {{"primitives", AttrKind::String}};
  d.infer = infer;
  d.doc =
      "row p of the result evaluates program p, the postfix codes[p] (0 end, 1 variable x[args], 2 constant "
      "consts[p, args], 3+k primitive k of 'primitives'), over every case of x (variables, cases...); "
      "consts and x of one dtype";
  // One-node programs (code 1: variable 1), valid on the tensors of ones the generated checks run.
  d.sample = [](DType t) {
    std::string prims = t == DType::Bool ? "and=$0 $1 logical_and" : "add=$0 $1 add";
    TensorType codes(DType::I32, Shape{2, 1});
    return OpSample{{codes, codes, TensorType(t, Shape{2, 1}), TensorType(t, Shape{2, 3})}, {{"primitives", prims}}};
  };
  t.add(std::move(d));
}

}  // namespace evoxc::ops_detail
