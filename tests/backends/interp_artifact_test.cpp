// Tests of the interpreter backend's artifact: the binary graph payload round-trips every op of the
// catalogue and traced control flow, and corrupted, truncated or hostile payloads are PersistenceErrors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <random>

#include "evoxc/evoxc.h"
#include "evoxc/interp/interp.h"
#include "evoxc/trace/control.h"
#include "ir/graph_codec.h"

namespace evoxc {
namespace {

using ST = SymbolicTensor;

// A graph with a dict input, a symbolic batch, a static value, a constant and a cond with a
// capture: most of what a payload has to carry.
Graph rich_graph() {
  using P = std::map<std::string, ST>;
  auto f = [](P p, ST x, double scale) {
    ST h = tanh(matmul(x, p["w"]) + p["b"]) * scale;
    ST c = constant(Tensor::from_vector<float>({1.5f, -2.0f}, {2}));
    ST s = sum(h, {1});
    ST flag = greater(sum(s, {0}), 0.0);
    ST y = cond(
        flag, [&](const ST& v) { return v * c + h; }, [&](const ST& v) { return v - exp(h); }, h);
    return std::map<std::string, ST>{{"y", y}, {"s", s}};
  };
  std::map<std::string, TensorSpec> ps{{"w", {{3, 2}, f32}}, {"b", {{2}, f32}}};
  return trace(f, ps, TensorSpec({Dim("B"), 3}, f32), 0.5);
}

Tree<Tensor> rich_inputs(float sign) {
  std::map<std::string, Tree<Tensor>> p{{"w", Tensor::from_vector<float>({1, 0, 0, 1, 1, 1}, {3, 2})},
                                        {"b", Tensor::from_vector<float>({0.5f, -1}, {2})}};
  Tensor x = Tensor::from_vector<float>({sign * 1, 2, 3, 4, 5, sign * 6}, {2, 3});
  return Tree<Tensor>::tuple({Tree<Tensor>::dict(p), Tree<Tensor>(x)});
}

void expect_same_bits(const Tree<Tensor>& a, const Tree<Tensor>& b) {
  std::vector<Tensor> fa = a.flatten(), fb = b.flatten();
  ASSERT_EQ(fa.size(), fb.size());
  for (size_t i = 0; i < fa.size(); ++i) {
    ASSERT_EQ(fa[i].dtype(), fb[i].dtype());
    ASSERT_EQ(fa[i].shape(), fb[i].shape());
    EXPECT_EQ(std::memcmp(fa[i].raw_data(), fb[i].raw_data(), fa[i].nbytes()), 0) << "leaf " << i;
  }
}

TEST(InterpArtifact, PayloadIsBinaryAndRoundTripsWithIdenticalResults) {
  Graph g = rich_graph();
  CompiledArtifact a = compile(lower(g), CompileOptions{OptLevel(1), {"-fno-such-flag"}});
  ASSERT_EQ(a.payload().substr(0, 4), "EVXG");
  EXPECT_LT(a.payload().size(), g.to_json().size() / 4) << "the binary payload should be far smaller than JSON";

  CompiledArtifact b = CompiledArtifact::from_bytes(a.to_bytes());
  EXPECT_EQ(b.backend(), "interp");
  EXPECT_EQ(b.options(), a.options());
  EXPECT_EQ(b.content_hash(), a.content_hash());
  std::string why;
  EXPECT_TRUE(graphs_equal(a.graph(), b.graph(), true, &why)) << why;
  EXPECT_EQ(b.graph().to_string(), g.to_string());

  Executable e1 = load(a), e2 = load(b);
  for (float sign : {1.0f, -1.0f}) expect_same_bits(run(e1, rich_inputs(sign)), run(e2, rich_inputs(sign)));

  // And through a file.
  std::string path = ::testing::TempDir() + "/evoxc_interp_artifact_" + std::to_string(::getpid()) + ".evoxcartifact";
  a.save(path);
  CompiledArtifact c = CompiledArtifact::load(path);
  std::remove(path.c_str());
  expect_same_bits(run(load(c), rich_inputs(1)), run(e1, rich_inputs(1)));
}

// Every op of the catalogue, through its sample call: the decoded graph equals the original,
// locations included, so every attribute kind the catalogue uses survives the encoding.
TEST(InterpArtifact, EveryOpSampleRoundTrips) {
  int checked = 0;
  for (const OpDef* def : all_ops()) {
    if (def->terminator || def->num_regions != 0 || !def->sample) continue;
    DType t = DType::F32;
    if (def->max_operands != 0 && !dtype_in_class(t, def->operand_dtypes)) t = DType::I32;
    if (def->max_operands != 0 && !dtype_in_class(t, def->operand_dtypes)) t = DType::Bool;
    OpSample c = def->sample(t);
    auto module = std::make_shared<Module>();
    Function& f = module->add_function("main");
    Builder b(f.entry(), Location{"sample.cpp", checked + 1, 7});
    std::vector<Value*> args;
    for (const auto& ty : c.operands) args.push_back(f.entry().add_argument(ty));
    Operation* op = b.create(*def, args, c.attrs);
    std::vector<Value*> results;
    for (const auto& r : op->results()) results.push_back(r.get());
    for (const auto& r : op->results()) f.result_types().push_back(r->type());
    b.create_return(results);
    Graph g(module, TreeDef::tuple(std::vector<TreeDef>(args.size(), TreeDef(LeafMark{}))),
            TreeDef::tuple(std::vector<TreeDef>(results.size(), TreeDef(LeafMark{}))));
    Graph back = graph_codec::decode(graph_codec::encode(g));
    std::string why;
    EXPECT_TRUE(graphs_equal(g, back, true, &why)) << def->name << ": " << why;
    ++checked;
  }
  EXPECT_GT(checked, 100);
}

TEST(InterpArtifact, SymbolicExtentsAndControlFlowRoundTrip) {
  auto f = [](ST xs) {
    auto body = [](const ST& carry, const ST& x) { return std::pair<ST, ST>{carry + x, carry * x}; };
    auto [c, ys] = scan(body, fill(Shape({2}), 0.0, f32), xs);
    ST r = reshape(ys, {Dim("N") * 2});
    return std::pair<ST, ST>{c, r};
  };
  Graph g = trace(f, TensorSpec({Dim("N"), 2}, f32));
  Graph back = graph_codec::decode(graph_codec::encode(g));
  std::string why;
  EXPECT_TRUE(graphs_equal(g, back, true, &why)) << why;
  Tensor xs = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {3, 2});
  expect_same_bits(run(build_graph(g), xs), run(load(CompiledArtifact::from_bytes(compile(lower(g)).to_bytes())), xs));
}

// The artifact whose payload is `payload`, with a header hash that matches it, so the bytes
// reach the backend's reader rather than stopping at the hash check.
std::string artifact_with_payload(const std::string& payload, const std::string& backend = "interp") {
  return CompiledArtifact(ArtifactHeader{backend, "cpu", "opt_level=O2 (default)"}, Graph(), payload).to_bytes();
}

// Loads or fails with a PersistenceError; anything else (another error type, a crash under
// the sanitizers) fails the test.
bool loads(const std::string& bytes) {
  try {
    CompiledArtifact a = CompiledArtifact::from_bytes(bytes);
    (void)load(a);
    return true;
  } catch (const PersistenceError&) {
    return false;
  }
}

TEST(InterpArtifact, EveryTruncationIsAPersistenceError) {
  std::string payload = compile(lower(rich_graph())).payload();
  ASSERT_TRUE(loads(artifact_with_payload(payload)));
  for (size_t n = 0; n < payload.size(); ++n) {
    SCOPED_TRACE("truncated to " + std::to_string(n) + " of " + std::to_string(payload.size()) + " bytes");
    EXPECT_THROW(graph_codec::decode(std::string_view(payload).substr(0, n)), PersistenceError);
    EXPECT_FALSE(loads(artifact_with_payload(payload.substr(0, n))));
  }
  // Through the file format the hash catches it first.
  std::string file = compile(lower(rich_graph())).to_bytes();
  for (size_t n = 0; n < file.size(); n += 7)
    EXPECT_THROW(CompiledArtifact::from_bytes(file.substr(0, n)), PersistenceError);
}

TEST(InterpArtifact, CorruptedPayloadsNeverCrash) {
  std::string payload = compile(lower(rich_graph())).payload();
  int rejected = 0;
  // Every byte, each with a few different corruptions.
  for (size_t i = 0; i < payload.size(); ++i) {
    for (uint8_t mask : {0x01, 0x80, 0xff, 0x3c}) {
      std::string bad = payload;
      bad[i] = static_cast<char>(bad[i] ^ mask);
      SCOPED_TRACE("byte " + std::to_string(i) + " ^ " + std::to_string(mask));
      rejected += loads(artifact_with_payload(bad)) ? 0 : 1;
    }
  }
  // Random multi-byte damage and random insertions.
  std::mt19937 rng(1234);
  for (int k = 0; k < 2000; ++k) {
    std::string bad = payload;
    int n = 1 + static_cast<int>(rng() % 6);
    for (int j = 0; j < n; ++j) bad[rng() % bad.size()] = static_cast<char>(rng());
    if (k % 3 == 0) bad.insert(rng() % bad.size(), 1, static_cast<char>(rng()));
    rejected += loads(artifact_with_payload(bad)) ? 0 : 1;
  }
  // Most damage is caught; some (a constant's data byte, a location's line) is still a valid graph.
  EXPECT_GT(rejected, static_cast<int>(payload.size()));
}

TEST(InterpArtifact, HostilePayloadsAreRejectedWithoutHugeAllocationsOrDeepRecursion) {
  std::string head = "EVXG";
  head += '\x01';  // encoding version
  head += '\x01';  // IR version
  // An op-name table claiming 2^62 entries.
  std::string huge = head + std::string("\x80\x80\x80\x80\x80\x80\x80\x80\x40", 9);
  EXPECT_THROW(graph_codec::decode(huge), PersistenceError);
  // A varint that never ends.
  EXPECT_THROW(graph_codec::decode(head + std::string(40, '\xff')), PersistenceError);
  // An input tree of 100000 nested tuples.
  std::string deep = head + '\x00' + '\x00';  // no op names, no files
  for (int i = 0; i < 100000; ++i) deep += std::string("\x02\x01", 2);
  try {
    graph_codec::decode(deep);
    FAIL() << "expected PersistenceError";
  } catch (const PersistenceError& e) {
    EXPECT_NE(std::string(e.what()).find("deep"), std::string::npos) << e.what();
  }
  // An unknown op name is named.
  std::string unknown = head + '\x01' + '\x09' + "frobnicat";
  try {
    graph_codec::decode(unknown);
    FAIL() << "expected PersistenceError";
  } catch (const PersistenceError& e) {
    EXPECT_NE(std::string(e.what()).find("frobnicat"), std::string::npos) << e.what();
  }
}

template <typename F>
void expect_persistence_error(F&& f, const std::string& substring) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one containing \"" << substring << "\"";
  } catch (const PersistenceError& e) {
    EXPECT_NE(std::string(e.what()).find(substring), std::string::npos) << e.what();
  }
}

