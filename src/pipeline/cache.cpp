// CompileCache (an LRU of Executables keyed before tracing) and DiskCache (compiled artifacts on disk).
#include "evoxc/pipeline/cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "evoxc/core/file_io.h"

namespace evoxc {

CompileCache::CompileCache(size_t maxsize) : maxsize_(maxsize) {
  if (maxsize == 0) throw ValidationError("CompileCache: maxsize must be >= 1");
}

Executable CompileCache::get_or_build(const std::string& key, const std::function<Executable()>& build) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = index_.find(key);
    if (it != index_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);
      ++hits_;
      return it->second->second;
    }
    ++misses_;
  }
  Executable exe = build();
  std::lock_guard<std::mutex> lock(mu_);
  auto it = index_.find(key);
  if (it != index_.end()) {
    it->second->second = exe;
    lru_.splice(lru_.begin(), lru_, it->second);
    return exe;
  }
  lru_.emplace_front(key, exe);
  index_[key] = lru_.begin();
  while (lru_.size() > maxsize_) {
    index_.erase(lru_.back().first);
    lru_.pop_back();
  }
  return exe;
}

int64_t CompileCache::hits() const {
  std::lock_guard<std::mutex> lock(mu_);
  return hits_;
}
int64_t CompileCache::misses() const {
  std::lock_guard<std::mutex> lock(mu_);
  return misses_;
}
size_t CompileCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lru_.size();
}
void CompileCache::clear() {
  std::lock_guard<std::mutex> lock(mu_);
  lru_.clear();
  index_.clear();
  hits_ = misses_ = 0;
}

namespace {

// Length-prefixed fields, so no two different keys write the same text.
void field(std::string& k, std::string_view s) {
  k += std::to_string(s.size());
  k += ':';
  k += s;
}

void write_arg(std::string& k, const TraceArg& a) {
  k += static_cast<char>('0' + static_cast<int>(a.kind()));
  if (a.is_leaf()) {
    const ArgLeaf& l = a.leaf();
    k += static_cast<char>('a' + l.index());
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, TensorSpec>) {
            field(k, v.to_string());
            field(k, v.device ? v.device->to_string() : "");
          } else if constexpr (std::is_same_v<T, std::string>) {
            field(k, v);
          } else if constexpr (std::is_same_v<T, DType>) {
            field(k, dtype_name(v));
          } else if constexpr (std::is_same_v<T, double>) {
            // The bits: 0.1 and 0.1000000000000001 are different statics.
            uint64_t bits;
            std::memcpy(&bits, &v, sizeof bits);
            field(k, std::to_string(bits));
          } else {
            field(k, std::to_string(v));
          }
        },
        l);
    return;
  }
  field(k, std::to_string(a.size()));
  for (size_t i = 0; i < a.size(); ++i) {
    if (a.kind() == TreeKind::Dict) field(k, a.keys()[i]);
    write_arg(k, a.children()[i]);
  }
}

uint64_t fnv1a(std::string_view s, uint64_t h = 1469598103934665603ULL) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
  return h;
}

std::string hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

std::string build_key(const std::string& function_id, const std::vector<TraceArg>& args, const BuildOptions& options) {
  std::string k;
  field(k, function_id);
  field(k, std::to_string(args.size()));
  for (const TraceArg& a : args) write_arg(k, a);
  field(k, options.backend);
  field(k, options.device.to_string());
  auto [level, source] = options.compile.resolve_opt_level();
  field(k, level.to_string());
  for (const std::string& f : options.compile.flags) field(k, f);
  return k;
}

Executable build_cached(CompileCache& cache, const std::string& function_id, const TraceFunction& fn,
                        const std::vector<TraceArg>& args, const BuildOptions& options) {
  return cache.get_or_build(build_key(function_id, args, options), [&] { return build_dynamic(fn, args, options); });
}

const std::string& DiskCache::host_cpu() {
  static const std::string cpu = [] {
    std::ifstream in("/proc/cpuinfo");
    std::string line, model, flags;
    while (std::getline(in, line) && (model.empty() || flags.empty())) {
      if (model.empty() && line.rfind("model name", 0) == 0) model = line.substr(line.find(':') + 2);
      if (flags.empty() && (line.rfind("flags", 0) == 0 || line.rfind("Features", 0) == 0))
        flags = line.substr(line.find(':') + 1);
    }
    return (model.empty() ? std::string("unknown cpu") : model) + " / features " + hex64(fnv1a(flags));
  }();
  return cpu;
}

