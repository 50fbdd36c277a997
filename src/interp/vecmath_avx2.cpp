// SLEEF kernels for AVX2 with FMA (8 floats / 4 doubles a vector), picked at run time by vecmath.cpp.
#include "evoxc/core/half.h"
#include "vecmath.h"

#if defined(__x86_64__) && defined(__GNUC__)
#pragma GCC push_options
#pragma GCC target("avx2,fma")
// Plain GCC vector types: the same registers and calling convention as __m256(d).
typedef float evx_vf __attribute__((vector_size(32)));
typedef double evx_vd __attribute__((vector_size(32)));
#define EVX_VF evx_vf
#define EVX_VD evx_vd
#define EVX_SF(fn, u) Sleef_##fn##f8_##u##avx2
#define EVX_SD(fn, u) Sleef_##fn##d4_##u##avx2
#define EVX_SFX(fn) Sleef_##fn##f8_avx2
#define EVX_SDX(fn) Sleef_##fn##d4_avx2
#define EVX_TABLE_FN table_avx2
#include "vecmath_impl.h"
#pragma GCC pop_options

#else
namespace evoxc::interp::vecmath {
const Table* table_avx2() { return nullptr; }
}  // namespace evoxc::interp::vecmath
#endif
