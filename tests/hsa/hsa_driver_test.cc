// The HSA driver on the simulated HSA runtime (libral_sim_hsa.so via RAL_HSA_RUNTIME_PATH, set
// by CTest; each test runs in its own process, so tests may set the simulator's environment
// before the first driver is created): memory, fills, launches wrapping the AQL ring, semaphore
// failure through a queue, queue errors, several GPUs and ROCR_VISIBLE_DEVICES, out of memory,
// and the load errors (missing runtime, missing symbol, corrupt code object).
#include "drivers/hsa/hsa_driver.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ral/device_uri.h"
#include "tests/sim_hsa/sim_hsa_kernel.h"

extern "C" {
// out[i] = a * i + b for i < n, with arguments (uint32_t* out, uint32_t n, uint64_t a, uint16_t b)
// at kernarg offsets 0, 8, 16, 24.
void ral_hsa_test_affine(const RalSimHsaDispatch* d, const void* kernarg) {
  const auto* k = static_cast<const unsigned char*>(kernarg);
  uint32_t* out = nullptr;
  uint32_t n = 0;
  uint64_t a = 0;
  uint16_t b = 0;
  std::memcpy(&out, k, 8);
  std::memcpy(&n, k + 8, 4);
  std::memcpy(&a, k + 16, 8);
  std::memcpy(&b, k + 24, 2);
  const uint64_t items = uint64_t{d->grid_size[0]} * d->grid_size[1] * d->grid_size[2];
  for (uint64_t i = 0; i < items && i < n; ++i) out[i] = static_cast<uint32_t>(a * i + b);
}
// *counter += 1 (argument: uint32_t* counter).
void ral_hsa_test_count(const RalSimHsaDispatch*, const void* kernarg) {
  uint32_t* counter = nullptr;
  std::memcpy(&counter, kernarg, 8);
  ++*counter;
}
}

