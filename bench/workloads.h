// The benchmark workloads shared by evoxc_bench (JSON for bench/compare.py) and `evoxc bench` (a table).
#pragma once

#include <string>
#include <vector>

namespace evoxc::bench {

struct WorkloadResult {
  std::string name;         // the key bench/compare.py matches with its numpy/torch/jax peers
  std::string description;  // one line for people
  double seconds = 0;       // median seconds per call of Executable::execute
};

// Builds each workload on the interpreter and times the native hot path (execute with
// preallocated outputs). `quick` shortens the timing batches. Throws evoxc::Error when a
// workload fails to build or run.
std::vector<WorkloadResult> run_workloads(bool quick);

}  // namespace evoxc::bench
