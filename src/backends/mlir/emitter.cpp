// The mlir backend's MLIR writer: types, linalg.generic with broadcasting maps, scalar bodies, constants, extents,
// block lowering.
#include "backends/mlir/emitter.h"

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <type_traits>
#include <variant>

#include "backends/common/mlir_literals.h"
#include "evoxc/core/half.h"
#include "evoxc/ops/op_def.h"
#include "evoxc/pipeline/pipeline.h"

namespace evoxc::mlir_backend {

std::string element_type(DType t) {
  switch (t) {
    case DType::Bool: return "i1";
    case DType::I8:
    case DType::U8: return "i8";
    case DType::I16:
    case DType::U16: return "i16";
    case DType::I32:
    case DType::U32: return "i32";
    case DType::I64:
    case DType::U64: return "i64";
    case DType::F16: return "f16";
    case DType::BF16: return "bf16";
    case DType::F32: return "f32";
    case DType::F64: return "f64";
  }
  throw InternalError("mlir: unknown dtype");
}

std::string tensor_type(const TensorType& t) { return mlir_literals::tensor_type(t.shape, element_type(t.dtype)); }

namespace {

// A scalar's literal: floats as their bit pattern in hex (exact), integers signed in their width.
std::string literal_of(const Tensor& one) {
  DType t = one.dtype();
  if (t == DType::Bool) return one.data<bool>()[0] ? "true" : "false";
  uint64_t bits = 0;
  std::memcpy(&bits, one.raw_data(), size_of(t));
  if (is_float(t)) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%llX", static_cast<unsigned long long>(bits));
    return buf;
  }
  int w = bit_width(t);
  auto v = static_cast<int64_t>(w == 64 ? bits : (bits << (64 - w)));
  if (w < 64) v >>= (64 - w);  // sign-extend the width's bits
  return std::to_string(v);
}

// "1.0 : f32"-style operand of arith.constant; bool literals carry their type (i1) themselves.
std::string typed_literal(const Tensor& one) {
  if (one.dtype() == DType::Bool) return literal_of(one);
  return literal_of(one) + " : " + element_type(one.dtype());
}

}  // namespace

std::string affine_map(size_t loops, const std::string& results) {
  std::string s = "affine_map<(";
  for (size_t i = 0; i < loops; ++i) s += (i ? ", d" : "d") + std::to_string(i);
  return s + ") -> (" + results + ")>";
}

// ---- Body ----

std::string Body::fresh() { return e_.fresh("%s"); }
void Body::line(const std::string& text) { e_.line(text); }

