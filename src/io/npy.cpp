// numpy .npy reading and writing: a strict header parser that never trusts sizes from the file.
#include "evoxc/io/npy.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <variant>
#include <vector>

#include "evoxc/core/error.h"
#include "evoxc/core/file_io.h"
#include "evoxc/core/limits.h"

namespace evoxc::io {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
// numpy itself refuses headers over 10000 bytes unless told the file is trusted; a
// larger limit keeps every real file readable while bounding what a hostile one costs.
constexpr uint64_t kMaxHeaderLen = uint64_t{1} << 20;
constexpr size_t kMaxRank = 64;
constexpr size_t kArrayAlign = 64;           // numpy's ARRAY_ALIGN
constexpr size_t kGrowthAxisMaxDigits = 21;  // numpy's GROWTH_AXIS_MAX_DIGITS

[[noreturn]] void fail(const std::string& name, const std::string& what) { throw PersistenceError(name + ": " + what); }

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) s += ",";
  return s + ")";
}

// A value of the header dict: a string, a bool or a tuple of ints.
using PyValue = std::variant<std::string, bool, std::vector<int64_t>>;

// Parses the Python dict literal numpy writes: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& name) : s_(text), name_(name) {}

  std::vector<std::pair<std::string, PyValue>> parse_dict() {
    std::vector<std::pair<std::string, PyValue>> items;
    expect('{');
    for (;;) {
      skip_ws();
      if (peek() == '}') {
        ++pos_;
        break;
      }
      std::string key = parse_string();
      expect(':');
      items.emplace_back(std::move(key), parse_value());
      skip_ws();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      expect('}');
      break;
    }
    skip_ws();
    if (pos_ != s_.size()) error("unexpected text after the header dict");
    return items;
  }

 private:
  [[noreturn]] void error(const std::string& what) {
    fail(name_, "malformed .npy header: " + what + " at header offset " + std::to_string(pos_) + " in \"" +
                    std::string(s_.substr(0, std::min<size_t>(s_.size(), 120))) + "\"");
  }
  void skip_ws() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
  }
  char peek() { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void expect(char c) {
    skip_ws();
    if (peek() != c) error(std::string("expected '") + c + "'");
    ++pos_;
  }
  std::string parse_string() {
    skip_ws();
    char q = peek();
    if (q != '\'' && q != '"') error("expected a quoted string");
    ++pos_;
    std::string out;
    for (;;) {
      if (pos_ >= s_.size()) error("unterminated string");
      char c = s_[pos_++];
      if (c == q) return out;
      if (c == '\\') {
        if (pos_ >= s_.size()) error("unterminated string");
        c = s_[pos_++];
      }
      out += c;
    }
  }
  int64_t parse_int() {
    skip_ws();
    bool neg = false;
    if (peek() == '-') {
      neg = true;
      ++pos_;
    }
    if (!(peek() >= '0' && peek() <= '9')) error("expected an integer");
    uint64_t v = 0;
    while (peek() >= '0' && peek() <= '9') {
      uint64_t d = static_cast<uint64_t>(peek() - '0');
      if (v > (static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) - d) / 10) error("integer out of range");
      v = v * 10 + d;
      ++pos_;
    }
    if (peek() == 'L') ++pos_;  // Python 2 longs, as old numpy wrote them: (3L, 4L)
    return neg ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
  }
  PyValue parse_value() {
    skip_ws();
    char c = peek();
    if (c == '\'' || c == '"') return parse_string();
    if (s_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (s_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    // numpy writes a list only as the descr of a structured dtype.
    if (c == '[') fail(name_, "unsupported dtype: structured arrays are not supported");
    if (c == '(') {
      ++pos_;
      std::vector<int64_t> items;
      skip_ws();
      if (peek() == ')') {
        ++pos_;
        return items;
      }
      for (;;) {
        if (items.size() >= kMaxRank) error("a tuple of more than " + std::to_string(kMaxRank) + " items");
        items.push_back(parse_int());
        skip_ws();
        if (peek() == ',') {
          ++pos_;
          skip_ws();
          if (peek() == ')') {
            ++pos_;
            return items;
          }
          continue;
        }
        expect(')');
        return items;
      }
    }
    error("expected a string, True, False or a tuple");
  }

  std::string_view s_;
  const std::string& name_;
  size_t pos_ = 0;
};

struct Descr {
  DType dtype;
  bool swap;  // the file's byte order differs from the host's
};

Descr parse_descr(const std::string& d, const std::string& name) {
  auto unsupported = [&](const std::string& why) -> Descr {
    fail(name, "unsupported dtype '" + d + "'" + (why.empty() ? "" : " (" + why + ")") +
                   "; evoxc reads bool, int8..int64, uint8..uint64, float16, float32 and float64");
  };
  if (d.size() < 3) return unsupported("");
  char order = d[0];
  if (order != '<' && order != '>' && order != '|' && order != '=') return unsupported("unknown byte order");
  char kind = d[1];
  std::string size = d.substr(2);
  std::optional<DType> t;
  if (kind == 'b' && size == "1") t = DType::Bool;
  if (kind == 'i') {
    if (size == "1") t = DType::I8;
    if (size == "2") t = DType::I16;
    if (size == "4") t = DType::I32;
    if (size == "8") t = DType::I64;
  }
  if (kind == 'u') {
    if (size == "1") t = DType::U8;
    if (size == "2") t = DType::U16;
    if (size == "4") t = DType::U32;
    if (size == "8") t = DType::U64;
  }
  if (kind == 'f') {
    if (size == "2") t = DType::F16;
    if (size == "4") t = DType::F32;
    if (size == "8") t = DType::F64;
    if (size == "12" || size == "16") return unsupported("long double");
  }
  if (kind == 'c') return unsupported("complex");
  if (kind == 'U' || kind == 'S' || kind == 'a') return unsupported("strings");
  if (kind == 'O') return unsupported("Python objects");
  if (kind == 'V') return unsupported("raw or structured records");
  if (kind == 'M' || kind == 'm') return unsupported("datetime");
  if (!t) return unsupported("");
  bool file_big = order == '>' || (order == '=' && std::endian::native == std::endian::big);
  bool host_big = std::endian::native == std::endian::big;
  return {*t, size_of(*t) > 1 && file_big != host_big};
}

struct Header {
  DType dtype = DType::F32;
  bool swap = false;
  bool fortran = false;
  std::vector<int64_t> shape;
  int64_t numel = 0;
  uint64_t data_offset = 0;
  uint64_t data_bytes = 0;
};

uint64_t read_le(const unsigned char* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

// Reads `n` bytes at `offset` into `dst`; the size has been checked against the source.
using ReadAt = std::function<void(uint64_t offset, char* dst, size_t n)>;

Header read_header(const std::string& name, uint64_t total, const ReadAt& read_at) {
  if (total < kMagicLen + 2)
    fail(name, "truncated .npy file: " + std::to_string(total) + " bytes, too short for the magic");
  unsigned char pre[12] = {};
  read_at(0, reinterpret_cast<char*>(pre), kMagicLen + 2);
  if (std::memcmp(pre, kMagic, kMagicLen) != 0) fail(name, "not a .npy file (bad magic; expected \\x93NUMPY)");
  int major = pre[6], minor = pre[7];
  size_t len_bytes = 0;
  if (major == 1 && minor == 0) len_bytes = 2;
  if ((major == 2 || major == 3) && minor == 0) len_bytes = 4;
  if (len_bytes == 0)
    fail(name, "unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor) +
                   " (evoxc reads 1.0, 2.0 and 3.0)");
  uint64_t prefix = kMagicLen + 2 + len_bytes;
  if (total < prefix)
    fail(name, "truncated .npy file: " + std::to_string(total) + " bytes, the header length is cut off");
  read_at(kMagicLen + 2, reinterpret_cast<char*>(pre + kMagicLen + 2), len_bytes);
  uint64_t hlen = read_le(pre + kMagicLen + 2, len_bytes);
  if (hlen > kMaxHeaderLen)
    fail(name, "malformed .npy header: its length " + std::to_string(hlen) + " exceeds the limit of " +
                   std::to_string(kMaxHeaderLen) + " bytes");
  if (total - prefix < hlen)
    fail(name,
         "truncated .npy file: " + std::to_string(total) + " bytes, the header needs " + std::to_string(prefix + hlen));
  std::string text(hlen, '\0');
  read_at(prefix, text.data(), hlen);
  if (text.empty() || text.back() != '\n') fail(name, "malformed .npy header: it does not end with a newline");
  if (major == 1 || major == 2) {
    // Versions 1 and 2 store latin-1; a header is pure ASCII in practice, and a control
    // byte means the file is garbage, not an exotic dtype.
    for (char c : text)
      if (c != '\n' && static_cast<unsigned char>(c) < 0x20) fail(name, "malformed .npy header: a control byte");
  }

  Header h;
  std::optional<std::string> descr;
  std::optional<bool> fortran;
  std::optional<std::vector<int64_t>> shape;
  for (auto& [key, value] : HeaderParser(std::string_view(text).substr(0, text.size() - 1), name).parse_dict()) {
    auto wrong = [&](const char* what) { fail(name, "malformed .npy header: '" + key + "' must be " + what); };
    if (key == "descr") {
      if (!std::holds_alternative<std::string>(value)) wrong("a string");
      descr = std::get<std::string>(value);
    } else if (key == "fortran_order") {
      if (!std::holds_alternative<bool>(value)) wrong("True or False");
      fortran = std::get<bool>(value);
    } else if (key == "shape") {
      if (!std::holds_alternative<std::vector<int64_t>>(value)) wrong("a tuple of ints");
      shape = std::get<std::vector<int64_t>>(value);
    } else {
      fail(name, "malformed .npy header: unexpected key '" + key + "'");
    }
  }
  if (!descr) fail(name, "malformed .npy header: the key 'descr' is missing");
  if (!fortran) fail(name, "malformed .npy header: the key 'fortran_order' is missing");
  if (!shape) fail(name, "malformed .npy header: the key 'shape' is missing");
  Descr d = parse_descr(*descr, name);
  h.dtype = d.dtype;
  h.swap = d.swap;
  h.fortran = *fortran;
  h.shape = *shape;

  // The element count and byte size, with overflow checks, before anything is allocated.
  const uint64_t limit = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  uint64_t numel = 1;
  bool zero = false;
  for (int64_t e : h.shape) {
    if (e < 0) fail(name, "malformed .npy header: negative extent in shape " + shape_text(h.shape));
    if (e == 0) zero = true;
  }
  if (!zero) {
    for (int64_t e : h.shape) {
      if (numel > limit / static_cast<uint64_t>(e))
        fail(name, "absurd shape " + shape_text(h.shape) + ": the element count overflows");
      numel *= static_cast<uint64_t>(e);
    }
    if (numel > limit / size_of(h.dtype))
      fail(name, "absurd shape " + shape_text(h.shape) + ": the byte size overflows");
  } else {
    numel = 0;
  }
  h.numel = static_cast<int64_t>(numel);
  h.data_offset = prefix + hlen;
  h.data_bytes = numel * size_of(h.dtype);
  uint64_t have = total - h.data_offset;
  if (have != h.data_bytes)
    fail(name, std::string(have < h.data_bytes ? "truncated .npy file" : "trailing bytes in .npy file") +
                   ": header/data size mismatch: shape " + shape_text(h.shape) + " of " +
                   std::string(dtype_name(h.dtype)) + " needs " + std::to_string(h.data_bytes) +
                   " bytes of data, the file has " + std::to_string(have));
  return h;
}

void byteswap_elements(char* p, int64_t numel, size_t width) {
  for (int64_t i = 0; i < numel; ++i, p += width) std::reverse(p, p + width);
}

// Reorders column-major (Fortran) data into row-major order.
void fortran_to_c(const char* src, char* dst, const std::vector<int64_t>& shape, int64_t numel, size_t width) {
  size_t rank = shape.size();
  std::vector<int64_t> fstride(rank), idx(rank, 0);
  int64_t s = 1;
  for (size_t k = 0; k < rank; ++k) {
    fstride[k] = s;
    s *= shape[k];
  }
  for (int64_t i = 0; i < numel; ++i) {
    int64_t off = 0;
    for (size_t k = 0; k < rank; ++k) off += idx[k] * fstride[k];
    std::memcpy(dst + static_cast<size_t>(i) * width, src + static_cast<size_t>(off) * width, width);
    for (size_t k = rank; k-- > 0;) {  // advance the row-major counter
      if (++idx[k] < shape[k]) break;
      idx[k] = 0;
    }
  }
}

Tensor decode(const std::string& name, uint64_t total, const ReadAt& read_at) {
  Header h = read_header(name, total, read_at);
  Tensor t = Tensor::empty(h.shape, h.dtype);
  size_t width = size_of(h.dtype);
  char* dst = static_cast<char*>(t.raw_data());
  if (h.fortran && h.shape.size() > 1 && h.numel > 0) {
    std::vector<char> tmp(h.data_bytes);
    read_at(h.data_offset, tmp.data(), h.data_bytes);
    fortran_to_c(tmp.data(), dst, h.shape, h.numel, width);
  } else if (h.data_bytes > 0) {
    read_at(h.data_offset, dst, h.data_bytes);
  }
  if (h.swap) byteswap_elements(dst, h.numel, width);
  if (h.dtype == DType::Bool) {
    // A C++ bool must hold 0 or 1; any other byte would be undefined behaviour later.
    auto* b = reinterpret_cast<unsigned char*>(dst);
    for (int64_t i = 0; i < h.numel; ++i) b[i] = b[i] != 0;
  }
  return t;
}

}  // namespace

std::string npy_descr(DType dtype) {
  switch (dtype) {
    case DType::Bool: return "|b1";
    case DType::I8: return "|i1";
    case DType::U8: return "|u1";
    case DType::BF16:
      throw ValidationError(
          "write_npy: numpy has no bfloat16 dtype; convert the tensor to float32 first (evoxc::convert)");
    default: break;
  }
  std::string kind = is_float(dtype) ? "f" : is_signed_int(dtype) ? "i" : "u";
  return "<" + kind + std::to_string(size_of(dtype));
}

Tensor read_npy_bytes(std::string_view bytes, const std::string& name) {
  return decode(name, bytes.size(),
                [&](uint64_t off, char* dst, size_t n) { std::memcpy(dst, bytes.data() + off, n); });
}

Tensor read_npy(const std::string& path) {
  // Open first, then check what was opened (no window for the path to change in between);
  // O_NONBLOCK so that a FIFO cannot make the open wait for a writer.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT) fail(path, "cannot read .npy file: no such file");
    fail(path, std::string("cannot open .npy file for reading: ") + std::strerror(errno));
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) fail(path, std::string("cannot read .npy file: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) fail(path, "cannot read .npy file: not a regular file");
  auto size = static_cast<uint64_t>(st.st_size);
  // Data files get their own, larger cap than graphs (core/limits.h).
  if (uint64_t cap = max_npy_bytes(); size > cap)
    fail(path, "cannot read .npy file: it has " + std::to_string(size) + " bytes, more than the limit of " +
                   std::to_string(cap) + " (set EVOXC_MAX_NPY_BYTES to raise it)");
  return decode(path, size, [&](uint64_t off, char* dst, size_t n) {
    size_t done = 0;
    while (done < n) {
      ssize_t r = ::pread(fd, dst + done, n - done, static_cast<off_t>(off + done));
      if (r < 0 && errno == EINTR) continue;
      // r == 0: the file shrank while we read it.
      if (r <= 0) fail(path, "truncated .npy file: read failed");
      done += static_cast<size_t>(r);
    }
  });
}

std::string write_npy_bytes(const Tensor& tensor) {
  if (!tensor.defined()) throw ValidationError("write_npy: the tensor is undefined");
  std::string descr = npy_descr(tensor.dtype());
  const char* data = static_cast<const char*>(tensor.raw_data());  // DeviceError off the cpu
  const auto& shape = tensor.shape();
  // The same text and padding numpy's _write_array_header produces, so files compare equal.
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape_text(shape) + ", }";
  if (!shape.empty())
    header.append(kGrowthAxisMaxDigits - std::min(kGrowthAxisMaxDigits, std::to_string(shape[0]).size()), ' ');
  std::string out;
  for (int version : {1, 2}) {
    size_t len_bytes = version == 1 ? 2 : 4;
    size_t hlen = header.size() + 1;
    size_t pad = kArrayAlign - (kMagicLen + 2 + len_bytes + hlen) % kArrayAlign;
    size_t total_hlen = hlen + pad;
    if (version == 1 && total_hlen >= (size_t{1} << 16)) continue;
    out.assign(kMagic, kMagicLen);
    out += static_cast<char>(version);
    out += '\0';
    for (size_t i = 0; i < len_bytes; ++i) out += static_cast<char>((total_hlen >> (8 * i)) & 0xFF);
    out += header;
    out.append(pad, ' ');
    out += '\n';
    break;
  }
  size_t start = out.size();
  out.append(data, tensor.nbytes());
  if constexpr (std::endian::native == std::endian::big)
    byteswap_elements(out.data() + start, tensor.numel(), size_of(tensor.dtype()));
  return out;
}

void write_npy(const std::string& path, const Tensor& tensor) { write_file_atomic(path, write_npy_bytes(tensor)); }

}  // namespace evoxc::io
