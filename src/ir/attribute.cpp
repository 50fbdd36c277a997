// Attribute kinds, typed accessors and structural equality.
#include "evoxc/ir/attribute.h"

#include <bit>
#include <cstring>

#include "evoxc/core/error.h"

namespace evoxc {

const char* attr_kind_name(AttrKind k) {
  switch (k) {
    case AttrKind::None: return "none";
    case AttrKind::Bool: return "bool";
    case AttrKind::Int: return "int";
    case AttrKind::Float: return "float";
    case AttrKind::String: return "string";
    case AttrKind::Ints: return "int list";
    case AttrKind::Floats: return "float list";
    case AttrKind::DType: return "dtype";
    case AttrKind::Shape: return "shape";
    case AttrKind::Tensor: return "tensor";
  }
  return "?";
}

namespace {
size_t hash_mix(size_t h, size_t v) { return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)); }
}  // namespace

size_t attr_hash(const Attribute& a) {
  return std::visit(
             [](const auto& v) -> size_t {
               using T = std::decay_t<decltype(v)>;
               if constexpr (std::is_same_v<T, std::monostate>) {
                 return 0;
               } else if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, int64_t>) {
                 return std::hash<int64_t>()(static_cast<int64_t>(v));
               } else if constexpr (std::is_same_v<T, double>) {
                 return std::hash<uint64_t>()(std::bit_cast<uint64_t>(v));
               } else if constexpr (std::is_same_v<T, std::string>) {
                 return std::hash<std::string>()(v);
               } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
                 size_t h = v.size();
                 for (int64_t x : v) h = hash_mix(h, static_cast<size_t>(x));
                 return h;
               } else if constexpr (std::is_same_v<T, std::vector<double>>) {
                 size_t h = v.size();
                 for (double x : v) h = hash_mix(h, std::bit_cast<uint64_t>(x));
                 return h;
               } else if constexpr (std::is_same_v<T, DType>) {
                 return static_cast<size_t>(v);
               } else if constexpr (std::is_same_v<T, Shape>) {
                 size_t h = v.rank();
                 for (const DimExpr& d : v) h = hash_mix(h, d.hash());
                 return h;
               } else {
                 size_t h = hash_mix(static_cast<size_t>(v.dtype()), v.shape().size());
                 for (int64_t e : v.shape()) h = hash_mix(h, static_cast<size_t>(e));
                 if (v.defined() && v.device().kind == Device::Kind::Cpu) {
                   const auto* p = static_cast<const unsigned char*>(v.raw_data());
                   size_t n = std::min<size_t>(v.nbytes(), 64);
                   for (size_t i = 0; i < n; ++i) h = hash_mix(h, p[i]);
                 }
                 return h;
               }
             },
             a) ^
         (a.index() * 0x9e3779b97f4a7c15ULL);
}

bool attr_equal(const Attribute& a, const Attribute& b) {
  if (a.index() != b.index()) return false;
  if (const auto* x = std::get_if<double>(&a))
    return std::bit_cast<uint64_t>(*x) == std::bit_cast<uint64_t>(std::get<double>(b));
  if (const auto* x = std::get_if<std::vector<double>>(&a)) {
    const auto& y = std::get<std::vector<double>>(b);
    if (x->size() != y.size()) return false;
    for (size_t i = 0; i < x->size(); ++i)
      if (std::bit_cast<uint64_t>((*x)[i]) != std::bit_cast<uint64_t>(y[i])) return false;
    return true;
  }
  if (const auto* x = std::get_if<Tensor>(&a)) {
    const auto& y = std::get<Tensor>(b);
    if (x->dtype() != y.dtype() || x->shape() != y.shape()) return false;
    return x->nbytes() == 0 || std::memcmp(x->raw_data(), y.raw_data(), x->nbytes()) == 0;
  }
  return std::visit(
      [&](const auto& x) -> bool {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, Tensor> || std::is_same_v<T, double> ||
                      std::is_same_v<T, std::vector<double>>) {
          return false;  // handled above
        } else {
          return x == std::get<T>(b);
        }
      },
      a);
}

namespace {
template <typename T>
const T& get_typed(const AttrMap& m, const std::string& name, const std::string& op, AttrKind want) {
  auto it = m.find(name);
  if (it == m.end()) throw TypeError("op '" + op + "': missing attribute '" + name + "'");
  const T* v = std::get_if<T>(&it->second);
  if (!v)
    throw TypeError("op '" + op + "': attribute '" + name + "' must be a " + attr_kind_name(want) + ", got a " +
                    attr_kind_name(attr_kind(it->second)));
  return *v;
}
}  // namespace

int64_t attr_int(const AttrMap& m, const std::string& name, const std::string& op) {
  return get_typed<int64_t>(m, name, op, AttrKind::Int);
}
double attr_float(const AttrMap& m, const std::string& name, const std::string& op) {
  auto it = m.find(name);
  if (it != m.end())
    if (const auto* i = std::get_if<int64_t>(&it->second)) return static_cast<double>(*i);
  return get_typed<double>(m, name, op, AttrKind::Float);
}
bool attr_bool(const AttrMap& m, const std::string& name, const std::string& op) {
  return get_typed<bool>(m, name, op, AttrKind::Bool);
}
const std::string& attr_string(const AttrMap& m, const std::string& name, const std::string& op) {
  return get_typed<std::string>(m, name, op, AttrKind::String);
}
const std::vector<int64_t>& attr_ints(const AttrMap& m, const std::string& name, const std::string& op) {
  return get_typed<std::vector<int64_t>>(m, name, op, AttrKind::Ints);
}
DType attr_dtype(const AttrMap& m, const std::string& name, const std::string& op) {
  return get_typed<DType>(m, name, op, AttrKind::DType);
}
const Shape& attr_shape(const AttrMap& m, const std::string& name, const std::string& op) {
  return get_typed<Shape>(m, name, op, AttrKind::Shape);
}
const Tensor& attr_tensor(const AttrMap& m, const std::string& name, const std::string& op) {
  return get_typed<Tensor>(m, name, op, AttrKind::Tensor);
}

}  // namespace evoxc
