// Expected failures of the conformance suite: the one place that says which driver does not
// (yet) meet which test, and why. A listed test still runs; it must fail (a pass is reported as
// an error so the entry gets removed).
#include <cstring>

#include "cts.h"

namespace ral::cts {
namespace {

struct ExpectedFailure {
  const char* suite;
  const char* test;
  const char* driver;
  const char* reason;
};

constexpr ExpectedFailure kExpectedFailures[] = {
    {"Streams", "ForeignStreamsAreRejected", "cpu",
     "CPU streams are host work queues not tied to a driver: a stream of another CPU driver "
     "works the same, so the driver does not check which driver created it"},
    {nullptr, nullptr, nullptr, nullptr},  // (terminator; entries go above)
};

}  // namespace

const char* expectedFailure(const std::string& suite, const std::string& test,
                            const std::string& driver) {
  for (const ExpectedFailure& e : kExpectedFailures) {
    if (e.suite == nullptr) break;
    if (suite == e.suite && test == e.test && driver == e.driver) return e.reason;
  }
  return nullptr;
}

}  // namespace ral::cts
