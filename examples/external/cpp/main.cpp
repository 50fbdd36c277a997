// consumer [ARTIFACT]: traces f(x, y) = x * y + x, builds it on every backend that runs on this machine, checks
// each against the formula, and saves the interpreter's compiled artifact to ARTIFACT (for the C example).
#include <cstdio>
#include <string>

#include "evoxc/evoxc.h"

int main(int argc, char** argv) {
  using evoxc::SymbolicTensor;
  evoxc::Graph g = evoxc::trace([](SymbolicTensor x, SymbolicTensor y) { return x * y + x; },
                                evoxc::TensorSpec({4}, evoxc::f32), evoxc::TensorSpec({4}, evoxc::f32));
  evoxc::Tensor x = evoxc::Tensor::from_vector<float>({1, 2, 3, 4}, {4});
  evoxc::Tensor y = evoxc::Tensor::from_vector<float>({0.5f, -1, 2, 0}, {4});
  int failures = 0;
  for (const std::string& name : evoxc::backend_names()) {
    if (evoxc::get_backend(name).capabilities().device_kinds.empty()) {
      std::printf("%s: an export target, not run\n", name.c_str());
      continue;
    }
    try {
      evoxc::Executable exe = evoxc::load(evoxc::compile(evoxc::lower(g, name)));
      evoxc::Tensor out = evoxc::run(exe, x, y).leaf();
      bool ok = true;
      for (int i = 0; i < 4; ++i) {
        float want = x.data<float>()[i] * y.data<float>()[i] + x.data<float>()[i];
        ok = ok && out.data<float>()[i] == want;
      }
      std::printf("%s: %s %s\n", name.c_str(), out.to_string().c_str(), ok ? "ok" : "WRONG");
      failures += ok ? 0 : 1;
    } catch (const evoxc::BackendError& e) {
      // A backend whose runtime is missing on this machine (xla without a PJRT plugin) says so; not a failure.
      std::printf("%s: not available here: %s\n", name.c_str(), e.what());
    }
  }
  if (argc > 1) {
    evoxc::compile(evoxc::lower(g, "interp")).save(argv[1]);
    std::printf("saved %s\n", argv[1]);
  }
  return failures == 0 ? 0 : 1;
}
