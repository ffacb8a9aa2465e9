// What the two conformance suites (tests/cts for drivers, tests/kernel_cts for library kernels)
// share: expected failures listed in a table, and the per-backend summary printed at the end.
//
// A test whose (suite, test, backend) is listed still runs, with its failures intercepted:
// failing is "XFAIL" (counted, not an error); passing is an error telling the reader to remove
// the entry, so the table never outlives the gap it records.
// Not thread-safe except where noted: a fixture begins and finishes one scope per test.
#ifndef RAL_TESTS_SUPPORT_CONFORMANCE_H_
#define RAL_TESTS_SUPPORT_CONFORMANCE_H_

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace ral::testing {

// One expected failure: `suite` and `test` are the TEST_P names without instantiation prefix or
// parameter ("Memory", "Allocate"); `backend` the parameter's name.
struct ExpectedFailureEntry {
  const char* suite;
  const char* test;
  const char* backend;
  const char* reason;
};

// The reason `entries` (terminated by an entry with a null suite) gives for the current test
// on `backend`, or null.
const char* expectedFailureFor(const ExpectedFailureEntry* entries, const std::string& backend);

// Intercepts the current test's failures (from every thread) between begin() and finish().
class ExpectedFailureScope {
 public:
  // Starts intercepting when `reason` is not null.
  void begin(const char* reason);
  // Judges what was intercepted (call from TearDown): failed -> XFAIL, skipped -> skip,
  // passed -> an error asking for the entry's removal.
  void finish();

 private:
  const char* reason_ = nullptr;
  std::unique_ptr<::testing::TestPartResultArray> results_;
  std::unique_ptr<::testing::ScopedFakeTestPartResultReporter> reporter_;
};

// Installs a listener that prints, after the run, one line per backend (the part of each test
// name after its last '/'): how many tests passed, were skipped, failed as expected or failed.
void installConformanceReport(const char* title, const char* backend_column);

}  // namespace ral::testing

#endif  // RAL_TESTS_SUPPORT_CONFORMANCE_H_
