// Shared by the xla backend's tests: the plugin discovery finds with the project's .venv searched too (where `make`
// installs XLA's CPU plugin), chosen once per test process, and the skip when none loads.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "evoxc/backends/xla.h"

namespace evoxc::testing {

// Whether the plugin loads (`why` says why not). The first call adds the .venv's site-packages to discovery and, when
// `options` is given, chooses the plugin's client options (one plugin per process: before anything loads it).
inline bool xla_plugin(std::string* why, const xla::InitOptions* options = nullptr) {
  static const bool chosen = [options] {
    std::error_code ec;
    std::vector<std::string> dirs;
    for (const auto& e : std::filesystem::directory_iterator(std::string(EVOXC_TEST_VENV) + "/lib", ec))
      dirs.push_back((e.path() / "site-packages").string());
    xla::add_search_directories(dirs);
    if (options) xla::initialize(*options);
    return true;
  }();
  (void)chosen;
  return xla::available(why);
}

}  // namespace evoxc::testing

// Skips the test, saying why, when no plugin loads; `...`: the InitOptions* of xla_plugin.
#define REQUIRE_XLA_PLUGIN(...)                                          \
  do {                                                                   \
    std::string why_;                                                    \
    if (!::evoxc::testing::xla_plugin(&why_ __VA_OPT__(, ) __VA_ARGS__)) \
      GTEST_SKIP() << "no PJRT plugin loads here (" << why_ << ")";      \
  } while (0)