Scalar Body::bin(const std::string& name, const Scalar& a, const Scalar& b, const std::string& flags) {
  std::string r = fresh();
  line(r + " = " + name + " " + a.name + ", " + b.name + (flags.empty() ? "" : " " + flags) + " : " +
       element_type(a.dtype));
  return {r, a.dtype};
}
Scalar Body::un(const std::string& name, const Scalar& a, const std::string& flags) {
  std::string r = fresh();
  line(r + " = " + name + " " + a.name + (flags.empty() ? "" : " " + flags) + " : " + element_type(a.dtype));
  return {r, a.dtype};
}
Scalar Body::cast(const std::string& name, const Scalar& a, DType to) {
  std::string r = fresh();
  line(r + " = " + name + " " + a.name + " : " + element_type(a.dtype) + " to " + element_type(to));
  return {r, to};
}
Scalar Body::cmpf(const std::string& pred, const Scalar& a, const Scalar& b) {
  std::string r = fresh();
  line(r + " = arith.cmpf " + pred + ", " + a.name + ", " + b.name + " : " + element_type(a.dtype));
  return {r, DType::Bool};
}
Scalar Body::cmpi(const std::string& pred, const Scalar& a, const Scalar& b) {
  std::string r = fresh();
  line(r + " = arith.cmpi " + pred + ", " + a.name + ", " + b.name + " : " + element_type(a.dtype));
  return {r, DType::Bool};
}
Scalar Body::select(const Scalar& c, const Scalar& a, const Scalar& b) {
  std::string r = fresh();
  line(r + " = arith.select " + c.name + ", " + a.name + ", " + b.name + " : " + element_type(a.dtype));
  return {r, a.dtype};
}
Scalar Body::f(double v, DType t) {
  std::string r = fresh();
  line(r + " = arith.constant " + typed_literal(mlir_literals::full_scalar(Attribute(v), t)));
  return {r, t};
}
Scalar Body::i(int64_t v, DType t) {
  std::string r = fresh();
  line(r + " = arith.constant " + typed_literal(mlir_literals::full_scalar(Attribute(v), t)));
  return {r, t};
}
Scalar Body::b(bool v) {
  std::string r = fresh();
  line(r + " = arith.constant " + std::string(v ? "true" : "false"));
  return {r, DType::Bool};
}
Scalar Body::splat(const Attribute& value, DType t) {
  // (`arith.constant true : i1` does not parse: a bool is written bare, value != 0 with NaN -> true.)
  if (t == DType::Bool) {
    bool v = std::visit(
        [](const auto& x) {
          using X = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<X, bool>)
            return x;
          else if constexpr (std::is_same_v<X, int64_t> || std::is_same_v<X, double>)
            return x != 0;
          else
            return false;
        },
        value);
    return b(v);
  }
  std::string r = fresh();
  line(r + " = arith.constant " + typed_literal(mlir_literals::full_scalar(value, t)));
  return {r, t};
}
std::string Body::index(int d) {
  std::string r = fresh();
  line(r + " = linalg.index " + std::to_string(d) + " : index");
  return r;
}

Scalar Body::widen(const Scalar& a) {
  if (a.dtype == DType::F16 || a.dtype == DType::BF16) return cast("arith.extf", a, DType::F32);
  return a;
}
Scalar Body::narrow(const Scalar& a, DType to) {
  if (a.dtype == to) return a;
  if (to == DType::BF16 && a.dtype == DType::F32) {
    // Rounded in integer arithmetic, to nearest even: LLVM's fptrunc to bfloat uses the CPU's
    // conversion instruction where there is one (AVX512-BF16), which flushes subnormals to zero.
    Scalar bits = cast("arith.bitcast", a, DType::U32);
    Scalar sixteen = i(16, DType::U32);
    Scalar lsb = bin("arith.andi", bin("arith.shrui", bits, sixteen), i(1, DType::U32));
    Scalar rounded =
        bin("arith.shrui", bin("arith.addi", bin("arith.addi", bits, i(0x7FFF, DType::U32)), lsb), sixteen);
    Scalar quiet = bin("arith.ori", bin("arith.shrui", bits, sixteen), i(0x40, DType::U32));
    Scalar r = select(cmpf("uno", a, a), quiet, rounded);
    return cast("arith.bitcast", cast("arith.trunci", r, DType::U16), DType::BF16);
  }
  return cast("arith.truncf", a, to);
}

