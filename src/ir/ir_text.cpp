// Text helpers shared by the printer, parser and JSON: value naming, floats, strings, hex, types.
#include "ir_text.h"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>

#include "evoxc/core/error.h"
#include "evoxc/core/limits.h"
#include "evoxc/core/tensor.h"

namespace evoxc::irtext {
namespace {

constexpr uint64_t kSignBit = uint64_t{1} << 63;
// std::numeric_limits<double>::quiet_NaN(): the NaN that prints as plain "nan".
constexpr uint64_t kDefaultNanBits = 0x7FF8000000000000ULL;
constexpr int kMaxDimDepth = kMaxExtentParens;

void name_block(const Block& b, ValueNames& names, int& next_arg, int& next_result, int depth) {
  // A graph built in memory is not bounded by a reader: the printer walks regions as this
  // does, so refusing depth here keeps both within the shared budget.
  if (depth > kMaxNestingDepth)
    throw VerifyError("regions nested more than " + std::to_string(kMaxNestingDepth) +
                      " deep (no reader accepts such a graph)");
  for (const auto& a : b.arguments()) names[a.get()] = "%arg" + std::to_string(next_arg++);
  for (const auto& op : b.operations()) {
    for (const auto& r : op->results()) names[r.get()] = "%" + std::to_string(next_result++);
    for (const auto& reg : op->regions()) name_block(reg->block(), names, next_arg, next_result, depth + 1);
  }
}

// A hostile text can be long: error messages quote at most 80 bytes of it.
std::string clip(std::string_view t) { return t.size() <= 80 ? std::string(t) : std::string(t.substr(0, 80)) + "..."; }

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

}  // namespace

void name_function_values(const Function& f, ValueNames& names) {
  int next_arg = 0;
  int next_result = 0;
  name_block(f.entry(), names, next_arg, next_result, 0);
}

std::string value_name(const ValueNames& names, const Value* v) {
  auto it = names.find(v);
  return it == names.end() ? std::string("%<unknown>") : it->second;
}

std::string format_float(double v) {
  auto bits = std::bit_cast<uint64_t>(v);
  if (std::isnan(v)) {
    if ((bits & ~kSignBit) == kDefaultNanBits) return (bits & kSignBit) ? "-nan" : "nan";
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof buf, bits, 16);
    std::string h(buf, r.ptr);
    for (auto& c : h) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return "nan(0x" + h + ")";
  }
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, r.ptr);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::optional<double> parse_float(std::string_view s) {
  bool neg = !s.empty() && s[0] == '-';
  std::string_view body = neg ? s.substr(1) : s;
  if (body == "nan") return std::bit_cast<double>(kDefaultNanBits | (neg ? kSignBit : 0));
  if (body == "inf") return neg ? -HUGE_VAL : HUGE_VAL;
  if (!neg && body.size() > 7 && body.substr(0, 6) == "nan(0x" && body.back() == ')') {
    std::string_view h = body.substr(6, body.size() - 7);
    uint64_t bits = 0;
    auto r = std::from_chars(h.data(), h.data() + h.size(), bits, 16);
    if (r.ec != std::errc() || r.ptr != h.data() + h.size()) return std::nullopt;
    double d = std::bit_cast<double>(bits);
    if (!std::isnan(d)) return std::nullopt;
    return d;
  }
  if (body.empty() || !(std::isdigit(static_cast<unsigned char>(body[0])) || body[0] == '.')) return std::nullopt;
  double d = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), d);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
  return d;
}

// The same rule as nlohmann's strict dump (no overlong forms, no surrogates, at most U+10FFFF).
bool valid_utf8(std::string_view s) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  for (size_t i = 0; i < s.size();) {
    unsigned char c = byte(i);
    size_t n = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (c < 0x80) {
      n = 0;
    } else if (c >= 0xC2 && c <= 0xDF) {
      n = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
      n = 2;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      n = 3;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      return false;
    }
    if (i + n >= s.size() && n > 0) return false;
    for (size_t k = 1; k <= n; ++k) {
      unsigned char d = byte(i + k);
      if (k == 1 ? (d < lo || d > hi) : (d & 0xC0) != 0x80) return false;
    }
    i += n + 1;
  }
  return true;
}

std::string quote(std::string_view s) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out = "\"";
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (c == '"') {
      out += "\\\"";
    } else if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c >= 0x7F) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

bool is_identifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

std::string hex_encode(const void* data, size_t n) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out = "0x";
  out.reserve(2 + 2 * n);
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) {
    out += kHex[p[i] >> 4];
    out += kHex[p[i] & 15];
  }
  return out;
}

