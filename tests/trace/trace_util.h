// Helpers shared by the trace tests.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace evoxc::testing {

// Runs f and expects an E whose message contains every one of `parts`.
template <typename E, typename F>
void expect_error(F&& f, const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "no error";
  } catch (const E& e) {
    for (const auto& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

}  // namespace evoxc::testing
