// Private to the trace layer: resolving an op once per call site, and building hot attribute maps.
#pragma once

#include <utility>

#include "evoxc/ops/op_def.h"

// The OpDef named `name` (a string literal), looked up on the first call only: each
// expansion is its own lambda with its own function-local static, so the op functions do
// no lookup by name while tracing.
#define EVOXC_OP(name)                                                 \
  ([]() -> const ::evoxc::OpDef& {                                     \
    static const ::evoxc::OpDef& evoxc_op_def = ::evoxc::get_op(name); \
    return evoxc_op_def;                                               \
  }())

namespace evoxc::trace_internal {

// An AttrMap of (key, value) pairs moved in, keys given in sorted order: a braced
// initializer list would copy every value (a Shape twice) on paths taken once per op.
inline void add_attrs(AttrMap&) {}
template <typename V, typename... Rest>
void add_attrs(AttrMap& m, const char* key, V&& value, Rest&&... rest) {
  m.emplace_hint(m.end(), key, std::forward<V>(value));
  add_attrs(m, std::forward<Rest>(rest)...);
}
template <typename... KV>
AttrMap make_attrs(KV&&... kv) {
  AttrMap m;
  add_attrs(m, std::forward<KV>(kv)...);
  return m;
}

}  // namespace evoxc::trace_internal
