// The row_switch op's variant list: shared by its inference (ops) and its kernel (interp).
#pragma once

#include <string>
#include <vector>

namespace evoxc {

// The op names of a row_switch `variants` attribute, split at commas (no spaces; an empty name
// is the inference's TypeError).
std::vector<std::string> row_switch_variants(const std::string& spec);

}  // namespace evoxc
