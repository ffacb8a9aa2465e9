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

void expectScale(StandaloneContext& ctx, int64_t n, int64_t stride) {
  std::vector<float> storage(static_cast<size_t>(std::max<int64_t>(n * stride, 1)));
  for (size_t i = 0; i < storage.size(); ++i) storage[i] = static_cast<float>(i) * 0.25f - 3.0f;
  int64_t shape[1] = {n};
  int64_t strides[1] = {stride};
  DLTensor x{};
  x.data = storage.data();
  x.device = {kDLCPU, 0};
  x.ndim = 1;
  x.dtype = {kDLFloat, 32, 1};
  x.shape = shape;
  x.strides = strides;
  auto out = ctx.run({&x});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 1u);
  const DLTensor& y = (*out)[0]->dl_tensor;
  ASSERT_EQ(y.ndim, 1);
  ASSERT_EQ(y.shape[0], n);
  const float* v = static_cast<const float*>(y.data);
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(v[i], 2.0f * storage[static_cast<size_t>(i * stride)] + 1.0f) << "at " << i;
}

TEST(HsaModuleTest, HostCodeLaunchesDeviceKernelsOnTheHsaDevice) {
  auto ctx = StandaloneContext::load(modulePath());
  ASSERT_TRUE(ctx.ok()) << ctx.status();
  EXPECT_EQ((*ctx)->device(), DeviceKind::kHsa);
  expectScale(**ctx, 1000, 1);  // 16 workgroups
  expectScale(**ctx, 37, 3);    // a strided view
  expectScale(**ctx, 1, 1);
  expectScale(**ctx, 0, 1);     // an empty grid launches nothing
  expectScale(**ctx, 1000, 1);  // and the next run is still correct
}

// A dense 1-D f32 tensor over `x` (`shape` receives its size).
DLTensor floats(std::vector<float>& x, int64_t* shape) {
  shape[0] = static_cast<int64_t>(x.size());
  DLTensor t{};
  t.data = x.data();
  t.device = {kDLCPU, 0};
  t.ndim = 1;
  t.dtype = {kDLFloat, 32, 1};
  t.shape = shape;
  return t;
}

// Submissions on the simulated HSA device: from four threads, chains of three executions linked
// by outputs and a semaphore each (y = 2x + 1 three times: 8x + 7), then a chain whose middle
// submission waits on a semaphore that fails, which fails the rest of its chain.
TEST(HsaModuleTest, SubmissionsChainFromManyThreads) {
  auto ctx = StandaloneContext::load(modulePath());
  ASSERT_TRUE(ctx.ok()) << ctx.status();
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 5; ++round) {
        std::vector<float> x(64);
        for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(t * 100 + round) + i;
        int64_t shape[1];
        DLTensor dx = floats(x, shape);
        auto sem = (*ctx)->createSemaphore(0);
        if (!sem.ok()) return (void)++wrong;
        auto a = (*ctx)->submit({&dx}, {}, {{*sem, 1}});
        if (!a.ok()) return (void)++wrong;
        auto b = (*ctx)->submit({SubmitInput(*a, 0)}, {{*sem, 1}}, {{*sem, 2}});
        if (!b.ok()) return (void)++wrong;
        auto c = (*ctx)->submit({SubmitInput(*b, 0)}, {{*sem, 2}}, {{*sem, 3}});
        if (!c.ok() || !(*sem)->wait(3).ok()) return (void)++wrong;
        auto out = (*c)->outputs();
        if (!out.ok()) return (void)++wrong;
        const float* y = static_cast<const float*>((*out)[0]->dl_tensor.data);
        for (size_t i = 0; i < x.size(); ++i)
          if (y[i] != 8 * x[i] + 7) ++wrong;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);

  std::vector<float> x = {1, 2, 3};
  int64_t shape[1];
  DLTensor dx = floats(x, shape);
  auto gate = (*ctx)->createSemaphore(0);
  ASSERT_TRUE(gate.ok());
  auto a = (*ctx)->submit({&dx});
  auto b = (*ctx)->submit({SubmitInput(*a, 0)}, {{*gate, 1}});
  auto c = (*ctx)->submit({SubmitInput(*b, 0)});
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  (*gate)->fail(aborted("no input today"));
  Status end = (*c)->wait();
  EXPECT_EQ(end.code(), StatusCode::kAborted) << end;
  EXPECT_TRUE((*a)->wait().ok());
  auto again = (*ctx)->submit({&dx});
  ASSERT_TRUE(again.ok());
  auto out = (*again)->outputs();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(static_cast<const float*>((*out)[0]->dl_tensor.data)[2], 7.0f);
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
    expectScale(**ctx, 100, 2);
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
