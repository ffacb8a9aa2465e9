/* Kernels of the simulated CUDA driver (libral_sim_cuda.so), which runs "device" code as host
 * functions of the test binary.
 *
 * A module image for cuModuleLoadDataEx is NUL-terminated text:
 *   ral-sim-cuda-module
 *   <entry-name> <exported-symbol> [<parameter bytes>...]
 *   ...
 * The symbol is looked up with dlsym(RTLD_DEFAULT, ...), so the test binary must export it
 * (ENABLE_EXPORTS / -rdynamic). The parameter sizes play the role of a cubin's parameter table:
 * cuLaunchKernel copies that many bytes from each `kernelParams[i]` at launch time, as CUDA does.
 *
 * PTX text (e.g. RAL's GPU library, kernels/gpu) loads too when the test binary exports a host
 * function RAL_SIM_CUDA_PTX_KERNEL_PREFIX "<name>" for each of its .entry kernels; the parameter
 * sizes come from the PTX's .param list. Other images (cubin, fatbin, PTX without stand-ins) are
 * CUDA_ERROR_INVALID_IMAGE.
 *
 * The kernel is called once per launch, on the stream's worker thread, when the stream reaches
 * it; it loops over the grid and blocks itself. `params[i]` points to the copy of parameter i.
 */
#ifndef RAL_TESTS_SIM_CUDA_SIM_CUDA_KERNEL_H_
#define RAL_TESTS_SIM_CUDA_SIM_CUDA_KERNEL_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RAL_SIM_CUDA_MODULE_MAGIC "ral-sim-cuda-module"
#define RAL_SIM_CUDA_DEVICE_NAME "RAL simulated CUDA device"
#define RAL_SIM_CUDA_MEMORY_ENV "RAL_SIM_CUDA_MEMORY_BYTES"
/* The device's compute capability as major * 10 + minor (default 90), read at cuInit. */
#define RAL_SIM_CUDA_CC_ENV "RAL_SIM_CUDA_COMPUTE_CAPABILITY"
#define RAL_SIM_CUDA_PTX_KERNEL_PREFIX "ral_sim_cuda_kernel_"

typedef struct RalSimCudaLaunch {
  uint32_t grid[3];
  uint32_t block[3];
  uint32_t shared_memory_bytes;
} RalSimCudaLaunch;

typedef void (*RalSimCudaKernel)(const RalSimCudaLaunch* launch, void** params);

/* The host's cuStreamSynchronize and cuCtxSynchronize calls so far (also exported by the
 * library: look it up with dlsym on the library's handle). */
#define RAL_SIM_CUDA_SYNCHRONIZATIONS_SYMBOL "ral_sim_cuda_stream_synchronizations"
typedef uint64_t (*RalSimCudaSynchronizations)(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* RAL_TESTS_SIM_CUDA_SIM_CUDA_KERNEL_H_ */
