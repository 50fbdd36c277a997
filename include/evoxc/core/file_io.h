// Whole-file reads and atomic writes (temp file + rename), so a crash never leaves a half-written file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace evoxc {

// Writes `data` to `path` through a temporary file in the same folder and a rename; the file gets `mode` less the
// umask (0600: readable and writable by this user alone). PersistenceError naming the path when any step fails.
void write_file_atomic(const std::string& path, std::string_view data, unsigned mode = 0666);
// The whole content of a regular file. PersistenceError naming the path when the file cannot
// be read, is not a regular file (a directory, FIFO or device: refused before reading, so
// `/dev/zero` or a pipe cannot make us read forever), or holds more than `max_bytes`
// (0: max_file_bytes(), 1 GiB unless EVOXC_MAX_FILE_BYTES says otherwise; see core/limits.h).
std::string read_file(const std::string& path, uint64_t max_bytes = 0);
// read_file of a file whose content will be trusted as this user's own (a cache entry holding code to run): also
// refused, with the reason, when it is a symbolic link, is not owned by the effective user, or is writable by its
// group or others. The checks are made on the opened file (no window between the check and the read).
std::string read_private_file(const std::string& path, uint64_t max_bytes = 0);

}  // namespace evoxc
