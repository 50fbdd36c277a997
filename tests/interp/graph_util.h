// Test helpers for the interpreter: build small graphs op by op and run them through prepare/execute.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "evoxc/core/tensor.h"
#include "evoxc/interp/interp.h"
#include "evoxc/ir/graph.h"

namespace evoxc::interp::vecmath {
struct Table;
}  // namespace evoxc::interp::vecmath

namespace evoxc::testing {

// Every vector-math instruction set this machine runs (AVX-512, AVX2, SSE2, scalar), named, so
// a test checks each dispatch path and not only the one load would pick.
std::vector<std::pair<std::string, const interp::vecmath::Table*>> vecmath_tables();

inline TensorType tt(DType t, Shape s) { return TensorType(t, std::move(s)); }
inline Shape S(std::vector<int64_t> d) { return Shape::from_ints(d); }

// Builds main's entry block directly (no inference: the test writes each result type).
class GraphBuilder {
 public:
  GraphBuilder();
  Value* input(DType t, Shape s);
  Value* op(const std::string& name, std::vector<Value*> operands, TensorType result, AttrMap attrs = {},
            Location loc = {});
  // Input leaves are a flat tuple unless `inputs` is given.
  Graph build(std::vector<Value*> outputs, std::optional<TreeDef> inputs = std::nullopt);

 private:
  std::shared_ptr<Module> module_;
  Function* fn_;
};

// prepare + execute with freshly allocated outputs.
std::vector<Tensor> run_graph(const Graph& g, const std::vector<Tensor>& inputs);

// A tensor of any dtype from doubles (ints truncate toward zero and wrap, bool is x != 0).
Tensor make_tensor(DType t, const std::vector<int64_t>& shape, const std::vector<double>& values);
// Deterministic pseudo-random values suited to the dtype (small ints, floats in [-4, 4)).
std::vector<double> sample_values(DType t, int64_t n, uint32_t seed);
std::vector<double> to_doubles(const Tensor& t);

// Every dtype, and the subsets the op table names.
std::vector<DType> all_dtypes();
std::vector<DType> numeric_dtypes();
std::vector<DType> float_dtypes();

// Tolerance for comparing a float result of dtype t to a double reference.
double tolerance(DType t, double magnitude);

}  // namespace evoxc::testing
