// Tests for DimExpr simplification, evaluation, printing and parsing.
#include "evoxc/core/dim.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "evoxc/core/error.h"
#include "evoxc/core/limits.h"
#include "expect_error.h"

namespace evoxc {
namespace {

TEST(DimExpr, FoldsConstants) {
  EXPECT_EQ((DimExpr(3) + DimExpr(4)).value(), 7);
  EXPECT_EQ(floordiv(DimExpr(-7), DimExpr(2)).value(), -4);
  EXPECT_EQ((DimExpr(-7) % DimExpr(2)).value(), 1);
  EXPECT_EQ(min(DimExpr(3), DimExpr(5)).value(), 3);
  EXPECT_EQ(max(DimExpr(3), DimExpr(5)).value(), 5);
}

TEST(DimExpr, SimplifiesIdentities) {
  DimExpr b = Dim("B");
  EXPECT_EQ(b + 0, b);
  EXPECT_EQ(b * 1, b);
  EXPECT_EQ((b * 0).value(), 0);
  EXPECT_EQ((b - b).value(), 0);
  EXPECT_EQ((b + 1) - 1, b);
  EXPECT_EQ(b * 4, 4 * b);
  EXPECT_EQ(b + b + 1, (b + b) + 1);
  EXPECT_EQ(floordiv(b * 4, 2), 2 * b);
}

TEST(DimExpr, PrintsAndParsesBack) {
  DimExpr b = Dim("B");
  DimExpr e = 2 * b + 1;
  EXPECT_EQ(e.to_string(), "(2*B+1)");
  for (const DimExpr& x : {e, b, DimExpr(4), min(b, Dim("C")), floordiv(b + 3, 2), b % 3, b - Dim("C"), Dim("x1"),
                           max(b - 1, DimExpr(0))}) {
    auto p = parse_dim_expr(x.to_string());
    ASSERT_TRUE(p.has_value()) << x.to_string();
    EXPECT_EQ(*p, x) << x.to_string();
  }
}

TEST(DimExpr, Evaluates) {
  DimExpr e = floordiv(2 * Dim("B") + 1, Dim("C"));
  EXPECT_EQ(e.evaluate({{"B", 5}, {"C", 2}}), 5);
  EXPECT_THROW(e.evaluate({{"B", 5}}), ValidationError);
}

TEST(DimExpr, RejectsBadInput) {
  EXPECT_THROW(Dim(""), ShapeError);
  EXPECT_THROW(Dim("a b"), ShapeError);
  EXPECT_THROW(floordiv(Dim("B"), 0), ShapeError);
  EXPECT_FALSE(parse_dim_expr("B+").has_value());
  EXPECT_FALSE(parse_dim_expr("(B").has_value());
  EXPECT_FALSE(parse_dim_expr("B//0").has_value());
}

}  // namespace
}  // namespace evoxc

