// Writes the evoxc side of the JAX cross-check: float64 programs and their transforms, run on the interpreter, as .npy.
//
// Usage: jax_fixtures <folder>. The folder is emptied, then holds <case>.<transform>.in<k>.npy (the input leaves of
// the transformed graph, flattening order), <case>.<transform>.out<k>.npy (its output leaves) and manifest.json,
// which jax_check.py reads: one entry per (case, transform) with the argnums, the vmap axes and the file names.
// The programs are written once here and once in jax.numpy in jax_check.py; the case names tie them together.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iostream>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "evoxc/evoxc.h"
#include "evoxc/io/npy.h"

namespace {

using namespace evoxc;  // NOLINT(google-build-using-namespace): a test program over the public API
using ST = SymbolicTensor;

TensorSpec f64s(std::vector<int64_t> shape) { return TensorSpec(Shape::from_ints(shape), DType::F64); }
TensorSpec i64s(std::vector<int64_t> shape) { return TensorSpec(Shape::from_ints(shape), DType::I64); }

// Uniform values in [lo, hi) from a seeded generator (the same on every platform: mt19937_64 is specified).
Tensor rnd(const std::vector<int64_t>& shape, std::mt19937_64& rng, double lo = -1.0, double hi = 1.0) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> v(static_cast<size_t>(n));
  for (auto& x : v) x = lo + (hi - lo) * (static_cast<double>(rng() >> 11) * 0x1.0p-53);
  return Tensor::from_vector<double>(v, shape);
}

ST eye(int64_t n) {
  return convert(equal(iota(Shape{n, n}, 0, DType::I64), iota(Shape{n, n}, 1, DType::I64)), DType::F64);
}

// One program and what to do with it.
struct Case {
  std::string name;
  Graph g;
  std::vector<Tensor> inputs;    // the primals, one per argument
  std::vector<int64_t> argnums;  // the float arguments grad/jacfwd/jacrev/hessian differentiate
  std::vector<std::string> transforms;
  // vmap(grad(g, vmap_argnum)) with these in_axes (nullopt: None) over a batch of `batch`.
  std::vector<std::optional<int64_t>> in_axes;
  int64_t vmap_argnum = 0;
  int64_t batch = 3;
  std::vector<int64_t> hess_argnums;  // empty: argnums
};

class Writer {
 public:
  explicit Writer(std::filesystem::path dir) : dir_(std::move(dir)) {}

