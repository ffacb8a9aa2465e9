// Host library variants: the host code of a module compiled for newer levels of the CPU
// architecture (x86-64-v3: AVX2 and FMA; x86-64-v4: AVX-512), stored beside the baseline library
// (any x86-64). The loader opens the best variant the CPU runs, so one portable .ralm runs as
// fast as code built for the machine. RAL_HOST_VARIANT in the environment picks one by name
// ("baseline" for the portable library), for comparisons and for reproducing a result.
// Thread-safe: pure functions of their arguments and the CPU.
#ifndef RAL_HOST_VARIANT_H_
#define RAL_HOST_VARIANT_H_

#include <string>
#include <string_view>
#include <vector>

#include "ral/status.h"

namespace ral::internal {

// The variant targets this build knows, oldest first (x86-64 only; empty elsewhere).
const std::vector<std::string>& knownHostTargets();

// Whether this CPU (and OS) runs code built for `target`; false for targets not known here.
bool cpuRunsHostTarget(std::string_view target);

// The variant to load among `targets`: its index, or -1 for the baseline library. The best known
// target the CPU runs wins; unknown targets (from a newer compiler) are skipped. `forced` (the
// RAL_HOST_VARIANT value, null when unset) names "baseline" or one of `targets`; an error says
// why a forced choice cannot run here.
StatusOr<int> pickHostVariant(const std::vector<std::string_view>& targets, const char* forced);

}  // namespace ral::internal

#endif  // RAL_HOST_VARIANT_H_
