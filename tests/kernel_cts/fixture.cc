// The kernel conformance suite's backends, fixture and main() (see kernel_cts.h).
#include <cstdlib>
#include <string>

#include "kernel_cts.h"
#ifdef RAL_KERNEL_CTS_GPU_SIM
#include "tests/kernel_cts/gpu_sim_kernels.h"
#endif

namespace ral::kernel_cts {
namespace {

std::string driverUnavailable(Context& context, DeviceKind kind) {
  auto d = context.driver(kind);
  return d.ok() ? std::string() : d.status().toString();
}

const KernelBackend kCpu{"cpu", "cpu", DeviceKind::kCpu,
                         [](Context& c) { return driverUnavailable(c, DeviceKind::kCpu); }};
#ifdef RAL_KERNEL_CTS_VULKAN
const KernelBackend kVulkan{"vulkan", "vulkan", DeviceKind::kVulkan,
                            [](Context& c) { return driverUnavailable(c, DeviceKind::kVulkan); }};
#endif
#ifdef RAL_KERNEL_CTS_CUDA
// A real GPU, or the simulated driver when RAL_CUDA_DRIVER_PATH names it (the ctest
// ral_kernel_cts.cuda_sim), which runs the library's PTX through gpu_sim_kernels.cc.
const KernelBackend kCuda{"cuda", "cuda", DeviceKind::kCuda, [](Context& c) {
                            std::string why = driverUnavailable(c, DeviceKind::kCuda);
                            return why.empty() ? why : "no usable CUDA device: " + why;
                          }};
#endif
#ifdef RAL_KERNEL_CTS_HSA
const KernelBackend kHsa{"hsa", "hsa", DeviceKind::kHsa,
                            [](Context& c) { return driverUnavailable(c, DeviceKind::kHsa); }};
#endif

}  // namespace

const std::vector<const KernelBackend*>& backends() {
  static const std::vector<const KernelBackend*> all = {
      &kCpu,
#ifdef RAL_KERNEL_CTS_VULKAN
      &kVulkan,
#endif
#ifdef RAL_KERNEL_CTS_CUDA
      &kCuda,
#endif
#ifdef RAL_KERNEL_CTS_HSA
      &kHsa,
#endif
  };
  return all;
}

std::string backendName(const ::testing::TestParamInfo<const KernelBackend*>& info) {
  return info.param->name;
}

void KernelTest::SetUp() {
  const std::string why = backend().unavailable(context);
  if (!why.empty()) GTEST_SKIP() << backend().name << " unavailable: " << why;
  driver = *context.driver(backend().kind);
#ifdef RAL_KERNEL_CTS_GPU_SIM
  (void)takeContractErrors();
#endif
  xfail_.begin(::ral::testing::expectedFailureFor(kExpectedFailures, backend().name));
}

void KernelTest::TearDown() {
  if (driver != nullptr) {
    EXPECT_TRUE(driver->synchronize().ok());
    for (void* p : buffers_) EXPECT_TRUE(driver->deallocate(p).ok());
  }
#ifdef RAL_KERNEL_CTS_GPU_SIM
  if (backend().kind == DeviceKind::kHsa || backend().kind == DeviceKind::kCuda)
    for (const std::string& e : takeContractErrors()) ADD_FAILURE() << e;
#endif
  xfail_.finish();
}

void* KernelTest::allocate(size_t bytes) {
  auto p = driver->allocate(std::max<size_t>(bytes, 1));
  EXPECT_TRUE(p.ok()) << p.status();
  if (!p.ok()) return nullptr;
  buffers_.push_back(*p);
  return *p;
}

void KernelTest::copyIn(void* device, const void* host, size_t bytes) {
  const Status s = driver->copy(device, host, bytes, CopyKind::kHostToDevice);
  EXPECT_TRUE(s.ok()) << s;
}

void KernelTest::copyOut(void* host, const void* device, size_t bytes) {
  Status s = driver->synchronize();
  EXPECT_TRUE(s.ok()) << s;
  s = driver->copy(host, device, bytes, CopyKind::kDeviceToHost);
  EXPECT_TRUE(s.ok()) << s;
  s = driver->synchronize();
  EXPECT_TRUE(s.ok()) << s;
}

}  // namespace ral::kernel_cts

int main(int argc, char** argv) {
#ifdef RAL_SIM_HSA_LIBRARY
  // The hsa backend is the simulated runtime running hsa_sim_kernels.cc's stand-ins, unless
  // RAL_HSA_RUNTIME_PATH names a runtime already (scripts/gpu-check.sh on an AMD GPU).
  setenv("RAL_HSA_RUNTIME_PATH", RAL_SIM_HSA_LIBRARY, /*overwrite=*/0);
#endif
  ::testing::InitGoogleTest(&argc, argv);
  ral::testing::installConformanceReport("Kernel conformance", "device");
  return RUN_ALL_TESTS();
}
