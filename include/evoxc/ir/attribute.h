// Attributes: the static data an operation carries (axes, shapes, dtypes, constant tensors, ...).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "evoxc/core/dtype.h"
#include "evoxc/core/shape.h"
#include "evoxc/core/tensor.h"

namespace evoxc {

// The kinds an attribute can have. Printed forms (docs/ir.md):
//   None: none   Bool: true/false   Int: 3   Float: 0.5, 1.0, nan, inf, -inf (always has '.', 'e' or is nan/inf)
//   String: "text"   Ints: [1, 2] (empty: [])   Floats: [1.0, 2.5] (empty: f64[])
//   DType: f32   Shape: shape<4xB> (rank 0: shape<>)   Tensor: dense<tensor<2xf32>, "0x0000803F0000803F">
using Attribute = std::variant<std::monostate, bool, int64_t, double, std::string, std::vector<int64_t>,
                               std::vector<double>, DType, Shape, Tensor>;

enum class AttrKind : uint8_t { None, Bool, Int, Float, String, Ints, Floats, DType, Shape, Tensor };

inline AttrKind attr_kind(const Attribute& a) { return static_cast<AttrKind>(a.index()); }
const char* attr_kind_name(AttrKind k);

// Sorted by name, so printing and hashing are deterministic.
using AttrMap = std::map<std::string, Attribute>;

// Structural equality (tensors compare by dtype, shape and bytes; floats by bits, so nan == nan).
bool attr_equal(const Attribute& a, const Attribute& b);
// A hash consistent with attr_equal: equal attributes hash equally (floats by bits; tensors by
// dtype, shape and up to their first 64 bytes), so ops that differ only in attribute values land
// in different buckets of a CSE or dedup table.
size_t attr_hash(const Attribute& a);

// Typed access; TypeError naming `op` and the attribute when missing or of another kind.
int64_t attr_int(const AttrMap& m, const std::string& name, const std::string& op);
double attr_float(const AttrMap& m, const std::string& name, const std::string& op);
bool attr_bool(const AttrMap& m, const std::string& name, const std::string& op);
const std::string& attr_string(const AttrMap& m, const std::string& name, const std::string& op);
const std::vector<int64_t>& attr_ints(const AttrMap& m, const std::string& name, const std::string& op);
DType attr_dtype(const AttrMap& m, const std::string& name, const std::string& op);
const Shape& attr_shape(const AttrMap& m, const std::string& name, const std::string& op);
const Tensor& attr_tensor(const AttrMap& m, const std::string& name, const std::string& op);

}  // namespace evoxc
