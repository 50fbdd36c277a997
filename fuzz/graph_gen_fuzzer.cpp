// Fuzz target, structure-aware: decodes the input into a random valid traced program (elementwise,
// reduce, scan-like, sort/gather, layout ops, random draws, external kernels, sparse values and control flow over
// several dtypes, optionally a symbolic batch dim), runs it on the interpreter, and checks that parse(print(g)) and
// from_json(to_json(g)) print the same module and that both round-tripped graphs compute
// bit-identical results (NaNs compare equal to NaNs).
#include <cstring>
#include <functional>
#include <vector>

#include "evoxc/evoxc.h"
#include "evoxc/trace/control.h"
#include "evoxc/trace/random.h"
#include "fuzz_util.h"

namespace {

using namespace evoxc;
using ST = SymbolicTensor;

// Reads the fuzz input as a stream of choices; past the end every choice is 0, so any input
// (even an empty one) decodes to some program.
class Choices {
 public:
  Choices(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  int pick(int n) { return byte() % n; }
  bool flag() { return byte() & 1; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

constexpr DType kInputDTypes[] = {f32, f64, i32, i64, bool_};
constexpr DType kCastDTypes[] = {f32, f64, i32, i64, bool_, bf16, f16, u8};

using Unary = ST (*)(const Operand&, SrcLoc);
using Binary = ST (*)(const Operand&, const Operand&, SrcLoc);
const Unary kUnary[] = {negative, abs, sign, exp, log, sqrt, sin, tanh, square, reciprocal, expm1, log1p, floor, cbrt};
const Binary kBinary[] = {add,       subtract,     multiply, divide, maximum, minimum,     power,      fmod,
                          remainder, floor_divide, arctan2,  equal,  less,    logical_and, bitwise_xor};

// A scalar of the value's own dtype class, so the op keeps the dtype.
Operand scalar_for(Choices& c) {
  int v = static_cast<int>(c.byte()) - 128;
  switch (c.pick(4)) {
    case 0: return v;
    case 1: return v / 8.0;
    case 2: return 0.0;
    default: return 1;
  }
}

// One op on values of the pool; appends its result. Shapes stay broadcast-compatible with the
// inputs' shape (reductions keep their dims), so most programs trace.
void emit_op(Choices& c, std::vector<ST>& pool) {
  auto any_value = [&]() -> const ST& { return pool[c.pick(static_cast<int>(pool.size()))]; };
  const ST x = any_value();
  const int64_t rank = static_cast<int64_t>(x.rank());
  const int64_t axis = rank == 0 ? 0 : c.pick(static_cast<int>(rank));
  switch (c.pick(16)) {
    case 0: pool.push_back(kUnary[c.pick(std::size(kUnary))](x, SrcLoc::current())); break;
    case 1: pool.push_back(kBinary[c.pick(std::size(kBinary))](x, any_value(), SrcLoc::current())); break;
    case 2: pool.push_back(kBinary[c.pick(std::size(kBinary))](x, scalar_for(c), SrcLoc::current())); break;
    case 3: pool.push_back(astype(x, kCastDTypes[c.pick(std::size(kCastDTypes))])); break;
    case 4: {
      if (rank == 0) break;
      switch (c.pick(5)) {
        case 0: pool.push_back(sum(x, Axes(axis), true)); break;
        case 1: pool.push_back(max(x, Axes(axis), true)); break;
        case 2: pool.push_back(min(x, Axes(axis), true)); break;
        case 3: pool.push_back(prod(x, Axes(axis), true)); break;
        default: pool.push_back(any(x, Axes(axis), true)); break;
      }
      break;
    }
    case 5: {
      if (rank == 0) break;
      switch (c.pick(3)) {
        case 0: pool.push_back(cumsum(x, axis, c.flag())); break;
        case 1: pool.push_back(cummax(x, axis, c.flag())); break;
        default: pool.push_back(cumprod(x, axis, c.flag())); break;
      }
      break;
    }
    case 6: {
      if (rank == 0) break;
      if (c.flag()) {
        pool.push_back(sort(x, axis));
      } else {
        ST other = any_value();
        if (other.shape() != x.shape()) other = x;
        pool.push_back(take_along_axis(other, argsort(x, axis), axis));
      }
      break;
    }
    case 7: {
      if (rank == 0) break;
      if (c.flag()) {
        pool.push_back(flip(x, Axes(axis)));
      } else {
        pool.push_back(roll(x, c.pick(5) - 2, axis));
      }
      break;
    }
    case 8: {
      // concatenate with itself and slice one copy back out: both layout ops, shape kept.
      if (rank == 0 || !x.shape()[axis].is_const()) break;
      int64_t n = x.shape()[axis].value();
      std::vector<int64_t> start(rank, 0), limit;
      for (int64_t d = 0; d < rank; ++d) limit.push_back(x.shape()[d].is_const() ? x.shape()[d].value() : -1);
      if (std::find(limit.begin(), limit.end(), -1) != limit.end()) break;
      int64_t off = c.pick(static_cast<int>(n + 1));
      start[axis] = off;
      limit[axis] = off + n;
      pool.push_back(slice(concatenate({x, x}, axis), start, limit));
      break;
    }
    case 9: pool.push_back(where(less(x, any_value()), x, any_value())); break;
    case 10: {
      ST pred = any(astype(x, bool_));
      ST y = any_value();
      pool.push_back(cond(
          pred, [](const ST& a, const ST& b) { return a * 2 + b; }, [](const ST& a, const ST&) { return -a; }, x, y));
      break;
    }
    case 11: {
      int64_t n = c.pick(4);
      pool.push_back(fori_loop(
          0, n, [](const ST& i, const ST& v) { return astype(v * 3 + astype(i, v.dtype()), v.dtype()); }, x));
      break;
    }
    case 12: {
      // Random draws keyed by the data: a key of each algorithm from a seed the program computes, folded, split
      // or drawn from at x's (possibly symbolic) shape.
      static constexpr random::Algorithm kAlgs[] = {random::Algorithm::Splitmix64, random::Algorithm::Threefry2x32,
                                                    random::Algorithm::Philox4x32};
      ST key = random::key(astype(sum(x), i64), kAlgs[c.pick(3)]);
      if (c.flag()) key = random::fold_in(key, c.pick(8));
      if (c.flag()) key = reshape(slice(random::split(key, 3), {2}, {3}), key.shape());
      ST draw = c.flag() ? random::uniform(key, x.shape(), f32, -1.0, 1.0)
                         : astype(random::bits(key, x.shape(), c.flag() ? u32 : u8), f32);
      pool.push_back(astype(draw, x.dtype()));
      break;
    }
    case 13: {
      // An external kernel (a copy, registered below) whose result type uses the input's symbolic extents.
      std::vector<ST> args{x};
      pool.push_back(external_call("fuzz.copy", args, std::vector<TensorType>{x.type()})[0]);
      break;
    }
    case 14: {
      // Sparse: x's nonzeros as COO (CSR when 2-D), squared through the sparse ops, back to dense (x * x).
      if (x.rank() == 0 || x.dtype() == DType::Bool) break;
      sparse::SparseTensor s = sparse::from_dense(x);
      if (x.rank() == 2 && c.flag()) s = sparse::to_csr(s);
      pool.push_back(c.flag() ? sparse::to_dense(sparse::multiply_dense(s, x))
                              : sparse::to_dense(sparse::multiply(s, sparse::from_dense(x))));
      break;
    }
    default: {
      // A counting while_loop: (i, v) -> (i + 1, v - 1) while i < k.
      int k = c.pick(4);
      auto cond_fn = [k](const std::pair<ST, ST>& s) { return less(s.first, k); };
      auto body_fn = [](const std::pair<ST, ST>& s) {
        return std::pair<ST, ST>{s.first + 1, astype(s.second - 1, s.second.dtype())};
      };
      pool.push_back(while_loop(cond_fn, body_fn, std::pair<ST, ST>{fill(Shape(), 0, i32), x}).second);
      break;
    }
  }
}

// The input tensor for `spec` with batch `B`, its elements taken from the input (with NaN,
// infinities and signed zeros among the float values).
Tensor make_input(Choices& c, const TensorSpec& spec, int64_t B) {
  std::vector<int64_t> shape;
  for (size_t d = 0; d < spec.shape.rank(); ++d) shape.push_back(spec.shape[d].is_const() ? spec.shape[d].value() : B);
  Tensor t = Tensor::empty(shape, spec.dtype);
  for (int64_t i = 0; i < t.numel(); ++i) {
    int v = c.byte();
    switch (spec.dtype) {
      case DType::F32:
      case DType::F64: {
        double x = (v - 128) / 8.0;
        switch (v % 16) {
          case 0: x = std::numeric_limits<double>::quiet_NaN(); break;
          case 1: x = std::numeric_limits<double>::infinity(); break;
          case 2: x = -std::numeric_limits<double>::infinity(); break;
          case 3: x = -0.0; break;
          default: break;
        }
        if (spec.dtype == f32)
          t.data<float>()[i] = static_cast<float>(x);
        else
          t.data<double>()[i] = x;
        break;
      }
      case DType::I32: t.data<int32_t>()[i] = v - 128; break;
      case DType::I64: t.data<int64_t>()[i] = (v - 128) * (v % 3 == 0 ? int64_t{1} << 40 : 1); break;
      default: t.data<bool>()[i] = (v & 1) != 0; break;
    }
  }
  return t;
}

std::string describe(const std::vector<Tensor>& ts) {
  std::string s;
  for (const auto& t : ts) s += t.repr() + " " + t.to_string() + "\n";
  return s;
}

// The results of `exe` on `inputs`, or the message of the evoxc::Error it threw.
std::pair<std::vector<Tensor>, std::string> run_all(const Graph& g, const Tree<Tensor>& inputs) {
  try {
    return {build_graph(g).run(inputs).flatten(), ""};
  } catch (const InternalError& e) {
    fuzz::finding(std::string("InternalError while running: ") + e.what() + "\n" + g.to_string());
  } catch (const Error& e) {
    return {{}, e.what()};
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // EVOXC_FUZZ_VERBOSE=1 prints each generated program (or why it did not trace).
  static const bool verbose = std::getenv("EVOXC_FUZZ_VERBOSE") != nullptr;
  static const bool registered = [] {
    register_external_kernel("fuzz.copy", [](std::span<const ExternalBuffer> in, std::span<ExternalBuffer> out) {
      std::memcpy(out[0].data, in[0].data, static_cast<size_t>(in[0].numel()) * size_of(in[0].dtype));
    });
    return true;
  }();
  (void)registered;
  Choices c(data, size);
  // The signature: inputs of one base shape (optionally a symbolic leading batch "B").
  int n_inputs = 1 + c.pick(3);
  int rank = c.pick(4);
  bool symbolic = rank > 0 && c.flag();
  std::vector<DimExpr> dims;
  for (int d = 0; d < rank; ++d) dims.push_back(d == 0 && symbolic ? Dim("B") : DimExpr(1 + c.pick(4)));
  std::vector<TraceArg> args;
  for (int i = 0; i < n_inputs; ++i)
    args.push_back(arg_leaf(TensorSpec(Shape(dims), kInputDTypes[c.pick(std::size(kInputDTypes))])));
  int n_ops = 1 + c.pick(12), n_outputs = 1 + c.pick(3);

  Graph g;
  try {
    g = trace_dynamic(
        [&](const std::vector<TracedArg>& in) {
          std::vector<ST> pool;
          for (const auto& a : in) pool.push_back(std::get<ST>(a.leaf()));
          for (int k = 0; k < n_ops; ++k) emit_op(c, pool);
          std::vector<Tree<ST>> outs;
          for (int k = 0; k < n_outputs && k < static_cast<int>(pool.size()); ++k)
            outs.emplace_back(pool[pool.size() - 1 - k]);
          return Tree<ST>::tuple(std::move(outs));
        },
        args);
  } catch (const InternalError& e) {
    fuzz::finding(std::string("InternalError while tracing: ") + e.what());
  } catch (const Error& e) {
    // An op rejected its operands (a dtype or shape rule): not a valid program.
    if (verbose) std::fprintf(stderr, "graph_gen: not traced: %s\n", e.what());
    return 0;
  }
  if (verbose) std::fprintf(stderr, "graph_gen: traced\n%s\n", g.to_string().c_str());

  // The identities: printed text and JSON round trips.
  std::string text = g.to_string();
  Graph from_text, from_json;
  fuzz::must_succeed("parse(print(g))", [&] { from_text = Graph::parse(text); });
  fuzz::must_succeed("from_json(to_json(g))", [&] { from_json = Graph::from_json(g.to_json()); });
  if (from_text.to_string() != text) fuzz::finding("parse(print(g)) prints differently:\n" + text);
  if (from_json.to_string() != text) fuzz::finding("from_json(to_json(g)) prints differently:\n" + text);

  // Run all three on the same inputs.
  int64_t B = 1 + c.pick(3);
  std::vector<Tree<Tensor>> leaves;
  for (const auto& spec : g.input_specs()) leaves.emplace_back(make_input(c, spec, B));
  Tree<Tensor> inputs = Tree<Tensor>::tuple(std::move(leaves));
  auto [want, want_err] = run_all(g, inputs);
  for (const Graph* other : {&from_text, &from_json}) {
    auto [got, got_err] = run_all(*other, inputs);
    if (got_err != want_err)
      fuzz::finding("round trip changes the error: '" + want_err + "' vs '" + got_err + "'\n" + text);
    bool same = got.size() == want.size();
    for (size_t i = 0; same && i < got.size(); ++i) same = fuzz::same_bits(got[i], want[i]);
    if (!same)
      fuzz::finding("round trip changes results:\n" + text + "\nwant:\n" + describe(want) + "got:\n" + describe(got));
  }
  return 0;
}