TEST(InterpArtifact, DeepExtentsAndHeadersAreRefusedByTheSharedBudget) {
  std::string head = "EVXG";
  head += '\x01';  // encoding version
  head += '\x01';  // IR version
  // No op names, no files, None input and output trees, then one static shape attribute "s"
  // whose only extent nests floordiv 100,000 deep.
  std::string deep = head + std::string("\x00\x00\x00\x00\x01\x01s\x08\x01", 9);
  deep += std::string(100000, '\x05');
  expect_persistence_error([&] { graph_codec::decode(deep); }, "an extent nested more than 256 deep");
  // The same with 255 levels and a symbol at the bottom gets past the extent reader.
  std::string ok = head + std::string("\x00\x00\x00\x00\x01\x01s\x08\x01", 9);
  for (int i = 0; i < 127; ++i) ok += std::string("\x05", 1);      // floordiv( ... , 3)
  ok += std::string("\x01\x01", 2) + "B";                          // symbol B
  for (int i = 0; i < 127; ++i) ok += std::string("\x00\x06", 2);  // const 3 (zigzag 6)
  expect_persistence_error([&] { graph_codec::decode(ok); }, "unexpected end of data");
  // A header line nesting JSON 100,000 deep.
  std::string header = "EVOXCARTIFACT\n" + std::string(100000, '[') + "\n";
  expect_persistence_error([&] { CompiledArtifact::from_bytes(header, "deep.evoxcartifact"); },
                           "malformed header: JSON nested too deep");
}