DiskCache::DiskCache(std::string dir) : dir_(std::move(dir)) {
  if (dir_.empty()) {
    if (const char* env = std::getenv("EVOXC_CACHE_DIR"); env && *env) {
      dir_ = env;
    } else if (const char* home = std::getenv("HOME"); home && *home) {
      dir_ = std::string(home) + "/.cache/evoxc";
    } else {
      throw ValidationError("DiskCache: no directory: set EVOXC_CACHE_DIR (or HOME)");
    }
  }
}

std::string DiskCache::key(const LoweredProgram& lowered, const CompileOptions& options) const {
  std::string k;
  field(k, lowered.backend());
  field(k, get_backend(lowered.backend()).identity());
  field(k, host_cpu());
  field(k, std::to_string(CompiledArtifact::kFormatVersion) + "." + std::to_string(CompiledArtifact::kAbi));
  auto [level, source] = options.resolve_opt_level();
  field(k, level.to_string());
  for (const std::string& f : options.flags) field(k, f);
  field(k, lowered.text());
  // Two independent 64-bit hashes: a collision would need both to agree.
  return hex64(fnv1a(k)) + hex64(fnv1a(k, 0x84222325cbf29ce4ULL));
}

std::string DiskCache::path(const std::string& key) const { return dir_ + "/" + key + ".evoxcartifact"; }

std::optional<CompiledArtifact> DiskCache::find(const LoweredProgram& lowered, const CompileOptions& options) const {
  return find_at(path(key(lowered, options)));
}

void DiskCache::store(const LoweredProgram& lowered, const CompileOptions& options,
                      const CompiledArtifact& artifact) const {
  store_at(path(key(lowered, options)), artifact);
}

CompiledArtifact DiskCache::compile(const LoweredProgram& lowered, const CompileOptions& options, bool* hit) const {
  // The key hashes the whole lowered text: computed once for the lookup and the store.
  std::string p = path(key(lowered, options));
  if (auto found = find_at(p)) {
    if (hit) *hit = true;
    return *found;
  }
  if (hit) *hit = false;
  CompiledArtifact a = evoxc::compile(lowered, options);
  store_at(p, a);
  return a;
}

// The cache directory holds code this process will run: it must be this user's and writable by no one else (an
// entry planted by another user would run as ours). Created 0700; an existing one owned by another user or
// writable by others is refused (never chmod-ed: it may be a directory the user shares on purpose).
void DiskCache::check_dir(bool create) const {
  std::error_code ec;
  if (create && !std::filesystem::exists(dir_, ec)) {
    std::filesystem::create_directories(dir_, ec);
    if (ec) throw PersistenceError("DiskCache: cannot create " + dir_ + ": " + ec.message());
    ::chmod(dir_.c_str(), 0700);
  }
  struct stat st {};
  if (::stat(dir_.c_str(), &st) != 0) {
    if (!create && errno == ENOENT) return;  // no directory, no entries
    throw PersistenceError("DiskCache: cannot use " + dir_ + ": " + std::strerror(errno));
  }
  if (!S_ISDIR(st.st_mode)) throw PersistenceError("DiskCache: " + dir_ + " is not a directory");
  if (st.st_uid != ::geteuid())
    throw PersistenceError("DiskCache: the cache directory " + dir_ + " is owned by user id " +
                           std::to_string(st.st_uid) +
                           ", not by this user; refused (its entries are code that "
                           "would run as this user): set EVOXC_CACHE_DIR to a directory of your own");
  if ((st.st_mode & 022) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    throw PersistenceError("DiskCache: the cache directory " + dir_ + " is writable by its group or others (mode " +
                           mode +
                           "); refused (anyone could plant code in it): chmod 700 it, or set "
                           "EVOXC_CACHE_DIR to a private directory");
  }
}

std::optional<CompiledArtifact> DiskCache::find_at(const std::string& p) const {
  check_dir(false);
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(p, ec))) return std::nullopt;
  try {
    // An entry must be this user's and writable by no one else (read_private_file checks the opened file).
    return CompiledArtifact::from_bytes(read_private_file(p), p);
  } catch (const PersistenceError& e) {
    // Never a silent recompile over a bad entry: say which file, and how to recover.
    throw PersistenceError("DiskCache: the entry " + p + " cannot be used (" + e.what() +
                           "); delete it to have it compiled again");
  }
}

void DiskCache::store_at(const std::string& p, const CompiledArtifact& artifact) const {
  check_dir(true);
  write_file_atomic(p, artifact.to_bytes(), 0600);
}

}  // namespace evoxc
