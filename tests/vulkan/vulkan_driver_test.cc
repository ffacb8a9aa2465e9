// The Vulkan driver on the test device (llvmpipe in CI): device selection, memory, copies,
// fills, executables, launches and streams.
#include "drivers/vulkan/vulkan_driver.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "ral/context.h"
#include "tests/vulkan/test_support.h"

namespace ral::vulkan {
namespace {

using testing::makeDriver;

// Launches fill_index (data[i] = i + add) over n elements.
Status fillIndex(VulkanDriver& d, Executable* exe, void* data, uint32_t n, uint32_t add,
                 Stream* stream = nullptr) {
  void* values[] = {&data, &n, &add};
  size_t sizes[] = {sizeof(void*), 4, 4};
  LaunchConfig cfg;
  cfg.grid.x = (n + 63) / 64;
  return d.launch(exe, 0, cfg, KernelArgs{values, sizes, 3}, stream);
}

Status addOne(VulkanDriver& d, Executable* exe, void* data, uint32_t n, Stream* stream = nullptr) {
  void* values[] = {&data, &n};
  size_t sizes[] = {sizeof(void*), 4};
  LaunchConfig cfg;
  cfg.grid.x = (n + 63) / 64;
  return d.launch(exe, 0, cfg, KernelArgs{values, sizes, 2}, stream);
}

std::vector<uint32_t> download(VulkanDriver& d, const void* src, size_t n) {
  std::vector<uint32_t> out(n);
  EXPECT_TRUE(d.copy(out.data(), src, n * 4, CopyKind::kDeviceToHost).ok());
  return out;
}

TEST(VulkanDevice, CreatesAndDescribesTheDevice) {
  auto d = makeDriver();
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->kind(), DeviceKind::kVulkan);
  EXPECT_NE(d->deviceName().find("vulkan: "), std::string::npos);
  EXPECT_FALSE(d->device().allDevices().empty());
  EXPECT_GE(d->bindingAlignment(), 1u);
}

TEST(VulkanDevice, SelectsByIndexAndByName) {
  auto first = makeDriver();
  ASSERT_NE(first, nullptr);
  const std::string name = first->device().name();
  VulkanDriverOptions by_index;
  by_index.device.device = std::to_string(first->device().deviceIndex());
  auto a = makeDriver(by_index);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->device().name(), name);
  VulkanDriverOptions by_name;
  std::string upper = name.substr(0, 4);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  by_name.device.device = upper;  // case-insensitive substring
  auto b = makeDriver(by_name);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->device().name(), name);
}

TEST(VulkanDevice, UnknownDeviceIsUnavailableAndListsDevices) {
  VulkanDriverOptions o;
  o.pipeline_cache_dir = "off";
  o.device.device = "no-such-gpu";
  auto r = VulkanDriver::create(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find("no-such-gpu"), std::string::npos);
  EXPECT_NE(r.status().message().find("devices:"), std::string::npos);
  o.device.device = "97";
  r = VulkanDriver::create(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find("out of range"), std::string::npos);
}

TEST(VulkanDevice, IsTheDefaultDriverOfAContext) {
  ASSERT_TRUE(defaultDriverFactory(DeviceKind::kVulkan).ok());
  Context ctx;
  auto d = ctx.driver<VulkanDriver>();
  ASSERT_TRUE(d.ok()) << d.status();
  auto again = ctx.driver(DeviceKind::kVulkan);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *d);
}

// ---- memory ----------------------------------------------------------------------------------

TEST(VulkanMemory, RoundTripsThroughDeviceMemory) {
  auto d = makeDriver();
  ASSERT_NE(d, nullptr);
  for (size_t n : {size_t{1}, size_t{1000}, size_t{1} << 20, (size_t{3} << 20) + 12}) {
    std::vector<uint32_t> in(n);
    std::iota(in.begin(), in.end(), 7u);
    auto p = d->allocate(n * 4);
    ASSERT_TRUE(p.ok()) << p.status();
    ASSERT_TRUE(d->copy(*p, in.data(), n * 4, CopyKind::kHostToDevice).ok());
    EXPECT_EQ(download(*d, *p, n), in) << n;
    ASSERT_TRUE(d->deallocate(*p).ok());
  }
}

