// Vulkan driver costs, each against a baseline measured in the same process:
//  - per-dispatch overhead of a tiny kernel launched through the RAL driver (launch +
//    synchronize) vs the same shader recorded and submitted with raw Vulkan calls on the same
//    device and queue (record, submit with a fence, wait) — target <= 1.1x;
//  - the same with 64 dispatches per synchronisation (RAL batches them into one submission; the
//    raw baseline records them into one command buffer with barriers between);
//  - ral_gemm on Vulkan vs the CPU ral_gemm (OpenBLAS) at n = 512 and 1024 (report only; on
//    llvmpipe the "GPU" is the same CPU).
// Without a usable Vulkan device it prints why and exits 0.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "drivers/vulkan/vulkan_driver.h"
#include "ral/api.h"
#include "ral/api_call.h"
#include "ral/context.h"
#include "ratio_report.h"

namespace ral::bench_spirv {
extern const uint32_t bench_tiny[];
extern const size_t bench_tiny_size;
}  // namespace ral::bench_spirv

namespace ral::bench {
namespace {

using vulkan::VulkanDriver;

[[noreturn]] void die(const Status& s) {
  std::fprintf(stderr, "vulkan_benchmark: %s\n", s.toString().c_str());
  std::exit(1);
}
#define CHECK_OK(expr)             \
  do {                             \
    Status check_ = (expr);        \
    if (!check_.ok()) die(check_); \
  } while (0)
#define CHECK_VK(expr) CHECK_OK(vulkan::vkStatus((expr), #expr))

struct Env {
  Context context;
  VulkanDriver* driver = nullptr;
  Executable* tiny = nullptr;
  void* data = nullptr;
  Env() {
    auto d = context.driver<VulkanDriver>();
    if (!d.ok()) return;
    driver = *d;
    ExecutableSpec spec;
    spec.name = "bench.tiny";
    spec.format = ExecutableFormat::kSpirv;
    spec.data = bench_spirv::bench_tiny;
    spec.size = bench_spirv::bench_tiny_size;
    auto exe = driver->load(spec);
    if (!exe.ok()) die(exe.status());
    tiny = *exe;
    auto p = driver->allocate(256);
    if (!p.ok()) die(p.status());
    data = *p;
    CHECK_OK(driver->fill(data, 256, "\0", 1));
  }
};
Env& env() {
  static Env* e = new Env();
  return *e;
}

// The tiny shader's pipeline built by hand, and everything raw submission needs.
struct Raw {
  const vulkan::VulkanApi& api;
  VkDevice dev;
  VkQueue queue;
  std::mutex& queue_mutex;
  VkShaderModule module = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkCommandPool pool = VK_NULL_HANDLE;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  VkBuffer buffer;
  VkDeviceSize offset;