namespace {

// Helpers of Body::convert: float64 -> bfloat16 and wide ints -> bfloat16 would go through float32 in LLVM and
// round twice. Each follows the interpreter's scalar code (vecmath_scalar.h), then rounds to bfloat16 from
// float32 as Body::narrow does.

// float64 -> float32 rounding to odd (narrow_to_float_odd): an inexact result with an even last bit moves
// one ULP toward x, so that a rounding to a 16-bit float after it is the single rounding of x.
Scalar f64_to_f32_odd(Body& b, const Scalar& x) {
  Scalar r = b.cast("arith.truncf", x, DType::F32);
  Scalar bits = b.cast("arith.bitcast", r, DType::U32);
  Scalar one = b.i(1, DType::U32);
  Scalar back = b.cast("arith.extf", r, DType::F64);
  Scalar inf = b.f(INFINITY, DType::F64);
  // "one" is false for NaN; an infinite r (overflow) stays
  Scalar inexact = b.bin("arith.andi", b.cmpf("one", back, x), b.cmpf("one", b.un("math.absf", back), inf));
  Scalar even = b.cmpi("eq", b.bin("arith.andi", bits, one), b.i(0, DType::U32));
  Scalar toward = b.select(b.cmpf("olt", b.un("math.absf", back), b.un("math.absf", x)), b.bin("arith.addi", bits, one),
                           b.bin("arith.subi", bits, one));
  Scalar adjusted = b.select(b.bin("arith.andi", inexact, even), toward, bits);
  return b.cast("arith.bitcast", adjusted, DType::F32);
}

// A 32- or 64-bit integer -> bfloat16 with one rounding (int_to_half): the magnitude rounded to 8 significant
// bits, half to even, in integer arithmetic; the float steps after it are exact.
Scalar wide_int_to_bf16(Body& b, const Scalar& x) {
  DType t = x.dtype;
  int width = bit_width(t);
  Scalar zero = b.i(0, t), one = b.i(1, t);
  Scalar negative = is_signed_int(t) ? b.cmpi("slt", x, zero) : b.b(false);
  Scalar m = is_signed_int(t) ? b.select(negative, b.bin("arith.subi", zero, x), x) : x;  // |INT_MIN| wraps right
  Scalar bits_used = b.bin("arith.subi", b.i(width, t), b.un("math.ctlz", m));
  Scalar eight = b.i(8, t);
  Scalar shift = b.select(b.cmpi("ugt", bits_used, eight), b.bin("arith.subi", bits_used, eight), zero);  // < width
  Scalar unit = b.bin("arith.shli", one, shift);
  Scalar low = b.bin("arith.andi", m, b.bin("arith.subi", unit, one));
  Scalar half = b.bin("arith.shrui", unit, one);  // 0 when nothing is shifted out
  Scalar q = b.bin("arith.shrui", m, shift);
  Scalar odd = b.cmpi("ne", b.bin("arith.andi", q, one), zero);
  Scalar tie_up = b.bin("arith.andi", b.cmpi("eq", low, half), odd);
  Scalar up = b.bin("arith.andi", b.cmpi("ne", half, zero), b.bin("arith.ori", b.cmpi("ugt", low, half), tie_up));
  q = b.select(up, b.bin("arith.addi", q, one), q);  // at most 2^8: exact in float32
  // 2^shift as float32 bits: (shift + 127) << 23
  Scalar shift32 = width == 32 ? Scalar{shift.name, DType::U32} : b.cast("arith.trunci", shift, DType::U32);
  Scalar exponent = b.bin("arith.shli", b.bin("arith.addi", shift32, b.i(127, DType::U32)), b.i(23, DType::U32));
  Scalar r = b.bin("arith.mulf", b.cast("arith.uitofp", q, DType::F32), b.cast("arith.bitcast", exponent, DType::F32));
  r = b.select(negative, b.un("arith.negf", r), r);
  return b.narrow(r, DType::BF16);
}

}  // namespace

