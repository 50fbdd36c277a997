// Generated from the op registry: every op, on every dtype it accepts, verifies, lowers, loads and runs on the
// interpreter.
#include <gtest/gtest.h>

#include "evoxc/evoxc.h"
#include "evoxc/interp/interp.h"
#include "ops/ops_util.h"

namespace evoxc {
namespace {

// Builds the one-op graph of the op's own sample call, runs it on tensors of ones and checks
// the result types against inference.
void run_sample(const OpDef& def, const testing::SampleCall& c) {
  std::vector<TensorType> out = infer_result_types(def, c.operands, c.attrs);
  Graph g = testing::one_op_graph(def, c);
  Executable exe = load(compile(lower(g)));
  std::vector<Tensor> inputs;
  for (const auto& ty : c.operands) inputs.push_back(Tensor::full(ty.shape.to_ints(), 1.0, ty.dtype));
  std::vector<Tensor> outputs(out.size());
  exe.execute(inputs, outputs);
  for (size_t i = 0; i < out.size(); ++i) {
    EXPECT_EQ(outputs[i].dtype(), out[i].dtype);
    EXPECT_EQ(outputs[i].shape(), out[i].shape.to_ints());
  }
}

TEST(Catalogue, EveryOpRunsOnEveryAcceptedDtype) {
  int ran = 0;
  for (const OpDef* def : all_ops()) {
    // Control flow needs traced regions: tests/pipeline/control_e2e_test.cpp runs those.
    if (def->category == OpCategory::Terminator || def->category == OpCategory::ControlFlow) continue;
    // stablehlo_call carries code the interpreter cannot run (a StableHLO module): it has a stated deferral instead,
    // and tests/backends/xla_backend_test.cpp runs it. external_call's sample names a kernel sample_call registers.
    if (def->category == OpCategory::Extension && !interp::kernels().has(def->id)) {
      EXPECT_NE(interp::kernels().deferral(def->id), nullptr) << def->name;
      continue;
    }
    EXPECT_TRUE(interp::kernels().has(def->id)) << def->name << " has no interpreter kernel";
    for (DType t : testing::all_dtypes()) {
      if (def->max_operands != 0 && !dtype_in_class(t, def->operand_dtypes)) continue;
      if (def->max_operands == 0 && t != DType::F32) continue;  // creation ops: the dtype is an attribute
      SCOPED_TRACE(def->name + " on " + std::string(dtype_name(t)));
      EXPECT_NO_THROW(run_sample(*def, testing::sample_call(*def, t)));
      ++ran;
    }
  }
  EXPECT_GT(ran, 700);  // about 140 ops, most on several dtypes
}

}  // namespace
}  // namespace evoxc
