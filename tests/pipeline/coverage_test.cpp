// Tests for the coverage matrix: every op has a rule or a reasoned deferral in every table, and docs/ops.md is current.
#include "evoxc/pipeline/coverage.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "evoxc/interp/interp.h"
#include "evoxc/pipeline/pipeline.h"

// The CLI builds the table from tools/op_table.cpp; compiling it in here checks the very
// code `evoxc ops --markdown` runs without a separate library target.
#include "../../tools/op_table.cpp"  // NOLINT(bugprone-suspicious-include)

namespace evoxc {
namespace {

TEST(Coverage, EveryOpHasARuleOrAReasonedDeferralInEveryTable) {
  std::vector<std::string> gaps = coverage::gaps();
  std::string all;
  for (const auto& g : gaps) all += "  " + g + "\n";
  EXPECT_TRUE(gaps.empty()) << gaps.size() << " gaps in the coverage matrix:\n" << all;
}

TEST(Coverage, MatrixHasOneRowPerOpAndOneEntryPerColumn) {
  auto rows = coverage::matrix();
  ASSERT_EQ(rows.size(), all_ops().size());
  std::vector<std::string> names;
  for (const auto& c : coverage::columns()) names.push_back(c.name);
  // Every registered backend is a column (this program links the interpreter only), then the
  // transforms' columns.
  std::vector<std::string> want = backend_names();
  for (const char* t : {"vmap", "jvp", "vjp"}) want.push_back(t);
  EXPECT_EQ(names, want);
  for (const auto& r : rows) {
    ASSERT_EQ(r.entries.size(), names.size()) << r.op->name;
    for (const auto& e : r.entries) {
      if (e.status != coverage::Status::Deferred) {
        EXPECT_TRUE(e.reason.empty()) << r.op->name;
      }
    }
  }
}

TEST(Coverage, InterpColumnIsTheKernelTable) {
  const RuleTableBase* kernels = get_backend("interp").capabilities().rules;
  ASSERT_EQ(kernels, &interp::kernels());
  for (const auto& r : coverage::matrix()) {
    bool ok = r.entries[0].status == coverage::Status::Ok;
    EXPECT_EQ(ok, kernels->has(r.op->id) || r.op->terminator) << r.op->name;
  }
  for (const char* op : {"reduce_sum", "add", "dot", "cond"}) EXPECT_TRUE(kernels->has(get_op(op).id)) << op;
}

TEST(Coverage, CommittedOpsMarkdownIsCurrent) {
#if !defined(EVOXC_HAS_MLIR) || !defined(EVOXC_HAS_XLA)
  GTEST_SKIP() << "docs/ops.md is the full build's table, with the mlir and xla backends' columns; this build lacks "
                  "one (-DEVOXC_MLIR=OFF, or no PJRT header for xla)";
#endif
  std::string path = EVOXC_TEST_DATA_DIR "/../../docs/ops.md";
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << "cannot read " << path << "; regenerate it with `build/bin/evoxc ops --markdown > docs/ops.md`";
  std::stringstream ss;
  ss << in.rdbuf();
  std::string want = cli::render_table(cli::build_op_table(), true);
  EXPECT_TRUE(ss.str() == want) << "docs/ops.md is out of date with the op registry; regenerate it with "
                                   "`build/bin/evoxc ops --markdown > docs/ops.md`";
}

}  // namespace
}  // namespace evoxc