TEST(InterpArtifact, LoadRefusesNonRegularAndOversizedFiles) {
  expect_persistence_error([] { CompiledArtifact::load("/dev/zero"); },
                           "not a regular file (it is a character device)");
  expect_persistence_error([] { CompiledArtifact::load(std::filesystem::temp_directory_path().string()); },
                           "not a regular file (it is a directory)");
  std::string path =
      (std::filesystem::temp_directory_path() / ("evoxc_cap_" + std::to_string(::getpid()) + ".evoxcartifact"))
          .string();
  compile(lower(rich_graph())).save(path);
  auto size = std::filesystem::file_size(path);
  ::setenv("EVOXC_MAX_FILE_BYTES", std::to_string(size - 1).c_str(), 1);
  expect_persistence_error([&] { CompiledArtifact::load(path); }, "set EVOXC_MAX_FILE_BYTES to raise it");
  ::unsetenv("EVOXC_MAX_FILE_BYTES");
  EXPECT_NO_THROW(CompiledArtifact::load(path));
  std::filesystem::remove(path);
}

TEST(InterpArtifact, UnknownBackendInTheHeaderIsAPersistenceError) {
  std::string bytes = artifact_with_payload("whatever", "tvm");
  try {
    CompiledArtifact::from_bytes(bytes, "model.evoxcartifact");
    FAIL() << "expected PersistenceError";
  } catch (const PersistenceError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("'tvm'"), std::string::npos) << m;
    EXPECT_NE(m.find("interp"), std::string::npos) << m;
    EXPECT_NE(m.find("model.evoxcartifact"), std::string::npos) << m;
  }
}

