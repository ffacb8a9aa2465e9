// The conformance kernels as host code: CPU-driver workgroup functions, and simulated-CUDA
// kernels exported from the test binary under the names the sim module image uses.
#ifndef RAL_TESTS_CTS_KERNELS_HOST_H_
#define RAL_TESTS_CTS_KERNELS_HOST_H_

#include "drivers/cpu/host_kernel.h"
#include "tests/sim_cuda/sim_cuda_kernel.h"
#include "tests/sim_hsa/sim_hsa_kernel.h"

namespace ral::cts {
void cpuAddOne(const ral_host_workgroup* wg, void* const* args);
void cpuFillIndex(const ral_host_workgroup* wg, void* const* args);
void cpuArgs(const ral_host_workgroup* wg, void* const* args);
}  // namespace ral::cts

extern "C" {
void ral_cts_sim_add_one(const RalSimCudaLaunch* launch, void** params);
void ral_cts_sim_fill_index(const RalSimCudaLaunch* launch, void** params);
void ral_cts_sim_args(const RalSimCudaLaunch* launch, void** params);
// Simulated-HSA kernels: arguments at their offsets in the kernarg segment (sim_hsa_kernel.h).
void ral_cts_hsa_add_one(const RalSimHsaDispatch* dispatch, const void* kernarg);
void ral_cts_hsa_fill_index(const RalSimHsaDispatch* dispatch, const void* kernarg);
void ral_cts_hsa_args(const RalSimHsaDispatch* dispatch, const void* kernarg);
}

#endif  // RAL_TESTS_CTS_KERNELS_HOST_H_