namespace ral::hsa {
namespace {

constexpr char kObject[] = RAL_SIM_HSA_CODE_OBJECT_MAGIC
    "\naffine ral_hsa_test_affine 32\ncount ral_hsa_test_count 8\nboom ral_hsa_test_count 8\n";

ExecutableSpec spec(const char* name = "test.kernels") {
  ExecutableSpec s;
  s.name = name;
  s.format = ExecutableFormat::kHsaco;
  s.data = kObject;
  s.size = std::strlen(kObject);
  s.entries = {{"affine", {0, 0, 0}}, {"count", {0, 0, 0}}, {"boom", {0, 0, 0}}};
  return s;
}

std::unique_ptr<HsaDriver> makeDriver(HsaDriverOptions options = {}) {
  auto d = HsaDriver::create(options);
  EXPECT_TRUE(d.ok()) << d.status();
  return d.ok() ? std::move(d).value() : nullptr;
}

Status count(HsaDriver& d, Executable* exe, void* counter, Stream* s = nullptr) {
  void* values[] = {&counter};
  const size_t sizes[] = {8};
  return d.launch(exe, 1, {{1, 1, 1}, {1, 1, 1}, 0}, {values, sizes, 1}, s);
}

uint32_t readWord(HsaDriver& d, const void* p) {
  uint32_t v = 0;
  EXPECT_TRUE(d.copy(&v, p, 4, CopyKind::kDeviceToHost).ok());
  EXPECT_TRUE(d.synchronize().ok());
  return v;
}

TEST(HsaDriver, NameArchAndTargetRank) {
  auto d = makeDriver();
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->deviceName(), "hsa:0 (gfx90a, RAL simulated AMD GPU 0)");
  EXPECT_EQ(d->targetRank(ExecutableFormat::kHsaco, "gfx90a"), 1);
  EXPECT_EQ(d->targetRank(ExecutableFormat::kHsaco, ""), 0);
  EXPECT_EQ(d->targetRank(ExecutableFormat::kHsaco, "gfx908"), -1);
  EXPECT_EQ(d->targetRank(ExecutableFormat::kSpirv, ""), -1);
  ExecutableSpec other = spec("test.other_target");
  other.target = "gfx1100";
  EXPECT_EQ(d->load(other).status().code(), StatusCode::kUnsupported);
}

TEST(HsaDriver, LaunchWithSeveralArgumentsInTwoDimensions) {
  auto d = makeDriver();
  ASSERT_NE(d, nullptr);
  Executable* exe = *d->load(spec());
  constexpr uint32_t kN = 1000;
  void* out = *d->allocate(kN * 4 + 4);
  const uint32_t sentinel = 0xeeeeeeee;
  ASSERT_TRUE(d->fill(out, kN * 4 + 4, &sentinel, 4).ok());
  uint32_t n = kN;
  uint64_t a = 3;
  uint16_t b = 7;
  void* values[] = {&out, &n, &a, &b};
  const size_t sizes[] = {8, 4, 8, 2};
  // 16 x 2 workgroups of 32 x 1: 1024 work-items, the kernel stops at n.
  ASSERT_TRUE(d->launch(*d->load(spec()), 0, {{16, 2, 1}, {32, 1, 1}, 0}, {values, sizes, 4}).ok());
  std::vector<uint32_t> got(kN + 1);
  ASSERT_TRUE(d->copy(got.data(), out, got.size() * 4, CopyKind::kDeviceToHost).ok());
  ASSERT_TRUE(d->synchronize().ok());
  for (uint32_t i = 0; i < kN; ++i) ASSERT_EQ(got[i], 3 * i + 7) << i;
  EXPECT_EQ(got[kN], sentinel);
  // Too many argument bytes for the kernel's segment, and a workgroup over AQL's 16 bits.
  const size_t big[] = {8, 4, 8, 16};
  EXPECT_EQ(d->launch(exe, 0, {{1, 1, 1}, {1, 1, 1}, 0}, {values, big, 4}).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(d->launch(exe, 0, {{1, 1, 1}, {70000, 1, 1}, 0}, {values, sizes, 4}).code(),
            StatusCode::kInvalidArgument);
  ASSERT_TRUE(d->deallocate(out).ok());
}

TEST(HsaDriver, ManyLaunchesWrapTheQueueRing) {
  HsaDriverOptions options;
  options.queue_size = 16;
  auto d = makeDriver(options);
  ASSERT_NE(d, nullptr);
  Executable* exe = *d->load(spec());
  void* counter = *d->allocate(4, 4, MemoryKind::kHostVisible);
  const uint32_t zero = 0;
  ASSERT_TRUE(d->fill(counter, 4, &zero, 4).ok());
  // The fill is on the default stream, the launches on another: nothing orders them but this.
  ASSERT_TRUE(d->synchronize().ok());
  auto stream = d->createStream();
  ASSERT_TRUE(stream.ok());
  for (int i = 0; i < 200; ++i) ASSERT_TRUE(count(*d, exe, counter, stream->get()).ok()) << i;
  ASSERT_TRUE(d->synchronize(stream->get()).ok());
  EXPECT_EQ(*static_cast<uint32_t*>(counter), 200u);
  ASSERT_TRUE(d->deallocate(counter).ok());
}

TEST(HsaDriver, FillsAreExactAtEveryOffsetAndPatternWidth) {
  auto d = makeDriver();
  ASSERT_NE(d, nullptr);
  constexpr size_t kBytes = 200000;  // more than one staged chunk: the doubling copies run too
  void* p = *d->allocate(kBytes + 64);
  const unsigned char pattern[4] = {0xa1, 0xb2, 0xc3, 0xd4};
  const std::vector<unsigned char> background(kBytes + 64, 0x5e);
  for (size_t width : {1, 2, 4}) {
    for (size_t offset : {0, 2, 4, 12}) {
      ASSERT_TRUE(d->copy(p, background.data(), background.size(), CopyKind::kHostToDevice).ok());
      const size_t bytes = (kBytes - offset * width) / width * width;
      ASSERT_TRUE(d->fill(static_cast<char*>(p) + offset * width, bytes, pattern, width).ok());
      std::vector<unsigned char> got(background.size());
      ASSERT_TRUE(d->copy(got.data(), p, got.size(), CopyKind::kDeviceToHost).ok());
      ASSERT_TRUE(d->synchronize().ok());
      const size_t begin = offset * width;
      for (size_t i = 0; i < got.size(); ++i) {
        const bool inside = i >= begin && i < begin + bytes;
        ASSERT_EQ(got[i], inside ? pattern[(i - begin) % width] : 0x5e)
            << "width " << width << " offset " << begin << " byte " << i;
      }
    }
  }
  ASSERT_TRUE(d->deallocate(p).ok());
}

TEST(HsaDriver, BlockPoolReuseAndTrimInMemoryStats) {
  auto d = makeDriver();
  ASSERT_NE(d, nullptr);
  void* a = *d->allocate(1000);
  void* b = *d->allocate(1000);
  EXPECT_EQ(d->memoryStats().cache_hits, 1u) << "the second slot comes from the first's block";
  ASSERT_TRUE(d->deallocate(a).ok());
  ASSERT_TRUE(d->deallocate(b).ok());
  EXPECT_EQ(d->memoryStats().bytes_in_use, 0u);
  EXPECT_GT(d->memoryStats().bytes_cached, 0u);
  void* big = *d->allocate(size_t{5} << 20);
  ASSERT_TRUE(d->deallocate(big).ok());
  void* again = *d->allocate(size_t{5} << 20);
  EXPECT_EQ(again, big);
  ASSERT_TRUE(d->deallocate(again).ok());
  ASSERT_TRUE(d->trim().ok());
  EXPECT_EQ(d->memoryStats().bytes_cached, 0u);
}

TEST(HsaDriver, OutOfMemoryThenTheDriverStillWorks) {
  setenv(RAL_SIM_HSA_MEMORY_ENV, "8388608", 1);  // 8 MiB of GPU memory
  auto d = makeDriver();
  ASSERT_NE(d, nullptr);
  void* a = *d->allocate(size_t{5} << 20);
  auto b = d->allocate(size_t{5} << 20);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), StatusCode::kOutOfMemory) << b.status();
  EXPECT_NE(b.status().message().find("hsa device memory"), std::string_view::npos) << b.status();
  ASSERT_TRUE(d->deallocate(a).ok());
  auto c = d->allocate(size_t{6} << 20);  // the cached 5 MiB is trimmed to make room
  ASSERT_TRUE(c.ok()) << c.status();
  const uint32_t v = 42;
  ASSERT_TRUE(d->fill(*c, 4, &v, 4).ok());
  EXPECT_EQ(readWord(*d, *c), 42u);
  ASSERT_TRUE(d->deallocate(*c).ok());
}

