// The postfix_eval engine: a stack machine over blocks of fitness cases that runs a population of postfix programs
// with the interpreter's own elementwise kernels. The interpreter's kernel and the mlir backend's runtime call share
// it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "elementwise.h"
#include "evoxc/core/dtype.h"
#include "evoxc/ops/postfix.h"

namespace evoxc::interp {

// The extents of one call: P programs of L codes, C constants per program, V variables of N cases.
struct PostfixDims {
  int64_t programs = 0, length = 0, constants = 0, variables = 0, cases = 0;
};

class PostfixEngine {
 public:
  // Resolves every primitive's body to the interpreter's kernels for values of dtype `t`, once.
  // BackendError ("postfix_eval: ...") when an op of a body has no kernel for its operand dtype;
  // the table's own TypeError when it does not parse or infer.
  PostfixEngine(const std::string& primitives, DType t);

  // out[p, n] = program p over case n. codes and args are (P, L) int32, consts (P, C), x (V, N)
  // and out (P, N) of the values' dtype, all contiguous. ValidationError naming the program and
  // the position of the first bad code, operand slot or stack depth, before any case is computed.
  // Cases are cut into blocks of kBlock and (block, programs) tasks run on the interpreter's pool;
  // every element is computed by one task, so results do not depend on the thread count.
  void run(const int32_t* codes, const int32_t* args, const void* consts, const void* x, void* out,
           const PostfixDims& d) const;

  static constexpr int64_t kBlock = 512;

  // One step of a primitive's body, resolved.
  struct Step {
    enum class Kind : uint8_t { Arg, Literal, Unary, Binary, Select };
    Kind kind;
    int arg = 0;            // Arg: argument index; Literal: index into literals_
    bool in_place = false;  // the result has the operands' dtype, so it may overwrite one of them
    UnaryFn unary = nullptr;
    UnaryParams params;
    BinaryFn binary = nullptr;
    TernaryFn ternary = nullptr;
  };
  struct Primitive {
    int arity = 0, depth = 0;
    std::vector<Step> steps;
  };

 private:
  void validate(const int32_t* codes, const int32_t* args, const PostfixDims& d) const;
  void run_block(const int32_t* codes, const int32_t* args, const char* consts, const char* x, char* out,
                 const PostfixDims& d, int64_t p0, int64_t p1, int64_t c0, int64_t n) const;

  size_t esz_;
  std::vector<Primitive> prims_;
  int max_depth_ = 0;               // the deepest primitive body
  std::vector<uint64_t> literals_;  // each literal converted to t_, in 8 bytes
};

}  // namespace evoxc::interp
