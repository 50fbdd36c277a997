// Tests that the coverage matrix's columns are a registry: a table another layer registers joins
// the matrix and `evoxc ops` (its own program, so the extra column stays out of the other tests).
#include <gtest/gtest.h>

#include <string>

#include "../../tools/op_table.cpp"  // NOLINT(bugprone-suspicious-include)
#include "evoxc/pipeline/coverage.h"
#include "evoxc/pipeline/pipeline.h"

namespace evoxc {
namespace {

// A column registered by another layer (here: a table with one rule and one deferral) shows
// up after the backends, with its deferral reason; an op with neither is a gap.
TEST(Coverage, RegisteredColumnsJoinTheMatrix) {
  static RuleTable<int, TransformError> table("test_transform");
  static bool filled = false;
  if (!filled) {
    table.set("add", 1);
    table.defer("exp", "exp waits for the test's later step");
    filled = true;
    coverage::register_column("test_transform", 10, []() -> const RuleTableBase& { return table; });
  }
  std::vector<coverage::Column> cols = coverage::columns();
  ASSERT_EQ(cols.back().name, "test_transform");
  size_t k = cols.size() - 1;
  std::vector<coverage::Row> rows = coverage::matrix();
  for (const auto& r : rows) {
    const coverage::Entry& e = r.entries[k];
    if (r.op->id == get_op("add").id || r.op->terminator) {
      EXPECT_EQ(e.status, coverage::Status::Ok);
    } else if (r.op->id == get_op("exp").id) {
      EXPECT_EQ(e.status, coverage::Status::Deferred);
      EXPECT_EQ(e.reason, "exp waits for the test's later step");
    } else {
      EXPECT_EQ(e.status, coverage::Status::Missing) << r.op->name;
    }
  }
  std::vector<std::string> gaps = coverage::gaps();
  EXPECT_EQ(gaps.size(), all_ops().size() - 3);  // all but add, exp and return
  EXPECT_THROW(coverage::register_column("test_transform", 10, []() -> const RuleTableBase& { return table; }),
               InternalError);
  std::string md = cli::render_table(cli::build_op_table(), true);
  EXPECT_NE(md.find("| test_transform |"), std::string::npos);
  EXPECT_NE(md.find("exp waits for the test's later step"), std::string::npos);
}

}  // namespace
}  // namespace evoxc
