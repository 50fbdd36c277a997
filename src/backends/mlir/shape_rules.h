// Private to the mlir backend: emission helpers shared by the structure and layout rule families
// (rules_structure.cpp, rules_layout.cpp): `index` arithmetic, element reads and result-shaped linalg.generic ops.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "backends/mlir/emitter.h"
#include "evoxc/ops/op_def.h"

namespace evoxc::mlir_backend::shape_rules {

using Ints = std::vector<int64_t>;
using Names = std::vector<std::string>;

inline const TensorType& rtype(const Operation& op, size_t i = 0) { return op.result(i)->type(); }
inline const AttrMap& attrs(const Operation& op) { return op.attributes(); }

inline std::string join(const Names& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
  return s;
}

inline std::string dims_list(size_t n, size_t from = 0) {
  std::string s;
  for (size_t i = from; i < from + n; ++i) s += (i > from ? ", d" : "d") + std::to_string(i);
  return s;
}

inline bool static_zero(const DimExpr& d) { return d.is_const() && d.value() == 0; }

// ---------------------------------------------------------------------------------------------
// `index` arithmetic (extents, positions) and scalar helpers.

inline std::string iop(Emitter& e, const char* name, const std::string& a, const std::string& b) {
  return e.assign(std::string(name) + " " + a + ", " + b + " : index");
}
inline std::string icmp(Emitter& e, const char* pred, const std::string& a, const std::string& b) {
  return e.assign(std::string("arith.cmpi ") + pred + ", " + a + ", " + b + " : index");
}
inline std::string iselect(Emitter& e, const std::string& c, const std::string& a, const std::string& b) {
  return e.assign("arith.select " + c + ", " + a + ", " + b + " : index");
}
// Python's modulo by a positive n.
inline std::string ipmod(Emitter& e, const std::string& a, const std::string& n) {
  return iop(e, "arith.remsi", iop(e, "arith.addi", iop(e, "arith.remsi", a, n), n), n);
}
inline std::string iclamp(Emitter& e, const std::string& v, const std::string& lo, const std::string& hi) {
  return iop(e, "arith.minsi", iop(e, "arith.maxsi", v, lo), hi);
}
inline std::string to_index(Emitter& e, const Scalar& i64) {
  return e.assign("arith.index_cast " + i64.name + " : i64 to index");
}
inline Scalar from_index(Emitter& e, const std::string& i) {
  return {e.assign("arith.index_cast " + i + " : index to i64"), DType::I64};
}

inline Scalar zero_of(Body& b, DType t) {
  if (t == DType::Bool) return b.b(false);
  return is_float(t) ? b.f(0.0, t) : b.i(0, t);
}

// An element of an integer index tensor as int64, as evoxc reads indices: unsigned 64-bit values above INT64_MAX
// count as INT64_MAX (they clamp to the end / are out of range) instead of wrapping negative.
inline Scalar index_i64(Body& b, const Scalar& v) {
  Scalar w = b.convert(v, DType::I64);
  if (v.dtype != DType::U64) return w;
  Scalar wrapped = b.cmpi("slt", w, b.i(0, DType::I64));
  return b.select(wrapped, b.i(std::numeric_limits<int64_t>::max(), DType::I64), w);
}

inline Scalar extract(Emitter& e, const Val& x, const Names& idx) {
  return {e.assign("tensor.extract " + x.name + "[" + join(idx) + "] : " + tensor_type(x.type)), x.type.dtype};
}

// `cond ? then() : otherwise()` as scf.if, so `then` (a read that may be out of bounds) runs only when cond holds.
inline Scalar guarded(Emitter& e, const std::string& cond, DType t, const std::function<Scalar()>& then,
                      const std::function<Scalar()>& otherwise) {
  std::string r = e.fresh(), et = element_type(t);
  e.line(r + " = scf.if " + cond + " -> (" + et + ") {");
  e.indent([&] { e.line("scf.yield " + then().name + " : " + et); });
  e.line("} else {");
  e.indent([&] { e.line("scf.yield " + otherwise().name + " : " + et); });
  e.line("}");
  return {r, t};
}

// A linalg.generic over the result type's shape without inputs: `f` gets the result position (linalg.index per
// axis) and gives the element.
inline Val generate(Emitter& e, const TensorType& rt, const std::function<Scalar(Body&, const Names&)>& f) {
  size_t R = rt.shape.rank();
  Val init = e.empty(rt);
  std::vector<std::string> its(R, "parallel");
  return e.generic({}, {}, init, dims_list(R), its, [&](Body& b, std::span<const Scalar>) {
    Names j;
    for (size_t d = 0; d < R; ++d) j.push_back(b.index(static_cast<int>(d)));
    return f(b, j);
  });
}

// The extent of every axis of x as an `index` value (emitted where called).
inline Names extents(Emitter& e, const Shape& s) {
  Names v;
  for (const DimExpr& d : s) v.push_back(e.extent(d));
  return v;
}

}  // namespace evoxc::mlir_backend::shape_rules