bool hex_decode(std::string_view s, std::string& out, std::string* err) {
  if (s.size() < 2 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X')) {
    *err = "hex data must start with 0x";
    return false;
  }
  s.remove_prefix(2);
  if (s.size() % 2 != 0) {
    *err = "hex data has an odd number of digits";
    return false;
  }
  out.resize(s.size() / 2);
  for (size_t i = 0; i < out.size(); ++i) {
    int hi = hex_digit(s[2 * i]);
    int lo = hex_digit(s[2 * i + 1]);
    if (hi < 0 || lo < 0) {
      *err = "hex data has a non-hex character at digit " + std::to_string(2 * i + (hi < 0 ? 0 : 1));
      return false;
    }
    out[i] = static_cast<char>((hi << 4) | lo);
  }
  return true;
}

std::optional<Shape> parse_shape_dims(std::string_view s, std::string* err) {
  std::vector<DimExpr> dims;
  if (s.empty()) return Shape();
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i < s.size() && s[i] == '(') ++depth;
    if (i < s.size() && s[i] == ')') --depth;
    // The dim parser recurses per parenthesis; a hostile text must not exhaust the stack.
    if (depth > kMaxDimDepth) {
      *err = "shape '" + std::string(s.substr(0, 40)) + "...' nests parentheses more than " +
             std::to_string(kMaxDimDepth) + " deep";
      return std::nullopt;
    }
    if (depth < 0) {
      *err = "unbalanced ')' in shape '" + clip(s) + "'";
      return std::nullopt;
    }
    if (i == s.size() || (depth == 0 && s[i] == 'x')) {
      std::string_view piece = s.substr(start, i - start);
      std::string why;
      auto d = piece.empty() ? std::nullopt : parse_dim_expr(piece, &why);
      if (!d) {
        *err = "bad extent '" + clip(piece) + "' in shape '" + clip(s) +
               "' (expected a number, a symbol or a parenthesised expression)";
        if (!why.empty() && why != "malformed extent expression") *err += ": " + why;
        return std::nullopt;
      }
      dims.push_back(*d);
      start = i + 1;
    }
  }
  if (depth != 0) {
    *err = "unbalanced '(' in shape '" + clip(s) + "'";
    return std::nullopt;
  }
  return Shape(std::move(dims));
}

std::optional<TensorType> parse_tensor_type(std::string_view s, std::string* err) {
  if (s.size() < 8 || s.substr(0, 7) != "tensor<" || s.back() != '>') {
    *err = "expected a tensor type like tensor<4x8xf32>, got '" + std::string(s) + "'";
    return std::nullopt;
  }
  std::string_view inner = s.substr(7, s.size() - 8);
  // The dtype follows the last 'x' outside parentheses.
  int depth = 0;
  size_t split = std::string_view::npos;
  for (size_t i = 0; i < inner.size(); ++i) {
    if (inner[i] == '(') ++depth;
    if (inner[i] == ')') --depth;
    if (depth == 0 && inner[i] == 'x') split = i;
  }
  std::string_view dt = split == std::string_view::npos ? inner : inner.substr(split + 1);
  auto dtype = parse_dtype(dt);
  if (!dtype) {
    *err = "unknown element type '" + std::string(dt) + "' in '" + std::string(s) + "' (use f32, i64, i1, ...)";
    return std::nullopt;
  }
  Shape shape;
  if (split != std::string_view::npos) {
    if (split == 0) {
      *err = "empty extent in '" + std::string(s) + "'";
      return std::nullopt;
    }
    auto sh = parse_shape_dims(inner.substr(0, split), err);
    if (!sh) return std::nullopt;
    shape = std::move(*sh);
  }
  return TensorType(*dtype, std::move(shape));
}

std::optional<Tensor> make_dense_tensor(const TensorType& type, std::string_view hex, std::string* err) {
  if (!type.shape.is_static()) {
    *err = "a dense tensor needs a static shape, got " + type.to_string();
    return std::nullopt;
  }
  std::vector<int64_t> dims = type.shape.to_ints();
  int64_t numel = 0;
  try {
    numel = shape_numel(dims);
  } catch (const Error& e) {
    *err = std::string(e.what());
    return std::nullopt;
  }
  // Compare sizes before allocating, so a hostile shape cannot make us allocate.
  uint64_t want_digits = 0;
  if (__builtin_mul_overflow(static_cast<uint64_t>(numel), 2 * size_of(type.dtype), &want_digits) || hex.size() < 2 ||
      hex.size() - 2 != want_digits) {
    *err = "dense data of " + type.to_string() + " needs " + std::to_string(numel) + " elements of " +
           std::to_string(size_of(type.dtype)) + " bytes, but the hex string holds " +
           std::to_string(hex.size() < 2 ? 0 : (hex.size() - 2) / 2) + " bytes";
    return std::nullopt;
  }
  std::string bytes;
  if (!hex_decode(hex, bytes, err)) return std::nullopt;
  try {
    Tensor t = Tensor::empty(dims, type.dtype);
    if (!bytes.empty()) std::memcpy(t.raw_data(), bytes.data(), bytes.size());
    return t;
  } catch (const Error& e) {
    *err = std::string(e.what());
    return std::nullopt;
  }
}

}  // namespace evoxc::irtext
