// Helpers shared by the transform tests (see transform_util.h).
#include "transforms/transform_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

namespace evoxc::testing {

std::vector<Tensor> run_flat(const Graph& g, const std::vector<Tensor>& inputs) {
  Executable exe = load(compile(lower(g)));
  std::vector<TensorSpec> outs = g.output_specs();
  Tree<Tensor> in = g.input_tree().unflatten(inputs);
  return run(exe, in).flatten();
}

Tensor make_tensor(const std::vector<double>& v, const std::vector<int64_t>& shape, DType dtype) {
  switch (dtype) {
    case DType::F64: return Tensor::from_vector<double>(v, shape);
    case DType::F32: {
      std::vector<float> f(v.begin(), v.end());
      return Tensor::from_vector<float>(f, shape);
    }
    case DType::I64: {
      std::vector<int64_t> f;
      for (double x : v) f.push_back(static_cast<int64_t>(x));
      return Tensor::from_vector<int64_t>(f, shape);
    }
    case DType::I32: {
      std::vector<int32_t> f;
      for (double x : v) f.push_back(static_cast<int32_t>(x));
      return Tensor::from_vector<int32_t>(f, shape);
    }
    case DType::Bool: {
      Tensor t = Tensor::zeros(shape, DType::Bool);
      auto* p = static_cast<uint8_t*>(t.raw_data());
      for (size_t i = 0; i < v.size(); ++i) p[i] = v[i] != 0 ? 1 : 0;
      return t;
    }
    default: {
      // Other dtypes: through a one-op conversion graph.
      Tensor src = Tensor::from_vector<double>(v, shape);
      Graph g = trace([dtype](const SymbolicTensor& x) { return convert(x, dtype); },
                      TensorSpec(Shape::from_ints(shape), DType::F64));
      return run_flat(g, {src})[0];
    }
  }
}

std::vector<double> values_of(const Tensor& t) {
  std::vector<double> out(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) out[static_cast<size_t>(i)] = t.get_as_double(i);
  return out;
}

Tensor random_tensor(const std::vector<int64_t>& shape, DType dtype, uint64_t seed, double lo, double hi) {
  std::mt19937_64 rng(seed);
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> v(static_cast<size_t>(n));
  std::uniform_real_distribution<double> u(lo, hi);
  for (auto& x : v) {
    if (dtype == DType::Bool)
      x = (rng() & 1) ? 1 : 0;
    else if (is_float(dtype))
      x = u(rng);
    else
      x = std::floor(u(rng));
  }
  return make_tensor(v, shape, dtype);
}

std::vector<Tensor> random_inputs(const Graph& g, uint64_t seed, double lo, double hi, int64_t sym) {
  std::vector<Tensor> out;
  // Every symbol takes the value `sym`; extents that are expressions of symbols are evaluated.
  DimBindings bind;
  for (const TensorSpec& s : g.input_specs()) {
    std::vector<std::string> names;
    for (const DimExpr& d : s.shape) d.collect_symbols(names);
    for (const auto& n : names) bind[n] = sym;
  }
  for (const TensorSpec& s : g.input_specs()) {
    std::vector<int64_t> shape = s.shape.evaluate(bind);
    double l = is_unsigned_int(s.dtype) ? 0.0 : lo;
    out.push_back(random_tensor(shape, s.dtype, seed++, l, is_float(s.dtype) ? hi : std::max(hi, l + 4.0)));
  }
  return out;
}

Tensor stack(const std::vector<Tensor>& ts) {
  std::vector<int64_t> shape{static_cast<int64_t>(ts.size())};
  shape.insert(shape.end(), ts[0].shape().begin(), ts[0].shape().end());
  Tensor out = Tensor::empty(shape, ts[0].dtype());
  auto* p = static_cast<char*>(out.raw_data());
  for (const Tensor& t : ts) {
    std::memcpy(p, t.raw_data(), t.nbytes());
    p += t.nbytes();
  }
  return out;
}

Tensor row(const Tensor& t, int64_t i) {
  std::vector<int64_t> shape(t.shape().begin() + 1, t.shape().end());
  Tensor out = Tensor::empty(shape, t.dtype());
  std::memcpy(out.raw_data(), static_cast<const char*>(t.raw_data()) + static_cast<size_t>(i) * out.nbytes(),
              out.nbytes());
  return out;
}

void expect_close(const Tensor& a, const Tensor& b, double rtol, double atol, const std::string& what) {
  ASSERT_EQ(a.shape(), b.shape()) << what;
  std::vector<double> x = values_of(a), y = values_of(b);
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i]) || std::isnan(y[i])) {
      EXPECT_EQ(std::isnan(x[i]), std::isnan(y[i])) << what << " at " << i << ": " << x[i] << " vs " << y[i];
      continue;
    }
    if (x[i] == y[i]) continue;
    EXPECT_LE(std::abs(x[i] - y[i]), atol + rtol * std::abs(y[i]))
        << what << " at " << i << ": " << x[i] << " vs " << y[i];
  }
}

namespace {

double dot(const Tensor& a, const Tensor& b) {
  std::vector<double> x = values_of(a), y = values_of(b);
  double s = 0;
  for (size_t i = 0; i < x.size(); ++i) s += x[i] * y[i];
  return s;
}

Tensor axpy(const Tensor& x, double h, const Tensor& t) {
  std::vector<double> a = values_of(x), b = values_of(t);
  for (size_t i = 0; i < a.size(); ++i) a[i] += h * b[i];
  return make_tensor(a, x.shape(), x.dtype());
}

}  // namespace