Scalar Body::convert(const Scalar& a, DType to) {
  DType from = a.dtype;
  if (from == to) return a;
  if (to == DType::Bool) {
    // anything -> bool is x != 0 (NaN -> true, -0 -> false)
    return is_float(from) ? cmpf("une", a, f(0.0, from)) : cmpi("ne", a, i(0, from));
  }
  if (to == DType::BF16) {
    if (from == DType::F64) return narrow(f64_to_f32_odd(*this, a), to);
    if (is_int(from) && bit_width(from) >= 32) return wide_int_to_bf16(*this, a);
    // everything else is exact in float32 (16-bit ints, float16, bool), so one rounding from there
    return narrow(convert(a, DType::F32), to);
  }
  if (from == DType::Bool) {
    // bool -> number: 0 or 1
    return is_float(to) ? cast("arith.uitofp", a, to) : cast("arith.extui", a, to);
  }
  if (is_float(from) && is_float(to)) {
    if (from == DType::BF16 && to == DType::F16) return cast("arith.truncf", cast("arith.extf", a, DType::F32), to);
    if (bit_width(to) > bit_width(from)) return cast("arith.extf", a, to);
    // one rounding: LLVM's float64 -> float16 is a direct single rounding
    return cast("arith.truncf", a, to);
  }
  if (is_int(from) && is_int(to)) {
    int wf = bit_width(from), wt = bit_width(to);
    if (wt == wf) return {a.name, to};  // signless: the bits stay
    if (wt < wf) return cast("arith.trunci", a, to);
    return cast(is_signed_int(from) ? "arith.extsi" : "arith.extui", a, to);
  }
  // int -> float16 through float32 rounds once too: the integers float32 rounds (above 2^24) are far past
  // float16's range either way
  if (is_int(from)) return cast(is_signed_int(from) ? "arith.sitofp" : "arith.uitofp", a, to);
  // float -> int: truncation toward zero, saturating, NaN -> 0 (docs/semantics.md)
  Scalar x = widen(a);
  DType ft = x.dtype;
  double lo = is_signed_int(to) ? -std::ldexp(1.0, bit_width(to) - 1) : 0.0;
  double hi = std::ldexp(1.0, bit_width(to) - (is_signed_int(to) ? 1 : 0));
  Scalar klo = f(lo, ft), khi = f(hi, ft);
  Scalar inside = bin("arith.andi", cmpf("ogt", x, klo), cmpf("olt", x, khi));
  Scalar r = cast(is_signed_int(to) ? "arith.fptosi" : "arith.fptoui", select(inside, x, f(0.0, ft)), to);
  int64_t max_bits = is_signed_int(to) ? (std::numeric_limits<int64_t>::max() >> (64 - bit_width(to))) : -1;
  int64_t min_bits = is_signed_int(to) ? (std::numeric_limits<int64_t>::min() >> (64 - bit_width(to))) : 0;
  r = select(cmpf("oge", x, khi), i(max_bits, to), r);
  return select(cmpf("ole", x, klo), i(min_bits, to), r);
}

// ---- Emitter ----

std::string Emitter::fresh(const char* prefix) { return prefix + std::to_string(next_++); }

void Emitter::line(const std::string& text) {
  out_->append(static_cast<size_t>(depth_) * 2, ' ');
  *out_ += text;
  *out_ += '\n';
}

std::string Emitter::assign(const std::string& text) {
  std::string r = fresh();
  line(r + " = " + text);
  return r;
}

void Emitter::indent(const std::function<void()>& body) {
  ++depth_;
  body();
  --depth_;
}

std::string Emitter::index_constant(int64_t v) { return assign("arith.constant " + std::to_string(v) + " : index"); }

std::string Emitter::extent(const DimExpr& d) {
  if (auto c = d.as_const()) return index_constant(*c);
  switch (d.kind()) {
    case DimExpr::Kind::Sym: {
      auto it = symbols_.find(d.name());
      if (it == symbols_.end()) throw BackendError("mlir: the extent " + d.name() + " is not an extent of any input");
      std::string axis = index_constant(static_cast<int64_t>(it->second.axis));
      return assign("tensor.dim " + it->second.input.name + ", " + axis + " : " + tensor_type(it->second.input.type));
    }
    case DimExpr::Kind::Add: return assign("arith.addi " + extent(d.lhs()) + ", " + extent(d.rhs()) + " : index");
    case DimExpr::Kind::Sub: return assign("arith.subi " + extent(d.lhs()) + ", " + extent(d.rhs()) + " : index");
    case DimExpr::Kind::Mul: return assign("arith.muli " + extent(d.lhs()) + ", " + extent(d.rhs()) + " : index");
    case DimExpr::Kind::Min: return assign("arith.minsi " + extent(d.lhs()) + ", " + extent(d.rhs()) + " : index");
    case DimExpr::Kind::Max: return assign("arith.maxsi " + extent(d.lhs()) + ", " + extent(d.rhs()) + " : index");
    // extents are non-negative and divisors positive: truncating division is floor division
    case DimExpr::Kind::FloorDiv: return assign("arith.divsi " + extent(d.lhs()) + ", " + extent(d.rhs()) + " : index");
    case DimExpr::Kind::Mod: return assign("arith.remsi " + extent(d.lhs()) + ", " + extent(d.rhs()) + " : index");
    case DimExpr::Kind::Const: break;
  }
  throw InternalError("mlir: unknown extent expression");
}

