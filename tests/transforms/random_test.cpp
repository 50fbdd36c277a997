// The random family end to end in C++: the published known-answer vectors of the three algorithms, the
// interpreter's kernels against a scalar reference for every algorithm, bits dtype and batch of keys, independence
// from the thread count, the decompositions the compiled backends run bit-equal to the kernels (symbolic shapes
// too), vmap over keys against a loop, and the typed errors for bad keys.
#include "evoxc/trace/random.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "evoxc/evoxc.h"
#include "evoxc/interp/interp.h"
#include "evoxc/transforms/decompose.h"
#include "interp/thread_pool.h"
#include "transforms/transform_util.h"

namespace evoxc {
namespace {

namespace ra = random_alg;
using testing::run_flat;
using ST = SymbolicTensor;

// Salmon et al., SC'11 (Random123 kat_vectors): threefry2x32_20 and philox4x32_10.
TEST(Random, ThreefryKnownAnswers) {
  struct Kat {
    uint32_t k0, k1, c0, c1, r0, r1;
  };
  for (const Kat& k : {Kat{0, 0, 0, 0, 0x6b200159, 0x99ba4efe},
                       Kat{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x1cb996fc, 0xbb002be7},
                       Kat{0x13198a2e, 0x03707344, 0x243f6a88, 0x85a308d3, 0xc4923a9c, 0x483df7a0}}) {
    uint32_t x0 = k.c0, x1 = k.c1;
    ra::threefry2x32(k.k0, k.k1, x0, x1);
    EXPECT_EQ(x0, k.r0);
    EXPECT_EQ(x1, k.r1);
  }
}

TEST(Random, PhiloxKnownAnswers) {
  struct Kat {
    uint32_t c[4], k[2], r[4];
  };
  for (const Kat& k : {Kat{{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
                       Kat{{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
                           {0xffffffff, 0xffffffff},
                           {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
                       Kat{{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
                           {0xa4093822, 0x299f31d0},
                           {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}}}) {
    uint32_t c[4] = {k.c[0], k.c[1], k.c[2], k.c[3]};
    ra::philox4x32(k.k[0], k.k[1], c);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(c[i], k.r[i]) << i;
  }
}

Tensor run1(const Graph& g, const std::vector<Tensor>& in) { return run_flat(g, in).at(0); }

template <typename T>
std::vector<T> elems(const Tensor& t) {
  std::vector<T> v(static_cast<size_t>(t.numel()));
  std::memcpy(v.data(), t.raw_data(), v.size() * sizeof(T));
  return v;
}

// splitmix64's reference stream (Vigna) seeded with 1234567, through random_bits.
TEST(Random, Splitmix64MatchesItsReference) {
  Graph g = trace([](const ST& k) { return random::bits(k, Shape{5}, DType::U64); }, TensorSpec(Shape{}, DType::I64));
  std::vector<uint64_t> got = elems<uint64_t>(run1(g, {random::key(1234567)}));
  std::vector<uint64_t> want = {6457827717110365317ULL, 3203168211198807973ULL, 9817491932198370423ULL,
                                4593380528125082431ULL, 16408922859458223821ULL};
  EXPECT_EQ(got, want);
}

// The stream definition of include/evoxc/ops/random.h, one element at a time.
uint64_t reference_bit(ra::Algorithm a, const Tensor& key, int64_t b, int64_t i, int width) {
  if (a == ra::Algorithm::Splitmix64) {
    uint64_t s = elems<uint64_t>(key)[static_cast<size_t>(b)];
    if (width == 64) return ra::splitmix64_mix(s + (static_cast<uint64_t>(i) + 1) * ra::kGolden);
    uint64_t z = ra::splitmix64_mix(s + ((static_cast<uint64_t>(i) >> 1) + 1) * ra::kGolden);
    uint32_t w = (i & 1) ? static_cast<uint32_t>(z >> 32) : static_cast<uint32_t>(z);
    return width == 32 ? w : w & ((uint64_t{1} << width) - 1);
  }
  std::vector<uint32_t> kw = elems<uint32_t>(key);
  if (a == ra::Algorithm::Threefry2x32) {
    uint32_t x0 = static_cast<uint32_t>(static_cast<uint64_t>(i) >> 32), x1 = static_cast<uint32_t>(i);
    ra::threefry2x32(kw[2 * b], kw[2 * b + 1], x0, x1);
    if (width == 64) return (static_cast<uint64_t>(x0) << 32) | x1;
    uint32_t w = x0 ^ x1;
    return width == 32 ? w : w & ((uint64_t{1} << width) - 1);
  }
  int64_t per = width == 64 ? 2 : 4, q = i / per, j = i % per;
  uint32_t c[4] = {static_cast<uint32_t>(q), static_cast<uint32_t>(static_cast<uint64_t>(q) >> 32), kw[4 * b + 2],
                   kw[4 * b + 3]};
  ra::philox4x32(kw[4 * b], kw[4 * b + 1], c);
  if (width == 64) return (static_cast<uint64_t>(c[2 * j]) << 32) | c[2 * j + 1];
  return width == 32 ? c[j] : c[j] & ((uint64_t{1} << width) - 1);
}

struct KeyCase {
  ra::Algorithm a;
  Tensor keys;  // a batch of two keys
};

std::vector<KeyCase> key_cases() {
  auto two = [](ra::Algorithm a) {
    Tensor k0 = random::key(42, a), k1 = random::key(-7, a);
    return testing::stack({k0, k1});
  };
  return {{ra::Algorithm::Splitmix64, two(ra::Algorithm::Splitmix64)},
          {ra::Algorithm::Threefry2x32, two(ra::Algorithm::Threefry2x32)},
          {ra::Algorithm::Philox4x32, two(ra::Algorithm::Philox4x32)}};
}

TEST(Random, KernelsMatchTheStreamDefinitionForEveryDtypeAndBatch) {
  for (const KeyCase& kc : key_cases()) {
    for (DType t : {DType::U8, DType::U16, DType::U32, DType::U64}) {
      SCOPED_TRACE(std::string(ra::algorithm_name(kc.a)) + " " + std::string(dtype_name(t)));
      Graph g = trace(
          [t](const ST& k) {
            return random::bits(k, Shape{3, 5}, t);
          },
          TensorSpec(Shape::from_ints(kc.keys.shape()), kc.keys.dtype()));
      Tensor out = run1(g, {kc.keys});
      ASSERT_EQ(out.shape(), (std::vector<int64_t>{2, 3, 5}));
      int width = static_cast<int>(size_of(t) * 8);
      for (int64_t b = 0; b < 2; ++b)
        for (int64_t i = 0; i < 15; ++i) {
          uint64_t got = 0;
          std::memcpy(&got, static_cast<const char*>(out.raw_data()) + (b * 15 + i) * static_cast<int64_t>(size_of(t)),
                      size_of(t));
          EXPECT_EQ(got, reference_bit(kc.a, kc.keys, b, i, width)) << "row " << b << " element " << i;
        }
    }
  }
}

TEST(Random, BitsDoNotDependOnTheThreadCount) {
  for (const KeyCase& kc : key_cases()) {
    Graph g = trace([](const ST& k) { return random::bits(k, Shape{300001}, DType::U32); },
                    TensorSpec(Shape::from_ints(kc.keys.shape()), kc.keys.dtype()));
    interp::set_num_threads(1);
    std::vector<uint32_t> one = elems<uint32_t>(run1(g, {kc.keys}));
    interp::set_num_threads(0);
    std::vector<uint32_t> many = elems<uint32_t>(run1(g, {kc.keys}));
    EXPECT_EQ(one, many) << ra::algorithm_name(kc.a);
  }
}

const RuleTableBase& nothing_native() {
  static const RuleTable<int, BackendError> t("none");
  return t;
}

// What every compiled backend runs: the decomposed graph, bit for bit the kernels' results.
TEST(Random, DecompositionsAreBitEqualToTheKernels) {
  for (const KeyCase& kc : key_cases()) {
    for (DType t : {DType::U8, DType::U16, DType::U32, DType::U64}) {
      SCOPED_TRACE(std::string(ra::algorithm_name(kc.a)) + " " + std::string(dtype_name(t)));
      Graph g = trace(
          [t](const ST& k, const ST& d) {
            return std::vector<ST>{random::bits(k, Shape{4, 3}, t), random::split(k, 3), random::fold_in(k, d)};
          },
          TensorSpec(Shape::from_ints(kc.keys.shape()), kc.keys.dtype()), TensorSpec(Shape{}, DType::I32));
      Graph d = decompose(g, nothing_native());
      std::vector<Tensor> in = {kc.keys, Tensor::from_vector<int32_t>({-5}, {})};
      std::vector<Tensor> want = run_flat(g, in), got = run_flat(d, in);
      ASSERT_EQ(want.size(), got.size());
      for (size_t i = 0; i < want.size(); ++i) {
        ASSERT_EQ(want[i].shape(), got[i].shape()) << i;
        EXPECT_EQ(std::memcmp(want[i].raw_data(), got[i].raw_data(), want[i].nbytes()), 0) << "output " << i;
      }
    }
  }
}

TEST(Random, SymbolicShapesDecomposeToTheSameBits) {
  DimExpr n = Dim("N");
  Graph g = trace([](const ST& k, const ST& x) { return random::uniform(k, x.shape()); },
                  TensorSpec(Shape{}, DType::I64), TensorSpec(Shape{n, 3}, DType::F32));
  Graph d = decompose(g, nothing_native());
  std::vector<Tensor> in = {random::key(3), testing::random_tensor({7, 3}, DType::F32, 1)};
  Tensor want = run1(g, in), got = run1(d, in);
  ASSERT_EQ(want.shape(), (std::vector<int64_t>{7, 3}));
  EXPECT_EQ(std::memcmp(want.raw_data(), got.raw_data(), want.nbytes()), 0);
}

TEST(Random, VmapOverKeysIsALoopOverKeys) {
  for (const KeyCase& kc : key_cases()) {
    Tensor k0 = testing::row(kc.keys, 0);
    Graph one = trace([](const ST& k) { return random::normal(k, Shape{6}); },
                      TensorSpec(Shape::from_ints(k0.shape()), k0.dtype()));
    Graph batched = vmap(one);
    Tensor all = run1(batched, {kc.keys});
    for (int64_t b = 0; b < 2; ++b) {
      Tensor want = run1(one, {testing::row(kc.keys, b)});
      Tensor got = testing::row(all, b);
      EXPECT_EQ(std::memcmp(want.raw_data(), got.raw_data(), want.nbytes()), 0)
          << ra::algorithm_name(kc.a) << " row " << b;
    }
  }
}

TEST(Random, SplitAndFoldInAgreeAndDiffer) {
  Graph g = trace(
      [](const ST& k) {
        return std::vector<ST>{random::split(k, 4), random::fold_in(k, 2), random::bits(k, Shape{4}, DType::U64)};
      },
      TensorSpec(Shape{2}, DType::U32));
  std::vector<Tensor> r = run_flat(g, {random::key(0, ra::Algorithm::Threefry2x32)});
  std::vector<uint32_t> children = elems<uint32_t>(r[0]), folded = elems<uint32_t>(r[1]);
  EXPECT_EQ(folded[0], children[4]);
  EXPECT_EQ(folded[1], children[5]);
  EXPECT_NE(children[0], children[2]);
}

TEST(Random, BadKeysAreTypeErrors) {
  EXPECT_THROW(trace([](const ST& k) { return random::bits(k, Shape{3}); }, TensorSpec(Shape{}, DType::F32)),
               TypeError);
  EXPECT_THROW(trace([](const ST& k) { return random::bits(k, Shape{3}); }, TensorSpec(Shape{3}, DType::U32)),
               TypeError);
  EXPECT_THROW(
      trace([](const ST& k) { return random::bits(k, Shape{3}, DType::F32); }, TensorSpec(Shape{}, DType::I64)),
      TypeError);
  EXPECT_THROW(random::algorithm_from_name("mt19937"), ValidationError);
}

}  // namespace
}  // namespace evoxc
