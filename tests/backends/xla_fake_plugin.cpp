// A library that poses as a PJRT plugin for the xla backend's must-fail tests: GetPjrtApi returns a table whose
// version is EVOXC_FAKE_PJRT_VERSION ("major.minor", default "0.1") and whose functions are all null.
#include <cstdlib>
#include <cstring>

#include "xla/pjrt/c/pjrt_c_api.h"

extern "C" __attribute__((visibility("default"))) const PJRT_Api* GetPjrtApi() {
  static PJRT_Api api;
  std::memset(&api, 0, sizeof api);
  api.struct_size = PJRT_Api_STRUCT_SIZE;
  int major = 0, minor = 1;
  if (const char* v = std::getenv("EVOXC_FAKE_PJRT_VERSION")) {
    major = std::atoi(v);
    if (const char* dot = std::strchr(v, '.')) minor = std::atoi(dot + 1);
  }
  api.pjrt_api_version.major_version = major;
  api.pjrt_api_version.minor_version = minor;
  return &api;
}