void expect_vmap_matches_loop(const Graph& g, const std::vector<Tensor>& example, const std::vector<bool>& mapped,
                              int64_t n, double rtol, double atol) {
  std::vector<std::vector<Tensor>> per(static_cast<size_t>(n));
  std::vector<Tensor> batched;
  for (size_t i = 0; i < example.size(); ++i) {
    std::vector<Tensor> rows;
    for (int64_t b = 0; b < n; ++b) {
      Tensor t = b == 0 || !mapped[i]
                     ? example[i]
                     : random_tensor(example[i].shape(), example[i].dtype(), 1000 + 17 * static_cast<uint64_t>(b) + i);
      rows.push_back(t);
      per[static_cast<size_t>(b)].push_back(t);
    }
    batched.push_back(mapped[i] ? stack(rows) : example[i]);
  }
  std::vector<AxisTree> axes;
  for (bool m : mapped) axes.push_back(m ? AxisTree(0) : AxisTree::none());
  // One axis per input leaf, in the shape of the graph's input tree.
  size_t pos = 0;
  std::function<AxisTree(const TreeDef&)> build = [&](const TreeDef& t) -> AxisTree {
    if (t.is_leaf()) return axes.at(pos++);
    if (t.is_none()) return AxisTree::none();
    std::vector<AxisTree> kids;
    for (const auto& c : t.children()) kids.push_back(build(c));
    return AxisTree::from_parts(t.kind(), std::move(kids), t.keys());
  };
  AxisTree in_axes = build(g.input_tree());
  Graph vg = vectorize(g, in_axes, AxisTree(0));
  std::vector<Tensor> got = run_flat(vg, batched);
  for (int64_t b = 0; b < n; ++b) {
    std::vector<Tensor> want = run_flat(g, per[static_cast<size_t>(b)]);
    ASSERT_EQ(want.size(), got.size());
    for (size_t k = 0; k < want.size(); ++k)
      expect_close(row(got[k], b), want[k], rtol, atol,
                   "vmap output " + std::to_string(k) + " row " + std::to_string(b));
  }
}

void expect_jvp_matches_fd(const Graph& g, const std::vector<Tensor>& primals, double rtol, double atol, double h) {
  std::vector<TensorSpec> specs = g.input_specs();
  std::vector<Tensor> tangents, plus, minus;
  std::vector<Tensor> inputs = primals;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (!is_float(specs[i].dtype)) {
      plus.push_back(primals[i]);
      minus.push_back(primals[i]);
      continue;
    }
    Tensor t = random_tensor(primals[i].shape(), primals[i].dtype(), 77 + i);
    tangents.push_back(t);
    plus.push_back(axpy(primals[i], h, t));
    minus.push_back(axpy(primals[i], -h, t));
  }
  inputs.insert(inputs.end(), tangents.begin(), tangents.end());
  Graph jg = jvp(g);
  std::vector<Tensor> got = run_flat(jg, inputs);
  std::vector<Tensor> fp = run_flat(g, plus), fm = run_flat(g, minus), f0 = run_flat(g, primals);
  std::vector<TensorSpec> outs = g.output_specs();
  size_t k = outs.size();
  for (size_t j = 0; j < outs.size(); ++j) {
    expect_close(got[j], f0[j], 0, 0, "jvp primal output " + std::to_string(j));
    if (!is_float(outs[j].dtype)) continue;
    std::vector<double> a = values_of(fp[j]), b = values_of(fm[j]);
    for (size_t i = 0; i < a.size(); ++i) a[i] = (a[i] - b[i]) / (2 * h);
    expect_close(got[k++], make_tensor(a, fp[j].shape(), DType::F64), rtol, atol,
                 "jvp tangent output " + std::to_string(j) + " vs finite differences");
  }
}

void expect_vjp_matches_jvp(const Graph& g, const std::vector<Tensor>& primals, double rtol) {
  std::vector<TensorSpec> specs = g.input_specs(), outs = g.output_specs();
  std::vector<Tensor> tangents, cts;
  for (size_t i = 0; i < specs.size(); ++i)
    if (is_float(specs[i].dtype)) tangents.push_back(random_tensor(primals[i].shape(), primals[i].dtype(), 91 + i));
  std::vector<Tensor> f0 = run_flat(g, primals);
  for (size_t j = 0; j < outs.size(); ++j)
    if (is_float(outs[j].dtype)) cts.push_back(random_tensor(f0[j].shape(), f0[j].dtype(), 191 + j));
  std::vector<Tensor> jin = primals;
  jin.insert(jin.end(), tangents.begin(), tangents.end());
  std::vector<Tensor> jout = run_flat(jvp(g), jin);
  std::vector<Tensor> vin = primals;
  vin.insert(vin.end(), cts.begin(), cts.end());
  std::vector<Tensor> vout = run_flat(vjp(g), vin);
  for (size_t j = 0; j < outs.size(); ++j) expect_close(vout[j], f0[j], 0, 0, "vjp primal output");
  double lhs = 0, rhs = 0, scale = 0;
  for (size_t k = 0; k < cts.size(); ++k) {
    lhs += dot(cts[k], jout[outs.size() + k]);
    scale += std::sqrt(dot(cts[k], cts[k]) * dot(jout[outs.size() + k], jout[outs.size() + k]));
  }
  for (size_t k = 0; k < tangents.size(); ++k) {
    rhs += dot(vout[outs.size() + k], tangents[k]);
    scale += std::sqrt(dot(vout[outs.size() + k], vout[outs.size() + k]) * dot(tangents[k], tangents[k]));
  }
  EXPECT_LE(std::abs(lhs - rhs), rtol * (1 + scale)) << "<ct, J t> = " << lhs << " but <J^T ct, t> = " << rhs;
}

}  // namespace evoxc::testing
