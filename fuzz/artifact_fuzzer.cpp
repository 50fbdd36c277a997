// Fuzz target: the .evoxcartifact reader (CompiledArtifact::from_bytes) and load() of what it
// accepts. An accepted artifact must write back to the same bytes.
#include "evoxc/evoxc.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace evoxc;
  return fuzz::guarded([&] {
    CompiledArtifact a = CompiledArtifact::from_bytes(fuzz::as_text(data, size), "<fuzz>");
    fuzz::must_succeed("artifact to_bytes/from_bytes round trip", [&] {
      std::string bytes = a.to_bytes();
      CompiledArtifact back = CompiledArtifact::from_bytes(bytes, "<round trip>");
      if (back.to_bytes() != bytes) fuzz::finding("from_bytes(to_bytes(a)) writes different bytes");
      if (back.graph().to_string() != a.graph().to_string()) fuzz::finding("the artifact's graph prints differently");
    });
    Executable exe = load(a);
    (void)exe.num_inputs();
    (void)exe.graph().input_specs();
  });
}