std::string Emitter::size(const DimExpr& d) {
  if (auto c = d.as_const()) return std::to_string(*c);
  return extent(d);
}

Val Emitter::reshape(const Val& x, const Shape& to) {
  if (x.type.shape == to) return x;
  TensorType t(x.type.dtype, to);
  std::string sizes;
  for (const DimExpr& d : to) sizes += (sizes.empty() ? "" : ", ") + extent(d);
  std::string shape =
      to.rank() == 0 ? assign("tensor.empty() : tensor<0xindex>")
                     : assign("tensor.from_elements " + sizes + " : tensor<" + std::to_string(to.rank()) + "xindex>");
  return {assign("tensor.reshape " + x.name + "(" + shape + ") : (" + tensor_type(x.type) + ", tensor<" +
                 std::to_string(to.rank()) + "xindex>) -> " + tensor_type(t)),
          t};
}

std::string Emitter::read_buffer(const Val& v, const std::string& dyn_type, const std::string& view_type, bool copy) {
  // The copy is the read One-Shot Bufferize sees (it does not count a to_buffer as one).
  std::string c = copy ? assign("bufferization.alloc_tensor() copy(" + v.name + ") : " + tensor_type(v.type)) : v.name;
  std::string d = assign("tensor.cast " + c + " : " + tensor_type(v.type) + " to " + dyn_type);
  return assign("bufferization.to_buffer " + d + " read_only : " + dyn_type + " to " + view_type);
}

Val Emitter::empty(const TensorType& t) {
  std::string dyn;
  for (const DimExpr& d : t.shape)
    if (!d.is_const()) dyn += (dyn.empty() ? "" : ", ") + extent(d);
  return {assign("tensor.empty(" + dyn + ") : " + tensor_type(t)), t};
}

Val Emitter::fill(const Scalar& v, const TensorType& t) {
  Val e = empty(t);
  return {assign("linalg.fill ins(" + v.name + " : " + element_type(v.dtype) + ") outs(" + e.name + " : " +
                 tensor_type(t) + ") -> " + tensor_type(t)),
          t};
}

Val Emitter::constant(const Tensor& t) {
  TensorType ty(t.dtype(), Shape::from_ints(t.shape()));
  return {assign("arith.constant " + mlir_literals::dense(t) + " : " + tensor_type(ty)), ty};
}

Val Emitter::splat(const Attribute& value, DType t, const Shape& shape) {
  Body top(*this);
  return fill(top.splat(value, t), TensorType(t, shape));
}

namespace {

// The expressions of an indexing map's result list ("d0, 0, d2" -> {"d0", "0", "d2"}).
std::vector<std::string> map_exprs(const std::string& m) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < m.size()) {
    size_t comma = m.find(", ", at);
    out.push_back(m.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    if (comma == std::string::npos) break;
    at = comma + 2;
  }
  return out;
}

// `inner` (an operand's broadcast into a value: d<k> are the value's dims) read through `outer` (how a loop reads
// the value: one expression of the loop's dims per dim of the value).
std::string compose(const std::string& inner, const std::string& outer) {
  std::vector<std::string> o = map_exprs(outer);
  std::string out;
  for (const std::string& e : map_exprs(inner)) {
    std::string r = e;
    if (e.size() > 1 && e[0] == 'd') r = o.at(static_cast<size_t>(std::stoul(e.substr(1))));
    out += (out.empty() ? "" : ", ") + r;
  }
  return out;
}

}  // namespace

