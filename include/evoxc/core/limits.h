// Limits on hostile input shared by every reader and recursive walker: one nesting budget and the file-size caps.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace evoxc {

// The one nesting budget. Every structure whose depth is data (regions inside regions,
// parenthesised or chained extents, pytree containers, ...) is refused beyond this many
// levels, by its reader with a typed error naming the position, and where a value can
// be built in memory (DimExpr, Tree) by its constructor, so the recursive printers,
// comparisons and destructors never meet a deeper one. Legitimate programs stay far
// below it, and it keeps the recursion of every walker to a bounded, small stack.
inline constexpr int kMaxNestingDepth = 256;

// Parentheses in the text of one extent: the printed form of the deepest extent has one level
// per node plus the outer parentheses and those of a negative constant, and must read back.
inline constexpr int kMaxExtentParens = kMaxNestingDepth + 2;

// JSON documents nest about four levels per region level (ops array, op object, regions
// array, block object), so the JSON budget is derived from kMaxNestingDepth.
inline constexpr int kMaxJsonDepth = 4 * kMaxNestingDepth + 16;

// The most nodes one extent expression (DimExpr) may have, counting shared subexpressions
// once per use: bounds the time and text of printing and comparing any extent.
inline constexpr uint32_t kMaxExtentNodes = 10000;

// Default size caps of the file readers. EVOXC_MAX_FILE_BYTES and EVOXC_MAX_NPY_BYTES
// override them (a positive byte count with an optional K, M, G or T suffix, powers of 1024).
inline constexpr uint64_t kDefaultMaxFileBytes = uint64_t{1} << 30;  // graphs, EvoXIR text, artifacts: 1 GiB
inline constexpr uint64_t kDefaultMaxNpyBytes = uint64_t{64} << 30;  // .npy data: 64 GiB

// The caps in effect, read from the environment on each call; PersistenceError naming the
// variable when it is set to something that is not a positive byte count.
uint64_t max_file_bytes();
uint64_t max_npy_bytes();

// The byte offset of the first '[' or '{' of `json` that opens a level deeper than
// `max_depth` (strings are skipped), or nullopt. A pre-scan, so a JSON parser or the
// recursive copy, dump and destruction of its document never see a deeper text.
std::optional<size_t> find_excess_json_nesting(std::string_view json, int max_depth = kMaxJsonDepth);

}  // namespace evoxc
