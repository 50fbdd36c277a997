// Checks evoxc against numpy: runs every case of tests/data/numpy/manifest.json (made by make_refs.py) and compares.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "evoxc/evoxc.h"
#include "evoxc/io/npy.h"
#include "evoxc/trace/numpy.h"

namespace evoxc {
namespace {

using json = nlohmann::json;
using Fn = std::function<SymbolicTensor(const std::vector<SymbolicTensor>&, const json&)>;

const std::string kDir = EVOXC_TEST_DATA_DIR "/numpy/";

Axes axes_of(const json& args, const char* key = "axes") {
  if (!args.contains(key) || args[key].is_null()) return Axes::all();
  return Axes(args[key].get<std::vector<int64_t>>());
}
template <typename T>
T get_or(const json& args, const char* key, T fallback) {
  return args.contains(key) && !args[key].is_null() ? args[key].get<T>() : fallback;
}
template <typename T>
std::optional<T> get_opt(const json& args, const char* key) {
  if (!args.contains(key) || args[key].is_null()) return std::nullopt;
  return args[key].get<T>();
}

// [[lo, hi], ...] → pairs (pad widths, conv padding).
std::vector<std::pair<int64_t, int64_t>> pairs_of(const json& v) {
  std::vector<std::pair<int64_t, int64_t>> p;
  for (const json& e : v) p.emplace_back(e.at(0).get<int64_t>(), e.at(1).get<int64_t>());
  return p;
}
// A static scalar argument: a JSON integer stays an int operand, anything else is a float.
Operand scalar_of(const json& args, const char* key, int64_t fallback) {
  if (!args.contains(key) || args[key].is_null()) return Operand(static_cast<long long>(fallback));
  if (args[key].is_number_integer()) return Operand(args[key].get<long long>());
  return Operand(args[key].get<double>());
}
std::optional<DType> dtype_of(const json& args) {
  if (!args.contains("dtype") || args["dtype"].is_null()) return std::nullopt;
  auto d = parse_dtype(args["dtype"].get<std::string>());
  if (!d) throw std::runtime_error("unknown dtype " + args["dtype"].get<std::string>());
  return d;
}

// Function name of the manifest → the traced call it stands for.
std::map<std::string, Fn> function_table() {
  std::map<std::string, Fn> t;
  using U = SymbolicTensor (*)(const Operand&, SrcLoc);
  using B = SymbolicTensor (*)(const Operand&, const Operand&, SrcLoc);
  using R = SymbolicTensor (*)(const SymbolicTensor&, Axes, bool, SrcLoc);
  std::map<std::string, U> unary = {
      {"negative", negative},
      {"abs", abs},
      {"sign", sign},
      {"exp", exp},
      {"exp2", exp2},
      {"expm1", expm1},
      {"log", log},
      {"log2", log2},
      {"log10", log10},
      {"log1p", log1p},
      {"sqrt", sqrt},
      {"rsqrt", rsqrt},
      {"cbrt", cbrt},
      {"square", square},
      {"reciprocal", reciprocal},
      {"sin", sin},
      {"cos", cos},
      {"tan", tan},
      {"arcsin", arcsin},
      {"arccos", arccos},
      {"arctan", arctan},
      {"sinh", sinh},
      {"cosh", cosh},
      {"tanh", tanh},
      {"arcsinh", arcsinh},
      {"arccosh", arccosh},
      {"arctanh", arctanh},
      {"sigmoid", sigmoid},
      {"erf", erf},
      {"erfc", erfc},
      {"lgamma", lgamma},
      {"relu", relu},
      {"softplus", softplus},
      {"floor", floor},
      {"ceil", ceil},
      {"round", round},
      {"trunc", trunc},
      {"isnan", isnan},
      {"isinf", isinf},
      {"isfinite", isfinite},
      {"logical_not", logical_not},
      {"bitwise_not", bitwise_not},
      {"popcount", popcount},
  };
  for (const auto& [name, f] : unary)
    t[name] = [f](const std::vector<SymbolicTensor>& x, const json&) { return f(x.at(0), SrcLoc::current()); };
  t["gelu"] = [](const std::vector<SymbolicTensor>& x, const json&) { return gelu(x.at(0)); };
  std::map<std::string, B> binary = {
      {"add", add},
      {"subtract", subtract},
      {"multiply", multiply},
      {"divide", divide},
      {"floor_divide", floor_divide},
      {"remainder", remainder},
      {"fmod", fmod},
      {"power", power},
      {"maximum", maximum},
      {"minimum", minimum},
      {"arctan2", arctan2},
      {"hypot", hypot},
      {"nextafter", nextafter},
      {"copysign", copysign},
      {"logical_and", logical_and},
      {"logical_or", logical_or},
      {"logical_xor", logical_xor},
      {"bitwise_and", bitwise_and},
      {"bitwise_or", bitwise_or},
      {"bitwise_xor", bitwise_xor},
      {"left_shift", left_shift},
      {"right_shift", right_shift},
      {"equal", equal},
      {"not_equal", not_equal},
      {"less", less},
      {"less_equal", less_equal},
      {"greater", greater},
      {"greater_equal", greater_equal},
      {"matmul", matmul},
      {"dot", dot},
  };
  for (const auto& [name, f] : binary)
    t[name] = [f](const std::vector<SymbolicTensor>& x, const json&) { return f(x.at(0), x.at(1), SrcLoc::current()); };
  std::map<std::string, R> reductions = {{"sum", sum},   {"prod", prod}, {"max", max}, {"min", min},
                                         {"mean", mean}, {"any", any},   {"all", all}};
  for (const auto& [name, f] : reductions)
    t[name] = [f](const std::vector<SymbolicTensor>& x, const json& a) {
      return f(x.at(0), axes_of(a), get_or(a, "keepdims", false), SrcLoc::current());
    };
  t["argmax"] = [](const std::vector<SymbolicTensor>& x, const json& a) {
    return argmax(x.at(0), get_opt<int64_t>(a, "axis"));
  };
  t["argmin"] = [](const std::vector<SymbolicTensor>& x, const json& a) {
    return argmin(x.at(0), get_opt<int64_t>(a, "axis"));
  };
  t["reshape"] = [](const std::vector<SymbolicTensor>& x, const json& a) {
    return reshape(x.at(0), Shape::from_ints(a.at("shape").get<std::vector<int64_t>>()));
  };
  t["transpose"] = [](const std::vector<SymbolicTensor>& x, const json& a) {
    return transpose(x.at(0), get_opt<std::vector<int64_t>>(a, "perm"));
  };
  t["concatenate"] = [](const std::vector<SymbolicTensor>& x, const json& a) {
    return concatenate(x, get_or<int64_t>(a, "axis", 0));
  };
  t["slice"] = [](const std::vector<SymbolicTensor>& x, const json& a) {
    return slice(x.at(0), a.at("start").get<std::vector<int64_t>>(), a.at("limit").get<std::vector<int64_t>>(),
                 get_or(a, "strides", std::vector<int64_t>{}));
  };
  t["einsum"] = [](const std::vector<SymbolicTensor>& x, const json& a) {
    return einsum(a.at("subscripts").get<std::string>(), x);
  };
  t["softmax"] = [](const std::vector<SymbolicTensor>& x, const json& a) {
    return softmax(x.at(0), Axes(get_or<int64_t>(a, "axis", -1)));
  };
  t["log_softmax"] = [](const std::vector<SymbolicTensor>& x, const json& a) {
    return log_softmax(x.at(0), Axes(get_or<int64_t>(a, "axis", -1)));
  };
  t["var"] = [](const std::vector<SymbolicTensor>& x, const json& a) {
    return var(x.at(0), axes_of(a), get_or<int64_t>(a, "ddof", 0), get_or(a, "keepdims", false));
  };
  t["std"] = [](const std::vector<SymbolicTensor>& x, const json& a) {
    return evoxc::std(x.at(0), axes_of(a), get_or<int64_t>(a, "ddof", 0), get_or(a, "keepdims", false));
  };
  t["average"] = [](const std::vector<SymbolicTensor>& x, const json& a) {
    std::optional<SymbolicTensor> w;
    if (x.size() > 1) w = x[1];
    return average(x.at(0), axes_of(a), w);
  };
  t["stack"] = [](const std::vector<SymbolicTensor>& x, const json& a) {
    return stack(x, get_or<int64_t>(a, "axis", 0));
  };
  t["hstack"] = [](const std::vector<SymbolicTensor>& x, const json&) { return hstack(x); };
  t["vstack"] = [](const std::vector<SymbolicTensor>& x, const json&) { return vstack(x); };
  t["outer"] = [](const std::vector<SymbolicTensor>& x, const json&) { return outer(x.at(0), x.at(1)); };
  t["inner"] = [](const std::vector<SymbolicTensor>& x, const json&) { return inner(x.at(0), x.at(1)); };
  t["isclose"] = [](const std::vector<SymbolicTensor>& x, const json& a) {
    return isclose(x.at(0), x.at(1), get_or(a, "rtol", 1e-5), get_or(a, "atol", 1e-8), get_or(a, "equal_nan", false));
  };
  t["allclose"] = [](const std::vector<SymbolicTensor>& x, const json& a) {
    return allclose(x.at(0), x.at(1), get_or(a, "rtol", 1e-5), get_or(a, "atol", 1e-8), get_or(a, "equal_nan", false));
  };
  // ---- scans, sorting, indexing (evoxc/trace/indexing.h) ----
  using S = SymbolicTensor (*)(const SymbolicTensor&, std::optional<int64_t>, bool, SrcLoc);
  std::map<std::string, S> scans = {{"cumsum", cumsum}, {"cumprod", cumprod}, {"cummax", cummax}, {"cummin", cummin}};
  for (const auto& [name, f] : scans)
    t[name] = [f](const std::vector<SymbolicTensor>& x, const json& a) {
      return f(x.at(0), get_opt<int64_t>(a, "axis"), get_or(a, "reverse", false), SrcLoc::current());
    };
  t["logsumexp"] = [](const std::vector<SymbolicTensor>& x, const json& a) {
    return logsumexp(x.at(0), axes_of(a), get_or(a, "keepdims", false));
  };
  t["sort"] = [](const std::vector<SymbolicTensor>& x, const json& a) {
    return sort(x.at(0), get_opt<int64_t>(a, "axis"));
  };
  t["argsort"] = [](const std::vector<SymbolicTensor>& x, const json& a) {
    return argsort(x.at(0), get_opt<int64_t>(a, "axis"));
  };
  t["searchsorted"] = [](const std::vector<SymbolicTensor>& x, const json& a) {
    return searchsorted(x.at(0), x.at(1), get_or<std::string>(a, "side", "left"));
  };
  t["take"] = [](const std::vector<SymbolicTensor>& x, const json& a) {
    return take(x.at(0), x.at(1), get_opt<int64_t>(a, "axis"), get_or<std::string>(a, "mode", "clip"));
  };
  t["take_along_axis"] = [](const std::vector<SymbolicTensor>& x, const json& a) {
    return take_along_axis(x.at(0), x.at(1), a.at("axis").get<int64_t>());
  };
  // ---- layout, creation, convolution (evoxc/trace/layout.h) ----
  t["pad"] = [](const std::vector<SymbolicTensor>& x, const json& a) {
    return pad(x.at(0), pairs_of(a.at("pad_width")), a.at("mode").get<std::string>(), scalar_of(a, "value", 0));
  };
  t["tril"] = [](const std::vector<SymbolicTensor>& x, const json& a) {
    return tril(x.at(0), get_or<int64_t>(a, "k", 0));
  };
  t["triu"] = [](const std::vector<SymbolicTensor>& x, const json& a) {
    return triu(x.at(0), get_or<int64_t>(a, "k", 0));
  };
  t["diagonal"] = [](const std::vector<SymbolicTensor>& x, const json& a) {
    return diagonal(x.at(0), get_or<int64_t>(a, "offset", 0), get_or<int64_t>(a, "axis1", 0),
                    get_or<int64_t>(a, "axis2", 1));
  };
  t["flip"] = [](const std::vector<SymbolicTensor>& x, const json& a) { return flip(x.at(0), axes_of(a)); };
  t["roll"] = [](const std::vector<SymbolicTensor>& x, const json& a) {
    if (a.at("shift").is_array())
      return roll(x.at(0), a.at("shift").get<std::vector<int64_t>>(), a.at("axis").get<std::vector<int64_t>>());
    return roll(x.at(0), a.at("shift").get<int64_t>(), get_opt<int64_t>(a, "axis"));
  };
  t["tile"] = [](const std::vector<SymbolicTensor>& x, const json& a) {
    return tile(x.at(0), a.at("reps").get<std::vector<int64_t>>());
  };
  t["repeat"] = [](const std::vector<SymbolicTensor>& x, const json& a) {
    if (a.at("repeats").is_array())
      return repeat(x.at(0), a.at("repeats").get<std::vector<int64_t>>(), get_opt<int64_t>(a, "axis"));
    return repeat(x.at(0), a.at("repeats").get<int64_t>(), get_opt<int64_t>(a, "axis"));
  };
  t["arange"] = [](const std::vector<SymbolicTensor>&, const json& a) {
    return arange(scalar_of(a, "start", 0), scalar_of(a, "stop", 0), scalar_of(a, "step", 1), dtype_of(a));
  };
  t["linspace"] = [](const std::vector<SymbolicTensor>&, const json& a) {
    return linspace(a.at("start").get<double>(), a.at("stop").get<double>(), a.at("num").get<int64_t>(),
                    get_or(a, "endpoint", true), dtype_of(a).value_or(kDefaultFloat));
  };
  t["one_hot"] = [](const std::vector<SymbolicTensor>& x, const json& a) {
    return one_hot(x.at(0), a.at("num_classes").get<int64_t>(), dtype_of(a).value_or(kDefaultFloat));
  };
  t["conv"] = [](const std::vector<SymbolicTensor>& x, const json& a) {
    return conv(x.at(0), x.at(1), a.at("strides").get<std::vector<int64_t>>(), ConvPadding(pairs_of(a.at("padding"))),
                a.at("dilation").get<std::vector<int64_t>>(), a.at("groups").get<int64_t>());
  };
  // ---- linear algebra (evoxc/trace/linalg.h); multi-result functions check one derived tensor ----
  t["dot_general"] = [](const std::vector<SymbolicTensor>& x, const json& a) {
    auto v = [&a](const char* k) { return a.at(k).get<std::vector<int64_t>>(); };
    return dot_general(x.at(0), x.at(1), v("lhs_contracting"), v("rhs_contracting"), v("lhs_batch"), v("rhs_batch"));
  };
  t["cholesky"] = [](const std::vector<SymbolicTensor>& x, const json& a) {
    return linalg::cholesky(x.at(0), get_or(a, "upper", false));
  };
  t["solve"] = [](const std::vector<SymbolicTensor>& x, const json&) { return linalg::solve(x.at(0), x.at(1)); };
  t["inv"] = [](const std::vector<SymbolicTensor>& x, const json&) { return linalg::inv(x.at(0)); };
  t["det"] = [](const std::vector<SymbolicTensor>& x, const json&) { return linalg::det(x.at(0)); };
  t["slogdet_sign"] = [](const std::vector<SymbolicTensor>& x, const json&) { return linalg::slogdet(x.at(0)).sign; };
  t["slogdet_logabsdet"] = [](const std::vector<SymbolicTensor>& x, const json&) {
    return linalg::slogdet(x.at(0)).logabsdet;
  };
  // Q @ R, compared with the operand itself (Q and R alone are sign-ambiguous).
  t["qr_reconstruct"] = [](const std::vector<SymbolicTensor>& x, const json& a) {
    auto [q, r] = linalg::qr(x.at(0), a.at("mode").get<std::string>());
    return matmul(q, r);
  };
  // R with each row times the sign of its diagonal element.
  t["qr_R_signed"] = [](const std::vector<SymbolicTensor>& x, const json&) {
    SymbolicTensor r = linalg::qr(x.at(0)).R;
    return multiply(r, expand_dims(sign(diagonal(r, 0, -2, -1)), Axes(-1)));
  };
  t["eigvalsh"] = [](const std::vector<SymbolicTensor>& x, const json& a) {
    return linalg::eigvalsh(x.at(0), get_or<std::string>(a, "UPLO", "L"));
  };
  t["eigh_values"] = [](const std::vector<SymbolicTensor>& x, const json& a) {
    return linalg::eigh(x.at(0), get_or<std::string>(a, "UPLO", "L")).eigenvalues;
  };
  // Eigenvectors with each column times the sign of its first component.
  t["eigh_vectors_signed"] = [](const std::vector<SymbolicTensor>& x, const json& a) {
    SymbolicTensor v = linalg::eigh(x.at(0), get_or<std::string>(a, "UPLO", "L")).eigenvectors;
    int64_t r = static_cast<int64_t>(v.rank());
    std::vector<int64_t> start(r, 0), limit;
    for (int64_t d = 0; d < r; ++d) limit.push_back(v.shape()[d].value());
    limit[r - 2] = 1;
    return multiply(v, sign(slice(v, start, limit)));
  };
  t["svdvals"] = [](const std::vector<SymbolicTensor>& x, const json&) { return linalg::svdvals(x.at(0)); };
  t["svd_S"] = [](const std::vector<SymbolicTensor>& x, const json&) { return linalg::svd(x.at(0)).S; };
  t["matrix_rank"] = [](const std::vector<SymbolicTensor>& x, const json& a) {
    return linalg::matrix_rank(x.at(0), get_opt<double>(a, "tol"), get_opt<double>(a, "rtol"));
  };
  t["norm"] = [](const std::vector<SymbolicTensor>& x, const json& a) {
    auto axis = get_opt<std::vector<int64_t>>(a, "axis");
    bool keep = get_or(a, "keepdims", false);
    if (!a.contains("ord") || a["ord"].is_null()) return linalg::norm(x.at(0), std::nullopt, axis, keep);
    if (a["ord"].is_number()) return linalg::norm(x.at(0), a["ord"].get<double>(), axis, keep);
    std::string ord = a["ord"].get<std::string>();
    if (ord == "inf" || ord == "-inf") return linalg::norm(x.at(0), ord == "inf" ? INFINITY : -INFINITY, axis, keep);
    return linalg::norm(x.at(0), ord, axis, keep);
  };
  t["trace"] = [](const std::vector<SymbolicTensor>& x, const json& a) {
    return linalg::trace(x.at(0), get_or<int64_t>(a, "offset", 0), get_or<int64_t>(a, "axis1", 0),
                         get_or<int64_t>(a, "axis2", 1));
  };
  return t;
}

// The distance between e and the next representable value of `t` away from zero.
double spacing(double e, DType t) {
  double a = std::fabs(e);
  if (t == f64) return std::nextafter(a, INFINITY) - a;
  if (t == f32) {
    float f = static_cast<float>(a);
    return static_cast<double>(std::nextafter(f, INFINITY)) - static_cast<double>(f);
  }
  // float16: 10 fraction bits; the subnormal spacing is 2^-24.
  if (a < std::ldexp(1.0, -14)) return std::ldexp(1.0, -24);
  return std::ldexp(1.0, std::ilogb(a) - 10);
}

// Empty when `got` matches `want` under the case's tolerance; else the first mismatch.
std::string compare(const Tensor& got, const Tensor& want, const json& tol) {
  if (got.dtype() != want.dtype())
    return "dtype " + std::string(dtype_name(got.dtype())) + ", expected " + std::string(dtype_name(want.dtype()));
  if (got.shape() != want.shape()) return "shape differs";
  std::string kind = tol.at("kind").get<std::string>();
  bool fl = is_float(want.dtype());
  for (int64_t i = 0; i < want.numel(); ++i) {
    double g = got.get_as_double(i), e = want.get_as_double(i);
    bool ok;
    if (fl && (std::isnan(e) || std::isnan(g))) {
      ok = std::isnan(e) && std::isnan(g);
    } else if (kind == "exact" || !fl || std::isinf(e)) {
      ok = g == e && (!fl || !tol.value("zero_sign", true) || std::signbit(g) == std::signbit(e));
    } else if (kind == "ulp") {
      double d = std::fabs(g - e);
      ok = d <= tol.at("ulp").get<double>() * spacing(e, want.dtype()) || d <= tol.value("atol", 0.0);
    } else {
      ok = std::fabs(g - e) <= tol.at("atol").get<double>() + tol.at("rtol").get<double>() * std::fabs(e);
    }
    if (!ok) return "element " + std::to_string(i) + ": got " + std::to_string(g) + ", expected " + std::to_string(e);
  }
  return "";
}

json load_manifest() {
  std::ifstream in(kDir + "manifest.json");
  if (!in) throw PersistenceError(kDir + "manifest.json: cannot read; run tests/data/numpy/make_refs.py");
  return json::parse(in);
}

TEST(NumpyReference, EveryCaseMatchesNumpyOrTheDocumentedSemantics) {
  json m = load_manifest();
  auto table = function_table();
  ASSERT_GT(m.at("cases").size(), 500u);
  std::vector<std::string> failures;
  for (const json& c : m.at("cases")) {
    std::string name = c.at("name").get<std::string>();
    try {
      auto it = table.find(c.at("fn").get<std::string>());
      if (it == table.end()) {
        failures.push_back(name + ": no evoxc function is mapped to '" + c.at("fn").get<std::string>() + "'");
        continue;
      }
      std::vector<Tensor> inputs;
      for (const json& f : c.at("inputs")) inputs.push_back(io::read_npy(kDir + f.get<std::string>()));
      Tensor want = io::read_npy(kDir + c.at("expected").get<std::string>());
      const Fn& fn = it->second;
      json args = c.at("args");
      auto traced = [&fn, &args](std::vector<SymbolicTensor> xs) { return fn(xs, args); };
      Tensor got = evaluate(traced, inputs).leaf();
      std::string why = compare(got, want, c.at("tol"));
      if (!why.empty()) failures.push_back(name + ": " + why);
    } catch (const std::exception& e) {
      failures.push_back(name + ": " + e.what());
    }
  }
  std::string all;
  for (const auto& f : failures) all += "  " + f + "\n";
  EXPECT_TRUE(failures.empty()) << failures.size() << " of " << m.at("cases").size() << " cases differ:\n" << all;
}

TEST(NumpyReference, SemanticsCasesSayWhy) {
  json m = load_manifest();
  for (const json& c : m.at("cases")) {
    if (c.at("source") == "semantics") {
      EXPECT_TRUE(c.contains("note")) << c.at("name");
    }
  }
}

}  // namespace
}  // namespace evoxc
