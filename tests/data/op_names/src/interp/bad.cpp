// A fixture for the op-name check: every marked line compares an op's name, so the check must fail on this tree.
#include <algorithm>
#include <string_view>

namespace fixture {

constexpr std::string_view kOps[] = {"cumsum", "cumprod"};

int dispatch(const Operation& op, std::string_view name) {
  if (op.name() == "add") return 1;                                                   // bad: rule 1
  if ("exp" != name) return 2;                                                        // bad: rule 1, reversed
  if (op.name().rfind("arg", 0) == 0) return 3;                                       // bad: rule 2, a prefix of argmax
  if (std::find(std::begin(kOps), std::end(kOps), name) != std::end(kOps)) return 4;  // bad: rule 3
  if (kNames.count(op.name())) return 5;                                              // bad: rule 3
  return 0;
}

}  // namespace fixture
