// The flat pointer tables (PtrMap, PtrSet) checked against std::unordered_map over random operation sequences.
#include "evoxc/core/flat_table.h"

#include <gtest/gtest.h>

#include <random>
#include <unordered_map>
#include <vector>

namespace evoxc {
namespace {

TEST(PtrMap, MatchesUnorderedMap) {
  std::vector<int> objects(5000);
  std::mt19937 rng(3);
  PtrMap<const int*, int> m;
  std::unordered_map<const int*, int> ref;
  for (int step = 0; step < 20000; ++step) {
    const int* k = &objects[rng() % objects.size()];
    if (rng() % 3 == 0) {
      const int* found = m.find(k);
      auto it = ref.find(k);
      ASSERT_EQ(found != nullptr, it != ref.end());
      if (found) {
        EXPECT_EQ(*found, it->second);
      }
    } else {
      int v = static_cast<int>(rng());
      m[k] = v;
      ref[k] = v;
    }
    ASSERT_EQ(m.size(), ref.size());
  }
  size_t seen = 0;
  m.for_each([&](const int* k, int v) {
    EXPECT_EQ(ref.at(k), v);
    ++seen;
  });
  EXPECT_EQ(seen, ref.size());
  m.clear();
  EXPECT_TRUE(m.empty());
  EXPECT_EQ(m.find(&objects[0]), nullptr);
}

TEST(PtrSet, InsertEraseAndContains) {
  std::vector<int> objects(300);
  PtrSet s;
  for (size_t i = 0; i < objects.size(); i += 2) s.insert(&objects[i]);
  for (size_t i = 0; i < objects.size(); i += 4) s.erase(&objects[i]);
  for (size_t i = 0; i < objects.size(); ++i) EXPECT_EQ(s.contains(&objects[i]), i % 4 == 2) << i;
}

}  // namespace
}  // namespace evoxc
