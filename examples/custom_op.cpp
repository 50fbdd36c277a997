// A custom op in C++: evoxc::block_call with a portable body (traced ops) and a C++ implementation the interpreter
// runs instead where one is registered. The graph carries the body, so it also runs with nothing registered.
#include <cmath>
#include <iostream>

#include "evoxc/evoxc.h"

namespace {

using evoxc::SymbolicTensor;

// softplus(x) = log(1 + exp(x)), the body every backend can run.
std::vector<SymbolicTensor> softplus_body(const std::vector<SymbolicTensor>& a) {
  return {evoxc::log1p(evoxc::exp(a[0]))};
}

// The same function, written for the host: log1p(exp(x)) without overflow for large x.
void softplus_impl(std::span<const evoxc::Tensor> in, std::span<evoxc::Tensor> out) {
  const float* x = in[0].data<const float>();
  float* y = out[0].data<float>();
  for (int64_t i = 0; i < in[0].numel(); ++i) y[i] = x[i] > 20.0f ? x[i] : std::log1p(std::exp(x[i]));
}

}  // namespace

int main() {
  try {
    auto f = [](const SymbolicTensor& x) { return evoxc::block_call("example.softplus", softplus_body, {x})[0]; };
    evoxc::Graph graph = evoxc::trace(f, evoxc::TensorSpec({3}, evoxc::f32));
    evoxc::Tensor x = evoxc::Tensor::from_vector<float>({-2.0f, 0.0f, 30.0f}, {3});

    evoxc::Executable body = evoxc::load(evoxc::compile(evoxc::lower(graph)));
    evoxc::register_block_impl("example.softplus", "interp", softplus_impl);
    evoxc::Executable native = evoxc::load(evoxc::compile(evoxc::lower(graph)));

    std::cout << "portable body:       " << evoxc::run(body, x).leaf().to_string() << "\n";
    std::cout << "C++ implementation:  " << evoxc::run(native, x).leaf().to_string() << "\n";
    std::cout << graph.to_string();
    return 0;
  } catch (const evoxc::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
