#include "drivers/cpu/cpu_info.h"

#include <sched.h>

#include <cstdlib>
#include <thread>

namespace ral::cpu {

int usableCpuCount() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  const unsigned hw = std::thread::hardware_concurrency();
  return hw > 0 ? static_cast<int>(hw) : 1;
}

int defaultThreadCount() {
  if (const char* env = std::getenv("RAL_CPU_THREADS")) {
    char* end = nullptr;
    const long n = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && n > 0 && n <= 4096) return static_cast<int>(n);
  }
  return usableCpuCount();
}

}  // namespace ral::cpu
