#include "drivers/cuda/cuda_target.h"

namespace ral::cuda {

int cudaTargetRank(ExecutableFormat format, std::string_view target, int cc) {
  if (target.empty()) return 0;
  constexpr std::string_view kPrefix = "sm_";
  if (target.substr(0, kPrefix.size()) != kPrefix) return -1;
  std::string_view digits = target.substr(kPrefix.size());
  bool specific = false;
  if (!digits.empty() && digits.back() == 'a') {
    specific = true;
    digits.remove_suffix(1);
  }
  if (digits.empty() || digits.size() > 4) return -1;
  int arch = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return -1;
    arch = arch * 10 + (c - '0');
  }
  if (format == ExecutableFormat::kPtx && !specific) return arch <= cc ? arch : -1;
  if (format == ExecutableFormat::kPtx || format == ExecutableFormat::kCubin)
    return arch == cc ? arch : -1;
  return -1;
}

}  // namespace ral::cuda