Val Emitter::generic(std::span<const Val> inputs, std::span<const std::string> input_maps, const Val& init,
                     const std::string& output_map, std::span<const std::string> iterators,
                     const std::function<Scalar(Body&, std::span<const Scalar>)>& f) {
  size_t loops = iterators.size();
  // An input fed by a fused loop (lower_block's placeholder) is that loop's own inputs, read through the composed
  // maps, and its members computed at the top of the body.
  struct Fed {
    const std::vector<const Operation*>* members = nullptr;
    std::vector<const Value*> reads;
  };
  std::vector<Fed> fed(inputs.size());
  std::vector<size_t> first(inputs.size());  // each input's first block argument
  std::vector<Val> ins;
  std::vector<std::string> in_maps;
  for (size_t i = 0; i < inputs.size(); ++i) {
    first[i] = ins.size();
    auto it = fed_.find(inputs[i].name);
    if (it == fed_.end()) {
      ins.push_back(inputs[i]);
      in_maps.push_back(input_maps[i]);
      continue;
    }
    fed[i] = {&it->second, fused_inputs(it->second)};
    for (const Value* v : fed[i].reads) {
      ins.push_back(value_of(v));
      in_maps.push_back(compose(broadcast_map(ins.back().type, inputs[i].type), input_maps[i]));
    }
  }
  std::string maps, its, names, in_types;
  for (size_t i = 0; i < ins.size(); ++i) {
    maps += affine_map(loops, in_maps[i]) + ", ";
    names += (i ? ", " : "") + ins[i].name;
    in_types += (i ? ", " : "") + tensor_type(ins[i].type);
  }
  maps += affine_map(loops, output_map);
  for (size_t i = 0; i < loops; ++i) its += (i ? ", \"" : "\"") + iterators[i] + "\"";
  std::string r = fresh();
  std::string head = r + " = linalg.generic {indexing_maps = [" + maps + "], iterator_types = [" + its + "]}";
  if (!ins.empty()) head += " ins(" + names + " : " + in_types + ")";
  head += " outs(" + init.name + " : " + tensor_type(init.type) + ") {";
  line(head);
  std::vector<Scalar> args;
  std::string block = "^bb0(";
  for (size_t i = 0; i <= ins.size(); ++i) {
    DType t = i < ins.size() ? ins[i].type.dtype : init.type.dtype;
    args.push_back({fresh("%a"), t});
    block += (i ? ", " : "") + args.back().name + ": " + element_type(t);
  }
  line(block + "):");
  indent([&] {
    Body b(*this);
    std::vector<Scalar> elements;
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!fed[i].members) {
        elements.push_back(args[first[i]]);
        continue;
      }
      PtrMap<const Value*, Scalar> external;
      for (size_t k = 0; k < fed[i].reads.size(); ++k) external[fed[i].reads[k]] = args[first[i] + k];
      elements.push_back(fused_body(*fed[i].members, external));
    }
    elements.push_back(args.back());
    Scalar y = f(b, elements);
    if (y.dtype != init.type.dtype && element_type(y.dtype) != element_type(init.type.dtype))
      throw InternalError("mlir: a body yields " + element_type(y.dtype) + " for " + tensor_type(init.type));
    line("linalg.yield " + y.name + " : " + element_type(init.type.dtype));
  });
  line("} -> " + tensor_type(init.type));
  return {r, init.type};
}

std::string Emitter::broadcast_map(const TensorType& operand, const TensorType& result) {
  size_t R = result.shape.rank(), r = operand.shape.rank();
  if (r > R) throw InternalError("mlir: an elementwise operand of higher rank than its result");
  std::string m;
  for (size_t i = 0; i < r; ++i) {
    size_t dim = R - r + i;
    const DimExpr& a = operand.shape[i];
    const DimExpr& b = result.shape[dim];
    std::string e;
    if (a == b)
      e = "d" + std::to_string(dim);
    else if (a.as_const() == std::optional<int64_t>(1))
      e = "0";
    else
      throw InternalError("mlir: operand extent does not broadcast to the result's");
    m += (i ? ", " : "") + e;
  }
  return m;
}