  void run_case(const Case& c, std::mt19937_64& rng) {
    for (const std::string& t : c.transforms) {
      std::cout << c.name << " " << t << std::endl;
      Graph g;
      std::vector<Tensor> in = c.inputs;
      std::string extra;
      if (t == "value") {
        g = c.g;
      } else if (t == "grad") {
        g = grad(c.g, ArgNums::tuple(c.argnums));
      } else if (t == "jacfwd") {
        g = jacfwd(c.g, ArgNums::tuple(c.argnums));
      } else if (t == "jacrev") {
        g = jacrev(c.g, ArgNums::tuple(c.argnums));
      } else if (t == "hessian") {
        g = hessian(c.g, ArgNums::tuple(c.hess_argnums.empty() ? c.argnums : c.hess_argnums));
        if (!c.hess_argnums.empty()) extra = ", \"hess_argnums\": " + ints(c.hess_argnums);
      } else if (t == "jvp" || t == "vjp") {
        // The inputs after the primals are the tangents (jvp) or the output cotangents (vjp): random.
        g = t == "jvp" ? jvp(c.g) : vjp(c.g);
        std::vector<TensorSpec> specs = g.input_specs();
        for (size_t k = in.size(); k < specs.size(); ++k) in.push_back(rnd(specs[k].shape.to_ints(), rng));
      } else if (t == "value_and_grad") {
        g = value_and_grad(c.g, ArgNums::tuple(c.argnums));
      } else if (t == "vmap_grad" || t == "vmap") {
        std::vector<AxisTree> axes;
        std::string ax = "[";
        in.clear();
        for (size_t k = 0; k < c.inputs.size(); ++k) {
          const auto& a = c.in_axes.at(k);
          axes.push_back(a ? AxisTree(*a) : AxisTree::none());
          ax += std::string(k ? ", " : "") + (a ? std::to_string(*a) : "null");
          if (!a) {
            in.push_back(c.inputs[k]);
            continue;
          }
          std::vector<int64_t> shape = c.inputs[k].shape();
          shape.insert(shape.begin() + *a, c.batch);
          if (c.inputs[k].dtype() == DType::I64) {
            // Integer inputs (indices) mapped at axis 0: row b is the case's value shifted by 2 b - 2 (so some lanes
            // index out of range).
            if (*a != 0) throw InternalError("jax_fixtures: integer inputs are mapped at axis 0 only");
            std::vector<int64_t> base = c.inputs[k].to_vector<int64_t>(), v;
            for (int64_t b = 0; b < c.batch; ++b)
              for (int64_t x : base) v.push_back(x + 2 * b - 2);
            in.push_back(Tensor::from_vector<int64_t>(v, shape));
          } else {
            in.push_back(rnd(shape, rng));
          }
        }
        // vmap: the function itself; vmap_grad: grad(g, vmap_argnum).
        g = vmap(t == "vmap" ? c.g : grad(c.g, c.vmap_argnum), AxisTree::tuple(axes), AxisTree(0), DimExpr(c.batch));
        extra = ", \"in_axes\": " + ax + "], \"vmap_argnum\": " + std::to_string(c.vmap_argnum);
      } else {
        throw InternalError("jax_fixtures: unknown transform " + t);
      }
      Executable exe = load(compile(lower(g)));
      std::vector<Tensor> out = run(exe, g.input_tree().unflatten(in)).flatten();
      std::string stem = c.name + "." + t;
      std::vector<std::string> fin, fout;
      for (size_t k = 0; k < in.size(); ++k) fin.push_back(write(stem + ".in" + std::to_string(k) + ".npy", in[k]));
      for (size_t k = 0; k < out.size(); ++k) fout.push_back(write(stem + ".out" + std::to_string(k) + ".npy", out[k]));
      std::ostringstream e;
      e << "  {\"case\": \"" << c.name << "\", \"transform\": \"" << t << "\", \"n_args\": " << c.inputs.size()
        << ", \"argnums\": " << ints(c.argnums) << extra << ",\n   \"inputs\": " << strs(fin)
        << ",\n   \"outputs\": " << strs(fout) << "}";
      entries_.push_back(e.str());
    }
  }

  void finish() {
    std::string s = "[\n";
    for (size_t k = 0; k < entries_.size(); ++k) s += entries_[k] + (k + 1 < entries_.size() ? ",\n" : "\n");
    write_file_atomic((dir_ / "manifest.json").string(), s + "]\n");
  }

 private:
  std::string write(const std::string& name, const Tensor& t) {
    io::write_npy((dir_ / name).string(), t);
    return name;
  }
  static std::string ints(const std::vector<int64_t>& v) {
    std::string s = "[";
    for (size_t k = 0; k < v.size(); ++k) s += (k ? ", " : "") + std::to_string(v[k]);
    return s + "]";
  }
  static std::string strs(const std::vector<std::string>& v) {
    std::string s = "[";
    for (size_t k = 0; k < v.size(); ++k) s += (k ? ", \"" : "\"") + v[k] + "\"";
    return s + "]";
  }
  std::filesystem::path dir_;
  std::vector<std::string> entries_;
};

const std::vector<std::string> kAll{"value", "grad", "jvp", "vjp", "jacfwd", "jacrev", "hessian"};
const std::vector<std::string> kNoHess{"value", "grad", "jvp", "vjp", "jacfwd", "jacrev"};
const std::vector<std::string> kVector{"value", "jvp", "vjp", "jacfwd", "jacrev"};

