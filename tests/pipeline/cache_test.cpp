// CompileCache (LRU of Executables, keyed before tracing) and DiskCache (compiled artifacts shared between processes).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>

#include "evoxc/evoxc.h"
#include "expect_error.h"

namespace evoxc {
namespace {

std::string temp_dir(const std::string& name) {
  std::string d = ::testing::TempDir() + "/evoxc_cache_" + std::to_string(::getpid()) + "_" + name;
  std::filesystem::remove_all(d);
  return d;
}

// f(x, scale): x * scale, with `scale` a static value.
TraceFunction scaled() {
  return [](const std::vector<TracedArg>& a) {
    SymbolicTensor x = std::get<SymbolicTensor>(a[0].leaf());
    double s = std::get<double>(a[1].leaf());
    return Tree<SymbolicTensor>(multiply(x, s));
  };
}

std::vector<TraceArg> args(int64_t n, double scale) {
  return {arg_leaf(TensorSpec(Shape{n}, DType::F32)), arg_leaf(scale)};
}

TEST(CompileCache, HitsMissesAndLruEviction) {
  CompileCache cache(2);
  std::atomic<int> traced{0};
  TraceFunction f = [&, g = scaled()](const std::vector<TracedArg>& a) {
    ++traced;
    return g(a);
  };
  Executable a = build_cached(cache, "scaled", f, args(3, 2.0));
  Executable a2 = build_cached(cache, "scaled", f, args(3, 2.0));
  EXPECT_EQ(traced.load(), 1);  // a hit costs no trace
  EXPECT_EQ(cache.hits(), 1);
  EXPECT_EQ(cache.misses(), 1);
  EXPECT_EQ(a.graph().module_ptr(), a2.graph().module_ptr());
  Tensor y = run(a2, Tensor::from_vector<float>({1, 2, 3}, {3})).leaf();
  EXPECT_EQ(y.data<float>()[2], 6.0f);
  build_cached(cache, "scaled", f, args(4, 2.0));  // another spec
  build_cached(cache, "scaled", f, args(3, 3.0));  // another static: evicts (3, 2.0), the least recent
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(traced.load(), 3);
  build_cached(cache, "scaled", f, args(3, 2.0));
  EXPECT_EQ(traced.load(), 4);
  EXPECT_EQ(cache.misses(), 4);
  cache.clear();
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(cache.hits(), 0);
  test::expect_error<ValidationError>([] { CompileCache bad(0); }, "maxsize");
}

TEST(CompileCache, KeyTellsApartEverythingThatChangesTheBuild) {
  std::string base = build_key("f", args(3, 0.1));
  EXPECT_EQ(base, build_key("f", args(3, 0.1)));
  EXPECT_NE(base, build_key("g", args(3, 0.1)));
  EXPECT_NE(base, build_key("f", args(3, 0.1000000000000001)));
  EXPECT_NE(base, build_key("f", {arg_leaf(TensorSpec(Shape{3}, DType::F64)), arg_leaf(0.1)}));
  EXPECT_NE(base, build_key("f", {arg_leaf(TensorSpec(Shape{3}, DType::F32)), arg_leaf(int64_t{0})}));
  BuildOptions o3;
  o3.compile.opt_level = OptLevel(3);
  EXPECT_NE(base, build_key("f", args(3, 0.1), o3));
  // Structure counts: a dict key, a tuple of one vs the leaf itself.
  std::vector<TraceArg> d1{TraceArg::dict({{"a", arg_leaf(1.0)}})}, d2{TraceArg::dict({{"b", arg_leaf(1.0)}})};
  EXPECT_NE(build_key("f", d1), build_key("f", d2));
  EXPECT_NE(build_key("f", {TraceArg::tuple({arg_leaf(1.0)})}), build_key("f", {arg_leaf(1.0)}));
}

TEST(DiskCache, SecondCacheReusesTheEntryAndRunsTheSame) {
  std::string dir = temp_dir("reuse");
  Graph g =
      trace([](const SymbolicTensor& x) { return tanh(add(multiply(x, x), 1.0)); }, TensorSpec(Shape{4}, DType::F32));
  LoweredProgram lowered = lower(g);
  bool hit = true;
  CompiledArtifact first = DiskCache(dir).compile(lowered, {}, &hit);
  EXPECT_FALSE(hit);
  DiskCache second(dir);  // as another process would
  CompiledArtifact again = second.compile(lower(g), {}, &hit);
  EXPECT_TRUE(hit);
  EXPECT_EQ(again.content_hash(), first.content_hash());
  Tensor x = Tensor::from_vector<float>({0.5f, -1, 2, 0}, {4});
  Tensor a = run(load(first), x).leaf(), b = run(load(again), x).leaf();
  EXPECT_EQ(std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()), 0);
  // Other options, another entry.
  CompileOptions o1;
  o1.opt_level = OptLevel(1);
  EXPECT_NE(second.key(lowered, o1), second.key(lowered, {}));
  EXPECT_FALSE(second.find(lowered, o1).has_value());
}

TEST(DiskCache, CorruptedEntryIsAPersistenceErrorNamingTheFile) {
  std::string dir = temp_dir("corrupt");
  Graph g = trace([](const SymbolicTensor& x) { return exp(x); }, TensorSpec(Shape{2}, DType::F32));
  LoweredProgram lowered = lower(g);
  DiskCache cache(dir);
  cache.compile(lowered);
  std::string p = cache.path(cache.key(lowered, {}));
  std::filesystem::resize_file(p, std::filesystem::file_size(p) / 2);
  test::expect_error<PersistenceError>([&] { cache.find(lowered, {}); }, "delete it");
}

// Entries are code that will run: the directory is private, entries are this user's alone, and anything another
// user could have written is refused, never loaded.
TEST(DiskCache, PrivateDirectoryAndEntriesAndRefusalsOfWhatOthersCouldWrite) {
  std::string dir = temp_dir("private") + "/sub";
  Graph g = trace([](const SymbolicTensor& x) { return cos(x); }, TensorSpec(Shape{4}, DType::F32));
  LoweredProgram lowered = lower(g);
  DiskCache cache(dir);
  cache.compile(lowered);
  std::string p = cache.path(cache.key(lowered, {}));
  namespace fs = std::filesystem;
  EXPECT_EQ(fs::status(dir).permissions() & fs::perms::all, fs::perms::owner_all);
  EXPECT_EQ(fs::status(p).permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);
  ASSERT_TRUE(cache.find(lowered, {}).has_value());

  fs::permissions(p, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::group_write |
                         fs::perms::others_read | fs::perms::others_write);
  test::expect_error<PersistenceError>([&] { cache.find(lowered, {}); }, "writable by its group or others (mode 0666)");
  bool hit = true;
  test::expect_error<PersistenceError>([&] { cache.compile(lowered, {}, &hit); }, "delete it");
  fs::permissions(p, fs::perms::owner_read | fs::perms::owner_write);
  ASSERT_TRUE(cache.find(lowered, {}).has_value());

  fs::permissions(dir, fs::perms::all);
  test::expect_error<PersistenceError>([&] { cache.find(lowered, {}); },
                                       "directory " + dir + " is writable by its group or others");
  test::expect_error<PersistenceError>([&] { cache.store(lowered, {}, compile(lowered)); }, "chmod 700");
  fs::permissions(dir, fs::perms::owner_all);

  // An entry that is a symbolic link (to a file anyone could have written) is refused too.
  std::string elsewhere = temp_dir("private_target");
  fs::create_directories(elsewhere);
  elsewhere += "/entry";
  fs::copy_file(p, elsewhere);
  fs::remove(p);
  fs::create_symlink(elsewhere, p);
  test::expect_error<PersistenceError>([&] { cache.find(lowered, {}); }, "symbolic link");
}

TEST(DiskCache, TwoProcessesFillingOneKeyLeaveAValidEntry) {
  std::string dir = temp_dir("race");
  Graph g = trace([](const SymbolicTensor& x) { return sin(multiply(x, 3.0)); }, TensorSpec(Shape{8}, DType::F32));
  LoweredProgram lowered = lower(g);
  DiskCache cache(dir);
  CompiledArtifact artifact = compile(lowered);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    for (int i = 0; i < 50; ++i) cache.store(lowered, {}, artifact);
    _exit(0);
  }
  for (int i = 0; i < 50; ++i) cache.store(lowered, {}, artifact);
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  std::optional<CompiledArtifact> found = cache.find(lowered, {});
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->content_hash(), artifact.content_hash());
  // No temporary file is left behind.
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) files += e.is_regular_file();
  EXPECT_EQ(files, 1);
}

TEST(DiskCache, DirectoryFromTheEnvironment) {
  std::string dir = temp_dir("env");
  ::setenv("EVOXC_CACHE_DIR", dir.c_str(), 1);
  EXPECT_EQ(DiskCache().dir(), dir);
  ::unsetenv("EVOXC_CACHE_DIR");
  EXPECT_NE(DiskCache().dir(), dir);
  EXPECT_NE(DiskCache::host_cpu().find("features"), std::string::npos);
}

}  // namespace
}  // namespace evoxc
