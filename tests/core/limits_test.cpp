// Tests for the shared hostile-input limits: the nesting budget on trees, the file-size caps and the file reader's
// refusals.
#include "evoxc/core/limits.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "evoxc/core/error.h"
#include "evoxc/core/file_io.h"
#include "evoxc/core/tree.h"
#include "expect_error.h"

namespace evoxc {
namespace {

using test::expect_error;

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("evoxc_limits_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    if (old) old_ = old;
    ::setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TreeDef nested_tuples(int levels) {
  TreeDef t(LeafMark{});
  for (int i = 0; i < levels; ++i) t = TreeDef::tuple({std::move(t)});
  return t;
}

TEST(Limits, TreesNestUpToTheBudget) {
  TreeDef t = nested_tuples(kMaxNestingDepth);
  EXPECT_EQ(t.depth(), kMaxNestingDepth);
  EXPECT_EQ(t.num_leaves(), 1U);
  EXPECT_EQ(t.structure_string().size(), 3U * kMaxNestingDepth + 1);
}

TEST(Limits, DeeperTreesAreRefusedWhenBuilt) {
  TreeDef t = nested_tuples(kMaxNestingDepth);
  expect_error<ValidationError>([&] { TreeDef::list({t}); }, "containers nested more than 256 deep");
  expect_error<ValidationError>([&] { TreeDef::dict({{"k", t}}); }, "containers nested more than 256 deep");
  // Building a very deep tree one level at a time stops at the budget, not at the stack's end.
  expect_error<ValidationError>([] { nested_tuples(100000); }, "nested more than");
}

TEST(Limits, JsonNestingPrescan) {
  EXPECT_EQ(find_excess_json_nesting("[[[]]]", 3), std::nullopt);
  EXPECT_EQ(find_excess_json_nesting("[[[[]]]]", 3), std::optional<size_t>(3));
  EXPECT_EQ(find_excess_json_nesting(R"({"a": "[[[[[[", "b": {"c": []}})", 3), std::nullopt);
  EXPECT_EQ(find_excess_json_nesting(R"(["\"[[[[", [[[]]]])", 3), std::optional<size_t>(13));
  EXPECT_EQ(find_excess_json_nesting(std::string(100000, '[')), std::optional<size_t>(kMaxJsonDepth));
}

TEST(Limits, FileCapsFromTheEnvironment) {
  {
    ScopedEnv e("EVOXC_MAX_FILE_BYTES", "");
    EXPECT_EQ(max_file_bytes(), kDefaultMaxFileBytes);
  }
  {
    ScopedEnv e("EVOXC_MAX_FILE_BYTES", "12345");
    EXPECT_EQ(max_file_bytes(), 12345U);
  }
  {
    ScopedEnv e("EVOXC_MAX_FILE_BYTES", "3M");
    EXPECT_EQ(max_file_bytes(), 3U << 20);
  }
  {
    ScopedEnv e("EVOXC_MAX_NPY_BYTES", "2g");
    EXPECT_EQ(max_npy_bytes(), uint64_t{2} << 30);
  }
  for (const char* bad : {"0", "-1", "12Q", "1.5G", "M", "99999999999999999999", "20000000000T", "1GB"}) {
    ScopedEnv e("EVOXC_MAX_FILE_BYTES", bad);
    expect_error<PersistenceError>([] { max_file_bytes(); }, "is not a positive byte count");
  }
  EXPECT_EQ(kDefaultMaxFileBytes, uint64_t{1} << 30);
  EXPECT_EQ(kDefaultMaxNpyBytes, uint64_t{64} << 30);
}

TEST(Limits, ReadFileReadsRegularFiles) {
  std::string p = temp_path("small.txt");
  std::ofstream(p) << "hello";
  EXPECT_EQ(read_file(p), "hello");
  EXPECT_EQ(read_file(p, 5), "hello");
  std::ofstream(p, std::ios::trunc).close();
  EXPECT_EQ(read_file(p), "");
  std::filesystem::remove(p);
}

TEST(Limits, ReadFileRefusesFilesOverTheCap) {
  std::string p = temp_path("big.txt");
  std::ofstream(p) << std::string(1000, 'x');
  expect_error<PersistenceError>([&] { read_file(p, 999); }, "1000 bytes, more than the limit of 999");
  {
    ScopedEnv e("EVOXC_MAX_FILE_BYTES", "100");
    expect_error<PersistenceError>([&] { read_file(p); }, "set EVOXC_MAX_FILE_BYTES to raise it");
    EXPECT_EQ(read_file(p, 1000).size(), 1000U);  // an explicit cap wins over the environment
  }
  EXPECT_EQ(read_file(p).size(), 1000U);
  std::filesystem::remove(p);
}

TEST(Limits, ReadFileRefusesNonRegularFiles) {
  expect_error<PersistenceError>([] { read_file("/dev/zero"); }, "not a regular file (it is a character device)");
  std::string dir = temp_path("dir");
  std::filesystem::create_directories(dir);
  expect_error<PersistenceError>([&] { read_file(dir); }, "not a regular file (it is a directory)");
  std::filesystem::remove(dir);
  // A FIFO with no writer: opening must not block, and it is refused at once.
  std::string fifo = temp_path("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expect_error<PersistenceError>([&] { read_file(fifo); }, "not a regular file (it is a FIFO)");
  std::filesystem::remove(fifo);
  expect_error<PersistenceError>([] { read_file("/nonexistent_evoxc_dir/x"); }, "does not exist");
}

}  // namespace
}  // namespace evoxc
