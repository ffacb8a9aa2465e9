#include "ral/host_variant.h"

#include <algorithm>

namespace ral::internal {

const std::vector<std::string>& knownHostTargets() {
#if defined(__x86_64__)
  static const std::vector<std::string> targets = {"x86-64-v2", "x86-64-v3", "x86-64-v4"};
#else
  static const std::vector<std::string> targets;
#endif
  return targets;
}

bool cpuRunsHostTarget(std::string_view target) {
#if defined(__x86_64__)
  // libgcc's and compiler-rt's CPU model also checks that the OS saves the AVX and AVX-512
  // registers (XCR0) before it reports those levels.
  __builtin_cpu_init();
  if (target == "x86-64-v2") return __builtin_cpu_supports("x86-64-v2");
  if (target == "x86-64-v3") return __builtin_cpu_supports("x86-64-v3");
  if (target == "x86-64-v4") return __builtin_cpu_supports("x86-64-v4");
#else
  (void)target;
#endif
  return false;
}

StatusOr<int> pickHostVariant(const std::vector<std::string_view>& targets, const char* forced) {
  const std::vector<std::string>& known = knownHostTargets();
  auto rank = [&](std::string_view t) -> int {
    auto it = std::find(known.begin(), known.end(), t);
    return it == known.end() ? -1 : static_cast<int>(it - known.begin());
  };
  if (forced != nullptr && forced[0] != '\0') {
    const std::string_view want(forced);
    if (want == "baseline") return -1;
    std::string have = "baseline";
    for (size_t i = 0; i < targets.size(); ++i) {
      have += std::string(", ") + std::string(targets[i]);
      if (targets[i] != want) continue;
      if (!cpuRunsHostTarget(want))
        return unsupported("RAL_HOST_VARIANT=", want, ": this CPU does not run ",
                           rank(want) < 0 ? "code of that unknown target" : "that code",
                           " (unset it to pick the best variant)");
      return static_cast<int>(i);
    }
    return notFound("RAL_HOST_VARIANT=", want, ": the module has no such host variant (it has ",
                    have, ")");
  }
  int best = -1, best_rank = -1;
  for (size_t i = 0; i < targets.size(); ++i) {
    const int r = rank(targets[i]);
    if (r > best_rank && cpuRunsHostTarget(targets[i])) {
      best = static_cast<int>(i);
      best_rank = r;
    }
  }
  return best;
}

}  // namespace ral::internal
