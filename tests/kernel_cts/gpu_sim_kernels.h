// The host stand-ins the simulated HSA and CUDA runtimes run for the GPU library kernels (see
// gpu_sim_kernels.cc); they record launches that break a kernel's contract.
#ifndef RAL_TESTS_KERNEL_CTS_GPU_SIM_KERNELS_H_
#define RAL_TESTS_KERNEL_CTS_GPU_SIM_KERNELS_H_

#include <string>
#include <vector>

namespace ral::kernel_cts {

// The contract violations recorded since the last call (thread-safe).
std::vector<std::string> takeContractErrors();

}  // namespace ral::kernel_cts

#endif  // RAL_TESTS_KERNEL_CTS_GPU_SIM_KERNELS_H_
