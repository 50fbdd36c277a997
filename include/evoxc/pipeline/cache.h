// Compile caches: an in-memory LRU of Executables (build_cached) and an on-disk store of compiled artifacts.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "evoxc/pipeline/pipeline.h"

namespace evoxc {

// An in-memory LRU of Executables. Thread-safe; a miss builds outside the lock (two threads
// missing the same key both build, the later insert wins). No hidden cache: the caller owns it.
class CompileCache {
 public:
  explicit CompileCache(size_t maxsize = 128);  // ValidationError for 0
  // The executable cached under `key`, or build()'s, inserted (evicting the least recently used).
  Executable get_or_build(const std::string& key, const std::function<Executable()>& build);
  int64_t hits() const;
  int64_t misses() const;
  size_t size() const;
  size_t maxsize() const { return maxsize_; }
  void clear();  // entries and counts

 private:
  size_t maxsize_;
  mutable std::mutex mu_;
  std::list<std::pair<std::string, Executable>> lru_;  // most recent first
  std::unordered_map<std::string, std::list<std::pair<std::string, Executable>>::iterator> index_;
  int64_t hits_ = 0, misses_ = 0;
};

// The key of one build, computed before tracing: the function's identity (a name the caller
// chooses — C++ callables have no identity the library can read), every argument's structure,
// specs and static values, the backend, the device and the compile options.
std::string build_key(const std::string& function_id, const std::vector<TraceArg>& args,
                      const BuildOptions& options = {});

// build_dynamic memoized in `cache` under build_key(function_id, args, options): a hit costs no trace.
Executable build_cached(CompileCache& cache, const std::string& function_id, const TraceFunction& fn,
                        const std::vector<TraceArg>& args, const BuildOptions& options = {});

// Compiled artifacts on disk, keyed by a hash of the lowered program's text, the compile options,
// the backend and its identity (Backend::identity: for xla, the PJRT plugin) and this host's CPU, so a second
// process reuses what the first compiled. An entry is
// code that will run: the directory is created 0700 and entries 0600; a directory or an entry owned by
// another user or writable by group or others (or an entry that is a symbolic link) is refused with a
// PersistenceError saying why, never loaded. Entries
// are .evoxcartifact files written atomically (a killed process never leaves a torn entry; two
// processes filling the same key write the same bytes and the last rename wins); a corrupted
// entry is a PersistenceError from the artifact reader, never a crash.
class DiskCache {
 public:
  // `dir` empty: EVOXC_CACHE_DIR, else $HOME/.cache/evoxc. Created on first store.
  explicit DiskCache(std::string dir = "");
  const std::string& dir() const { return dir_; }
  // The entry's key (32 hex digits) and path.
  std::string key(const LoweredProgram& lowered, const CompileOptions& options) const;
  std::string path(const std::string& key) const;
  // The cached artifact, or nullopt (no entry).
  std::optional<CompiledArtifact> find(const LoweredProgram& lowered, const CompileOptions& options) const;
  void store(const LoweredProgram& lowered, const CompileOptions& options, const CompiledArtifact& artifact) const;
  // find, else compile and store. `hit` (optional) says which.
  CompiledArtifact compile(const LoweredProgram& lowered, const CompileOptions& options = {},
                           bool* hit = nullptr) const;

  // This host's CPU as the cache keys it: the model name and a hash of its feature flags.
  static const std::string& host_cpu();

 private:
  void check_dir(bool create) const;
  std::optional<CompiledArtifact> find_at(const std::string& path) const;
  void store_at(const std::string& path, const CompiledArtifact& artifact) const;
  std::string dir_;
};

}  // namespace evoxc
