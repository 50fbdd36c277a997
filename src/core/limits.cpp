// The file-size caps read from the environment and the JSON nesting pre-scan.
#include "evoxc/core/limits.h"

#include <cstdlib>
#include <string>

#include "evoxc/core/error.h"

namespace evoxc {
namespace {

uint64_t env_bytes(const char* var, uint64_t fallback) {
  const char* v = std::getenv(var);
  if (v == nullptr || *v == '\0') return fallback;
  std::string_view s(v);
  auto bad = [&]() -> PersistenceError {
    return PersistenceError(std::string(var) + "='" + std::string(s) +
                            "' is not a positive byte count (examples: 1048576, 512M, 2G)");
  };
  uint64_t n = 0;
  size_t i = 0;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
    if (__builtin_mul_overflow(n, 10, &n) || __builtin_add_overflow(n, static_cast<uint64_t>(s[i] - '0'), &n))
      throw bad();
  }
  if (i == 0) throw bad();
  if (i < s.size()) {
    int shift = 0;
    switch (s[i]) {
      case 'k':
      case 'K': shift = 10; break;
      case 'm':
      case 'M': shift = 20; break;
      case 'g':
      case 'G': shift = 30; break;
      case 't':
      case 'T': shift = 40; break;
      default: throw bad();
    }
    if (i + 1 != s.size() || n > (UINT64_MAX >> shift)) throw bad();
    n <<= shift;
  }
  if (n == 0) throw bad();
  return n;
}

}  // namespace

uint64_t max_file_bytes() { return env_bytes("EVOXC_MAX_FILE_BYTES", kDefaultMaxFileBytes); }
uint64_t max_npy_bytes() { return env_bytes("EVOXC_MAX_NPY_BYTES", kDefaultMaxNpyBytes); }

std::optional<size_t> find_excess_json_nesting(std::string_view json, int max_depth) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < json.size(); ++i) {
    char c = json[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character cannot end the string
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return i;
    } else if (c == ']' || c == '}') {
      --depth;  // unbalanced text is the parser's to report
    }
  }
  return std::nullopt;
}

}  // namespace evoxc
