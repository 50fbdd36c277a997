// Test helpers shared by the hostile-input tests: expect a typed error with a message fragment, build long inputs.
#pragma once

#include <gtest/gtest.h>

#include <exception>
#include <string>

namespace evoxc::test {

// Runs f and expects an E whose message contains `substring`.
template <typename E, typename F>
void expect_error(F&& f, const std::string& substring) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one containing \"" << substring << "\"";
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(substring), std::string::npos) << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong error type: " << e.what();
  }
}

// s repeated n times (deep or long inputs are generated, never committed).
inline std::string repeat(const std::string& s, int n) {
  std::string out;
  out.reserve(s.size() * static_cast<size_t>(n > 0 ? n : 0));
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

}  // namespace evoxc::test
