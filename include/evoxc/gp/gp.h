// Programs as data: populations of expression programs held as arrays (postfix op codes, operand slots,
// per-program constants), evaluated by one executable that does not change between generations.
//
// A genetic-programming run makes hundreds of new programs per generation. Tracing, merging and compiling
// each generation costs more than evaluating it; here a generation is data instead: a Population packs its
// programs into three arrays, and an Evaluator (built once, for any population size, program length and
// number of cases) runs them with the postfix_eval op. to_graphs() turns any program back into an ordinary
// EvoXIR graph for transforms, export and batch_functions.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "evoxc/core/tensor.h"
#include "evoxc/ir/graph.h"
#include "evoxc/ops/postfix.h"
#include "evoxc/pipeline/pipeline.h"

namespace evoxc::gp {

// One primitive: the name programs use and its body, postfix over registered elementwise ops
// (include/evoxc/ops/postfix.h): "pdiv" = "$1 abs 1e-06 greater $0 $1 divide 1 select".
struct Primitive {
  std::string name;
  std::string body;
  PostfixPrimitive parsed;  // the body parsed once (its arity, its tokens)
};

// The instruction set of a population: primitive k has code kPostfixFirstPrimitive + k.
class PrimitiveSet {
 public:
  PrimitiveSet() = default;
  // The usual GP primitives, named as DEAP's and Operon's users write them: add sub mul div pdiv
  // (where(|b| > 1e-6, a / b, 1)) aq (a / sqrt(1 + b^2)) max min pow neg abs square cube sqrt
  // sqrtabs exp log logabs plog (where(|a| > 1e-6, log|a|, 0)) sin cos tan tanh sigmoid.
  static PrimitiveSet standard();
  // Adds a primitive and returns its code. TypeError when the name is empty, taken or holds '=',
  // ';' or a space, or when the body does not parse (the op's own message).
  int32_t add(const std::string& name, const std::string& body);
  // The code of a primitive, or -1.
  int32_t find(std::string_view name) const;
  // The code of a primitive; TypeError naming it and the known ones when absent.
  int32_t code(std::string_view name) const;
  // The number of values primitive `code` takes.
  int arity(int32_t code) const;
  const std::vector<Primitive>& primitives() const { return prims_; }
  // The postfix_eval `primitives` attribute of this set.
  const std::string& attribute() const { return attr_; }

 private:
  std::vector<Primitive> prims_;
  std::string attr_;
};

// One node of a program: a variable, a constant (its value), or a primitive (its code).
struct Node {
  int32_t code = kPostfixVar;
  int32_t arg = 0;   // a variable's index
  double value = 0;  // a constant's value
  static Node variable(int32_t index) { return {kPostfixVar, index, 0}; }
  static Node constant(double v) { return {kPostfixConst, 0, v}; }
  static Node primitive(int32_t code) { return {code, 0, 0}; }
};

// A population of programs over `num_vars` variables, held as arrays. Each constant node gets its
// own slot among its program's constants, in node order, so constants are data: change them with
// constants(p) and evaluate again, nothing is rebuilt.
class Population {
 public:
  Population(PrimitiveSet set, int64_t num_vars);

  // Appends a program given in prefix order (a tree's pre-order: DEAP's PrimitiveTree layout) or in
  // postfix order, and returns its index. ValidationError naming the program and node for an
  // unknown code, a variable out of range or a sequence that is not one whole expression.
  size_t add_prefix(std::span<const Node> nodes);
  size_t add_postfix(std::span<const Node> nodes);
  // Parses a program in prefix text, "add x0 sin 0.5" or with parentheses "(add x0 (sin 0.5))":
  // primitive names, variables x0, x1, ... (or the names in `var_names`), and numbers (constants).
  // ValidationError naming the token for an unknown name.
  size_t add_prefix_text(std::string_view text, const std::vector<std::string>& var_names = {});
  void clear();

