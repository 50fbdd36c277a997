// Interpreter kernels of the random family (see src/ops/random.cpp for the ops): random_bits, random_split and
// random_fold_in for splitmix64, threefry2x32 and philox4x32_10. Each element is a function of its key and its
// position only (counter-based), so the bits do not depend on the thread count or on how the work is chunked.
#include "evoxc/ops/random.h"

#include <cstring>
#include <type_traits>

#include "kernel_table.h"
#include "program.h"
#include "thread_pool.h"

namespace evoxc::interp {

namespace {

using random_alg::Algorithm;
namespace ra = random_alg;

// Elements per parallel chunk: a multiple of 4, so a philox block or a splitmix64 pair never straddles two chunks.
constexpr int64_t kChunk = 65536;

// The key of batch row b as 64-bit words (splitmix64: 1) or 32-bit words (threefry: 2, philox: 4).
struct KeyWords {
  uint64_t s = 0;
  uint32_t w[4] = {0, 0, 0, 0};
};

KeyWords read_key(const void* keys, bool wide, int64_t words, int64_t b) {
  KeyWords k;
  if (wide) {
    std::memcpy(&k.s, static_cast<const char*>(keys) + b * 8, 8);
  } else {
    std::memcpy(k.w, static_cast<const char*>(keys) + b * words * 4, static_cast<size_t>(words) * 4);
  }
  return k;
}

// Elements [a, e) of one key's stream into out (dtype O, row-major, element i at out[i]).
template <typename O>
void threefry_bits(const KeyWords& k, O* out, int64_t a, int64_t e) {
  for (int64_t i = a; i < e; ++i) {
    auto x0 = static_cast<uint32_t>(static_cast<uint64_t>(i) >> 32), x1 = static_cast<uint32_t>(i);
    ra::threefry2x32(k.w[0], k.w[1], x0, x1);
    if constexpr (sizeof(O) == 8) {
      out[i] = (static_cast<uint64_t>(x0) << 32) | x1;
    } else {
      out[i] = static_cast<O>(x0 ^ x1);
    }
  }
}

template <typename O>
void philox_bits(const KeyWords& k, O* out, int64_t a, int64_t e) {
  constexpr int64_t per = sizeof(O) == 8 ? 2 : 4;  // elements per block
  for (int64_t q = a / per; q * per < e; ++q) {
    uint32_t c[4] = {static_cast<uint32_t>(q), static_cast<uint32_t>(static_cast<uint64_t>(q) >> 32), k.w[2], k.w[3]};
    ra::philox4x32(k.w[0], k.w[1], c);
    for (int64_t j = 0; j < per; ++j) {
      int64_t i = q * per + j;
      if (i < a || i >= e) continue;
      if constexpr (sizeof(O) == 8) {
        out[i] = (static_cast<uint64_t>(c[2 * j]) << 32) | c[2 * j + 1];
      } else {
        out[i] = static_cast<O>(c[j]);
      }
    }
  }
}

template <typename O>
void splitmix_bits(const KeyWords& k, O* out, int64_t a, int64_t e) {
  if constexpr (sizeof(O) == 8) {
    for (int64_t i = a; i < e; ++i) out[i] = ra::splitmix64_mix(k.s + (static_cast<uint64_t>(i) + 1) * ra::kGolden);
  } else {
    for (int64_t i = a; i < e; ++i) {
      uint64_t z = ra::splitmix64_mix(k.s + ((static_cast<uint64_t>(i) >> 1) + 1) * ra::kGolden);
      out[i] = static_cast<O>(static_cast<uint32_t>((i & 1) ? z >> 32 : z));
    }
  }
}

template <typename O>
void fill_bits(Algorithm alg, const KeyWords& k, O* out, int64_t a, int64_t e) {
  switch (alg) {
    case Algorithm::Splitmix64: splitmix_bits(k, out, a, e); break;
    case Algorithm::Threefry2x32: threefry_bits(k, out, a, e); break;
    case Algorithm::Philox4x32: philox_bits(k, out, a, e); break;
  }
}

using BitsFn = void (*)(Algorithm, const KeyWords&, void*, int64_t, int64_t);
template <typename O>
void fill_bits_erased(Algorithm alg, const KeyWords& k, void* out, int64_t a, int64_t e) {
  fill_bits(alg, k, static_cast<O*>(out), a, e);
}

class BitsKernel final : public Kernel {
 public:
  BitsKernel(const PrepareCtx& ctx, ra::KeyKind kind, BitsFn fn, int64_t width)
      : kind_(kind), fn_(fn), width_(width), key_(ctx.in[0]), out_(ctx.out[0]) {}
  void run(const Frame& f) const override {
    bool wide = kind_.algorithm == Algorithm::Splitmix64;
    int64_t nb = f.numel[key_] / kind_.words;
    if (nb == 0) return;
    int64_t n = f.numel[out_] / nb;
    int64_t chunks = (n + kChunk - 1) / kChunk;
    auto* out = static_cast<char*>(f.ptr[out_]);
    const void* keys = f.ptr[key_];
    parallel_for(nb * chunks, [&](int64_t t) {
      int64_t b = t / chunks, c = t % chunks;
      KeyWords k = read_key(keys, wide, kind_.words, b);
      fn_(kind_.algorithm, k, out + b * n * width_, c * kChunk, std::min(n, (c + 1) * kChunk));
    });
  }