TEST(VulkanMemory, HostVisibleMemoryIsHostAddressable) {
  auto d = makeDriver();
  ASSERT_NE(d, nullptr);
  auto p = d->allocate(4096, 64, MemoryKind::kHostVisible);
  ASSERT_TRUE(p.ok());
  auto* words = static_cast<uint32_t*>(*p);
  for (uint32_t i = 0; i < 1024; ++i) words[i] = i * 3;
  auto q = d->allocate(4096);
  ASSERT_TRUE(q.ok());
  ASSERT_TRUE(d->copy(*q, *p, 4096, CopyKind::kDeviceToDevice).ok());
  auto back = download(*d, *q, 1024);
  for (uint32_t i = 0; i < 1024; ++i) ASSERT_EQ(back[i], i * 3);
  auto range = d->resolve(static_cast<char*>(*p) + 100, 8);
  ASSERT_TRUE(range.ok());
  EXPECT_EQ(range->host, static_cast<char*>(*p) + 100);
  EXPECT_EQ(range->kind, MemoryKind::kHostVisible);
  EXPECT_TRUE(d->deallocate(*p).ok());
  EXPECT_TRUE(d->deallocate(*q).ok());
}

TEST(VulkanMemory, InteriorPointersResolveToTheirBuffer) {
  auto d = makeDriver();
  ASSERT_NE(d, nullptr);
  auto p = d->allocate(1 << 16);
  ASSERT_TRUE(p.ok());
  auto base = d->resolve(*p);
  auto mid = d->resolve(static_cast<char*>(*p) + 1000, 100);
  ASSERT_TRUE(base.ok());
  ASSERT_TRUE(mid.ok());
  EXPECT_EQ(mid->buffer, base->buffer);
  EXPECT_EQ(mid->offset, base->offset + 1000);
  EXPECT_EQ(mid->available, (1u << 16) - 1000);
  EXPECT_EQ(mid->address, base->address + 1000);
  auto addr = d->deviceAddress(*p);
  ASSERT_TRUE(addr.ok());
  EXPECT_EQ(*addr, base->address);
  // Device pointers are buffer device addresses.
  EXPECT_EQ(reinterpret_cast<uintptr_t>(*p), static_cast<uintptr_t>(base->address));
  // Copies to and from interior pointers.
  std::vector<uint32_t> in(100, 0xabcdef01u);
  ASSERT_TRUE(d->copy(static_cast<char*>(*p) + 64, in.data(), 400, CopyKind::kHostToDevice).ok());
  EXPECT_EQ(download(*d, static_cast<char*>(*p) + 64, 100), in);
  auto past = d->resolve(static_cast<char*>(*p) + 1000, 1 << 16);
  EXPECT_EQ(past.status().code(), StatusCode::kOutOfRange);
  EXPECT_TRUE(d->deallocate(*p).ok());
  EXPECT_EQ(d->resolve(*p).status().code(), StatusCode::kNotFound);
}

TEST(VulkanMemory, CachesFreedBlocksAndTrims) {
  auto d = makeDriver();
  ASSERT_NE(d, nullptr);
  auto a = d->allocate(5000);
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(d->deallocate(*a).ok());
  const auto before = d->memoryStats();
  auto b = d->allocate(4800);  // same bucket
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(*b, *a);
  EXPECT_EQ(d->memoryStats().cache_hits, before.cache_hits + 1);
  auto big = d->allocate(size_t{8} << 20);  // a dedicated chunk
  ASSERT_TRUE(big.ok());
  EXPECT_GE(d->memoryStats().bytes_in_use, (size_t{8} << 20) + 4800);
  ASSERT_TRUE(d->deallocate(*big).ok());
  ASSERT_TRUE(d->deallocate(*b).ok());
  EXPECT_GE(d->memoryStats().bytes_cached, size_t{8} << 20);
  ASSERT_TRUE(d->trim().ok());
  EXPECT_EQ(d->memoryStats().bytes_cached, 0u);
  EXPECT_EQ(d->memoryStats().bytes_in_use, 0u);
  EXPECT_GE(d->memoryStats().peak_bytes_in_use, size_t{8} << 20);
}