  explicit Raw(Env& e)
      : api(e.driver->device().api()),
        dev(e.driver->device().device()),
        queue(e.driver->device().queue()),
        queue_mutex(e.driver->device().queueMutex()) {
    auto range = e.driver->resolve(e.data, 256);
    if (!range.ok()) die(range.status());
    buffer = range->buffer;
    offset = range->offset;
    VkShaderModuleCreateInfo mi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    mi.codeSize = bench_spirv::bench_tiny_size;
    mi.pCode = bench_spirv::bench_tiny;
    CHECK_VK(api.vkCreateShaderModule(dev, &mi, nullptr, &module));
    VkDescriptorSetLayoutBinding b{0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1,
                                   VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
    VkDescriptorSetLayoutCreateInfo si{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    si.flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR;
    si.bindingCount = 1;
    si.pBindings = &b;
    CHECK_VK(api.vkCreateDescriptorSetLayout(dev, &si, nullptr, &set_layout));
    VkPushConstantRange range_pc{VK_SHADER_STAGE_COMPUTE_BIT, 0, 4};
    VkPipelineLayoutCreateInfo li{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    li.setLayoutCount = 1;
    li.pSetLayouts = &set_layout;
    li.pushConstantRangeCount = 1;
    li.pPushConstantRanges = &range_pc;
    CHECK_VK(api.vkCreatePipelineLayout(dev, &li, nullptr, &layout));
    VkComputePipelineCreateInfo pi{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    pi.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    pi.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    pi.stage.module = module;
    pi.stage.pName = "main";
    pi.layout = layout;
    CHECK_VK(api.vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &pi, nullptr, &pipeline));
    VkCommandPoolCreateInfo ci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    ci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    ci.queueFamilyIndex = e.driver->device().queueFamily();
    CHECK_VK(api.vkCreateCommandPool(dev, &ci, nullptr, &pool));
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    CHECK_VK(api.vkAllocateCommandBuffers(dev, &ai, &cmd));
    VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    CHECK_VK(api.vkCreateFence(dev, &fi, nullptr, &fence));
  }
  ~Raw() {
    api.vkDestroyFence(dev, fence, nullptr);
    api.vkDestroyCommandPool(dev, pool, nullptr);
    api.vkDestroyPipeline(dev, pipeline, nullptr);
    api.vkDestroyPipelineLayout(dev, layout, nullptr);
    api.vkDestroyDescriptorSetLayout(dev, set_layout, nullptr);
    api.vkDestroyShaderModule(dev, module, nullptr);
  }
  // Records `count` dispatches (barriers between), submits, waits.
  void run(int count, uint32_t add) {
    CHECK_VK(api.vkResetCommandBuffer(cmd, 0));
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    CHECK_VK(api.vkBeginCommandBuffer(cmd, &bi));
    api.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
    VkDescriptorBufferInfo info{buffer, offset, 256};
    VkWriteDescriptorSet w{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    w.dstBinding = 0;
    w.descriptorCount = 1;
    w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    w.pBufferInfo = &info;
    for (int i = 0; i < count; ++i) {
      if (i > 0) {
        VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
        mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
        mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
        api.vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                                 VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &mb, 0, nullptr, 0,
                                 nullptr);
      }
      api.vkCmdPushDescriptorSetKHR(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &w);
      api.vkCmdPushConstants(cmd, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 4, &add);
      api.vkCmdDispatch(cmd, 1, 1, 1);
    }
    CHECK_VK(api.vkEndCommandBuffer(cmd));
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmd;
    {
      std::lock_guard<std::mutex> lock(queue_mutex);
      CHECK_VK(api.vkQueueSubmit(queue, 1, &si, fence));
    }
    CHECK_VK(api.vkWaitForFences(dev, 1, &fence, VK_TRUE, UINT64_MAX));
    CHECK_VK(api.vkResetFences(dev, 1, &fence));
  }
};

void ralDispatches(benchmark::State& state, int per_sync) {
  Env& e = env();
  uint32_t add = 1;
  void* ptr = e.data;
  void* values[] = {&ptr, &add};
  size_t sizes[] = {sizeof(void*), 4};
  LaunchConfig cfg;
  cfg.grid.x = 1;
  for (auto _ : state) {
    for (int i = 0; i < per_sync; ++i)
      CHECK_OK(e.driver->launch(e.tiny, 0, cfg, KernelArgs{values, sizes, 2}));
    CHECK_OK(e.driver->synchronize());
  }
  state.SetItemsProcessed(state.iterations() * per_sync);
}

void rawDispatches(benchmark::State& state, int per_sync) {
  Env& e = env();
  Raw raw(e);
  for (auto _ : state) raw.run(per_sync, 1);
  state.SetItemsProcessed(state.iterations() * per_sync);
}

void BM_DispatchRal(benchmark::State& state) { ralDispatches(state, 1); }
void BM_DispatchRaw(benchmark::State& state) { rawDispatches(state, 1); }
void BM_Dispatch64Ral(benchmark::State& state) { ralDispatches(state, 64); }
void BM_Dispatch64Raw(benchmark::State& state) { rawDispatches(state, 64); }
BENCHMARK(BM_DispatchRal)->UseRealTime();
BENCHMARK(BM_DispatchRaw)->UseRealTime();
BENCHMARK(BM_Dispatch64Ral)->UseRealTime();
BENCHMARK(BM_Dispatch64Raw)->UseRealTime();

template <typename... A>
void callApi(Context& context, ExecutionContext* exec, const std::string& name, A... args) {
  ral::callApi(exec->abi(), name.c_str(), args...);
  if (exec->failed()) die(exec->status());
  (void)context;
}

void gemm(benchmark::State& state, bool on_vulkan) {
  Env& e = env();
  const int64_t n = state.range(0);
  const size_t bytes = sizeof(float) * n * n;
  std::vector<float> a(n * n), b(n * n), c(n * n);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (auto& v : a) v = dist(rng);
  for (auto& v : b) v = dist(rng);
  float *pa = a.data(), *pb = b.data(), *pc = c.data();
  if (on_vulkan) {
    pa = static_cast<float*>(*e.driver->allocate(bytes));
    pb = static_cast<float*>(*e.driver->allocate(bytes));
    pc = static_cast<float*>(*e.driver->allocate(bytes));
    CHECK_OK(e.driver->copy(pa, a.data(), bytes, CopyKind::kHostToDevice));
    CHECK_OK(e.driver->copy(pb, b.data(), bytes, CopyKind::kHostToDevice));
  }
  auto ma = makeMemRef<float, 2>(pa, {n, n}), mb = makeMemRef<float, 2>(pb, {n, n}),
       mc = makeMemRef<float, 2>(pc, {n, n});
  const std::string name = encodeApiName(
      "ral_gemm", on_vulkan ? "vulkan" : "cpu",
      kSignatureOf<void (*)(ExecutionContext*, MemRef<float, 2>, MemRef<float, 2>,
                            MemRef<float, 2>, bool, bool)>
          .view());
  auto exec = e.context.acquireExecution();
  for (auto _ : state) {
    callApi(e.context, exec.get(), name, ma, mb, mc, false, false);
    if (on_vulkan) CHECK_OK(e.driver->synchronize());
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * n * n * n * state.iterations(), benchmark::Counter::kIsRate,
                         benchmark::Counter::kIs1000);
  if (on_vulkan) {
    CHECK_OK(e.driver->deallocate(pa));
    CHECK_OK(e.driver->deallocate(pb));
    CHECK_OK(e.driver->deallocate(pc));
  }
}
void BM_GemmVulkan(benchmark::State& state) { gemm(state, true); }
void BM_GemmCpu(benchmark::State& state) { gemm(state, false); }
BENCHMARK(BM_GemmVulkan)->Arg(512)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_GemmCpu)->Arg(512)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace ral::bench

int main(int argc, char** argv) {
  auto& e = ral::bench::env();
  if (e.driver == nullptr) {
    auto d = e.context.driver(ral::DeviceKind::kVulkan);
    std::printf("vulkan_benchmark: no Vulkan device (%s); nothing to measure\n",
                d.status().toString().c_str());
    return 0;
  }
  std::printf("device: %s\n", e.driver->deviceName().c_str());
  return ral::bench::runAndReport(
      argc, argv,
      {{"tiny dispatch + sync: RAL driver / raw Vulkan", "BM_DispatchRal/real_time",
        "BM_DispatchRaw/real_time", 1.1},
       {"64 dispatches + sync: RAL driver / raw Vulkan", "BM_Dispatch64Ral/real_time",
        "BM_Dispatch64Raw/real_time", 1.1},
       {"ral_gemm 512: Vulkan / CPU", "BM_GemmVulkan/512/real_time", "BM_GemmCpu/512/real_time"},
       {"ral_gemm 1024: Vulkan / CPU", "BM_GemmVulkan/1024/real_time",
        "BM_GemmCpu/1024/real_time"}});
}
