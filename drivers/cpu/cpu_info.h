// How many CPUs this process may run on.
#ifndef RAL_DRIVERS_CPU_CPU_INFO_H_
#define RAL_DRIVERS_CPU_CPU_INFO_H_

namespace ral::cpu {

// The CPUs in this process's affinity mask (sched_getaffinity), so a container or `taskset`
// limit is honoured; at least 1.
int usableCpuCount();

// The CPU driver's default thread count: RAL_CPU_THREADS when it is a positive integer, else
// usableCpuCount().
int defaultThreadCount();

}  // namespace ral::cpu

#endif  // RAL_DRIVERS_CPU_CPU_INFO_H_
