// Graph transforms compose: the per-sample gradient of a loss is vectorize(grad(loss)), an ordinary graph.
#include <iostream>

#include "evoxc/evoxc.h"

int main() {
  using ST = evoxc::SymbolicTensor;
  try {
    auto loss = [](ST x, ST y, ST w) {
      ST d = evoxc::tanh(evoxc::dot(x, w)) - y;
      return evoxc::mean(d * d);  // one scalar per sample
    };
    evoxc::TensorSpec sx({4, 8}, evoxc::f32), sy({4, 4}, evoxc::f32), sw({8, 4}, evoxc::f32);
    evoxc::Graph g = evoxc::trace(loss, sx, sy, sw);
    // d loss / d w, then batched over samples: x and y mapped at axis 0, the weights shared.
    evoxc::Graph per_sample = evoxc::vectorize(
        evoxc::grad(g, 2), evoxc::AxisTree::tuple({evoxc::AxisTree(0), evoxc::AxisTree(0), evoxc::AxisTree::none()}));
    std::cout << per_sample.summary() << ": " << per_sample.input_specs()[0].to_string() << ", "
              << per_sample.input_specs()[1].to_string() << ", " << per_sample.input_specs()[2].to_string() << " -> "
              << per_sample.output_specs()[0].to_string() << "\n";
    evoxc::Executable exe = evoxc::build_graph(per_sample);
    evoxc::Tree<evoxc::Tensor> dw =
        evoxc::run(exe, evoxc::ones({8, 4, 8}), evoxc::zeros({8, 4, 4}), evoxc::full({8, 4}, 0.01));
    std::cout << "dw: shape (" << dw.leaf().shape()[0] << ", " << dw.leaf().shape()[1] << ", " << dw.leaf().shape()[2]
              << "), dw[0][0][0] = " << dw.leaf().data<const float>()[0] << "\n";
    // The same derivative, forward mode: the Jacobian of tanh(x @ w) with respect to w.
    evoxc::Graph j = evoxc::jacfwd(evoxc::trace([](ST x, ST w) { return evoxc::tanh(evoxc::dot(x, w)); }, sx, sw), 1);
    std::cout << "jacfwd: " << j.output_specs()[0].to_string() << "\n";
    return 0;
  } catch (const evoxc::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