TEST(InterpArtifact, WrongFormatVersionIsNamed) {
  std::string bytes = compile(lower(rich_graph())).to_bytes();
  const std::string current = "\"format_version\":" + std::to_string(CompiledArtifact::kFormatVersion);
  size_t at = bytes.find(current);
  ASSERT_NE(at, std::string::npos);
  bytes.replace(at, current.size(), "\"format_version\":1");
  try {
    CompiledArtifact::from_bytes(bytes);
    FAIL() << "expected PersistenceError";
  } catch (const PersistenceError& e) {
    EXPECT_NE(std::string(e.what()).find("format version 1"), std::string::npos) << e.what();
  }
}

TEST(InterpArtifact, CapabilitiesAreTrue) {
  const Capabilities& c = get_backend("interp").capabilities();
  EXPECT_TRUE(c.regions);
  EXPECT_TRUE(c.symbolic_shapes);
  EXPECT_TRUE(c.serializable_artifact);
  ASSERT_EQ(c.rules, &interp::kernels());
  EXPECT_EQ(c.rules->name(), "interp");
  EXPECT_TRUE(c.supports(get_op("add"), DType::F32));
  EXPECT_TRUE(c.supports(get_op("cond"), DType::F32));
  EXPECT_TRUE(c.supports(get_op("return"), DType::F32));
  EXPECT_FALSE(c.supports(get_op("sin"), DType::I32));  // sin takes floats only
  EXPECT_TRUE(c.supports_device(Device::cpu()));
  EXPECT_FALSE(c.supports_device(Device::cuda()));
}

}  // namespace
}  // namespace evoxc
