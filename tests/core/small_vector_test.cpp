// SmallVector (inline storage up to N, then the heap), checked against std::vector over random operation sequences.
#include "evoxc/core/small_vector.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace evoxc {
namespace {

using SV = SmallVector<std::string, 3>;

void expect_same(const SV& s, const std::vector<std::string>& v) {
  ASSERT_EQ(s.size(), v.size());
  for (size_t i = 0; i < v.size(); ++i) EXPECT_EQ(s[i], v[i]) << i;
  EXPECT_EQ(std::vector<std::string>(s), v);
}

TEST(SmallVector, MatchesStdVectorAcrossTheInlineLimit) {
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    SV s;
    std::vector<std::string> v;
    for (int step = 0; step < 30; ++step) {
      std::string x = "v" + std::to_string(rng() % 1000) + std::string(rng() % 20, 'x');  // some beyond SSO
      size_t at = v.empty() ? 0 : rng() % (v.size() + 1);
      switch (rng() % 6) {
        case 0:
        case 1:
          s.push_back(x);
          v.push_back(x);
          break;
        case 2:
          s.insert(s.begin() + at, x);
          v.insert(v.begin() + static_cast<std::ptrdiff_t>(at), x);
          break;
        case 3:
          if (!v.empty()) {
            size_t i = rng() % v.size();
            s.erase(s.begin() + i);
            v.erase(v.begin() + static_cast<std::ptrdiff_t>(i));
          }
          break;
        case 4: {
          SV copy = s;  // copies and moves keep the elements
          SV moved = std::move(copy);
          s = moved;
          break;
        }
        default:
          if (!v.empty()) {
            s.pop_back();
            v.pop_back();
          }
      }
      expect_same(s, v);
    }
  }
}

TEST(SmallVector, InsertsARangeThatAliasesItself) {
  SV s{"a", "b"};
  s.insert(s.begin() + 1, s.begin(), s.end());
  expect_same(s, {"a", "a", "b", "b"});
  SV t{"x"};
  t.insert(t.end(), t.begin(), t.end());
  expect_same(t, {"x", "x"});
}

TEST(SmallVector, EqualityAndConversions) {
  SV a{"1", "2", "3", "4"}, b(std::vector<std::string>{"1", "2", "3", "4"});
  EXPECT_EQ(a, b);
  b.back() = "5";
  EXPECT_NE(a, b);
  SV c = std::move(a);
  expect_same(c, {"1", "2", "3", "4"});
  c.erase(c.begin(), c.begin() + 3);
  expect_same(c, {"4"});
  c.resize(3, "z");
  expect_same(c, {"4", "z", "z"});
  c.clear();
  EXPECT_TRUE(c.empty());
}

}  // namespace
}  // namespace evoxc
