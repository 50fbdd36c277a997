// The C++ quickstart: every stage of the pipeline, visible — trace, lower, compile, load, run.
#include <iostream>

#include "evoxc/evoxc.h"

int main() {
  try {
    auto f = [](evoxc::SymbolicTensor x, evoxc::SymbolicTensor w) {
      return evoxc::sum(evoxc::tanh(evoxc::dot(x, w)), {1});
    };
    evoxc::TensorSpec sx({4, 8}, evoxc::f32), sw({8, 4}, evoxc::f32);

    evoxc::Graph graph = evoxc::trace(f, sx, sw);                         // Graph (EvoXIR)
    evoxc::LoweredProgram lowered = evoxc::lower(graph);                  // LoweredProgram
    evoxc::CompiledArtifact artifact = evoxc::compile(lowered);           // CompiledArtifact
    evoxc::Executable exe = evoxc::load(artifact, evoxc::Device::cpu());  // Executable
    evoxc::Tree<evoxc::Tensor> y = evoxc::run(exe, evoxc::ones({4, 8}), evoxc::ones({8, 4}));

    std::cout << y.leaf().to_string() << "\n";
    std::cout << graph.summary() << "\n";
    std::cout << graph.to_string();
    return 0;
  } catch (const evoxc::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
