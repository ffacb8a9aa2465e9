/* Kernels of the simulated HSA runtime (libral_sim_hsa.so), which runs "GPU" code as host
 * functions of the test binary.
 *
 * A code object for hsa_code_object_reader_create_from_memory is text, every line ending in
 * '\n' (anything else, or a truncated blob, is HSA_STATUS_ERROR_INVALID_CODE_OBJECT):
 *   ral-sim-hsa-code-object
 *   <kernel-name> <exported-symbol> <kernarg-segment-bytes>
 *   ...
 * The executable then has a symbol "<kernel-name>.kd" whose kernel object runs the host function
 * named <exported-symbol>, looked up with dlsym(RTLD_DEFAULT, ...) at load time, so the test
 * binary must export it (ENABLE_EXPORTS / -rdynamic).
 *
 * A real AMDGPU code object (an ELF from LLVM's back end, e.g. RAL's HSA library kernels) loads
 * too: each "<name>.kd" symbol's kernel descriptor gives the kernel's group, private and kernarg
 * segment sizes, as on a GPU, and the kernel runs the host function
 * RAL_SIM_HSA_ELF_KERNEL_PREFIX "<name>" if the test binary exports one (a dispatch of a kernel
 * without one fails its queue). The ELF's processor (EF_AMDGPU_MACH) must be the agent's.
 *
 * The host function is called once per kernel-dispatch packet, on the queue's packet-processor
 * thread, with the packet's sizes (grid in work-items, HSA semantics) and the kernarg segment.
 * RAL's HSA driver lays arguments out in the segment at the next multiple of each argument's
 * size rounded up to a power of two (at most 16).
 */
#ifndef RAL_TESTS_SIM_HSA_SIM_HSA_KERNEL_H_
#define RAL_TESTS_SIM_HSA_SIM_HSA_KERNEL_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RAL_SIM_HSA_CODE_OBJECT_MAGIC "ral-sim-hsa-code-object"
#define RAL_SIM_HSA_ELF_KERNEL_PREFIX "ral_sim_hsa_kernel_"
/* Environment knobs, read at the first hsa_init. */
#define RAL_SIM_HSA_GPUS_ENV "RAL_SIM_HSA_GPUS"           /* GPU agents (default 1) */
#define RAL_SIM_HSA_ISA_ENV "RAL_SIM_HSA_ISA"             /* default amdgcn-amd-amdhsa--gfx90a */
#define RAL_SIM_HSA_MEMORY_ENV "RAL_SIM_HSA_MEMORY_BYTES" /* per GPU pool (default 1 GiB) */
/* A dispatch of this kernel name makes its queue fail (the queue's error callback runs with
 * HSA_STATUS_ERROR_EXCEPTION and the queue stops processing packets). */
#define RAL_SIM_HSA_FAIL_KERNEL_ENV "RAL_SIM_HSA_FAIL_KERNEL"
/* UUID of GPU agent i: "GPU-" followed by 16 hex digits of (RAL_SIM_HSA_UUID_BASE + i). */
#define RAL_SIM_HSA_UUID_BASE 0x5a1d00c0ffee0000ull
#define RAL_SIM_HSA_GRANULE (64u * 1024u)

typedef struct RalSimHsaDispatch {
  uint32_t grid_size[3];
  uint16_t workgroup_size[3];
  uint32_t group_segment_size;
} RalSimHsaDispatch;

typedef void (*RalSimHsaKernel)(const RalSimHsaDispatch* dispatch, const void* kernarg);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* RAL_TESTS_SIM_HSA_SIM_HSA_KERNEL_H_ */
