// A module whose code runs on the hsa device, through the standalone context, on the simulated
// HSA runtime: inputs (also strided and empty ones) are copied into host-visible HSA memory, the
// host code launches kernel 0 of the module's executable through ral_kernel_launch___hsa (a sim
// code object naming ral_test_hsa_scale_kernel below), outputs come back as CPU tensors. Device
// URIs pick the GPU; one that matches nothing lists the simulated GPUs.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "ral/device_uri.h"
#include "ral/standalone_context.h"
#include "tests/sim_hsa/sim_hsa_kernel.h"
#include "tests/support/device_scale_checks.h"

// y[i] = 2 * x[i * stride] + 1 over the whole grid (kernarg: src, dst, n, stride).
extern "C" __attribute__((visibility("default"))) void ral_test_hsa_scale_kernel(
    const RalSimHsaDispatch* dispatch, const void* kernarg) {
  const float* src;
  float* dst;
  int64_t n, stride;
  const auto* bytes = static_cast<const unsigned char*>(kernarg);
  std::memcpy(&src, bytes, 8);
  std::memcpy(&dst, bytes + 8, 8);
  std::memcpy(&n, bytes + 16, 8);
  std::memcpy(&stride, bytes + 24, 8);
  for (int64_t i = 0; i < static_cast<int64_t>(dispatch->grid_size[0]) && i < n; ++i)
    dst[i] = 2.0f * src[i * stride] + 1.0f;
}

namespace ral::standalone {
namespace {

std::string modulePath() { return std::string(RAL_TEST_MODULE_DIR) + "/hsa_scale.ralm"; }

TEST(HsaModuleTest, HostCodeLaunchesDeviceKernelsOnTheHsaDevice) {
  auto ctx = StandaloneContext::load(modulePath());
  ASSERT_TRUE(ctx.ok()) << ctx.status();
  testing::expectScaleRuns(**ctx, DeviceKind::kHsa);
}

// Chains of submissions on the simulated HSA device from many threads, and a failure in one.
// HSA's memory returns to its pool at once, so each execution synchronizes at its end (on the
// queue thread).
TEST(HsaModuleTest, SubmissionsChainFromManyThreads) {
  auto ctx = StandaloneContext::load(modulePath());
  ASSERT_TRUE(ctx.ok()) << ctx.status();
  testing::expectChainsFromManyThreads(**ctx);
}

TEST(HsaModuleTest, DeviceUrisSelectTheGpu) {
  auto devices = enumerateDevices(DeviceKind::kHsa);
  ASSERT_TRUE(devices.ok()) << devices.status();
  ASSERT_FALSE(devices->empty());
  const DeviceInfo& gpu = devices->front();
  for (const std::string& uri :
       {std::string("hsa"), std::string("hsa:0"), "hsa://" + gpu.uuid, "hsa://name=" + gpu.name}) {
    StandaloneContext::Options options;
    options.device = uri;
    auto ctx = StandaloneContext::load(modulePath(), options);
    ASSERT_TRUE(ctx.ok()) << uri << ": " << ctx.status();
    testing::expectScale(**ctx, 100, 2);
  }
  for (const char* uri : {"hsa:9", "hsa://GPU-0123456789abcdef"}) {
    StandaloneContext::Options options;
    options.device = uri;
    auto ctx = StandaloneContext::load(modulePath(), options);
    ASSERT_FALSE(ctx.ok()) << uri;
    EXPECT_EQ(ctx.status().code(), StatusCode::kNotFound) << ctx.status();
    EXPECT_NE(ctx.status().message().find(describeDevice(gpu)), std::string::npos) << ctx.status();
  }
  StandaloneContext::Options vulkan;
  vulkan.device = "vulkan:0";
  auto wrong = StandaloneContext::load(modulePath(), vulkan);
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("runs on hsa, not on device 'vulkan:0'"),
            std::string::npos)
      << wrong.status();
}

// examples/mlp.mlir compiled with --device=hsa: its loops are HSACO kernels and its matmuls call
// ral_gemm, which the HSA library provides, so the module links and its executables load on the
// GPU. (Its compiled kernels have no host stand-in in the simulation, so it is not run here.)
TEST(HsaModuleTest, ACompiledModuleWithLibraryGemmsLinksAndLoads) {
  const std::string path = std::string(RAL_TEST_MODULE_DIR) + "/compiled_mlp_hsa.ralm";
  if (FILE* f = std::fopen(path.c_str(), "rb")) {
    std::fclose(f);
  } else {
    GTEST_SKIP() << path << " was not built (no compiler or no HSA library kernels)";
  }
  auto ctx = StandaloneContext::load(path);
  ASSERT_TRUE(ctx.ok()) << ctx.status();
  EXPECT_EQ((*ctx)->device(), DeviceKind::kHsa);
}

}  // namespace
}  // namespace ral::standalone
