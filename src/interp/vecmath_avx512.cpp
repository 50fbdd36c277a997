// SLEEF kernels for AVX-512F (16 floats / 8 doubles a vector), picked at run time by vecmath.cpp.
#include "evoxc/core/half.h"
#include "vecmath.h"

#if defined(__x86_64__) && defined(__GNUC__)
#pragma GCC push_options
#pragma GCC target("avx512f,avx2,fma")
// Plain GCC vector types: the same registers and calling convention as __m512(d).
typedef float evx_vf __attribute__((vector_size(64)));
typedef double evx_vd __attribute__((vector_size(64)));
#define EVX_VF evx_vf
#define EVX_VD evx_vd
#define EVX_SF(fn, u) Sleef_##fn##f16_##u##avx512f
#define EVX_SD(fn, u) Sleef_##fn##d8_##u##avx512f
#define EVX_SFX(fn) Sleef_##fn##f16_avx512f
#define EVX_SDX(fn) Sleef_##fn##d8_avx512f
#define EVX_TABLE_FN table_avx512
#include "vecmath_impl.h"
#pragma GCC pop_options

#else
namespace evoxc::interp::vecmath {
const Table* table_avx512() { return nullptr; }
}  // namespace evoxc::interp::vecmath
#endif
