// See conformance.h.
#include "tests/support/conformance.h"

#include <cstdio>
#include <map>
#include <mutex>
#include <set>

namespace ral::testing {
namespace {

std::mutex xfail_mutex;
std::set<std::string>& xfails() {
  static auto* names = new std::set<std::string>();
  return *names;
}

std::string currentFullName() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return std::string(info->test_suite_name()) + "." + info->name();
}

struct Tally {
  int pass = 0, skip = 0, xfail = 0, fail = 0;
};

class ReportListener final : public ::testing::EmptyTestEventListener {
 public:
  ReportListener(const char* title, const char* column) : title_(title), column_(column) {}
  void OnTestEnd(const ::testing::TestInfo& info) override {
    const std::string name = info.name();  // "Allocate/cpu"
    const size_t slash = name.rfind('/');
    if (slash == std::string::npos) return;
    Tally& t = tallies_[name.substr(slash + 1)];
    const ::testing::TestResult* r = info.result();
    std::lock_guard<std::mutex> lock(xfail_mutex);
    if (r->Skipped()) {
      ++t.skip;
    } else if (r->Failed()) {
      ++t.fail;
    } else if (xfails().count(std::string(info.test_suite_name()) + "." + name) > 0) {
      ++t.xfail;
    } else {
      ++t.pass;
    }
  }
  void OnTestProgramEnd(const ::testing::UnitTest&) override {
    std::printf("\n%s:\n  %-10s %6s %6s %6s %6s\n", title_, column_, "pass", "skip", "xfail",
                "fail");
    for (const auto& [backend, t] : tallies_)
      std::printf("  %-10s %6d %6d %6d %6d\n", backend.c_str(), t.pass, t.skip, t.xfail, t.fail);
    std::fflush(stdout);
  }

 private:
  const char* title_;
  const char* column_;
  std::map<std::string, Tally> tallies_;
};

}  // namespace

const char* expectedFailureFor(const ExpectedFailureEntry* entries, const std::string& backend) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string suite = info->test_suite_name();  // "Drivers/Memory"
  suite = suite.substr(suite.find('/') + 1);
  std::string test = info->name();  // "Allocate/cpu"
  test = test.substr(0, test.rfind('/'));
  for (const ExpectedFailureEntry* e = entries; e->suite != nullptr; ++e)
    if (suite == e->suite && test == e->test && backend == e->backend) return e->reason;
  return nullptr;
}

void ExpectedFailureScope::begin(const char* reason) {
  reason_ = reason;
  if (reason_ == nullptr) return;
  results_ = std::make_unique<::testing::TestPartResultArray>();
  reporter_ = std::make_unique<::testing::ScopedFakeTestPartResultReporter>(
      ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ALL_THREADS, results_.get());
}

void ExpectedFailureScope::finish() {
  if (reason_ == nullptr) return;
  reporter_.reset();
  bool failed = false, skipped = false;
  for (int i = 0; i < results_->size(); ++i) {
    failed |= results_->GetTestPartResult(i).failed();
    skipped |= results_->GetTestPartResult(i).skipped();
  }
  const char* reason = reason_;
  reason_ = nullptr;
  if (failed) {
    {
      std::lock_guard<std::mutex> lock(xfail_mutex);
      xfails().insert(currentFullName());
    }
    std::printf("[  XFAIL   ] %s\n", reason);
  } else if (skipped) {
    GTEST_SKIP() << "skipped (expected to fail: " << reason << ")";
  } else {
    ADD_FAILURE() << "passed, but it is listed as an expected failure (" << reason
                  << "): remove the entry";
  }
}

void installConformanceReport(const char* title, const char* backend_column) {
  ::testing::UnitTest::GetInstance()->listeners().Append(
      new ReportListener(title, backend_column));
}

}  // namespace ral::testing
