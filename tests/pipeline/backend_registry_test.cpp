// Tests of backends as plug-ins: a backend registered from this file is listed and looked up,
// lower enforces its capabilities over every op (regions included), and its stages are lazy.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>

#include "evoxc/evoxc.h"
#include "evoxc/trace/control.h"

namespace evoxc {
namespace {

bool have_mlir_backend() {
#ifdef EVOXC_HAS_MLIR
  return true;
#else
  return false;
#endif
}

using ST = SymbolicTensor;

std::atomic<int> prints{0}, writes{0}, reads{0};

// A backend for these tests: it has a rule for every op but exp, handles float32 and bool
// only, and "runs" a program by copying its first input to its first output.
class CopyFirstInput final : public ExecutableImpl {
 public:
  void execute(std::span<const Tensor> inputs, std::span<Tensor> outputs) const override {
    outputs[0] = inputs[0].clone();
  }
};

const RuleTableBase& no_exp_rules() {
  static const auto table = [] {
    auto t = std::make_unique<RuleTable<int, BackendError>>("test_no_exp");
    for (const OpDef* d : all_ops())
      if (d->id != get_op("exp").id) t->set(*d, 1);
    t->defer("exp", "the test backend leaves exp out on purpose");
    return t;
  }();
  return *table;
}

class NoExpBackend final : public Backend {
 public:
  NoExpBackend() : Backend(caps()) {}

  CompiledArtifact deserialize(const ArtifactHeader& header, std::string payload) const override {
    ++reads;
    Graph g = Graph::from_json(payload);
    return CompiledArtifact(header, std::move(g), std::move(payload));
  }

 protected:
  LoweredProgram lower_verified(const Graph& g) const override {
    return LoweredProgram(name(), g, [](const Graph& x) {
      ++prints;
      return "test program: " + x.summary();
    });
  }
  CompiledArtifact compile_lowered(const LoweredProgram& lowered, const CompileOptions&) const override {
    return CompiledArtifact(ArtifactHeader{name(), "cpu", "none"}, lowered.graph(), [](const Graph& g) {
      ++writes;
      return g.to_json();
    });
  }
  Executable load_artifact(const CompiledArtifact& artifact, Device device) const override {
    return Executable(name(), device, artifact.graph(), std::make_shared<CopyFirstInput>());
  }

 private:
  static Capabilities caps() {
    Capabilities c;
    c.backend = "test_no_exp";
    c.device_kinds = {Device::Kind::Cpu};
    c.symbolic_shapes = false;
    c.regions = true;
    c.serializable_artifact = true;
    c.dtypes = {DType::F32, DType::Bool};
    c.rules = &no_exp_rules();
    return c;
  }
};

[[maybe_unused]] const bool registered =
    register_backend("test_no_exp", [] { return std::make_unique<NoExpBackend>(); });

TEST(BackendRegistry, ARegisteredBackendIsListedAndFound) {
  std::vector<std::string> names = backend_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "interp"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "test_no_exp"), names.end());
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  const Backend& b = get_backend("test_no_exp");
  EXPECT_EQ(b.name(), "test_no_exp");
  EXPECT_EQ(&b, find_backend("test_no_exp"));  // made once
  EXPECT_EQ(find_backend("tvm"), nullptr);
  try {
    get_backend("tvm");
    FAIL() << "expected BackendError";
  } catch (const BackendError& e) {
    // The list is sorted and names every backend of this build (mlir only when EVOXC_MLIR is on).
    std::string names = have_mlir_backend() ? "interp, mlir, stablehlo, test_no_exp" : "interp, stablehlo, test_no_exp";
    EXPECT_NE(std::string(e.what()).find("this build has: " + names), std::string::npos) << e.what();
  }
  EXPECT_THROW(register_backend("test_no_exp", [] { return std::make_unique<NoExpBackend>(); }), InternalError);
}

ST cond_with_exp(ST p, ST x) {
  return cond(
      p, [](const ST& v) { return exp(v) + 1.0; }, [](const ST& v) { return v * 2.0; }, x);
}

TEST(BackendRegistry, LowerChecksOpsInsideRegions) {
  Graph g = trace(cond_with_exp, TensorSpec({}, bool_), TensorSpec({3}, f32));
  // The interpreter has every kernel; the test backend lacks exp, which sits only in a branch.
  EXPECT_NO_THROW(lower(g, "interp"));
  try {
    lower(g, "test_no_exp");
    FAIL() << "expected BackendError";
  } catch (const BackendError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("test_no_exp: evoxc.exp at "), std::string::npos) << m;
    EXPECT_NE(m.find("backend_registry_test.cpp"), std::string::npos) << m;  // its location
    EXPECT_NE(m.find("(inside evoxc.cond at "), std::string::npos) << m;
    EXPECT_NE(m.find("the test backend leaves exp out on purpose"), std::string::npos) << m;
    EXPECT_NE(m.find("evoxc ops"), std::string::npos) << m;  // the remedy
  }
  // Without exp the same structure lowers.
  auto no_exp = [](ST p, ST x) {
    return cond(
        p, [](const ST& v) { return v + 1.0; }, [](const ST& v) { return v * 2.0; }, x);
  };
  EXPECT_NO_THROW(lower(trace(no_exp, TensorSpec({}, bool_), TensorSpec({3}, f32)), "test_no_exp"));
}

