// Shape: extents of any rank, static or symbolic, kept through copies and edits.
#include "evoxc/core/shape.h"

#include <gtest/gtest.h>

#include <vector>

#include "evoxc/core/error.h"

namespace evoxc {
namespace {

TEST(Shape, AnyRankKeepsItsExtentsThroughCopiesAndInserts) {
  for (int rank = 0; rank <= 9; ++rank) {
    std::vector<DimExpr> dims;
    for (int i = 0; i < rank; ++i) dims.push_back(i % 3 == 2 ? Dim("B") : DimExpr(i + 1));
    Shape s(dims), copy = s;
    EXPECT_EQ(copy, s);
    EXPECT_EQ(std::vector<DimExpr>(copy.dims()), dims);
    copy.dims().insert(copy.dims().begin(), DimExpr(7));
    EXPECT_EQ(copy.rank(), s.rank() + 1);
    EXPECT_EQ(copy[0], DimExpr(7));
    EXPECT_NE(copy, s);
  }
}

TEST(TensorSpecs, ANegativeExtentIsAShapeError) {
  EXPECT_THROW(TensorSpec(Shape{DimExpr(2), DimExpr(-3)}, DType::F32), ShapeError);
  EXPECT_NO_THROW(TensorSpec(Shape{DimExpr(0), Dim("N")}, DType::F32));
}

}  // namespace
}  // namespace evoxc
