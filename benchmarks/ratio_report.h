// Runs the registered Google Benchmarks and prints ratios between named runs of the same
// process, so every performance claim is relative to a baseline measured alongside it.
#ifndef RAL_BENCHMARKS_RATIO_REPORT_H_
#define RAL_BENCHMARKS_RATIO_REPORT_H_

#include <string>
#include <vector>

namespace ral::bench {

struct Ratio {
  std::string label;        // what the ratio means
  std::string numerator;    // benchmark run name
  std::string denominator;  // benchmark run name
  double target = 0;        // 0: report only
  bool at_most = true;      // target is an upper bound (else a lower bound)
};

struct Absolute {
  std::string label;
  std::string run;  // benchmark run name; its time per iteration in ns is compared
  double target_ns = 0;
};

// Runs all benchmarks (honouring --benchmark_* flags) and prints the table. Returns 0.
int runAndReport(int argc, char** argv, const std::vector<Ratio>& ratios,
                 const std::vector<Absolute>& absolutes = {});

}  // namespace ral::bench

#endif  // RAL_BENCHMARKS_RATIO_REPORT_H_
