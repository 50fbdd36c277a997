// Tests for DimExpr simplification, evaluation, printing and parsing.
#include "evoxc/core/dim.h"

#include <gtest/gtest.h>

#include "evoxc/core/error.h"

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
}  // namespace
}  // namespace evoxc
