// In-graph control flow: Newton's square root as a while_loop, printed and run.
#include <iostream>
#include <utility>

#include "evoxc/evoxc.h"

int main() {
  using ST = evoxc::SymbolicTensor;
  try {
    auto sqrt_newton = [](ST x) {
      auto cond_fn = [](const std::pair<ST, ST>& s) { return evoxc::abs(s.first - s.second) > 1e-6; };
      auto body_fn = [x](const std::pair<ST, ST>& s) {
        return std::pair<ST, ST>{0.5 * (s.first + x / s.first), s.first};
      };
      auto [y, prev] = evoxc::while_loop(cond_fn, body_fn, std::pair<ST, ST>{x, evoxc::zeros_like(x)});
      return y;
    };
    evoxc::Graph graph = evoxc::trace(sqrt_newton, evoxc::TensorSpec({}, evoxc::f32));
    std::cout << graph.to_string();
    evoxc::Executable exe = evoxc::build_graph(graph);
    std::cout << "sqrt(2) = " << evoxc::run(exe, evoxc::tensor(2.0f)).leaf().to_string() << "\n";
    return 0;
  } catch (const evoxc::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