Val Emitter::map(std::span<const Val> operands, const TensorType& result,
                 const std::function<Scalar(Body&, std::span<const Scalar>)>& f) {
  size_t R = result.shape.rank();
  std::vector<std::string> maps;
  maps.reserve(operands.size());
  for (const Val& v : operands) maps.push_back(broadcast_map(v.type, result));
  std::vector<std::string> its(R, "parallel");
  std::string out;
  for (size_t i = 0; i < R; ++i) out += (i ? ", d" : "d") + std::to_string(i);
  Val init = empty(result);
  return generic(operands, maps, init, out, its,
                 [&](Body& b, std::span<const Scalar> args) { return f(b, args.subspan(0, operands.size())); });
}

const Val& Emitter::value_of(const Value* v) const {
  auto it = env_.find(v);
  if (it == env_.end()) throw InternalError("mlir: a value is used before it is defined");
  return it->second;
}

void Emitter::bind_symbol(const std::string& name, const Val& input, size_t axis) {
  symbols_.emplace(name, SymbolSource{input, axis});
}

std::vector<Val> Emitter::lower_block(const Block& b, std::span<const Val> args) {
  for (size_t i = 0; i < b.arguments().size(); ++i) env_[b.argument(i)] = args[i];
  const Table& table = rules();
  const FusionPlan plan = plan_fusion(b);
  const auto& ops = b.operations();
  for (size_t k = 0; k < ops.size(); ++k) {
    const Operation& op = *ops[k];
    if (plan.role[k] == FusionPlan::Role::Member) continue;  // written inside the loops that read it
    if (plan.role[k] == FusionPlan::Role::Root && plan.members[k].size() > 1) {
      env_[op.result(0)] = lower_fused(plan.members[k]);
      continue;
    }
    if (plan.role[k] == FusionPlan::Role::Fed) {  // computed where its reader's loop reads it
      Val placeholder{fresh("%fed"), op.result(0)->type()};
      fed_[placeholder.name] = plan.members[k];
      env_[op.result(0)] = placeholder;
      continue;
    }
    std::vector<Val> operands;
    for (const Value* v : op.operands()) operands.push_back(value_of(v));
    if (op.is_terminator()) return operands;
    const Operation* saved = current_;
    current_ = &op;
    std::vector<Val> results = table.get(op)(*this, op, operands);
    current_ = saved;
    if (results.size() != op.num_results())
      throw InternalError("mlir: the rule of evoxc." + op.name() + " gave the wrong number of results");
    for (size_t i = 0; i < results.size(); ++i) {
      if (results[i].type != op.result(i)->type())
        throw InternalError("mlir: the rule of evoxc." + op.name() + " gave a " + tensor_type(results[i].type) +
                            " for a " + tensor_type(op.result(i)->type()));
      env_[op.result(i)] = results[i];
    }
  }
  throw InternalError("mlir: a block without a terminator");
}

void Emitter::fail(const Operation& op, const std::string& why) {
  throw BackendError("mlir: evoxc." + op.name() + " at " + op.location().to_string() + ": " + why);
}

void set_elementwise(Tables& t, const char* name, ScalarRule rule, KeepsTensor keeps) {
  auto fn = rule.fn;
  t.scalar.set(name, std::move(rule));
  t.ops.set(name,
            [fn = std::move(fn), keeps](Emitter& e, const Operation& op, std::span<const Val> in) -> std::vector<Val> {
              const TensorType& r = op.result(0)->type();
              if (keeps && keeps(op, in[0].type.dtype, r.dtype)) return {{in[0].name, r}};
              return {e.map(in, r, [&](Body& b, std::span<const Scalar> x) { return fn(b, op, x); })};
            });
}

const Tables& tables() {
  static const Tables* t = [] {
    auto* made = new Tables;
    add_elementwise_rules(*made);
    add_binary_rules(*made);
    add_reduce_linalg_rules(*made);
    add_structure_rules(*made);
    add_layout_rules(*made);
    add_control_rules(made->ops);
    add_extension_rules(made->ops);
    return made;
  }();
  return *t;
}

}  // namespace evoxc::mlir_backend
