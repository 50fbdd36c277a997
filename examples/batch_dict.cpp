// A symbolic batch dim and dict-shaped inputs and outputs: one executable, any batch size.
#include <iostream>
#include <map>

#include "evoxc/evoxc.h"

int main() {
  using evoxc::SymbolicTensor;
  using Params = std::map<std::string, SymbolicTensor>;
  try {
    evoxc::DimExpr B = evoxc::Dim("B");
    auto model = [](Params params, Params batch) {
      SymbolicTensor h = evoxc::tanh(evoxc::dot(batch["x"], params["w1"]) + params["b1"]);
      return std::map<std::string, SymbolicTensor>{{"logits", evoxc::dot(h, params["w2"])}, {"hidden", h}};
    };
    std::map<std::string, evoxc::TensorSpec> params_spec{
        {"w1", {{4, 8}, evoxc::f32}}, {"b1", {{8}, evoxc::f32}}, {"w2", {{8, 3}, evoxc::f32}}};
    std::map<std::string, evoxc::TensorSpec> batch_spec{{"x", {{B, 4}, evoxc::f32}}};

    evoxc::Graph graph = evoxc::trace(model, params_spec, batch_spec);
    evoxc::Executable exe = evoxc::load(evoxc::compile(evoxc::lower(graph)));
    std::cout << graph.to_string();

    std::map<std::string, evoxc::Tensor> params{
        {"w1", evoxc::ones({4, 8})}, {"b1", evoxc::zeros({8})}, {"w2", evoxc::ones({8, 3})}};
    for (int64_t b : {1, 5, 1000}) {
      std::map<std::string, evoxc::Tensor> batch{{"x", evoxc::full({b, 4}, 0.25)}};
      evoxc::Tree<evoxc::Tensor> out = evoxc::run(exe, params, batch);
      const evoxc::Tensor& logits = out["logits"].leaf();
      const evoxc::Tensor& hidden = out["hidden"].leaf();
      std::cout << "B=" << b << ": logits " << logits.repr() << ", hidden " << hidden.repr()
                << ", logits[0] = " << evoxc::Tensor(logits).reshaped({b * 3}).get_as_double(0) << "\n";
    }
    return 0;
  } catch (const evoxc::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
