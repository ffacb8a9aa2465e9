// A module whose code runs on the cuda device (tests/modules/device_scale.c as cuda_scale),
// through the standalone context, on the simulated CUDA driver: its executable is a sim module
// image naming ral_test_cuda_scale_kernel below. Runs, then submissions: chains from many
// threads, and a chain that runs on the device's stream with no host synchronization between its
// executions (counted by the simulated driver and read from a trace).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ral/standalone_context.h"
#include "ral/trace.h"
#include "tests/sim_cuda/sim_cuda_kernel.h"
#include "tests/support/device_scale_checks.h"
#include "tests/support/trace_checks.h"

// y[i] = 2 * x[i * stride] + 1 for i < n (params: src, dst, n, stride).
extern "C" __attribute__((visibility("default"))) void ral_test_cuda_scale_kernel(
    const RalSimCudaLaunch* launch, void** params) {
  const float* src;
  float* dst;
  int64_t n, stride;
  std::memcpy(&src, params[0], 8);
  std::memcpy(&dst, params[1], 8);
  std::memcpy(&n, params[2], 8);
  std::memcpy(&stride, params[3], 8);
  const int64_t threads = static_cast<int64_t>(launch->grid[0]) * launch->block[0];
  for (int64_t i = 0; i < threads && i < n; ++i) dst[i] = 2.0f * src[i * stride] + 1.0f;
}

namespace ral::standalone {
namespace {

std::string modulePath() { return std::string(RAL_TEST_MODULE_DIR) + "/cuda_scale.ralm"; }

// The simulated driver's count of host synchronizations (loaded by the context already).
uint64_t streamSynchronizations() {
  const char* path = std::getenv("RAL_CUDA_DRIVER_PATH");
  void* lib = path == nullptr ? nullptr : dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  EXPECT_NE(lib, nullptr) << "the simulated CUDA driver is not loaded";
  if (lib == nullptr) return 0;
  auto count = reinterpret_cast<RalSimCudaSynchronizations>(
      dlsym(lib, RAL_SIM_CUDA_SYNCHRONIZATIONS_SYMBOL));
  dlclose(lib);
  EXPECT_NE(count, nullptr);
  return count == nullptr ? 0 : count();
}

// A chain of three submissions linked by outputs and a semaphore: each execution's kernels are
// queued on the stream behind the one before, the host never synchronizes the stream (run()
// does, once per execution), the thread that ran the submissions waited for nothing, and the
// trace shows each kernel's device time on the stream's track. First
// in this file: the count is the process's, and contexts of other tests synchronize their
// streams when they go away (on their queue threads, a moment after their last submission).
TEST(CudaModuleTest, ChainedSubmissionsRunWithoutHostSynchronization) {
  auto ctx = StandaloneContext::load(modulePath());
  ASSERT_TRUE(ctx.ok()) << ctx.status();
  std::vector<float> x(300);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) * 0.5f - 7.0f;
  int64_t shape[1];
  DLTensor dx = testing::floats(x, shape);

  const uint64_t before_run = streamSynchronizations();
  ASSERT_TRUE((*ctx)->run({&dx}).ok());
  EXPECT_GT(streamSynchronizations(), before_run) << "run() synchronizes: the count must see it";

  const std::string path = ::testing::TempDir() + "ral_cuda_chain_trace.json";
  ASSERT_TRUE(trace::start(path).ok());
  const uint64_t before = streamSynchronizations();
  auto sem = (*ctx)->createSemaphore(0);
  ASSERT_TRUE(sem.ok());
  auto a = (*ctx)->submit({&dx}, {}, {{*sem, 1}});
  ASSERT_TRUE(a.ok()) << a.status();
  auto b = (*ctx)->submit({SubmitInput(*a, 0)}, {{*sem, 1}}, {{*sem, 2}});
  ASSERT_TRUE(b.ok()) << b.status();
  auto c = (*ctx)->submit({SubmitInput(*b, 0)}, {{*sem, 2}}, {{*sem, 3}});
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_TRUE((*sem)->wait(3).ok());
  auto out = (*c)->outputs();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(streamSynchronizations(), before);
  ASSERT_TRUE(trace::stop().ok());
  const float* y = static_cast<const float*>((*out)[0]->dl_tensor.data);
  for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(y[i], 8 * x[i] + 7) << "at " << i;
  const std::vector<std::string> waits = testing::hostWaitsOnSubmissionThreads(path);
  EXPECT_TRUE(waits.empty()) << waits.size() << " host wait(s), the first: " << waits.front();
  // The device time of the three kernels (CUDA events), one after another on the stream's track.
  const auto spans = testing::deviceSpans(path, "cuda:0 stream");
  ASSERT_EQ(spans.size(), 3u);
  for (size_t i = 0; i < spans.size(); ++i) {
    EXPECT_EQ(spans[i].name, "scale");
    EXPECT_EQ(spans[i].track, spans[0].track);
    EXPECT_GE(spans[i].dur, 0);
    if (i > 0) {
      EXPECT_GE(spans[i].ts + 0.002, spans[i - 1].ts + spans[i - 1].dur);
    }
  }
}

// A submission that waits for a semaphore the host sets only after reading the output of the
// one before it: that one's completion must not wait for the next (the queue thread signals what
// it queued before it blocks).
TEST(CudaModuleTest, AWaitingSubmissionDoesNotHoldBackTheOneBeforeIt) {
  auto ctx = StandaloneContext::load(modulePath());
  ASSERT_TRUE(ctx.ok()) << ctx.status();
  std::vector<float> x = {1, 2, 3, 4};
  int64_t shape[1];
  DLTensor dx = testing::floats(x, shape);
  for (int round = 0; round < 3; ++round) {
    auto gate = (*ctx)->createSemaphore(0);
    ASSERT_TRUE(gate.ok());
    auto a = (*ctx)->submit({&dx});
    auto b = (*ctx)->submit({SubmitInput(*a, 0)}, {{*gate, 1}});
    ASSERT_TRUE(a.ok() && b.ok());
    auto first = (*a)->outputs();
    ASSERT_TRUE(first.ok()) << first.status();
    EXPECT_EQ(static_cast<const float*>((*first)[0]->dl_tensor.data)[3], 9.0f);
    ASSERT_TRUE((*gate)->signal(1).ok());
    auto second = (*b)->outputs();
    ASSERT_TRUE(second.ok()) << second.status();
    EXPECT_EQ(static_cast<const float*>((*second)[0]->dl_tensor.data)[3], 19.0f);
  }
}

TEST(CudaModuleTest, HostCodeLaunchesDeviceKernelsOnTheCudaDevice) {
  auto ctx = StandaloneContext::load(modulePath());
  ASSERT_TRUE(ctx.ok()) << ctx.status();
  testing::expectScaleRuns(**ctx, DeviceKind::kCuda);
}

TEST(CudaModuleTest, SubmissionsChainFromManyThreads) {
  auto ctx = StandaloneContext::load(modulePath());
  ASSERT_TRUE(ctx.ok()) << ctx.status();
  testing::expectChainsFromManyThreads(**ctx);
}

}  // namespace
}  // namespace ral::standalone
