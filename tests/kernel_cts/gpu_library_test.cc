// The embedded GPU library on a GPU it has no binary for (ctests of their own run these on the
// simulated runtimes: RAL_SIM_HSA_ISA naming gfx1030, RAL_SIM_CUDA_COMPUTE_CAPABILITY 70): the
// kernels fail with an error naming the targets the library has and the GPU it found, and the
// next call on a good device is unaffected.
#include "kernels/gpu/gpu_library.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "ral/api_call.h"
#include "ral/context.h"
#include "tests/sim_cuda/sim_cuda_kernel.h"
#include "tests/sim_hsa/sim_hsa_kernel.h"

namespace ral::kernel_cts {
namespace {

// ral_rng_uniform of 4 floats on `kind`; the execution's status.
Status rngOn(Context& context, DeviceKind kind, void** buffer) {
  auto driver = context.driver(kind);
  if (!driver.ok()) return driver.status();
  auto p = (*driver)->allocate(4 * sizeof(float));
  if (!p.ok()) return p.status();
  *buffer = *p;
  auto out = makeMemRef<float, 1>(static_cast<float*>(*p), {4});
  uint64_t seed = 1, offset = 0;
  float low = 0, high = 1;
  ExecutionHandle exec = context.acquireExecution();
  const std::string name = apiNameFor<MemRef<float, 1>, uint64_t, uint64_t, float, float>(
      "ral_rng_uniform", deviceKindName(kind));
  callApi(exec->abi(), name.c_str(), out, seed, offset, low, high);
  return exec->status();
}

void expectNamesTargets(DeviceKind kind, const std::string& gpu) {
  Context context;
  void* buffer = nullptr;
  const Status s = rngOn(context, kind, &buffer);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s;
  ASSERT_FALSE(kernels::gpu::kernelLibrary(kind).variants().empty());
  for (const auto& v : kernels::gpu::kernelLibrary(kind).variants())
    EXPECT_NE(s.message().find(v.target), std::string::npos) << s;
  EXPECT_NE(s.message().find(gpu), std::string::npos) << s;
  // The CPU device of the same Context still works.
  void* cpu_buffer = nullptr;
  const Status cpu = rngOn(context, DeviceKind::kCpu, &cpu_buffer);
  EXPECT_TRUE(cpu.ok()) << cpu;
  if (cpu_buffer != nullptr) {
    EXPECT_TRUE((*context.driver(DeviceKind::kCpu))->deallocate(cpu_buffer).ok());
  }
  if (buffer != nullptr) {
    EXPECT_TRUE((*context.driver(kind))->deallocate(buffer).ok());
  }
}

TEST(GpuLibrary, HsaWithoutTheGpusProcessorIsAClearError) {
  const char* isa = std::getenv(RAL_SIM_HSA_ISA_ENV);
  if (isa == nullptr || std::string(isa).find("gfx1030") == std::string::npos)
    GTEST_SKIP() << "runs with " << RAL_SIM_HSA_ISA_ENV << "=amdgcn-amd-amdhsa--gfx1030";
  expectNamesTargets(DeviceKind::kHsa, "gfx1030");
}

TEST(GpuLibrary, CudaOlderThanTheOldestArchitectureIsAClearError) {
  const char* cc = std::getenv(RAL_SIM_CUDA_CC_ENV);
  if (cc == nullptr || std::string(cc) != "70")
    GTEST_SKIP() << "runs on the simulated CUDA driver with " << RAL_SIM_CUDA_CC_ENV << "=70";
  expectNamesTargets(DeviceKind::kCuda, "RAL simulated CUDA device");
}

}  // namespace
}  // namespace ral::kernel_cts
