// Expected failures of the conformance suite: the one place that says which driver does not
// (yet) meet which test, and why. A listed test still runs; it must fail (a pass is reported as
// an error so the entry gets removed).
#include "cts.h"

namespace ral::cts {

const ::ral::testing::ExpectedFailureEntry kExpectedFailures[] = {
    {"Streams", "ForeignStreamsAreRejected", "cpu",
     "CPU streams are host work queues not tied to a driver: a stream of another CPU driver "
     "works the same, so the driver does not check which driver created it"},
    {nullptr, nullptr, nullptr, nullptr},  // (terminator; entries go above)
};

}  // namespace ral::cts
