// Whole-file reads and atomic writes (temp file + rename), so a crash never leaves a half-written file.
#pragma once

#include <string>
#include <string_view>

namespace evoxc {

// Writes `data` to `path` through a temporary file in the same folder and a rename.
// PersistenceError naming the path when any step fails.
void write_file_atomic(const std::string& path, std::string_view data);
// PersistenceError naming the path when the file cannot be read.
std::string read_file(const std::string& path);

}  // namespace evoxc
