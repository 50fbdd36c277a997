// Writes seed inputs for the fuzz targets into a folder: small traced graphs (plain, symbolic
// batch, cond, while_loop, scan, sort/gather) as EvoXIR text, .evoxcgraph JSON and .evoxcartifact.
#include <filesystem>
#include <iostream>
#include <map>

#include "evoxc/evoxc.h"
#include "evoxc/trace/control.h"

namespace {

using namespace evoxc;
using ST = SymbolicTensor;

std::map<std::string, Graph> graphs() {
  std::map<std::string, Graph> g;
  g["affine"] = trace([](ST x) { return x * 2.0 + 1.0; }, TensorSpec({4}, f32));
  g["batch"] = trace([](ST x, ST w) { return tanh(matmul(x, w)) + sum(x, {1}, true); }, TensorSpec({Dim("B"), 3}, f32),
                     TensorSpec({3, 2}, f32));
  g["cond"] = trace(
      [](ST p, ST x) {
        return cond(
            p, [](const ST& v) { return v * 3.0; }, [](const ST& v) { return -v; }, x);
      },
      TensorSpec({}, bool_), TensorSpec({2, 2}, f64));
  g["while"] = trace(
      [](ST x) {
        auto cf = [](const std::pair<ST, ST>& s) { return less(s.first, 5); };
        auto bf = [](const std::pair<ST, ST>& s) { return std::pair<ST, ST>{s.first + 1, s.second * 2}; };
        return while_loop(cf, bf, std::pair<ST, ST>{fill(Shape(), 0, i32), x}).second;
      },
      TensorSpec({3}, i32));
  g["scan"] = trace(
      [](ST xs) {
        auto body = [](const ST& c, const ST& x) {
          ST n = c + x;
          return std::pair<ST, ST>{n, n};
        };
        return scan(body, fill(Shape({xs.shape()[1]}), 0.0, f32), xs).second;
      },
      TensorSpec({4, 2}, f32));
  g["sort_gather"] =
      trace([](ST x) { return take_along_axis(x, argsort(x, -1), -1) + sort(x, 0); }, TensorSpec({Dim("N"), 3}, f32));
  return g;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: fuzz_make_seeds DIR\n";
    return 2;
  }
  try {
    std::filesystem::path dir(argv[1]);
    for (const char* sub : {"ir_text", "graph_json", "artifact"}) std::filesystem::create_directories(dir / sub);
    for (const auto& [name, g] : graphs()) {
      write_file_atomic((dir / "ir_text" / (name + ".evoxcir")).string(), g.to_string());
      write_file_atomic((dir / "graph_json" / (name + ".evoxcgraph")).string(), g.to_json());
      write_file_atomic((dir / "artifact" / (name + ".evoxcartifact")).string(), compile(lower(g)).to_bytes());
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "fuzz_make_seeds: " << e.what() << "\n";
    return 1;
  }
}
