// Fuzz target: the .evoxcgraph JSON reader (Graph::from_json). An accepted graph must write back
// to the same JSON and print the same after the round trip; verify and lowering answer with a
// typed error or pass.
#include "evoxc/evoxc.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace evoxc;
  return fuzz::guarded([&] {
    Graph g = Graph::from_json(fuzz::as_text(data, size));
    fuzz::must_succeed("to_json/from_json/print round trip", [&] {
      std::string json = g.to_json();
      Graph back = Graph::from_json(json);
      if (back.to_json() != json) fuzz::finding("to_json(from_json(to_json(g))) differs:\n" + json);
      std::string text = g.to_string();
      if (back.to_string() != text) fuzz::finding("the JSON round trip prints differently:\n" + text);
      if (Graph::parse(text).to_string() != text) fuzz::finding("parse(print(g)) prints differently:\n" + text);
    });
    verify(g);
    (void)g.input_specs();
    (void)g.output_specs();
    (void)g.input_paths();
    (void)load(compile(lower(g)));
  });
}
