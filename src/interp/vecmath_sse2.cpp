// SLEEF kernels for SSE2, the x86-64 baseline (4 floats / 2 doubles a vector), picked at run time by vecmath.cpp.
#include "evoxc/core/half.h"
#include "vecmath.h"

#if defined(__x86_64__) && defined(__GNUC__)
// Plain GCC vector types: the same registers and calling convention as __m128(d).
typedef float evx_vf __attribute__((vector_size(16)));
typedef double evx_vd __attribute__((vector_size(16)));
#define EVX_VF evx_vf
#define EVX_VD evx_vd
#define EVX_SF(fn, u) Sleef_##fn##f4_##u##sse2
#define EVX_SD(fn, u) Sleef_##fn##d2_##u##sse2
#define EVX_SFX(fn) Sleef_##fn##f4_sse2
#define EVX_SDX(fn) Sleef_##fn##d2_sse2
#define EVX_TABLE_FN table_sse2
#include "vecmath_impl.h"

#else
namespace evoxc::interp::vecmath {
const Table* table_sse2() { return nullptr; }
}  // namespace evoxc::interp::vecmath
#endif