std::vector<Case> make_cases(std::mt19937_64& rng) {
  std::vector<Case> cs;
  auto add = [&](std::string name, Graph g, std::vector<int64_t> argnums, std::vector<std::string> ts) -> Case& {
    Case c;
    c.name = std::move(name);
    for (const TensorSpec& s : g.input_specs())
      c.inputs.push_back(s.dtype == DType::F64 ? rnd(s.shape.to_ints(), rng) : Tensor());
    c.g = std::move(g);
    c.argnums = std::move(argnums);
    c.transforms = std::move(ts);
    cs.push_back(std::move(c));
    return cs.back();
  };

  // MLP loss: mean((tanh(x @ w1 + b1) @ w2 - y)^2); vmap(grad) over the examples with shared weights.
  auto mlp = [](ST x, ST w1, ST b1, ST w2, ST y) { return mean(square(matmul(tanh(matmul(x, w1) + b1), w2) - y)); };
  {
    Case& c = add("mlp", trace(mlp, f64s({5, 3}), f64s({3, 4}), f64s({4}), f64s({4, 2}), f64s({5, 2})), {0, 1, 2, 3, 4},
                  {"value", "grad", "jvp", "vjp", "jacfwd", "jacrev", "hessian", "vmap_grad"});
    c.hess_argnums = {2, 3};
    c.in_axes = {0, std::nullopt, std::nullopt, std::nullopt, 0};
    c.vmap_argnum = 1;
  }

  // The per-sample gradient: vmap(grad(loss, 2), (0, 0, None)), x: (8, 4, 8), y: (8, 4, 4), w: (8, 4).
  auto lin = [](ST x, ST y, ST w) { return mean(square(matmul(x, w) - y)); };
  {
    Case& c = add("per_sample", trace(lin, f64s({4, 8}), f64s({4, 4}), f64s({8, 4})), {0, 1, 2},
                  {"value", "grad", "vmap_grad"});
    c.in_axes = {0, 0, std::nullopt};
    c.vmap_argnum = 2;
    c.batch = 8;
  }

  // Softmax cross-entropy with logsumexp, plus a softmax and a max term.
  auto xent = [](ST x, ST w, ST y) {
    ST logits = matmul(x, w);
    ST nll = mean(logsumexp(logits, {1}) - sum(logits * y, {1}));
    return nll + sum(square(softmax(logits))) * 0.1 + mean(max(log_softmax(logits), {1}));
  };
  {
    Case& c = add("softmax_xent", trace(xent, f64s({4, 3}), f64s({3, 5}), f64s({4, 5})), {0, 1, 2},
                  {"value", "grad", "jvp", "vjp", "jacrev", "hessian", "vmap_grad"});
    c.hess_argnums = {1};
    c.in_axes = {0, std::nullopt, 0};
    c.vmap_argnum = 1;
  }

  // A scan RNN: h' = tanh(x_t @ wx + h @ wh), per-step output sum(h'^2); loss sum(ys) + sum(h_final).
  auto rnn = [](ST h0, ST xs, ST wx, ST wh) {
    auto body = [&](const ST& h, const ST& x) {
      ST hn = tanh(matmul(x, wx) + matmul(h, wh));
      return std::pair<ST, ST>{hn, sum(square(hn))};
    };
    auto [hf, ys] = scan(body, h0, xs);
    return sum(ys) + sum(hf);
  };
  {
    Case& c = add("scan_rnn", trace(rnn, f64s({3}), f64s({5, 2}), f64s({2, 3}), f64s({3, 3})), {0, 1, 2, 3}, kAll);
    c.hess_argnums = {3};
  }
  // The scan's stacked outputs as a vector-valued function (jacobians of a scan with ys).
  auto rnn_ys = [](ST h0, ST xs, ST wh) {
    auto body = [&](const ST& h, const ST& x) {
      ST hn = sin(h * x + matmul(h, wh));
      return std::pair<ST, ST>{hn, hn * x};
    };
    return scan(body, h0, xs, std::nullopt, /*reverse=*/true).second;
  };
  add("scan_reverse_ys", trace(rnn_ys, f64s({3}), f64s({4, 3}), f64s({3, 3})), {0, 1, 2}, kVector);

  // A cond inside the loss; vmap(grad) gets a batched predicate (the lanes take different branches).
  auto condf = [](ST x, ST w) {
    ST p = sum(x * w);
    ST r = cond(
        p > 0.0, [](const ST& a, const ST& b) { return sum(sin(a * b)) + sum(exp(b)); },
        [](const ST& a, const ST& b) { return sum(square(a) * b) * 3.0; }, x, w);
    return r * p;
  };
  {
    Case& c = add("cond", trace(condf, f64s({4}), f64s({4})), {0, 1}, kAll);
    c.in_axes = {0, std::nullopt};
    c.vmap_argnum = 1;
    c.batch = 8;
    c.transforms.push_back("vmap_grad");
  }

  // fori_loop with static bounds (a scan) using the loop index.
  auto fori = [](ST c0, ST w) {
    ST c = fori_loop(
        0, 4, [&](const ST& i, const ST& c) { return c * 0.9 + tanh(matmul(c, w)) * (astype(i, DType::F64) + 1.0); },
        c0);
    return sum(square(c));
  };
  add("fori_loop", trace(fori, f64s({3}), f64s({3, 3})), {0, 1}, kAll);

  // while_loop: forward mode only (no transpose of a loop with a data-dependent trip count): jvp and jacfwd.
  auto whilef = [](ST x, ST a) {
    return while_loop([](const ST& c) { return sum(square(c)) < 10.0; }, [&](const ST& c) { return c * a + 0.1; }, x);
  };
  {
    Case& c = add("while_loop", trace(whilef, f64s({3}), f64s({3})), {0, 1}, {"value", "jvp", "jacfwd"});
    c.inputs[1] = rnd({3}, rng, 1.2, 1.8);
  }

  // cumsum / cumprod (vector-valued; cumprod of values away from 0).
  auto cums = [](ST x) { return cumsum(x, 1) * 0.5 + cumprod(x * 0.5 + 1.0, 0) + cumsum(x, 0, /*reverse=*/true); };
  add("cumsum_cumprod", trace(cums, f64s({3, 4})), {0}, kVector);

  // sort and top_k.
  auto sorts = [](ST x, ST w) { return sum(sort(x, -1) * w) + sum(square(top_k(x * w, 3).first)); };
  add("sort_top_k", trace(sorts, f64s({3, 6}), f64s({3, 6})), {0, 1}, kAll);

  // gather-based: take (clamping, with out-of-range and negative indices), a 2-D gather, a scatter-add (out-of-range
  // rows dropped).
  auto gathers = [](ST x, ST idx, ST idx2, ST u) {
    ST t = take(x, idx, 0);            // (6, 4)
    ST g = gather(x, idx2, {0, 1});    // (5,)
    ST s = scatter_add(x, idx, u, 0);  // x with u's rows added at idx
    return sum(square(t) * 0.5) + sum(sin(g)) + sum(s * s * x);
  };
  {
    Case& c = add("gather_scatter", trace(gathers, f64s({5, 4}), i64s({6}), i64s({5, 2}), f64s({6, 4})), {0, 3}, kAll);
    c.inputs[1] = Tensor::from_vector<int64_t>({0, 3, 7, -2, 3, 4}, {6});
    c.inputs[2] = Tensor::from_vector<int64_t>({0, 1, 4, 3, -1, 9, 2, 2, 6, -3}, {5, 2});
  }

  // Cholesky, solve, slogdet, inv on a symmetric positive definite s = a a^T + 4 I.
  auto chol = [](ST a, ST b) {
    ST s = matmul(a, transpose(a)) + eye(4) * 4.0;
    ST L = linalg::cholesky(s);
    ST x = linalg::solve(s, b);
    return sum(log(diagonal(L))) + sum(square(x)) + linalg::slogdet(s).logabsdet + sum(linalg::inv(s) * a) +
           sum(linalg::triangular_solve(L, b, /*left_side=*/true, /*lower=*/true));
  };
  add("cholesky_solve", trace(chol, f64s({4, 4}), f64s({4, 2})), {0, 1}, kAll);

  // slogdet and det of a general (non-symmetric) matrix.
  auto dets = [](ST a) {
    ST m = a + eye(3) * 2.0;
    return linalg::slogdet(m).logabsdet + linalg::det(m) * 0.5;
  };
  add("slogdet_det", trace(dets, f64s({3, 3})), {0}, kAll);

  // eigh (eigenvalues only) and svd (singular values only).
  auto spectra = [](ST a, ST b, ST w) {
    ST ev = linalg::eigvalsh(a + transpose(a));
    return sum(ev * w) + sum(square(linalg::svdvals(b))) + sum(linalg::svdvals(b));
  };
  add("eigh_svd", trace(spectra, f64s({4, 4}), f64s({5, 3}), f64s({4})), {0, 1, 2}, kAll);

  // QR: R and Q enter through squares (invariant under the sign choice of each Householder column).
  auto qrf = [](ST a, ST c, ST d) {
    auto [q, r] = linalg::qr(a);
    return sum(square(r) * c) + sum(square(q) * d);
  };
  add("qr", trace(qrf, f64s({5, 3}), f64s({3, 3}), f64s({5, 3})), {0, 1, 2}, kNoHess);

  // The matrix exponential.
  auto expmf = [](ST a) { return linalg::matrix_exp(a * 0.5); };
  add("matrix_exp", trace(expmf, f64s({3, 3})), {0}, kVector);

  // conv2d with stride and asymmetric padding, NCHW / OIHW.
  auto convf = [](ST x, ST w) {
    ST y = conv2d(x, w, {2, 2}, ConvPadding({{1, 0}, {2, 1}}));
    return mean(square(tanh(y)));
  };
  {
    Case& c = add("conv2d", trace(convf, f64s({2, 3, 7, 6}), f64s({4, 3, 3, 2})), {0, 1},
                  {"value", "grad", "jvp", "vjp", "jacrev", "vmap_grad"});
    c.in_axes = {0, std::nullopt};
    c.vmap_argnum = 1;
  }

  // norms: Frobenius, vector 3-norms of rows, nuclear, matrix inf-norm, 2-norm of a vector.
  auto norms = [](ST x, ST v) {
    return linalg::norm(x) + sum(linalg::norm(x, 3.0, std::vector<int64_t>{1})) + linalg::norm(x, "nuc") +
           linalg::norm(x, std::numeric_limits<double>::infinity()) + linalg::norm(v);
  };
  add("norm", trace(norms, f64s({3, 4}), f64s({5})), {0, 1}, kAll);

  // A pytree in and out: two outputs of two inputs (jacobians per output and argument).
  auto multi = [](ST x, ST y) { return std::pair<ST, ST>{sin(x) * slice(y, {0}, {1}), outer(x, exp(y))}; };
  add("multi_output", trace(multi, f64s({3}), f64s({2})), {0, 1}, kVector);

  // Elementwise odds and ends on one loss (power, arctan2, clip, where, maximum, abs, expm1/log1p, erf).
  auto elem = [](ST x, ST y) {
    ST a = power(abs(x) + 0.5, y) + arctan2(x, y + 2.0) + clip(x * 2.0, -0.5, 0.7) + where(x > y, x * y, x - y);
    return sum(a * maximum(x, y * 0.3)) + sum(log1p(square(y))) + sum(expm1(x * 0.5)) + sum(erf(x + y));
  };
  add("elementwise", trace(elem, f64s({2, 3}), f64s({2, 3})), {0, 1}, kAll);

  // Reductions and structure: prod, min, var/std, pad, concatenate, reshape, transpose, broadcasting.
  auto reds = [](ST x) {
    ST p = pad(x, {{1, 0}, {0, 2}}, "constant", 0.0);
    ST c = concatenate({p, reshape(x, Shape{3, 2}), transpose(x)}, 1);  // (3, 5 + 2 + 2)
    return sum(prod(x * 0.5 + 1.0, {0})) + sum(min(c, {1})) + var(x) + sum(evoxc::std(x, {1})) + sum(c * c * 0.25);
  };
  add("reduce_structure", trace(reds, f64s({2, 3})), {0}, kAll);
  // dynamic_slice / dynamic_update_slice with data-dependent starts that clamp (XLA's rule, as lax); vmap batches the
  // starts (a gather and a scatter per lane).
  auto dyn = [](ST x, ST i, ST j, ST u) {
    ST d = dynamic_slice(x, {i, j}, {3, 2});
    ST w = dynamic_update_slice(x, u * d, {j, i});
    return sum(square(d)) + sum(w * x * x);
  };
  {
    Case& c = add("dynamic_slice", trace(dyn, f64s({6, 5}), i64s({}), i64s({}), f64s({3, 2})), {0, 3},
                  {"value", "grad", "jvp", "vjp", "jacfwd", "hessian", "vmap", "vmap_grad"});
    c.inputs[1] = Tensor::scalar<int64_t>(2);
    c.inputs[2] = Tensor::scalar<int64_t>(4);  // past the last start that fits (3): clamps
    c.in_axes = {std::nullopt, 0, 0, std::nullopt};
    c.vmap_argnum = 0;
  }

  // einsum contractions and a switch_ on an integer input (out-of-range indices clamp to the last branch).
  auto ein = [](ST a, ST b, ST k) {
    ST e = einsum("ij,jk->ik", a, b) + einsum("ij->j", a);
    Tree<ST> r = switch_<Tree<ST>>(
        k,
        {[](const ST& x) { return Tree<ST>(sum(sin(x))); }, [](const ST& x) { return Tree<ST>(sum(x * x * x)); },
         [](const ST& x) { return Tree<ST>(mean(exp(x))); }},
        e);
    return r.leaf() + sum(einsum("ii", matmul(a, transpose(a))));
  };
  {
    Case& c = add("einsum_switch", trace(ein, f64s({3, 4}), f64s({4, 4}), i64s({})), {0, 1},
                  {"value", "grad", "jvp", "vjp", "jacfwd", "hessian", "vmap", "vmap_grad"});
    c.inputs[2] = Tensor::scalar<int64_t>(1);  // vmap lanes: -1, 1, 3 (clamped to 0, 1, 2)
    c.in_axes = {0, std::nullopt, 0};
    c.vmap_argnum = 1;
  }

  // Batched linear algebra: vmap over stacks of matrices, and vmap(grad) with shared right-hand sides.
  {
    Case c = cs[static_cast<size_t>(
        std::find_if(cs.begin(), cs.end(), [](const Case& x) { return x.name == "cholesky_solve"; }) - cs.begin())];
    c.name = "cholesky_solve_batched";
    c.transforms = {"vmap", "vmap_grad"};
    c.in_axes = {0, std::nullopt};
    c.vmap_argnum = 0;
    cs.push_back(std::move(c));
  }
  {
    Case c = cs[static_cast<size_t>(
        std::find_if(cs.begin(), cs.end(), [](const Case& x) { return x.name == "eigh_svd"; }) - cs.begin())];
    c.name = "eigh_svd_batched";
    c.transforms = {"vmap", "vmap_grad"};
    c.in_axes = {0, 0, std::nullopt};
    c.vmap_argnum = 1;
    cs.push_back(std::move(c));
  }
  // scan with batched xs and a shared initial carry; value_and_grad on a few cases.
  {
    Case c = cs[static_cast<size_t>(
        std::find_if(cs.begin(), cs.end(), [](const Case& x) { return x.name == "scan_rnn"; }) - cs.begin())];
    c.name = "scan_rnn_batched";
    c.transforms = {"vmap", "vmap_grad", "value_and_grad"};
    c.in_axes = {std::nullopt, 0, std::nullopt, std::nullopt};
    c.vmap_argnum = 3;
    cs.push_back(std::move(c));
  }
  return cs;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: jax_fixtures <output folder>\n";
    return 2;
  }
  try {
    std::filesystem::path dir(argv[1]);
    // Start empty, so files of an earlier run can never pass for new ones.
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    std::mt19937_64 rng(20261201);
    std::vector<Case> cases = make_cases(rng);
    Writer w(dir);
    for (const Case& c : cases) w.run_case(c, rng);
    w.finish();
    std::cout << "wrote " << cases.size() << " cases to " << dir.string() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "jax_fixtures: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