namespace evoxc {
namespace {
TEST(DimExpr, CollectsLikeTerms) {
  DimExpr b = Dim("B");
  EXPECT_EQ(b + b + 1, 2 * b + 1);
  EXPECT_EQ((b + 1) + b, 2 * b + 1);
  EXPECT_EQ(3 * b + b, 4 * b);
  EXPECT_EQ((2 * b + 1).to_string(), "(2*B+1)");
}
TEST(DimExpr, OverflowIsAShapeError) {
  EXPECT_THROW(DimExpr(INT64_MAX) + DimExpr(1), ShapeError);
  EXPECT_THROW(DimExpr(INT64_MAX / 2) * DimExpr(3), ShapeError);
}

using test::expect_error;

using test::repeat;

TEST(DimExpr, FoldsFloordivAndModChains) {
  DimExpr b = Dim("B");
  EXPECT_EQ(floordiv(floordiv(b, 2), 2), floordiv(b, 4));
  EXPECT_EQ(floordiv(floordiv(floordiv(b, 2), 3), 5), floordiv(b, 30));
  EXPECT_EQ((b % 4) % 2, b % 2);
  EXPECT_EQ((b % 6) % 6, b % 6);
  EXPECT_NE((b % 2) % 4, b % 2);  // 4 does not divide 2: no rule applies, the structure stays
  EXPECT_NE(floordiv(floordiv(b, -2), 2), floordiv(b, -4));  // only positive divisors fold
  EXPECT_EQ(floordiv(b, -1), -1 * b);
  // 100,000 halvings stay shallow: the constant folds until it would overflow int64.
  DimExpr e = b;
  for (int i = 0; i < 61; ++i) e = floordiv(e, 2);
  EXPECT_EQ(e, floordiv(b, int64_t{1} << 61));
  EXPECT_EQ(e.depth(), 2);
  // The folded forms agree with the nested ones for every sign of B.
  for (int64_t v : {-9, -8, -7, -1, 0, 1, 7, 8, 9, 1000}) {
    DimBindings bind = {{"B", v}};
    EXPECT_EQ(floordiv(floordiv(b, 2), 3).evaluate(bind), floordiv_i64(floordiv_i64(v, 2), 3)) << v;
    EXPECT_EQ(((b % 4) % 2).evaluate(bind), mod_i64(mod_i64(v, 4), 2)) << v;
  }
}

TEST(DimExpr, DeepExpressionsAreRefusedWhenBuilt) {
  DimExpr b = Dim("B");
  // Alternating // and % defeats folding: the depth grows by two per step.
  DimExpr e = b;
  for (int i = 0; i < 127; ++i) e = floordiv(e, 3) % 5;
  EXPECT_EQ(e.depth(), 255);
  EXPECT_FALSE(e.to_string().empty());
  EXPECT_EQ(e, parse_dim_expr(e.to_string()));
  e = floordiv(e, 3);
  EXPECT_EQ(e.depth(), kMaxNestingDepth);
  expect_error<ShapeError>([&] { (void)(e % 5); }, "nested more than 256 levels deep");
  // Sums of distinct symbols are not flattened either.
  expect_error<ShapeError>(
      [] {
        DimExpr s = Dim("S0");
        for (int i = 1; i < 100000; ++i) s = s + Dim("S" + std::to_string(i));
      },
      "nested more than 256 levels deep");
  // A shallow DAG can stand for a huge tree: the node count is capped too.
  expect_error<ShapeError>(
      [&] {
        DimExpr x = b + Dim("C");
        for (int i = 0; i < 20; ++i) x = x * x;
      },
      "more than 10000 nodes");
}

TEST(DimExpr, ParserRefusesDeepText) {
  std::string why;
  // 100,000 chained operators, as a hostile .evoxcgraph or EvoXIR text would carry them.
  EXPECT_FALSE(parse_dim_expr("B" + repeat("//3%5", 100000), &why).has_value());
  EXPECT_NE(why.find("nested more than 256 levels deep"), std::string::npos) << why;
  why.clear();
  EXPECT_FALSE(parse_dim_expr(std::string(50000, '(') + "B" + std::string(50000, ')'), &why).has_value());
  EXPECT_NE(why.find("parentheses nested more than 258 deep"), std::string::npos) << why;
  why.clear();
  EXPECT_FALSE(parse_dim_expr(repeat("min(B,", 50000) + "B" + std::string(50000, ')'), &why).has_value());
  EXPECT_NE(why.find("parentheses nested more than 258 deep"), std::string::npos) << why;
  // Within the budget it parses, and halving chains fold however long they are.
  EXPECT_EQ(parse_dim_expr(std::string(258, '(') + "B" + std::string(258, ')')), Dim("B"));
  EXPECT_FALSE(parse_dim_expr(std::string(259, '(') + "B" + std::string(259, ')')).has_value());
  // The deepest extent printed with many parentheses (each level a right operand, a call at the
  // root, a negative constant at the bottom) still reads back.
  DimExpr deep = DimExpr(-5) * Dim("B");
  while (deep.depth() < kMaxNestingDepth - 1) deep = floordiv(Dim("C"), deep);
  deep = min(deep, Dim("D"));
  ASSERT_EQ(deep.depth(), kMaxNestingDepth);
  int open = 0, most = 0;
  for (char ch : deep.to_string()) {
    open += ch == '(' ? 1 : ch == ')' ? -1 : 0;
    most = std::max(most, open);
  }
  EXPECT_GE(most, kMaxNestingDepth) << deep.to_string();
  EXPECT_LE(most, kMaxExtentParens) << deep.to_string();
  EXPECT_EQ(parse_dim_expr(deep.to_string()), deep);
  EXPECT_EQ(parse_dim_expr("B" + repeat("//2", 40)), floordiv(Dim("B"), int64_t{1} << 40));
  why.clear();
  EXPECT_FALSE(parse_dim_expr("B+", &why).has_value());
  EXPECT_EQ(why, "malformed extent expression");
}

TEST(DimExpr, ArithmeticOverflowIsTyped) {
  DimExpr b = Dim("B");
  const int64_t big = int64_t{1} << 62;
  expect_error<ShapeError>([&] { (void)((b * big) * 4); }, "int64 overflow in a product");
  expect_error<ShapeError>([&] { (void)((b + INT64_MAX) + 1); }, "int64 overflow in a sum");
  expect_error<ShapeError>([&] { (void)((b + 1) + INT64_MAX); }, "int64 overflow in a sum");
  expect_error<ShapeError>([&] { (void)(b - INT64_MIN); }, "int64 overflow");
  expect_error<ShapeError>([&] { (void)(b * 3 + b * INT64_MAX); }, "int64 overflow in a sum");
  expect_error<ShapeError>([] { (void)floordiv(DimExpr(INT64_MIN), DimExpr(-1)); }, "int64 overflow");
  EXPECT_EQ((DimExpr(INT64_MIN) % DimExpr(-1)).value(), 0);
  EXPECT_EQ(mod_i64(INT64_MIN, -1), 0);
  expect_error<ShapeError>([] { floordiv_i64(INT64_MIN, -1); }, "int64 overflow");
  // A folded constant times a symbol: (INT64_MIN * B) // -1 negates INT64_MIN, checked (no INT64_MIN % -1).
  expect_error<ShapeError>([&] { (void)floordiv(DimExpr(INT64_MIN) * b, -1); }, "int64 overflow in a product");
  EXPECT_EQ(floordiv(DimExpr(-6) * b, -1), 6 * b);
  EXPECT_EQ((DimExpr(INT64_MIN) * b) % -1, DimExpr(0));
  EXPECT_FALSE(parse_dim_expr("B*4611686018427387904*4").has_value());
  EXPECT_FALSE(parse_dim_expr("99999999999999999999").has_value());
  // Every int64 constant reads back; one past either end is refused with a reason.
  for (int64_t v : {INT64_MAX, INT64_MIN, INT64_MAX - 1, INT64_MIN + 1, int64_t{0}, int64_t{-1}}) {
    EXPECT_EQ(parse_dim_expr(DimExpr(v).to_string()), DimExpr(v)) << DimExpr(v).to_string();
  }
  std::string why;
  EXPECT_FALSE(parse_dim_expr("9223372036854775808", &why).has_value());
  EXPECT_EQ(why, "integer out of range for int64");
  EXPECT_FALSE(parse_dim_expr("(-9223372036854775809)").has_value());
  why.clear();
  EXPECT_FALSE(parse_dim_expr("(B-9223372036854775807-9223372036854775807)", &why).has_value());
  EXPECT_NE(why.find("int64 overflow in a sum"), std::string::npos) << why;
}

TEST(DimExpr, EvaluationOverflowIsAValidationError) {
  DimExpr b = Dim("B");
  DimExpr c = Dim("C");
  expect_error<ValidationError>([&] { (b * (int64_t{1} << 62)).evaluate({{"B", 4}}); }, "overflows int64");
  expect_error<ValidationError>([&] { (b + c).evaluate({{"B", INT64_MAX}, {"C", 1}}); }, "overflows int64");
  expect_error<ValidationError>([&] { (b - c).evaluate({{"B", INT64_MIN}, {"C", 1}}); }, "overflows int64");
  expect_error<ValidationError>([&] { (b * c).evaluate({{"B", INT64_MAX}, {"C", 2}}); }, "overflows int64");
  expect_error<ValidationError>([&] { floordiv(b, c).evaluate({{"B", INT64_MIN}, {"C", -1}}); }, "overflows int64");
  expect_error<ValidationError>([&] { (b % c).evaluate({{"B", 3}, {"C", 0}}); }, "divides by zero");
  EXPECT_EQ((b % c).evaluate({{"B", INT64_MIN}, {"C", -1}}), 0);
}

}  // namespace
}  // namespace evoxc