TEST(HsaDriver, QueueErrorFailsTheStreamAndItsSignalsThenTheStreamRecovers) {
  setenv(RAL_SIM_HSA_FAIL_KERNEL_ENV, "boom", 1);
  auto d = makeDriver();
  ASSERT_NE(d, nullptr);
  Executable* exe = *d->load(spec());
  void* counter = *d->allocate(4, 4, MemoryKind::kHostVisible);
  *static_cast<uint32_t*>(counter) = 0;
  auto s = d->createStream();
  ASSERT_TRUE(s.ok());
  auto done = *d->createSemaphore();
  void* values[] = {&counter};
  const size_t sizes[] = {8};
  ASSERT_TRUE(d->launch(exe, 2, {{1, 1, 1}, {1, 1, 1}, 0}, {values, sizes, 1}, s->get()).ok());
  (void)count(*d, exe, counter, s->get());  // behind the failing dispatch: never runs
  (void)d->queueSignal(s->get(), done.get(), 1);
  Status waited = done->wait(1);
  EXPECT_EQ(waited.code(), StatusCode::kInternal) << waited;
  EXPECT_NE(waited.message().find("HSA_STATUS_ERROR_EXCEPTION"), std::string_view::npos) << waited;
  EXPECT_EQ(d->synchronize(s->get()).code(), StatusCode::kInternal);
  EXPECT_TRUE(d->synchronize(s->get()).ok()) << "reported once";
  EXPECT_EQ(*static_cast<uint32_t*>(counter), 0u);
  ASSERT_TRUE(count(*d, exe, counter, s->get()).ok());
  ASSERT_TRUE(d->synchronize(s->get()).ok());
  EXPECT_EQ(*static_cast<uint32_t*>(counter), 1u);
  ASSERT_TRUE(d->deallocate(counter).ok());
}

TEST(HsaDriver, DestroyingAStreamCancelsItsUnmetWaits) {
  auto d = makeDriver();
  ASSERT_NE(d, nullptr);
  Executable* exe = *d->load(spec());
  void* counter = *d->allocate(4, 4, MemoryKind::kHostVisible);
  *static_cast<uint32_t*>(counter) = 0;
  auto gate = *d->createSemaphore(), after = *d->createSemaphore();
  {
    auto s = d->createStream();
    ASSERT_TRUE(d->queueWait(s->get(), gate.get(), 1).ok());
    ASSERT_TRUE(count(*d, exe, counter, s->get()).ok());
    ASSERT_TRUE(d->queueSignal(s->get(), after.get(), 1).ok());
  }  // never signalled: the wait is cancelled, nothing runs, the signal fails
  EXPECT_EQ(after->wait(1).code(), StatusCode::kCancelled);
  EXPECT_EQ(*static_cast<uint32_t*>(counter), 0u);
  ASSERT_TRUE(d->deallocate(counter).ok());
}