  size_t size() const { return offsets_.size() - 1; }
  int64_t num_vars() const { return num_vars_; }
  const PrimitiveSet& primitive_set() const { return set_; }
  // Program p's nodes in postfix order.
  std::vector<Node> program(size_t p) const;
  // Program p's constants (in node order), writable.
  std::span<double> constants(size_t p);
  std::span<const double> constants(size_t p) const;
  // The longest program and the most constants of one program.
  int64_t max_length() const { return max_len_; }
  int64_t max_constants() const { return max_consts_; }

  // The arrays postfix_eval takes: codes and args (size, max_length) int32, zero-padded; consts
  // (size, max(1, max_constants)) of `dtype`, zero-padded.
  Tensor codes() const;
  Tensor args() const;
  Tensor consts(DType dtype = DType::F32) const;

  // Program p as an ordinary graph of two arguments, ([x0, ..., x_{V-1}] each (cases,), consts (C,))
  // -> (cases,), with C = max(1, max_constants()) for every program, so the graphs of one population
  // share a signature and merge with batch_functions (axes ([None, ...], 0)). Its values equal
  // postfix_eval's row p bit for bit on the interpreter: each body op is the same op on the same values.
  Graph to_graph(size_t p, const DimExpr& cases, DType dtype = DType::F32) const;
  std::vector<Graph> to_graphs(const DimExpr& cases, DType dtype = DType::F32) const;

 private:
  size_t finish(int64_t length);
  // One int per node, every program's in a zero-padded row of max_length().
  Tensor rows(const std::vector<int32_t>& flat) const;
  PrimitiveSet set_;
  int64_t num_vars_;
  std::vector<int32_t> codes_, args_;  // every program's nodes, postfix, one after another
  std::vector<double> consts_;
  std::vector<size_t> offsets_{0}, const_offsets_{0};
  int64_t max_len_ = 0, max_consts_ = 0;
  // add_prefix's working space, kept so that packing a population allocates per population, not per program.
  std::vector<Node> scratch_post_;
  std::vector<std::pair<Node, int>> scratch_pending_;
};

// The predictions of `programs` (indices into pop) and their jacobians with respect to their own
// constants, as one graph: ([x0, ..., x_{V-1}] each (cases,), consts (K, C)) -> (predictions (K, cases),
// jacobian (K, cases, C)) for K = programs.size() and C = max(1, pop.max_constants()); row k reads
// consts[k]. What Levenberg-Marquardt tuning of the constants needs. Each program's jacobian is
// jacfwd of its graph with respect to the constants; batch_functions merges them.
Graph jacobian_graph(const Population& pop, const std::vector<size_t>& programs, const DimExpr& cases,
                     DType dtype = DType::F32);

// What an Evaluator returns per program.
enum class Loss : uint8_t {
  None,  // the predictions, (programs, cases)
  MSE,   // mean((prediction - y)^2) over the cases, (programs,)
};

// The graph an Evaluator runs: inputs (codes (P, L) int32, args (P, L) int32, consts (P, C), x (V, N)
// [, y (N,)]) with P, L, C, N symbolic, so one executable serves every generation.
Graph evaluator_graph(const PrimitiveSet& set, int64_t num_vars, Loss loss = Loss::MSE, DType dtype = DType::F32);

// One executable for every population of a primitive set: built once (trace -> lower -> compile ->
// load of evaluator_graph), then each call packs the population's arrays and runs it.
class Evaluator {
 public:
  Evaluator(const PrimitiveSet& set, int64_t num_vars, Loss loss = Loss::MSE, DType dtype = DType::F32,
            const std::string& backend = "interp");
  // Fitness (P,) for MSE (y required, (N,)), predictions (P, N) for None. x is (num_vars, N).
  // ValidationError when the population's set or variable count differs from this evaluator's.
  Tensor evaluate(const Population& pop, const Tensor& x, const Tensor& y = Tensor()) const;
  const Graph& graph() const { return graph_; }
  const Executable& executable() const { return exe_; }

 private:
  std::string attr_;
  int64_t num_vars_;
  Loss loss_;
  DType dtype_;
  Graph graph_;
  Executable exe_;
};

}  // namespace evoxc::gp
