// A child process for the environment tests: creates the Vulkan driver of a Context the way any
// host would (default factory, environment as given), optionally loads and runs a shader, and
// reports what happened on stdout. Exit codes: 0 ok, 3 driver unavailable, 1 anything else.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "drivers/vulkan/vulkan_driver.h"
#include "ral/context.h"
#include "tests/vulkan/test_support.h"

int main(int argc, char** argv) {
  using namespace ral;
  const bool load = argc > 1 && std::strcmp(argv[1], "--load") == 0;
  Context context;
  // The CPU driver works whatever happens to Vulkan.
  auto cpu = context.driver(DeviceKind::kCpu);
  std::printf("cpu: %s\n", cpu.ok() ? "OK" : cpu.status().toString().c_str());
  auto driver = context.driver<vulkan::VulkanDriver>();
  if (!driver.ok()) {
    std::printf("vulkan: %s\n", driver.status().toString().c_str());
    return driver.status().code() == StatusCode::kUnavailable ? 3 : 1;
  }
  vulkan::VulkanDriver* d = *driver;
  std::printf("vulkan: OK %s\n", d->deviceName().c_str());
  if (load) {
    auto exe = d->load(vulkan::testing::fillIndexSpec());
    if (!exe.ok()) {
      std::printf("load: %s\n", exe.status().toString().c_str());
      return 1;
    }
    uint32_t n = 64, add = 3;
    auto p = d->allocate(n * 4);
    if (!p.ok()) return 1;
    void* ptr = *p;
    void* values[] = {&ptr, &n, &add};
    size_t sizes[] = {sizeof(void*), 4, 4};
    LaunchConfig cfg;
    cfg.grid.x = 1;
    std::vector<uint32_t> out(n);
    Status s = d->launch(*exe, 0, cfg, KernelArgs{values, sizes, 3});
    if (s.ok()) s = d->copy(out.data(), ptr, n * 4, CopyKind::kDeviceToHost);
    if (!s.ok() || out[63] != 66) {
      std::printf("run: %s\n", s.toString().c_str());
      return 1;
    }
    (void)d->deallocate(ptr);
  }
  const auto stats = d->pipelineCacheStats();
  std::printf("cache path=%s loaded=%d loaded_bytes=%zu rejected=%llu pipelines=%llu hits=%llu\n",
              stats.path.c_str(), stats.loaded ? 1 : 0, stats.loaded_bytes,
              static_cast<unsigned long long>(stats.rejected),
              static_cast<unsigned long long>(stats.pipelines),
              static_cast<unsigned long long>(stats.hits));
  return 0;
}
