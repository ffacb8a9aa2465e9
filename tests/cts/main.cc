// The conformance suite's main(): points the CUDA and HSA drivers at the simulated libraries, and
// prints, after the run, one line per driver: how many tests passed, were skipped, failed as
// expected (xfail) or failed.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "cts.h"

namespace ral::cts {
namespace {

struct Tally {
  int pass = 0, skip = 0, xfail = 0, fail = 0;
};

class ReportListener final : public ::testing::EmptyTestEventListener {
 public:
  void OnTestEnd(const ::testing::TestInfo& info) override {
    const std::string name = info.name();  // "Allocate/cpu"
    const size_t slash = name.rfind('/');
    if (slash == std::string::npos) return;
    Tally& t = tallies_[name.substr(slash + 1)];
    const std::string full = std::string(info.test_suite_name()) + "." + name;
    const ::testing::TestResult* r = info.result();
    if (r->Skipped()) {
      ++t.skip;
    } else if (r->Failed()) {
      ++t.fail;
    } else if (wasExpectedFailure(full)) {
      ++t.xfail;
    } else {
      ++t.pass;
    }
  }
  void OnTestProgramEnd(const ::testing::UnitTest&) override {
    std::printf("\nDriver conformance:\n  %-10s %6s %6s %6s %6s\n", "driver", "pass", "skip",
                "xfail", "fail");
    for (const auto& [driver, t] : tallies_)
      std::printf("  %-10s %6d %6d %6d %6d\n", driver.c_str(), t.pass, t.skip, t.xfail, t.fail);
    std::fflush(stdout);
  }

 private:
  std::map<std::string, Tally> tallies_;
};

}  // namespace
}  // namespace ral::cts

int main(int argc, char** argv) {
#ifdef RAL_SIM_CUDA_LIBRARY
  // The cuda backend is the simulated device, whatever this machine has.
  setenv("RAL_CUDA_DRIVER_PATH", RAL_SIM_CUDA_LIBRARY, 1);
#endif
#ifdef RAL_SIM_HSA_LIBRARY
  // So is the hsa backend.
  setenv("RAL_HSA_RUNTIME_PATH", RAL_SIM_HSA_LIBRARY, 1);
#endif
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::UnitTest::GetInstance()->listeners().Append(new ral::cts::ReportListener());
  return RUN_ALL_TESTS();
}
