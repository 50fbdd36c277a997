// Test helper for the CLI tests: writes graph and .npy fixtures into a folder, or compares two .npy files exactly.
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "evoxc/evoxc.h"
#include "evoxc/io/npy.h"

namespace {

using evoxc::SymbolicTensor;
using evoxc::Tensor;
using evoxc::TensorSpec;

// Exact comparison (dtype, shape, bytes): the expected values are hand-computed and exact in float32.
int compare(const std::string& a, const std::string& b) {
  Tensor x = evoxc::io::read_npy(a), y = evoxc::io::read_npy(b);
  if (x.dtype() != y.dtype() || x.shape() != y.shape() || std::memcmp(x.raw_data(), y.raw_data(), x.nbytes()) != 0) {
    std::cout << "differ: " << a << " = " << x.repr() << " " << x.to_string() << "; " << b << " = " << y.repr() << " "
              << y.to_string() << "\n";
    return 1;
  }
  std::cout << "same: " << a << " " << b << "\n";
  return 0;
}

void write_fixtures(const std::filesystem::path& dir) {
  // Start empty, so outputs of an earlier `evoxc run` can never pass for new ones.
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  auto file = [&](const std::string& name) { return (dir / name).string(); };

  // x*2+1 on float32[4].
  auto affine = [](SymbolicTensor x) { return x * 2.0 + 1.0; };
  evoxc::Graph g1 = evoxc::trace(affine, TensorSpec({4}, evoxc::f32));
  g1.save(file("affine.evoxcgraph"));
  evoxc::write_file_atomic(file("affine.evoxcir"), g1.to_string());
  evoxc::io::write_npy(file("x.npy"), Tensor::from_vector<float>({0, 1, 2, -1.5f}, {4}));
  evoxc::io::write_npy(file("affine_expected.npy"), Tensor::from_vector<float>({1, 3, 5, -2}, {4}));
  evoxc::io::write_npy(file("x_i32.npy"), Tensor::from_vector<int32_t>({0, 1, 2, 3}, {4}));
  evoxc::io::write_npy(file("x3.npy"), Tensor::from_vector<float>({0, 1, 2}, {3}));

  // Dict inputs and outputs with a symbolic batch dim: ({'s': sum(x, 1), 'y': x @ w + b}).
  using Params = std::map<std::string, SymbolicTensor>;
  auto model = [](SymbolicTensor x, Params p) {
    return Params{{"y", evoxc::matmul(x, p["w"]) + p["b"]}, {"s", evoxc::sum(x, {1})}};
  };
  std::map<std::string, TensorSpec> pspec{{"w", {{3, 2}, evoxc::f32}}, {"b", {{2}, evoxc::f32}}};
  evoxc::Graph g2 = evoxc::trace(model, TensorSpec({evoxc::Dim("B"), 3}, evoxc::f32), pspec);
  g2.save(file("dict.evoxcgraph"));
  evoxc::io::write_npy(file("dx.npy"), Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3}));
  evoxc::io::write_npy(file("dw.npy"), Tensor::from_vector<float>({1, 0, 0, 1, 1, 1}, {3, 2}));
  evoxc::io::write_npy(file("db.npy"), Tensor::from_vector<float>({0.5f, -1}, {2}));
  evoxc::io::write_npy(file("dict_s_expected.npy"), Tensor::from_vector<float>({6, 15}, {2}));
  evoxc::io::write_npy(file("dict_y_expected.npy"), Tensor::from_vector<float>({4.5f, 4, 10.5f, 10}, {2, 2}));

  // Bad inputs: truncated JSON, and an unknown op that only the full verifier rejects.
  std::string json = g1.to_json();
  evoxc::write_file_atomic(file("malformed.evoxcgraph"), json.substr(0, json.size() / 2));
  size_t at = json.find("\"multiply\"");
  if (at == std::string::npos) throw evoxc::InternalError("make_cli_fixtures: no multiply op in " + json);
  evoxc::write_file_atomic(file("bad_verify.evoxcgraph"), json.replace(at, 10, "\"frobnicate\""));

  // Run budget (issue 7): a while_loop counting i to n; with n = INT64_MAX it never ends in practice.
  auto count = [](SymbolicTensor n) {
    using C = std::pair<SymbolicTensor, SymbolicTensor>;
    return evoxc::while_loop(
               [&](const C& c) { return evoxc::less(c.first, n); },
               [](const C& c) {
                 return C{c.first + int64_t{1}, c.second * 0.5 + 1.0};
               },
               C{evoxc::fill(evoxc::Shape(), 0, evoxc::i64), evoxc::fill(evoxc::Shape(), 0.0, evoxc::f32)})
        .first;
  };
  evoxc::trace(count, TensorSpec({}, evoxc::i64)).save(file("forever.evoxcgraph"));
  evoxc::io::write_npy(file("forever_n.npy"), Tensor::scalar<int64_t>(INT64_MAX));
  evoxc::io::write_npy(file("count_n.npy"), Tensor::scalar<int64_t>(100));
  evoxc::io::write_npy(file("count_expected.npy"), Tensor::scalar<int64_t>(100));
  // An input tree with more leaves than @main has arguments (`run` read specs past the end).
  std::string affine_json = g1.to_json();
  size_t tree_at = affine_json.find("\"(*,)\"");
  if (tree_at == std::string::npos) throw evoxc::InternalError("make_cli_fixtures: no input tree in " + affine_json);
  evoxc::write_file_atomic(file("too_many_leaves.evoxcgraph"), affine_json.replace(tree_at, 6, "\"(*, *)\""));

  // `evoxc transform` (issue 8). Every expected value below is a sum of a few products of small
  // dyadic numbers, so it is exact in float32 whatever order the transformed graph adds in.
  auto f32 = [](std::vector<float> v, std::vector<int64_t> shape) {
    return Tensor::from_vector<float>(std::move(v), std::move(shape));
  };
  auto npy = [&](const std::string& name, const Tensor& t) { evoxc::io::write_npy(file(name), t); };
  // loss(x, y) = sum(x*x + x*y): d/dx = 2x + y, d/dy = x, d2/dx2 = 2I.
  auto loss = [](SymbolicTensor x, SymbolicTensor y) { return evoxc::sum(x * x + x * y); };
  evoxc::trace(loss, TensorSpec({3}, evoxc::f32), TensorSpec({3}, evoxc::f32)).save(file("loss.evoxcgraph"));
  npy("lx.npy", f32({1, 2, -0.5f}, {3}));
  npy("ly.npy", f32({0.5f, -1, 3}, {3}));
  npy("loss_expected.npy", Tensor::scalar<float>(2.25f));  // 1.5 + 2 - 1.25
  npy("grad_x_expected.npy", f32({2.5f, 3, 2}, {3}));      // 2x + y
  npy("grad_y_expected.npy", f32({1, 2, -0.5f}, {3}));     // x
  npy("hessian_expected.npy", f32({2, 0, 0, 0, 2, 0, 0, 0, 2}, {3, 3}));
  // jvp: tangents (tx, ty); the output tangent is sum((2x + y) tx + x ty) = 6.5 + 2.5.
  npy("ltx.npy", f32({1, 0, 2}, {3}));
  npy("lty.npy", f32({0, 1, -1}, {3}));
  npy("jvp_expected.npy", Tensor::scalar<float>(9));
  // vjp: the loss's cotangent 2 scales both gradients.
  npy("lct.npy", Tensor::scalar<float>(2));
  npy("vjp_x_expected.npy", f32({5, 6, 4}, {3}));
  npy("vjp_y_expected.npy", f32({2, 4, -1}, {3}));
  // vmap with in_axes (0, None): rows of x against the shared y; row 0 is lx.
  npy("bx.npy", f32({1, 2, -0.5f, 0, 1, 2}, {2, 3}));
  npy("vmap_loss_expected.npy", f32({2.25f, 10}, {2}));
  // vmap of affine (x*2+1): batch at axis 0, and at axis 1 in and out with a constant batch size.
  npy("ax.npy", f32({0, 1, 2, -1.5f, 3, 4, 5, 6}, {2, 4}));
  npy("vmap_affine_expected.npy", f32({1, 3, 5, -2, 7, 9, 11, 13}, {2, 4}));
  npy("axt.npy", f32({0, 3, 1, 4, 2, 5, -1.5f, 6}, {4, 2}));
  npy("vmap_affine_t_expected.npy", f32({1, 7, 3, 9, 5, 11, -2, 13}, {4, 2}));
  // A loss with aux output: (sum(x*x), x + 1).
  auto loss_aux = [](SymbolicTensor x) { return std::pair{evoxc::sum(x * x), x + 1.0}; };
  evoxc::trace(loss_aux, TensorSpec({3}, evoxc::f32)).save(file("loss_aux.evoxcgraph"));
  npy("aux_expected.npy", f32({2, 3, 0.5f}, {3}));  // lx + 1
  npy("grad_2x_expected.npy", f32({2, 4, -1}, {3}));
  npy("loss_aux_expected.npy", Tensor::scalar<float>(5.25f));  // 1 + 4 + 0.25
  // A while_loop whose trip count depends on the data (double x until it reaches 10): no reverse mode.
  auto doubling = [](SymbolicTensor x) {
    return evoxc::while_loop([](const SymbolicTensor& c) { return evoxc::less(c, 10.0); },
                             [](const SymbolicTensor& c) { return c * 2.0; }, x);
  };
  evoxc::trace(doubling, TensorSpec({}, evoxc::f32)).save(file("doubling.evoxcgraph"));
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc == 4 && std::strcmp(argv[1], "--compare") == 0) return compare(argv[2], argv[3]);
    if (argc == 2) {
      write_fixtures(argv[1]);
      return 0;
    }
    std::cerr << "usage: make_cli_fixtures DIR | make_cli_fixtures --compare A.npy B.npy\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "make_cli_fixtures: " << e.what() << "\n";
    return 1;
  }
}