TEST(BackendRegistry, LowerChecksDtypesAndSymbolicShapes) {
  auto f = [](ST x) { return x * 2.0; };
  try {
    lower(trace(f, TensorSpec({3}, f64)), "test_no_exp");
    FAIL() << "expected BackendError";
  } catch (const BackendError& e) {
    EXPECT_NE(std::string(e.what()).find("float64"), std::string::npos) << e.what();
  }
  try {
    lower(trace(f, TensorSpec({Dim("B")}, f32)), "test_no_exp");
    FAIL() << "expected BackendError";
  } catch (const BackendError& e) {
    EXPECT_NE(std::string(e.what()).find("symbolic"), std::string::npos) << e.what();
  }
  const Capabilities& c = get_backend("test_no_exp").capabilities();
  EXPECT_FALSE(c.supports(get_op("exp"), DType::F32));
  EXPECT_TRUE(c.supports(get_op("tanh"), DType::F32));
  EXPECT_FALSE(c.supports(get_op("tanh"), DType::F64));
}

TEST(BackendRegistry, TextAndPayloadAreProducedOnlyWhenAsked) {
  auto f = [](ST x) { return tanh(x) * 2.0; };
  Graph g = trace(f, TensorSpec({3}, f32));
  int p0 = prints, w0 = writes;
  LoweredProgram lp = lower(g, "test_no_exp");
  CompiledArtifact a = compile(lp);
  Executable exe = load(a);
  EXPECT_EQ(prints, p0);
  EXPECT_EQ(writes, w0);
  LoweredProgram copy = lp;
  EXPECT_EQ(copy.text(), "test program: " + g.summary());
  EXPECT_EQ(lp.text(), copy.text());
  EXPECT_EQ(prints, p0 + 1);  // copies share the text
  std::string h = a.content_hash();
  EXPECT_EQ(a.payload(), g.to_json());
  EXPECT_EQ(writes, w0 + 1);
  EXPECT_EQ(a.to_bytes().size(), CompiledArtifact(a).to_bytes().size());
  EXPECT_EQ(writes, w0 + 1);

  // The artifact file goes back through this backend's reader, found from the header.
  int r0 = reads;
  CompiledArtifact b = CompiledArtifact::from_bytes(a.to_bytes());
  EXPECT_EQ(reads, r0 + 1);
  EXPECT_EQ(b.content_hash(), h);
  Tensor x = Tensor::from_vector<float>({1, 2, 3}, {3});
  EXPECT_EQ(run(load(b), x).leaf().to_vector<float>(), (std::vector<float>{1, 2, 3}));
}

TEST(BackendRegistry, StagesRefuseAnotherBackendsObjectsAndDevices) {
  auto f = [](ST x) { return x + 1.0; };
  Graph g = trace(f, TensorSpec({3}, f32));
  LoweredProgram lp = lower(g, "test_no_exp");
  EXPECT_THROW(get_backend("interp").compile(lp, {}), BackendError);
  CompiledArtifact a = compile(lp);
  EXPECT_THROW(get_backend("interp").load(a, Device::cpu()), BackendError);
  EXPECT_THROW(load(a, Device::cuda(0)), DeviceError);
}

// The type-erased entry: the whole input tree at once.
TEST(BackendRegistry, TypeErasedRunTakesTheWholeInputTree) {
  auto f = [](ST x, double s, ST y) { return x * s + y; };
  Executable exe = build(f, TensorSpec({2}, f32), 3.0, TensorSpec({2}, f32));
  Tensor x = Tensor::from_vector<float>({1, 2}, {2}), y = Tensor::from_vector<float>({10, 20}, {2});
  std::vector<float> want{13, 26};
  // With the static position as None, or left out.
  EXPECT_EQ(run(exe, Tree<Tensor>::tuple({x, Tree<Tensor>(), y})).leaf().to_vector<float>(), want);
  EXPECT_EQ(run(exe, Tree<Tensor>::tuple({x, y})).leaf().to_vector<float>(), want);
  try {
    run(exe, Tree<Tensor>::tuple({x, Tree<Tensor>::list({y})}));
    FAIL() << "expected ValidationError";
  } catch (const ValidationError& e) {
    EXPECT_NE(std::string(e.what()).find("at [1]"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace evoxc