TEST(VulkanMemory, FreesAreStreamOrdered) {
  auto d = makeDriver();
  ASSERT_NE(d, nullptr);
  auto exe = d->load(testing::addOneSpec());
  ASSERT_TRUE(exe.ok()) << exe.status();
  auto a = d->allocate(4096);
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(d->fill(*a, 4096, "\0\0\0\0", 4).ok());
  ASSERT_TRUE(addOne(*d, *exe, *a, 1024).ok());  // queued, not yet run
  ASSERT_TRUE(d->deallocate(*a).ok());
  auto b = d->allocate(4096);
  ASSERT_TRUE(b.ok());
  EXPECT_NE(*b, *a) << "a block still used by queued work was handed out again";
  ASSERT_TRUE(d->synchronize().ok());
  auto c = d->allocate(4096);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(*c, *a);
  EXPECT_TRUE(d->deallocate(*b).ok());
  EXPECT_TRUE(d->deallocate(*c).ok());
}

TEST(VulkanMemory, RejectsBadArguments) {
  auto d = makeDriver();
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->allocate(64, 3).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(d->allocate(size_t{1} << 50).status().code(), StatusCode::kOutOfMemory);
  int local = 0;
  EXPECT_EQ(d->deallocate(&local).code(), StatusCode::kInvalidArgument);
  auto p = d->allocate(256);
  ASSERT_TRUE(p.ok());
  std::vector<char> host(512);
  EXPECT_EQ(d->copy(nullptr, host.data(), 4, CopyKind::kHostToDevice).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(d->copy(*p, host.data(), 512, CopyKind::kHostToDevice).code(), StatusCode::kOutOfRange);
  EXPECT_EQ(d->copy(host.data(), host.data() + 256, 4, CopyKind::kDeviceToDevice).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(d->copy(host.data(), *p, 4, CopyKind::kHostToDevice).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(d->copy(*p, static_cast<char*>(*p) + 8, 16, CopyKind::kDeviceToDevice).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(d->fill(*p, 12, "abc", 3).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(d->fill(*p, 6, "abcd", 4).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(d->fill(host.data(), 8, "abcd", 4).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(d->deallocate(*p).ok());
  EXPECT_EQ(d->deallocate(*p).code(), StatusCode::kInvalidArgument);  // twice
  // The driver still works.
  auto q = d->allocate(64);
  ASSERT_TRUE(q.ok());
  EXPECT_TRUE(d->deallocate(*q).ok());
}

// Fills on the host path (idle stream, mapped memory) and the queued path (busy stream) agree.
TEST(VulkanMemory, FillsEveryPatternAtEveryAlignment) {
  auto d = makeDriver();
  ASSERT_NE(d, nullptr);
  auto exe = d->load(testing::addOneSpec());
  ASSERT_TRUE(exe.ok());
  auto busy = d->allocate(256);
  ASSERT_TRUE(busy.ok());
  const unsigned char pattern[8] = {0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88};
  for (bool queued : {false, true}) {
    for (size_t ps : {1, 2, 4, 8}) {
      for (size_t offset : {0, 1, 2, 4, 8}) {
        for (size_t count : {1, 3, 1000}) {
          const size_t bytes = count * ps;
          const size_t total = bytes + 32;
          auto p = d->allocate(total);
          ASSERT_TRUE(p.ok());
          std::vector<unsigned char> init(total, 0xee);
          ASSERT_TRUE(d->copy(*p, init.data(), total, CopyKind::kHostToDevice).ok());
          ASSERT_TRUE(d->synchronize().ok());
          if (queued) {
            ASSERT_TRUE(addOne(*d, *exe, *busy, 1).ok());
          }
          ASSERT_TRUE(d->fill(static_cast<char*>(*p) + offset, bytes, pattern, ps).ok());
          std::vector<unsigned char> out(total);
          ASSERT_TRUE(d->copy(out.data(), *p, total, CopyKind::kDeviceToHost).ok());
          for (size_t i = 0; i < total; ++i) {
            const unsigned char want =
                i >= offset && i < offset + bytes ? pattern[(i - offset) % ps] : 0xee;
            ASSERT_EQ(out[i], want) << "queued " << queued << " pattern " << ps << " offset "
                                    << offset << " count " << count << " byte " << i;
          }
          ASSERT_TRUE(d->deallocate(*p).ok());
        }
      }
    }
  }
  EXPECT_TRUE(d->deallocate(*busy).ok());
}

TEST(VulkanMemory, LargeCopiesGoThroughStaging) {
  auto d = makeDriver();
  ASSERT_NE(d, nullptr);
  auto exe = d->load(testing::addOneSpec());
  ASSERT_TRUE(exe.ok());
  const size_t n = (size_t{40} << 20) / 4;  // above one staging piece
  std::vector<uint32_t> in(n);
  std::iota(in.begin(), in.end(), 1u);
  auto p = d->allocate(n * 4);
  ASSERT_TRUE(p.ok());
  // Keep the stream busy so the copy cannot take the direct host path.
  auto busy = d->allocate(256);
  ASSERT_TRUE(busy.ok());
  ASSERT_TRUE(addOne(*d, *exe, *busy, 1).ok());
  ASSERT_TRUE(d->copy(*p, in.data(), n * 4, CopyKind::kHostToDevice).ok());
  ASSERT_TRUE(addOne(*d, *exe, *busy, 1).ok());
  EXPECT_EQ(download(*d, *p, n), in);
  EXPECT_TRUE(d->deallocate(*p).ok());
  EXPECT_TRUE(d->deallocate(*busy).ok());
}

// ---- executables and launches ----------------------------------------------------------------

TEST(VulkanExecutable, LoadsReflectsAndCachesByName) {
  auto d = makeDriver();
  ASSERT_NE(d, nullptr);
  auto exe = d->load(testing::fillIndexSpec());
  ASSERT_TRUE(exe.ok()) << exe.status();
  ASSERT_EQ((*exe)->spec().entries.size(), 1u);
  EXPECT_EQ((*exe)->spec().entries[0].name, "main");
  EXPECT_EQ((*exe)->spec().entries[0].workgroup_size.x, 64u);
  EXPECT_EQ((*exe)->spec().entries[0].workgroup_size.y, 1u);
  auto* vk = static_cast<VulkanExecutable*>(*exe);
  EXPECT_EQ(vk->layoutInfo().bindings.size(), 1u);
  EXPECT_EQ(vk->layoutInfo().push_constant_size, 8u);
  ASSERT_FALSE(vk->layoutInfo().capabilities.empty());
  EXPECT_EQ(vk->layoutInfo().capabilities[0], 1u);  // Shader
  auto again = d->load(testing::fillIndexSpec());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *exe);
  auto other = testing::saxpySpec();
  other.name = testing::fillIndexSpec().name;
  EXPECT_EQ(d->load(other).status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(d->pipelineCacheStats().pipelines, 1u);
}

TEST(VulkanExecutable, CapabilitiesTheDeviceLacksAreRefusedByName) {
  SpirvInfo info;
  info.capabilities = {1, 10, 4448};  // Shader, Float64, StorageBuffer8BitAccess
  VulkanDevice::ShaderFeatures all;
  all.float64 = all.int64 = all.int16 = all.float16 = all.int8 = true;
  all.storage_buffer_16bit = all.storage_buffer_8bit = true;
  EXPECT_TRUE(checkSpirvCapabilities(info, all, "k", "dev").ok());
  VulkanDevice::ShaderFeatures no_f64 = all;
  no_f64.float64 = false;
  Status s = checkSpirvCapabilities(info, no_f64, "k", "dev");
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_NE(s.message().find("needs capability Float64 but device 'dev' lacks shaderFloat64"),
            std::string::npos)
      << s;
  VulkanDevice::ShaderFeatures no_8bit = all;
  no_8bit.storage_buffer_8bit = false;
  EXPECT_EQ(checkSpirvCapabilities(info, no_8bit, "k", "dev").code(), StatusCode::kUnsupported);
}

TEST(VulkanExecutable, RejectsBadModules) {
  auto d = makeDriver();
  ASSERT_NE(d, nullptr);
  auto spec = testing::fillIndexSpec();
  spec.name = "wrong-size";
  spec.entries = {{"main", Dim3{32, 1, 1}}};
  EXPECT_EQ(d->load(spec).status().code(), StatusCode::kInvalidArgument);
  spec.name = "missing-entry";
  spec.entries = {{"nope", Dim3{0, 0, 0}}};
  EXPECT_EQ(d->load(spec).status().code(), StatusCode::kNotFound);
  spec = testing::fillIndexSpec();
  spec.name = "not-spirv";
  spec.format = ExecutableFormat::kPtx;
  EXPECT_EQ(d->load(spec).status().code(), StatusCode::kUnsupported);
  std::vector<uint32_t> garbage(64, 0x12345678u);
  spec.format = ExecutableFormat::kSpirv;
  spec.name = "garbage";
  spec.data = garbage.data();
  spec.size = garbage.size() * 4;
  EXPECT_EQ(d->load(spec).status().code(), StatusCode::kInvalidArgument);
  // Truncated: a valid header but an instruction running past the end.
  auto good = testing::fillIndexSpec();
  std::vector<uint32_t> cut(static_cast<const uint32_t*>(good.data),
                            static_cast<const uint32_t*>(good.data) + 12);
  cut[5] = (100u << 16) | 17u;
  spec.name = "truncated";
  spec.data = cut.data();
  spec.size = cut.size() * 4;
  EXPECT_EQ(d->load(spec).status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(d->load(testing::fillIndexSpec()).ok());  // still works
}

TEST(VulkanLaunch, RunsWithBindingsAndPushConstants) {
  auto d = makeDriver();
  ASSERT_NE(d, nullptr);
  auto exe = d->load(testing::fillIndexSpec());
  ASSERT_TRUE(exe.ok());
  const uint32_t n = 1000;
  auto p = d->allocate(n * 4);
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(fillIndex(*d, *exe, *p, n, 5).ok());
  auto out = download(*d, *p, n);
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(out[i], i + 5);
  // The whole push-constant block as one argument, into an interior (aligned) pointer.
  struct {
    uint32_t n, add;
  } block{10, 100};
  void* interior = static_cast<char*>(*p) + d->bindingAlignment() * 4;
  void* values[] = {&interior, &block};
  size_t sizes[] = {sizeof(void*), sizeof(block)};
  LaunchConfig cfg;
  cfg.grid.x = 1;
  cfg.block = Dim3{64, 1, 1};
  ASSERT_TRUE(d->launch(*exe, 0, cfg, KernelArgs{values, sizes, 2}).ok());
  out = download(*d, *p, n);
  const size_t first = d->bindingAlignment();
  for (uint32_t i = 0; i < 10; ++i) ASSERT_EQ(out[first + i], 100 + i);
  ASSERT_EQ(out[first + 10], first + 10 + 5);
  EXPECT_TRUE(d->deallocate(*p).ok());
}

TEST(VulkanLaunch, TwoBindingsAndATwoDimensionalWorkgroup) {
  auto d = makeDriver();
  ASSERT_NE(d, nullptr);
  auto exe = d->load(testing::saxpySpec());
  ASSERT_TRUE(exe.ok()) << exe.status();
  EXPECT_EQ((*exe)->spec().entries[0].workgroup_size.y, 2u);
  const uint32_t n = 4096;
  std::vector<float> x(n), y(n);
  for (uint32_t i = 0; i < n; ++i) x[i] = static_cast<float>(i), y[i] = 1.0f;
  auto px = d->allocate(n * 4);
  auto py = d->allocate(n * 4, 64, MemoryKind::kHostVisible);
  ASSERT_TRUE(px.ok() && py.ok());
  ASSERT_TRUE(d->copy(*px, x.data(), n * 4, CopyKind::kHostToDevice).ok());
  std::memcpy(*py, y.data(), n * 4);
  float a = 2.0f;
  uint32_t count = n;
  void* values[] = {&*px, &*py, &a, &count};
  size_t sizes[] = {sizeof(void*), sizeof(void*), 4, 4};
  LaunchConfig cfg;
  cfg.grid = Dim3{n / 64, 1, 1};
  ASSERT_TRUE(d->launch(*exe, 0, cfg, KernelArgs{values, sizes, 4}).ok());
  ASSERT_TRUE(d->synchronize().ok());
  const float* out = static_cast<const float*>(*py);
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(out[i], 2.0f * i + 1.0f) << i;
  EXPECT_TRUE(d->deallocate(*px).ok());
  EXPECT_TRUE(d->deallocate(*py).ok());
}

TEST(VulkanLaunch, RejectsBadLaunches) {
  auto d = makeDriver();
  ASSERT_NE(d, nullptr);
  auto exe = d->load(testing::fillIndexSpec());
  ASSERT_TRUE(exe.ok());
  auto p = d->allocate(4096);
  ASSERT_TRUE(p.ok());
  uint32_t n = 16, add = 0;
  LaunchConfig cfg;
  cfg.grid.x = 1;
  void* ptr = *p;
  {
    void* values[] = {&ptr, &n};
    size_t sizes[] = {sizeof(void*), 4};
    EXPECT_EQ(d->launch(*exe, 0, cfg, KernelArgs{values, sizes, 2}).code(),
              StatusCode::kInvalidArgument);  // one push constant missing
  }
  void* values[] = {&ptr, &n, &add};
  size_t sizes[] = {sizeof(void*), 4, 4};
  KernelArgs args{values, sizes, 3};
  EXPECT_EQ(d->launch(*exe, 1, cfg, args).code(), StatusCode::kInvalidArgument);  // entry
  LaunchConfig bad_block = cfg;
  bad_block.block = Dim3{32, 1, 1};
  EXPECT_EQ(d->launch(*exe, 0, bad_block, args).code(), StatusCode::kInvalidArgument);
  LaunchConfig huge = cfg;
  huge.grid.x = 0xffffffffu;
  EXPECT_EQ(d->launch(*exe, 0, huge, args).code(), StatusCode::kInvalidArgument);
  std::vector<uint32_t> host(16);
  void* host_ptr = host.data();
  void* host_values[] = {&host_ptr, &n, &add};
  EXPECT_EQ(d->launch(*exe, 0, cfg, KernelArgs{host_values, sizes, 3}).code(),
            StatusCode::kInvalidArgument);
  void* unaligned = static_cast<char*>(*p) + 4;
  void* unaligned_values[] = {&unaligned, &n, &add};
  if (d->bindingAlignment() > 4) {
    EXPECT_EQ(d->launch(*exe, 0, cfg, KernelArgs{unaligned_values, sizes, 3}).code(),
              StatusCode::kInvalidArgument);
  }
  size_t bad_sizes[] = {sizeof(void*), 8, 4};
  EXPECT_EQ(d->launch(*exe, 0, cfg, KernelArgs{values, bad_sizes, 3}).code(),
            StatusCode::kInvalidArgument);
  auto other = makeDriver();
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(other->launch(*exe, 0, cfg, args).code(), StatusCode::kInvalidArgument);
  auto other_stream = other->createStream();
  ASSERT_TRUE(other_stream.ok());
  EXPECT_EQ(d->launch(*exe, 0, cfg, args, other_stream->get()).code(),
            StatusCode::kInvalidArgument);
  // Still fine afterwards.
  ASSERT_TRUE(fillIndex(*d, *exe, *p, 16, 1).ok());
  EXPECT_EQ(download(*d, *p, 16)[15], 16u);
  EXPECT_TRUE(d->deallocate(*p).ok());
}

TEST(VulkanStream, KeepsLaunchesInOrderAcrossBatches) {
  auto d = makeDriver();
  ASSERT_NE(d, nullptr);
  auto exe = d->load(testing::addOneSpec());
  ASSERT_TRUE(exe.ok());
  auto stream = d->createStream();
  ASSERT_TRUE(stream.ok());
  const uint32_t n = 256;
  auto p = d->allocate(n * 4);
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(d->fill(*p, n * 4, "\0", 1, stream->get()).ok());
  const int launches = CommandStream::kMaxCommandsPerBatch * 2 + 17;
  for (int i = 0; i < launches; ++i) ASSERT_TRUE(addOne(*d, *exe, *p, n, stream->get()).ok());
  ASSERT_TRUE(d->synchronize(stream->get()).ok());
  std::vector<uint32_t> out(n);
  ASSERT_TRUE(d->copy(out.data(), *p, n * 4, CopyKind::kDeviceToHost, stream->get()).ok());
  for (uint32_t v : out) ASSERT_EQ(v, static_cast<uint32_t>(launches));
  EXPECT_TRUE(d->deallocate(*p).ok());
}

TEST(VulkanStream, CopiesAndFillsAreOrderedWithLaunches) {
  auto d = makeDriver();
  ASSERT_NE(d, nullptr);
  auto exe = d->load(testing::addOneSpec());
  ASSERT_TRUE(exe.ok());
  const uint32_t n = 64;
  auto a = d->allocate(n * 4);
  auto b = d->allocate(n * 4);
  ASSERT_TRUE(a.ok() && b.ok());
  std::vector<uint32_t> ones(n, 1);
  ASSERT_TRUE(d->copy(*a, ones.data(), n * 4, CopyKind::kHostToDevice).ok());
  ASSERT_TRUE(addOne(*d, *exe, *a, n).ok());                               // a = 2
  ASSERT_TRUE(d->copy(*b, *a, n * 4, CopyKind::kDeviceToDevice).ok());     // b = 2
  ASSERT_TRUE(d->fill(*a, n * 4, "\x07\0\0\0", 4).ok());                   // a = 7
  ASSERT_TRUE(addOne(*d, *exe, *b, n).ok());                               // b = 3
  ASSERT_TRUE(d->copy(*a, ones.data(), 8, CopyKind::kHostToDevice).ok());  // a[0..1] = 1
  ASSERT_TRUE(addOne(*d, *exe, *a, n).ok());                               // a = 2,2,8,...
  auto ra = download(*d, *a, n), rb = download(*d, *b, n);
  EXPECT_EQ(ra[0], 2u);
  EXPECT_EQ(ra[1], 2u);
  EXPECT_EQ(ra[2], 8u);
  EXPECT_EQ(rb[5], 3u);
  EXPECT_TRUE(d->deallocate(*a).ok());
  EXPECT_TRUE(d->deallocate(*b).ok());
}

TEST(VulkanStream, ExecutablesArePerContext) {
  Context c1, c2;
  ASSERT_TRUE(c1.setDriverFactory(DeviceKind::kVulkan, vulkanDriverFactory({{}, "off"})).ok());
  ASSERT_TRUE(c2.setDriverFactory(DeviceKind::kVulkan, vulkanDriverFactory({{}, "off"})).ok());
  auto d1 = c1.driver<VulkanDriver>();
  auto d2 = c2.driver<VulkanDriver>();
  ASSERT_TRUE(d1.ok() && d2.ok());
  auto e1 = (*d1)->load(testing::fillIndexSpec());
  auto e2 = (*d2)->load(testing::fillIndexSpec());
  ASSERT_TRUE(e1.ok() && e2.ok());
  EXPECT_NE(*e1, *e2);
  EXPECT_EQ(*(*d1)->load(testing::fillIndexSpec()), *e1);
}

// Vulkan queues are not wrapped: refused, naming the driver.
TEST(VulkanDevice, WrapNativeStreamIsUnsupported) {
  auto d = makeDriver();
  int native = 0;
  auto wrapped = d->wrapNativeStream(&native);
  EXPECT_EQ(wrapped.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(wrapped.status().message().find("vulkan"), std::string::npos) << wrapped.status();
}

}  // namespace
}  // namespace ral::vulkan
