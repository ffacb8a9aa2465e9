#include "ratio_report.h"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <set>
#include <string>

namespace ral::bench {
namespace {

// Keeps the time per iteration of every run while printing the usual console output.
class Collector : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.error_occurred) continue;
      const double scale = run.time_unit == benchmark::kNanosecond    ? 1.0
                           : run.time_unit == benchmark::kMicrosecond ? 1e3
                           : run.time_unit == benchmark::kMillisecond ? 1e6
                                                                      : 1e9;
      const std::string name = run.run_name.str();
      // With --benchmark_repetitions the median stands for the run; otherwise the single run.
      if (run.run_type == Run::RT_Aggregate) {
        if (run.aggregate_name == "median") {
          ns_[name] = run.GetAdjustedRealTime() * scale;
          medians_.insert(name);
        }
      } else if (!medians_.count(name)) {
        ns_[name] = run.GetAdjustedRealTime() * scale;
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }
  const std::map<std::string, double>& ns() const { return ns_; }

 private:
  std::map<std::string, double> ns_;
  std::set<std::string> medians_;
};

}  // namespace

int runAndReport(int argc, char** argv, const std::vector<Ratio>& ratios,
                 const std::vector<Absolute>& absolutes) {
  benchmark::Initialize(&argc, argv);
  Collector collector;
  benchmark::RunSpecifiedBenchmarks(&collector);
  const auto& ns = collector.ns();
  std::printf("\n%-58s %10s %10s  %s\n", "ratio (same process)", "value", "target", "");
  for (const Ratio& r : ratios) {
    auto n = ns.find(r.numerator), d = ns.find(r.denominator);
    if (n == ns.end() || d == ns.end() || d->second <= 0) continue;
    const double v = n->second / d->second;
    const bool met = r.target <= 0 || (r.at_most ? v <= r.target : v >= r.target);
    char target[32] = "-";
    if (r.target > 0)
      std::snprintf(target, sizeof(target), "%s%.2f", r.at_most ? "<=" : ">=", r.target);
    std::printf("%-58s %9.2fx %10s  %s\n", r.label.c_str(), v, target,
                r.target > 0 ? (met ? "met" : "MISSED") : "");
  }
  for (const Absolute& a : absolutes) {
    auto it = ns.find(a.run);
    if (it == ns.end()) continue;
    const bool met = it->second <= a.target_ns;
    std::printf("%-58s %8.2fns %8s%.0fns  %s\n", a.label.c_str(), it->second, "<=", a.target_ns,
                met ? "met" : "MISSED");
  }
  benchmark::Shutdown();
  return 0;
}

}  // namespace ral::bench
