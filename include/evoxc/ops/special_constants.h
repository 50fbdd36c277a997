// Numeric constants the interpreter's kernels and the compiler lowerings share, so every backend computes the same
// function.
#pragma once

namespace evoxc::special {

// Taylor coefficients of digamma about its positive zero x0: psi^(k)(x0) / k!, k = 1..41,
// from mpmath at 300 bits (polygamma(k, x0) / factorial(k)); enough for |x - x0| <= 0.54.
inline constexpr double kDigammaTaylor[] = {
    0x1.ef72bc8ee38acp-1,  -0x1.c563b54aa1a35p-2,  0x1.08b4294d50381p-2,  -0x1.4fc1317257da8p-3,
    0x1.b9a5b6370f3abp-4,  -0x1.27baba261cc2cp-4,  0x1.8fce02b239ca7p-5,  -0x1.0fa7ec36a7d8fp-5,
    0x1.723d6807edcc0p-6,  -0x1.f970508e1b6a2p-7,  0x1.5955caaa962f3p-7,  -0x1.d828079282eb8p-8,
    0x1.42e1acf81d8dcp-8,  -0x1.b9afc7cee8a14p-9,  0x1.2e23345f79aafp-9,  -0x1.9d626f71d1f7ap-10,
    0x1.1acebbd761089p-10, -0x1.82f6345c65b35p-11, 0x1.08bdae1a261d4p-11, -0x1.6a3fddea11304p-12,
    0x1.efacab6fb8985p-13, -0x1.531f5dc5eb563p-13, 0x1.d0080f810fab5p-14, -0x1.3d7972688af67p-14,
    0x1.b2691182c5c34p-15, -0x1.29357f7d6cb86p-15, 0x1.96ae4a8e32b49p-16, -0x1.163cc7373be8bp-16,
    0x1.7cb8b3916fd29p-17, -0x1.047a1894e0fdep-17, 0x1.646b54f410bdfp-18, -0x1.e7b34a5b78a3cp-19,
    0x1.4dab173747443p-19, -0x1.c891c9fca61dep-20, 0x1.385e9fcb1c6a8p-20, -0x1.ab6cff79188aap-21,
    0x1.246e3329dab55p-21, -0x1.902471b2c8ebdp-22, 0x1.11c399dbd8e73p-22, -0x1.7699ba6292b3ep-23,
    0x1.004a0788ae67ap-23};
// x0 = 1.46163214496836234126... as a sum of two doubles (mpmath findroot at 300 bits).
inline constexpr double kDigammaRootHi = 0x1.762d86356be3fp+0;
inline constexpr double kDigammaRootLo = 0x1.b86a722197829p-54;

// matrix_exp: the degree-13 Pade coefficients b_0..b_13 of Higham's scaling and squaring
// (2005), and theta_13, the 1-norm below which degree 13 needs no squaring.
inline constexpr double kPade13[14] = {64764752532480000.0,
                                       32382376266240000.0,
                                       7771770303897600.0,
                                       1187353796428800.0,
                                       129060195264000.0,
                                       10559470521600.0,
                                       670442572800.0,
                                       33522128640.0,
                                       1323241920.0,
                                       40840800.0,
                                       960960.0,
                                       16380.0,
                                       182.0,
                                       1.0};
inline constexpr double kPade13Theta = 5.371920351148152;

// lgamma(2 + z) = (1 - gamma) z + sum_k>=2 (-1)^k (zeta(k) - 1) / k z^k, the coefficients of z^1..z^30 (mpmath at
// 200 bits): the terms fall by 4x each for |z| <= 1/2, so 30 of them leave 1e-20.
inline constexpr double kLgammaAt2[] = {
    0x1.b0ee6072093cep-2,   0x1.4a34cc4a60fa6p-2,  -0x1.13e001a557607p-4,  0x1.51322ac7d8483p-6,
    -0x1.e404fc218f5f2p-8,  0x1.7add6eadb6c30p-9,  -0x1.38ac5c2bf8e08p-10, 0x1.0b36af86396e9p-11,
    -0x1.d3fd4c76d2fc8p-13, 0x1.a127b0f17d65ap-14, -0x1.78de5bd7c81efp-15, 0x1.580dcee66eb02p-16,
    -0x1.3cbc963ce2243p-17, 0x1.2597a39f34aacp-18, -0x1.11b2eb7679541p-19, 0x1.0064cdeb22f0fp-20,
    -0x1.e2600d93cfd2fp-22, 0x1.c76bbb3f07a4dp-23, -0x1.af5a6cbbf8a97p-24, 0x1.99b93c2070b0fp-25,
    -0x1.862c734df3eacp-26, 0x1.7469daccfadcdp-27, -0x1.6434a8447aeadp-28, 0x1.555a877ffd2c3p-29,
    -0x1.47b1679258d0ep-30, 0x1.3b15d2b2fc10cp-31, -0x1.2f69a9fabe3e0p-32, 0x1.24932a337434cp-33,
    -0x1.1a7c26ec2523cp-34, 0x1.11116e693ed98p-35};

}  // namespace evoxc::special
