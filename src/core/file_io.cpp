// Whole-file reads and atomic writes.
#include "evoxc/core/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "evoxc/core/error.h"
#include "evoxc/core/limits.h"

namespace evoxc {

void write_file_atomic(const std::string& path, std::string_view data, unsigned mode) {
  auto fail = [&](const std::string& why) { throw PersistenceError("cannot write '" + path + "': " + why); };
  // The temporary lives beside the target (same file system, so the rename is atomic). Its name
  // holds the pid and a process-wide counter, and O_EXCL guards against any leftover, so two
  // threads or processes writing one path never share a temporary. open() applies the umask
  // as a plain create would (mkstemp would force 0600).
  std::string dir = ".";
  std::string base = path;
  if (size_t slash = path.rfind('/'); slash != std::string::npos) {
    dir = slash == 0 ? "/" : path.substr(0, slash);
    base = path.substr(slash + 1);
  }
  static std::atomic<uint64_t> counter{0};
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; fd < 0 && attempt < 100; ++attempt) {
    tmp = (dir == "/" ? "" : dir) + "/." + base + ".tmp." + std::to_string(::getpid()) + "." +
          std::to_string(counter.fetch_add(1, std::memory_order_relaxed));
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, static_cast<mode_t>(mode));
    if (fd < 0 && errno != EEXIST) fail(std::strerror(errno));
  }
  if (fd < 0) fail("no free temporary name beside it");
  std::string why;
  for (size_t done = 0; why.empty() && done < data.size();) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      why = n < 0 ? std::strerror(errno) : "short write";
    else
      done += static_cast<size_t>(n);
  }
  // fsync before the rename: otherwise a power loss can leave the new name on an empty file.
  if (why.empty() && ::fsync(fd) != 0) why = std::strerror(errno);
  if (::close(fd) != 0 && why.empty()) why = std::strerror(errno);
  if (why.empty() && ::rename(tmp.c_str(), path.c_str()) != 0) why = std::strerror(errno);
  if (!why.empty()) {
    ::unlink(tmp.c_str());
    fail(why);
  }
  // Make the rename itself durable; a folder that refuses fsync (some file systems) is not an error.
  if (int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

namespace {

std::string read_file_impl(const std::string& path, uint64_t max_bytes, bool private_only) {
  if (max_bytes == 0) max_bytes = max_file_bytes();
  auto fail = [&](const std::string& why) -> PersistenceError {
    return PersistenceError("cannot read '" + path + "': " + why);
  };
  // O_NONBLOCK: opening a FIFO must not wait for a writer before we can refuse it.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | (private_only ? O_NOFOLLOW : 0));
  if (fd < 0 && private_only && errno == ELOOP) throw fail("it is a symbolic link, refused for a private file");
  if (fd < 0) throw fail(errno == ENOENT ? std::string("the file does not exist") : std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw fail(std::strerror(errno));
  if (!S_ISREG(st.st_mode)) {
    const char* what = S_ISDIR(st.st_mode)    ? "a directory"
                       : S_ISFIFO(st.st_mode) ? "a FIFO"
                       : S_ISCHR(st.st_mode)  ? "a character device"
                       : S_ISBLK(st.st_mode)  ? "a block device"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                                              : "a special file";
    throw fail(std::string("not a regular file (it is ") + what + ")");
  }
  if (private_only && st.st_uid != ::geteuid())
    throw fail("it is owned by user id " + std::to_string(st.st_uid) + ", not by this user (" +
               std::to_string(::geteuid()) + "); refused: its content would run as this user's own");
  if (private_only && (st.st_mode & 022) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    throw fail(std::string("it is writable by its group or others (mode ") + mode +
               "); refused: anyone could have changed it. Delete it (or chmod go-w) to use it again");
  }
  auto too_big = [&](uint64_t n) {
    return fail("the file has " + std::to_string(n) + " bytes, more than the limit of " + std::to_string(max_bytes) +
                " (set EVOXC_MAX_FILE_BYTES to raise it)");
  };
  auto size = static_cast<uint64_t>(st.st_size);
  if (size > max_bytes) throw too_big(size);
  std::string out;
  out.resize(static_cast<size_t>(size));
  size_t got = 0;
  // Read until end of file: the file may have changed size since fstat, and never past the cap.
  for (;;) {
    if (got == out.size()) {
      if (out.size() > max_bytes) throw too_big(out.size());
      out.resize(out.size() + 65536);
    }
    ssize_t n = ::read(fd, out.data() + got, out.size() - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw fail(std::strerror(errno));
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  if (got > max_bytes) throw too_big(got);
  out.resize(got);
  return out;
}

}  // namespace

std::string read_file(const std::string& path, uint64_t max_bytes) { return read_file_impl(path, max_bytes, false); }

std::string read_private_file(const std::string& path, uint64_t max_bytes) {
  return read_file_impl(path, max_bytes, true);
}

}  // namespace evoxc
