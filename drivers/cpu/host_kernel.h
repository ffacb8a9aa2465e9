/* Host kernels: what ExecutableFormat::kHostFunction executables contain (plain C, so a compiled
 * module's host code can provide them).
 *
 * ExecutableSpec for the CPU driver:
 *   format  = kHostFunction
 *   data    = an array of ral_host_kernel function pointers, one per entry point
 *   size    = entries.size() * sizeof(ral_host_kernel)
 *   entries = the entry names, in the same order
 *
 * launch(grid, block) calls the kernel once per workgroup, GPU-style: grid.x * grid.y * grid.z
 * calls, spread over the driver's thread pool; the kernel loops over its block's local ids
 * itself. `args[i]` points to argument i (copied at launch time, as cuLaunchKernel does).
 * Workgroups of one launch may run concurrently and in any order.
 */
#ifndef RAL_DRIVERS_CPU_HOST_KERNEL_H_
#define RAL_DRIVERS_CPU_HOST_KERNEL_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ral_host_workgroup {
  uint32_t grid[3];     /* number of workgroups in x, y, z */
  uint32_t block[3];    /* workgroup size in x, y, z */
  uint32_t group_id[3]; /* this workgroup */
  uint32_t shared_memory_bytes;
  void* shared_memory; /* per-workgroup scratch (64-byte aligned), null when 0 bytes */
} ral_host_workgroup;

typedef void (*ral_host_kernel)(const ral_host_workgroup* workgroup, void* const* args);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* RAL_DRIVERS_CPU_HOST_KERNEL_H_ */
