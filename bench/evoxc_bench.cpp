// Times evoxc workloads on the interpreter and prints one JSON object (median seconds per call).
#include <cstring>
#include <iostream>
#include <map>
#include <string>

#include "evoxc/core/error.h"
#include "evoxc/interp/interp.h"
#include "workloads.h"

int main(int argc, char** argv) {
  bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  // Keys in sorted order, as bench/compare.py has always read them.
  std::map<std::string, double> results;
  try {
    for (const auto& r : evoxc::bench::run_workloads(quick)) results[r.name] = r.seconds;
  } catch (const evoxc::Error& e) {
    std::cerr << "evoxc_bench: " << e.what() << "\n";
    return 1;
  }
  std::cout << "{";
  bool first = true;
  for (const auto& [k, v] : results) {
    std::cout << (first ? "" : ", ") << "\"" << k << "\": " << v;
    first = false;
  }
  std::cout << ", \"threads\": " << evoxc::interp::num_threads() << "}\n";
  return 0;
}
