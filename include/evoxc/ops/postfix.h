// The postfix_eval op's data model: op codes and the primitive table, shared by its inference (ops),
// its kernels (interp, mlir runtime) and the programs-as-data layer (gp).
//
// A population of expression programs is data: program p is row p of `codes` (int32, postfix order),
// with `args` naming a variable or a constant for leaf codes. Code 0 ends a program (the rest of its
// row is padding), 1 pushes variable x[args] (all cases), 2 pushes the program's constant
// consts[p, args], and 3 + k applies primitive k of the op's `primitives` attribute to the top
// values of the stack. Standard postfix: "x0 x1 sub" is x0 - x1 (the last pushed value is the last
// argument).
//
// Each primitive is itself a short postfix body over registered elementwise ops, so the table is
// data too: "pdiv=$1 abs 1e-06 greater $0 $1 divide 1 select" is where(|b| > 1e-6, a / b, 1).
// `$k` is argument k (arity = the highest k + 1), a number is a literal of the value dtype, a name
// is a registered elementwise unary, binary or comparison op, or select.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "evoxc/core/dtype.h"
#include "evoxc/ops/op_def.h"

namespace evoxc {

inline constexpr int32_t kPostfixEnd = 0;
inline constexpr int32_t kPostfixVar = 1;
inline constexpr int32_t kPostfixConst = 2;
inline constexpr int32_t kPostfixFirstPrimitive = 3;

struct PostfixToken {
  enum class Kind : uint8_t { Arg, Literal, Op };
  Kind kind = Kind::Arg;
  int arg = 0;                // Arg
  double literal = 0;         // Literal
  const OpDef* op = nullptr;  // Op
};

struct PostfixPrimitive {
  std::string name;
  int arity = 0;
  std::vector<PostfixToken> body;
  int depth = 0;  // the most values the body holds on its own stack at once
};

// Parses a `primitives` attribute: "name=body;name=body;..." (tokens separated by single spaces).
// TypeError naming `op` and the entry for an unknown op, a malformed token, an op of another
// category, an argument index above 15, a body that uses no argument, leaves other than one value,
// or pops more than it pushed.
std::vector<PostfixPrimitive> parse_postfix_primitives(const std::string& spec, const std::string& op);

// The dtype each step of `p`'s body leaves on top of its stack when the arguments have dtype `t`
// (comparisons give bool), from each op's own inference on scalars. TypeError naming `op` and the
// primitive when an op rejects its operands or the body's result is not of dtype `t`.
std::vector<DType> postfix_body_types(const PostfixPrimitive& p, DType t, const std::string& op);

}  // namespace evoxc