TEST(HsaDriver, TwoGpusVisibleDevicesAndTheEnumerator) {
  setenv(RAL_SIM_HSA_GPUS_ENV, "3", 1);
  char second[32];
  std::snprintf(second, sizeof(second), "GPU-%016llx",
                static_cast<unsigned long long>(RAL_SIM_HSA_UUID_BASE + 2));
  setenv("ROCR_VISIBLE_DEVICES", (std::string(second) + ",0").c_str(), 1);
  auto devices = enumerateDevices(DeviceKind::kHsa);
  ASSERT_TRUE(devices.ok()) << devices.status();
  ASSERT_EQ(devices->size(), 2u);
  EXPECT_EQ((*devices)[0].uuid, second);
  EXPECT_EQ((*devices)[0].name, "RAL simulated AMD GPU 2");
  EXPECT_EQ((*devices)[0].arch, "gfx90a");
  EXPECT_EQ((*devices)[1].ordinal, 1);
  EXPECT_EQ((*devices)[1].name, "RAL simulated AMD GPU 0");
  auto by_uuid = resolveDevice("hsa://" + std::string(second));
  ASSERT_TRUE(by_uuid.ok()) << by_uuid.status();
  EXPECT_EQ(by_uuid->ordinal, 0);
  HsaDriverOptions options;
  options.device = 1;
  auto d = makeDriver(options);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->deviceName(), "hsa:1 (gfx90a, RAL simulated AMD GPU 0)");
  options.device = 2;
  auto missing = HsaDriver::create(options);
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound) << missing.status();
}

TEST(HsaDriver, NoVisibleGpuIsACleanUnavailable) {
  setenv("ROCR_VISIBLE_DEVICES", "", 1);
  auto d = HsaDriver::create();
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(d.status().message().find("hsa: no GPU agent"), std::string_view::npos) << d.status();
  EXPECT_EQ(enumerateDevices(DeviceKind::kHsa).status().code(), StatusCode::kUnavailable);
}

TEST(HsaDriver, CorruptCodeObjectsAreInvalidArguments) {
  auto d = makeDriver();
  ASSERT_NE(d, nullptr);
  const std::string good(kObject);
  for (const std::string& blob : {std::string("\x7f"
                                              "ELF garbage"),
                                  good.substr(0, good.size() / 2), good.substr(0, good.size() - 1),
                                  std::string(RAL_SIM_HSA_CODE_OBJECT_MAGIC "\nx y\n")}) {
    ExecutableSpec s = spec("test.corrupt");
    s.data = blob.data();
    s.size = blob.size();
    auto exe = d->load(s);
    ASSERT_FALSE(exe.ok());
    EXPECT_EQ(exe.status().code(), StatusCode::kInvalidArgument) << exe.status();
    EXPECT_NE(exe.status().message().find("test.corrupt"), std::string_view::npos);
  }
  ExecutableSpec missing = spec("test.missing");
  missing.entries.push_back({"nope", {0, 0, 0}});
  EXPECT_EQ(d->load(missing).status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(d->load(spec()).ok());
}

TEST(HsaRuntimeErrors, MissingLibraryNamesThePath) {
  HsaDriverOptions options;
  options.library_path = "/nonexistent/libhsa-runtime64.so.1";
  auto d = HsaDriver::create(options);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(d.status().message().find("hsa: cannot load the HSA runtime "
                                      "'/nonexistent/libhsa-runtime64.so.1'"),
            std::string_view::npos)
      << d.status();
  EXPECT_NE(d.status().message().find("RAL_HSA_RUNTIME_PATH"), std::string_view::npos);
}

TEST(HsaRuntimeErrors, SearchPathDirectoriesAndMissingFiles) {
  const std::string dir =
      std::string(RAL_SIM_HSA_LIBRARY).substr(0, std::string(RAL_SIM_HSA_LIBRARY).rfind('/'));
  setenv("RAL_HSA_RUNTIME_PATH", ("/nonexistent:" + dir).c_str(), 1);
  // The simulator's folder holds no file of the runtime's name: the error names what was given.
  auto d = HsaDriver::create();
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("/nonexistent:" + dir), std::string_view::npos) << d.status();
}

TEST(HsaRuntimeErrors, MissingSymbolIsNamed) {
  HsaDriverOptions options;
  options.library_path = RAL_PARTIAL_HSA_LIBRARY;
  auto d = HsaDriver::create(options);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(d.status().message().find("has no symbol 'hsa_iterate_agents'"), std::string_view::npos)
      << d.status();
}

}  // namespace
}  // namespace ral::hsa