 private:
  ra::KeyKind kind_;
  BitsFn fn_;
  int64_t width_;
  uint32_t key_, out_;
};

ra::KeyKind key_kind_of(PrepareCtx& ctx) {
  auto k = ra::key_kind(ctx.operand(0).type());
  if (!k) ctx.fail("operand 0 is not a random key");
  return *k;
}

KernelPtr make_bits(PrepareCtx& ctx) {
  ra::KeyKind kind = key_kind_of(ctx);
  BitsFn fn = nullptr;
  switch (ctx.result().dtype()) {
    case DType::U8: fn = &fill_bits_erased<uint8_t>; break;
    case DType::U16: fn = &fill_bits_erased<uint16_t>; break;
    case DType::U32: fn = &fill_bits_erased<uint32_t>; break;
    case DType::U64: fn = &fill_bits_erased<uint64_t>; break;
    default: ctx.fail("bits must be uint8, uint16, uint32 or uint64");
  }
  return std::make_unique<BitsKernel>(ctx, kind, fn, static_cast<int64_t>(size_of(ctx.result().dtype())));
}

// Child key j of k (random_split), written as the key's words: threefry (b1, b2) of counter j; philox the block
// at counter (lo(j), hi(j), c2, c3); splitmix64 mix(t + (j + 1) gamma) with t = mix(s) ^ kSplitDomain.
void child_key(Algorithm alg, const KeyWords& k, uint64_t j, void* out) {
  switch (alg) {
    case Algorithm::Splitmix64: {
      uint64_t t = ra::splitmix64_mix(k.s) ^ ra::kSplitDomain;
      uint64_t v = ra::splitmix64_mix(t + (j + 1) * ra::kGolden);
      std::memcpy(out, &v, 8);
      return;
    }
    case Algorithm::Threefry2x32: {
      auto x0 = static_cast<uint32_t>(j >> 32), x1 = static_cast<uint32_t>(j);
      ra::threefry2x32(k.w[0], k.w[1], x0, x1);
      uint32_t v[2] = {x0, x1};
      std::memcpy(out, v, 8);
      return;
    }
    case Algorithm::Philox4x32: {
      uint32_t c[4] = {static_cast<uint32_t>(j), static_cast<uint32_t>(j >> 32), k.w[2], k.w[3]};
      ra::philox4x32(k.w[0], k.w[1], c);
      std::memcpy(out, c, 16);
      return;
    }
  }
}

int64_t key_bytes(const ra::KeyKind& kind) { return kind.algorithm == Algorithm::Splitmix64 ? 8 : kind.words * 4; }

class SplitKernel final : public Kernel {
 public:
  SplitKernel(const PrepareCtx& ctx, ra::KeyKind kind, int64_t num)
      : kind_(kind), num_(num), key_(ctx.in[0]), out_(ctx.out[0]) {}
  void run(const Frame& f) const override {
    bool wide = kind_.algorithm == Algorithm::Splitmix64;
    int64_t nb = f.numel[key_] / kind_.words, kb = key_bytes(kind_);
    auto* out = static_cast<char*>(f.ptr[out_]);
    for (int64_t b = 0; b < nb; ++b) {
      KeyWords k = read_key(f.ptr[key_], wide, kind_.words, b);
      for (int64_t j = 0; j < num_; ++j)
        child_key(kind_.algorithm, k, static_cast<uint64_t>(j), out + (b * num_ + j) * kb);
    }
  }

 private:
  ra::KeyKind kind_;
  int64_t num_;
  uint32_t key_, out_;
};

KernelPtr make_split(PrepareCtx& ctx) {
  return std::make_unique<SplitKernel>(ctx, key_kind_of(ctx), ctx.attr_int("num"));
}

// random_fold_in(k, d) is child d of k: the data converted to uint32 (threefry, philox, as JAX's fold_in) or
// uint64 (splitmix64).
template <typename D>
uint64_t data_at(const void* p, int64_t i) {
  D v;
  std::memcpy(&v, static_cast<const char*>(p) + i * static_cast<int64_t>(sizeof(D)), sizeof(D));
  return static_cast<uint64_t>(v);
}

using DataFn = uint64_t (*)(const void*, int64_t);

class FoldInKernel final : public Kernel {
 public:
  FoldInKernel(const PrepareCtx& ctx, ra::KeyKind kind, DataFn data)
      : kind_(kind), data_fn_(data), key_(ctx.in[0]), data_(ctx.in[1]), out_(ctx.out[0]) {}
  void run(const Frame& f) const override {
    bool wide = kind_.algorithm == Algorithm::Splitmix64;
    int64_t nb = f.numel[key_] / kind_.words, kb = key_bytes(kind_);
    bool per_row = f.numel[data_] != 1 || nb == 1;
    auto* out = static_cast<char*>(f.ptr[out_]);
    for (int64_t b = 0; b < nb; ++b) {
      KeyWords k = read_key(f.ptr[key_], wide, kind_.words, b);
      uint64_t d = data_fn_(f.ptr[data_], per_row ? b : 0);
      if (!wide) d = static_cast<uint32_t>(d);
      child_key(kind_.algorithm, k, d, out + b * kb);
    }
  }

 private:
  ra::KeyKind kind_;
  DataFn data_fn_;
  uint32_t key_, data_, out_;
};

KernelPtr make_fold_in(PrepareCtx& ctx) {
  ra::KeyKind kind = key_kind_of(ctx);
  DataFn fn = nullptr;
  switch (ctx.operand(1).dtype()) {
    case DType::I32: fn = &data_at<int32_t>; break;
    case DType::U32: fn = &data_at<uint32_t>; break;
    case DType::I64: fn = &data_at<int64_t>; break;
    case DType::U64: fn = &data_at<uint64_t>; break;
    default: ctx.fail("data must be int32, uint32, int64 or uint64");
  }
  return std::make_unique<FoldInKernel>(ctx, kind, fn);
}

}  // namespace

void install_random_kernels(KernelTable& t) {
  t.set("random_bits", &make_bits);
  t.set("random_split", &make_split);
  t.set("random_fold_in", &make_fold_in);
}

}  // namespace evoxc::interp
