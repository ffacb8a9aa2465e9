// The CUDA driver without a GPU (the documented errors when libcuda.so.1 or a device is missing,
// the stream-ordered allocator against fakes) and with one (memory, launches, semaphores with
// real events, including a GPU->GPU wait with no host wake-up). Device tests skip with the reason
// when there is no device; CTest also runs them against the simulated CUDA library
// (tests/sim_cuda), where kernels are host functions of this binary and PTX tests skip.
#include "drivers/cuda/cuda_driver.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <thread>
#include <vector>

#include "cuda_test_util.h"
#include "drivers/cuda/cuda_library.h"
#include "drivers/cuda/stream_allocator.h"
#include "fake_event_backend.h"
#include "ral/abi.h"
#include "ral/context.h"
#include "ral/device_uri.h"
#include "ral/memref.h"
#include "tests/sim_cuda/sim_cuda_kernel.h"

namespace ral::cuda {
namespace {

using namespace std::chrono_literals;

// ---- without a GPU ----------------------------------------------------------------------------

TEST(CudaLibraryTest, MissingLibraryIsUnavailableAndSaysHowToFix) {
  auto lib = CudaLibrary::loadForTesting("/nonexistent/libcuda.so.1");
  ASSERT_FALSE(lib.ok());
  EXPECT_EQ(lib.status().code(), StatusCode::kUnavailable);
  const std::string message(lib.status().message());
  EXPECT_NE(message.find("/nonexistent/libcuda.so.1"), std::string::npos) << message;
  EXPECT_NE(message.find("RAL_CUDA_DRIVER_PATH"), std::string::npos) << message;
  EXPECT_NE(message.find("NVIDIA driver"), std::string::npos) << message;
}

TEST(CudaLibraryTest, StubLibraryIsUnavailable) {
  const char* stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  if (!std::filesystem::exists(stub)) GTEST_SKIP() << "no CUDA stub library at " << stub;
  auto lib = CudaLibrary::loadForTesting(stub);
  ASSERT_FALSE(lib.ok()) << "the stub library cannot initialize";
  EXPECT_EQ(lib.status().code(), StatusCode::kUnavailable) << lib.status();
  EXPECT_NE(lib.status().message().find("cuInit"), std::string::npos) << lib.status();
}

TEST(CudaLibraryTest, DefaultPathHonoursTheEnvironment) {
  const char* old = std::getenv(kCudaDriverPathEnv);
  std::string saved = old ? old : "";
  setenv(kCudaDriverPathEnv, "/opt/custom/libcuda.so.1", 1);
  EXPECT_EQ(cudaDriverPath(), "/opt/custom/libcuda.so.1");
  unsetenv(kCudaDriverPathEnv);
  EXPECT_EQ(cudaDriverPath(), "libcuda.so.1");
  if (old) setenv(kCudaDriverPathEnv, saved.c_str(), 1);
}

TEST(CudaDriverTest, ContextReportsUnavailableWithoutADriver) {
  if (CudaLibrary::get().ok()) GTEST_SKIP() << "a CUDA driver is installed here";
  Context context;
  auto driver = context.driver(DeviceKind::kCuda);
  ASSERT_FALSE(driver.ok());
  EXPECT_EQ(driver.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(driver.status().message().find(cudaDriverPath()), std::string::npos) << driver.status();
  // Remembered: the same answer, no crash, and other devices still work.
  EXPECT_EQ(context.driver(DeviceKind::kCuda).status(), driver.status());
  EXPECT_TRUE(context.driver(DeviceKind::kCpu).ok());
  EXPECT_FALSE(context.driver<CudaDriver>().ok());
}

// Device URIs: the enumerator reports every device with its UUID and sm_XY; a URI by ordinal or
// UUID reaches the driver as that device; no match lists the devices. Without a driver the list
// is Unavailable with the driver's own reason.
TEST(CudaDriverTest, DeviceUrisNameTheDevices) {
  auto devices = listCudaDevices();
  if (!CudaLibrary::get().ok()) {
    ASSERT_FALSE(devices.ok());
    EXPECT_EQ(devices.status().code(), StatusCode::kUnavailable);
    EXPECT_NE(devices.status().message().find(cudaDriverPath()), std::string::npos);
    auto resolved = resolveDevice("cuda:0");
    ASSERT_FALSE(resolved.ok());
    EXPECT_NE(resolved.status().message().find("device 'cuda:0'"), std::string::npos)
        << resolved.status();
    return;
  }
  ASSERT_TRUE(devices.ok()) << devices.status();
  ASSERT_FALSE(devices->empty());
  const DeviceInfo& first = devices->front();
  EXPECT_EQ(first.ordinal, 0);
  EXPECT_EQ(first.uuid.rfind("GPU-", 0), 0u) << first.uuid;
  EXPECT_EQ(first.uuid.size(), 4u + 36u) << first.uuid;
  EXPECT_EQ(first.arch.rfind("sm_", 0), 0u) << first.arch;
  for (const std::string& uri : {std::string("cuda:0"), "cuda://" + first.uuid}) {
    Context context;
    ASSERT_TRUE(context.selectDevice(uri).ok()) << uri;
    EXPECT_EQ(context.deviceOrdinal(DeviceKind::kCuda), 0);
    auto driver = context.driver<CudaDriver>();
    ASSERT_TRUE(driver.ok()) << driver.status();
    EXPECT_EQ((*driver)->deviceOrdinal(), 0);
  }
  auto missing = resolveDevice("cuda:" + std::to_string(devices->size()));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find(describeDevice(first)), std::string::npos)
      << missing.status();
}

TEST(CudaDriverTest, KernelCallWithoutADriverSignalsTheError) {
  if (CudaLibrary::get().ok()) GTEST_SKIP() << "a CUDA driver is installed here";
  Context context;
  ExecutionHandle exec = context.acquireExecution();
  float a = 0, b = 0, c = 0;
  MemRef<float, 2> ma = makeMemRef<float, 2>(&a, {1, 1});
  MemRef<float, 2> mb = makeMemRef<float, 2>(&b, {1, 1});
  MemRef<float, 2> mc = makeMemRef<float, 2>(&c, {1, 1});
  bool ta = false, tb = false;
  void* ctx = exec->abi();
  void* args[] = {&ctx, &ma, &mb, &mc, &ta, &tb};
  ral_api_call(ctx, "ral_gemm___cuda___pvoid_m2df32_m2df32_m2df32_i1_i1___void", args);
  ASSERT_TRUE(exec->failed());
  EXPECT_EQ(exec->status().code(), StatusCode::kUnavailable) << exec->status();
}

// ---- the stream-ordered allocator against fakes ---------------------------------------------

class FakeMemory final : public MemoryBackend {
 public:
  ~FakeMemory() override { EXPECT_TRUE(live.empty()) << live.size() << " blocks leaked"; }
  StatusOr<void*> allocate(size_t bytes, MemoryKind kind) override {
    if (limit != 0 && used + bytes > limit) return outOfMemory("fake: out of memory");
    void* p = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
    live[p] = bytes;
    used += bytes;
    (void)kind;
    return p;
  }
  void free(void* ptr, MemoryKind) override {
    used -= live.at(ptr);
    live.erase(ptr);
    std::free(ptr);
  }
  Status synchronizeDevice() override {
    ++syncs;
    if (backend) backend->waitIdle();
    return Status();
  }
  testing::FakeEventBackend* backend = nullptr;
  std::map<void*, size_t> live;
  size_t used = 0, limit = 0;
  int syncs = 0;
};

class AllocatorTest : public ::testing::Test {
 protected:
  AllocatorTest() { memory.backend = &backend; }
  testing::FakeEventBackend backend;
  EventPool events{&backend};
  FakeMemory memory;
  BackendStream s1 = backend.createStream();
  BackendStream s2 = backend.createStream();
};

TEST_F(AllocatorTest, BucketsRoundUpByAQuarterPowerOfTwo) {
  EXPECT_EQ(StreamOrderedAllocator::bucketSize(0), 512u);
  EXPECT_EQ(StreamOrderedAllocator::bucketSize(512), 512u);
  EXPECT_EQ(StreamOrderedAllocator::bucketSize(513), 640u);
  EXPECT_EQ(StreamOrderedAllocator::bucketSize(1000), 1024u);
  EXPECT_EQ(StreamOrderedAllocator::bucketSize(1025), 1280u);
  EXPECT_EQ(StreamOrderedAllocator::bucketSize(3 << 20), size_t{3} << 20);
}

TEST_F(AllocatorTest, ReuseIsStreamOrdered) {
  StreamOrderedAllocator alloc(&memory, &events);
  void* a = *alloc.allocate(1000, 64, MemoryKind::kDevice, s1);
  ASSERT_TRUE(alloc.deallocate(a).ok());
  // Same stream: reused at once, no synchronization.
  void* b = *alloc.allocate(900, 64, MemoryKind::kDevice, s1);
  EXPECT_EQ(a, b);
  ASSERT_TRUE(alloc.deallocate(b).ok());
  // Another stream does not take a block the first one may still be using.
  void* c = *alloc.allocate(900, 64, MemoryKind::kDevice, s2);
  EXPECT_NE(c, a);
  ASSERT_TRUE(alloc.deallocate(c).ok());
  MemoryStats stats = alloc.stats();
  EXPECT_EQ(stats.allocations, 3u);
  EXPECT_EQ(stats.cache_hits, 1u);
  EXPECT_EQ(stats.bytes_in_use, 0u);
  EXPECT_EQ(stats.bytes_cached, 2048u);
  EXPECT_EQ(memory.syncs, 0);
  ASSERT_TRUE(alloc.trim().ok());
  EXPECT_EQ(alloc.stats().bytes_cached, 0u);
  EXPECT_TRUE(memory.live.empty());
}

TEST_F(AllocatorTest, CrossStreamUseDelaysReuseUntilItsEventCompletes) {
  StreamOrderedAllocator alloc(&memory, &events);
  backend.pause(s2);
  void* a = *alloc.allocate(4096, 64, MemoryKind::kDevice, s1);
  ASSERT_TRUE(alloc.recordUse(a, s2).ok());
  ASSERT_TRUE(alloc.deallocate(a).ok());
  void* b = *alloc.allocate(4096, 64, MemoryKind::kDevice, s1);
  EXPECT_NE(a, b) << "reused while s2 may still read it";
  backend.resume(s2);
  backend.waitIdle();
  ASSERT_TRUE(alloc.deallocate(b).ok());
  void* c = *alloc.allocate(4096, 64, MemoryKind::kDevice, s1);
  void* d = *alloc.allocate(4096, 64, MemoryKind::kDevice, s1);
  EXPECT_TRUE((c == a && d == b) || (c == b && d == a));
  ASSERT_TRUE(alloc.deallocate(c).ok());
  ASSERT_TRUE(alloc.deallocate(d).ok());
  EXPECT_EQ(events.liveCount(), 0u);
}

// Host-visible memory is written by the host outside stream order (an input copied in before
// the stream reaches the work queued ahead): a freed block is reused only once its own stream
// passed the free, where device memory is reused at once.
TEST_F(AllocatorTest, HostVisibleReuseWaitsForItsStream) {
  StreamOrderedAllocator alloc(&memory, &events);
  backend.pause(s1);
  void* a = *alloc.allocate(4096, 64, MemoryKind::kHostVisible, s1);
  ASSERT_TRUE(alloc.deallocate(a).ok());
  void* b = *alloc.allocate(4096, 64, MemoryKind::kHostVisible, s1);
  EXPECT_NE(a, b) << "reused while work queued before the free may still read it";
  void* d = *alloc.allocate(4096, 64, MemoryKind::kDevice, s1);
  ASSERT_TRUE(alloc.deallocate(d).ok());
  EXPECT_EQ(*alloc.allocate(4096, 64, MemoryKind::kDevice, s1), d);  // stream-ordered: at once
  ASSERT_TRUE(alloc.deallocate(d).ok());
  backend.resume(s1);
  backend.waitIdle();
  void* c = *alloc.allocate(4096, 64, MemoryKind::kHostVisible, s1);
  EXPECT_EQ(c, a);
  ASSERT_TRUE(alloc.deallocate(b).ok());
  ASSERT_TRUE(alloc.deallocate(c).ok());
  backend.waitIdle();
  ASSERT_TRUE(alloc.trim().ok());
  EXPECT_EQ(events.liveCount(), 0u);
}

TEST_F(AllocatorTest, BadFreesAndAlignmentsAreErrors) {
  StreamOrderedAllocator alloc(&memory, &events);
  int local = 0;
  EXPECT_EQ(alloc.deallocate(&local).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(alloc.deallocate(nullptr).ok());
  void* a = *alloc.allocate(10, 64, MemoryKind::kDevice, s1);
  ASSERT_TRUE(alloc.deallocate(a).ok());
  EXPECT_EQ(alloc.deallocate(a).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(alloc.allocate(10, 512, MemoryKind::kDevice, s1).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(alloc.allocate(10, 3, MemoryKind::kDevice, s1).status().code(),
            StatusCode::kInvalidArgument);
}

TEST_F(AllocatorTest, OutOfMemoryTrimsTheCacheThenRetries) {
  StreamOrderedAllocator alloc(&memory, &events);
  memory.limit = 8192;
  void* a = *alloc.allocate(4096, 64, MemoryKind::kDevice, s1);
  ASSERT_TRUE(alloc.deallocate(a).ok());
  // Cached on s1; s2 needs 8 KiB: only possible after the cache goes back.
  auto b = alloc.allocate(8192, 64, MemoryKind::kDevice, s2);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_GE(memory.syncs, 1);
  auto c = alloc.allocate(8192, 64, MemoryKind::kDevice, s2);
  EXPECT_EQ(c.status().code(), StatusCode::kOutOfMemory);
  ASSERT_TRUE(alloc.deallocate(*b).ok());
}

// ---- with a GPU -----------------------------------------------------------------------------

class CudaDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RAL_REQUIRE_CUDA_DEVICE();
    auto d = CudaDriver::create();
    ASSERT_TRUE(d.ok()) << d.status();
    driver = std::move(*d);
  }
  std::unique_ptr<CudaDriver> driver;
};

// A kernel that spins for `ns` nanoseconds, then writes `value` to `out`.
constexpr char kPtx[] = R"(
.version 7.0
.target sm_80
.address_size 64
.visible .entry spin_then_write(.param .u64 out, .param .u32 value, .param .u64 ns) {
  .reg .u64 %rd<6>;
  .reg .u32 %r<2>;
  .reg .pred %p;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [value];
  ld.param.u64 %rd2, [ns];
  mov.u64 %rd3, %globaltimer;
LOOP:
  mov.u64 %rd4, %globaltimer;
  sub.u64 %rd5, %rd4, %rd3;
  setp.lt.u64 %p, %rd5, %rd2;
  @%p bra LOOP;
  cvta.to.global.u64 %rd1, %rd1;
  st.global.u32 [%rd1], %r1;
  ret;
}
.visible .entry empty() { ret; }
)";

}  // namespace
}  // namespace ral::cuda

// The same two kernels for the simulated device (exported: it finds them with dlsym).
extern "C" void ral_cuda_test_spin_then_write(const RalSimCudaLaunch*, void** params) {
  uint32_t* out = *static_cast<uint32_t**>(params[0]);
  const uint32_t value = *static_cast<uint32_t*>(params[1]);
  const uint64_t ns = *static_cast<uint64_t*>(params[2]);
  std::this_thread::sleep_for(std::chrono::nanoseconds(ns));
  *out = value;
}
extern "C" void ral_cuda_test_empty(const RalSimCudaLaunch*, void**) {}

namespace ral::cuda {
namespace {

constexpr char kSimModule[] = RAL_SIM_CUDA_MODULE_MAGIC
    "\nspin_then_write ral_cuda_test_spin_then_write 8 4 8\nempty ral_cuda_test_empty\n";

// The PTX kernels, or their host-function twins on the simulated device.
ExecutableSpec ptxSpec() {
  const bool sim = testing::isSimulatedDevice();
  ExecutableSpec spec;
  spec.name = "test_spin";
  spec.format = ExecutableFormat::kPtx;
  spec.data = sim ? kSimModule : kPtx;
  spec.size = sim ? sizeof(kSimModule) - 1 : sizeof(kPtx) - 1;
  spec.entries = {{"spin_then_write", {0, 0, 0}}, {"empty", {0, 0, 0}}};
  return spec;
}

Status spinThenWrite(CudaDriver& d, Executable* exe, uint32_t* out, uint32_t value, uint64_t ns,
                     Stream* stream) {
  void* values[] = {&out, &value, &ns};
  const size_t sizes[] = {sizeof(out), sizeof(value), sizeof(ns)};
  LaunchConfig config;
  return d.launch(exe, 0, config, KernelArgs{values, sizes, 3}, stream);
}

TEST_F(CudaDeviceTest, MemoryRoundTrip) {
  std::vector<uint32_t> host(1000);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<uint32_t>(i * 7);
  auto dev = driver->allocate(host.size() * 4);
  ASSERT_TRUE(dev.ok()) << dev.status();
  auto dev2 = driver->allocate(host.size() * 4);
  ASSERT_TRUE(dev2.ok());
  ASSERT_TRUE(driver->copy(*dev, host.data(), host.size() * 4, CopyKind::kHostToDevice).ok());
  ASSERT_TRUE(driver->copy(*dev2, *dev, host.size() * 4, CopyKind::kDeviceToDevice).ok());
  const uint64_t pattern = 0x1122334455667788ull;
  ASSERT_TRUE(driver->fill(*dev2, 64, &pattern, 8).ok());
  std::vector<uint32_t> back(host.size());
  ASSERT_TRUE(driver->copy(back.data(), *dev2, back.size() * 4, CopyKind::kDeviceToHost).ok());
  ASSERT_TRUE(driver->synchronize().ok());
  for (size_t i = 0; i < 16; ++i) EXPECT_EQ(back[i], i % 2 == 0 ? 0x55667788u : 0x11223344u);
  for (size_t i = 16; i < host.size(); ++i) ASSERT_EQ(back[i], host[i]) << i;
  ASSERT_TRUE(driver->deallocate(*dev).ok());
  ASSERT_TRUE(driver->deallocate(*dev2).ok());
  EXPECT_EQ(driver->memoryStats().bytes_in_use, 0u);
  EXPECT_TRUE(driver->trim().ok());
}

TEST_F(CudaDeviceTest, LoadIsCachedAndBadInputsAreErrors) {
  auto exe = driver->load(ptxSpec());
  ASSERT_TRUE(exe.ok()) << exe.status();
  EXPECT_EQ(*driver->load(ptxSpec()), *exe);
  ExecutableSpec bad = ptxSpec();
  bad.name = "broken";
  bad.data = "not ptx";
  bad.size = 7;
  EXPECT_FALSE(driver->load(bad).ok());
  ExecutableSpec missing = ptxSpec();
  missing.name = "missing_entry";
  missing.entries = {{"nope", {0, 0, 0}}};
  EXPECT_EQ(driver->load(missing).status().code(), StatusCode::kNotFound);
  ExecutableSpec spirv = ptxSpec();
  spirv.name = "spirv";
  spirv.format = ExecutableFormat::kSpirv;
  EXPECT_EQ(driver->load(spirv).status().code(), StatusCode::kUnsupported);
  LaunchConfig config;
  EXPECT_EQ(driver->launch(*exe, 9, config, {}).code(), StatusCode::kOutOfRange);
  config.grid.x = 0;
  EXPECT_EQ(driver->launch(*exe, 1, config, {}).code(), StatusCode::kInvalidArgument);
}

TEST_F(CudaDeviceTest, HostSignalReleasesHeldLaunchThenDeviceSignalWakesHost) {
  auto exe = *driver->load(ptxSpec());
  auto out = *driver->allocate(4, 64, MemoryKind::kHostVisible);
  std::memset(out, 0, 4);
  auto stream = *driver->createStream();
  auto in = *driver->createSemaphore(0);
  auto done = *driver->createSemaphore(0);
  ASSERT_TRUE(driver->queueWait(stream.get(), in.get(), 1).ok());
  ASSERT_TRUE(spinThenWrite(*driver, exe, static_cast<uint32_t*>(out), 42, 0, stream.get()).ok());
  ASSERT_TRUE(driver->queueSignal(stream.get(), done.get(), 1).ok());
  EXPECT_EQ(*driver->heldBackCount(stream.get()), 3u);
  std::this_thread::sleep_for(10ms);
  EXPECT_EQ(*done->query(), 0u);
  ASSERT_TRUE(in->signal(1).ok());
  ASSERT_TRUE(done->wait(1, 10s).ok());
  EXPECT_EQ(*static_cast<uint32_t*>(out), 42u);
  ASSERT_TRUE(driver->synchronize(stream.get()).ok());
  ASSERT_TRUE(driver->deallocate(out).ok());
}

TEST_F(CudaDeviceTest, GpuToGpuWaitNeedsNoHostWakeUp) {
  auto exe = *driver->load(ptxSpec());
  auto* out = static_cast<uint32_t*>(*driver->allocate(8, 64, MemoryKind::kHostVisible));
  std::memset(out, 0, 8);
  auto a = *driver->createStream();
  auto b = *driver->createStream();
  auto sem = *driver->createSemaphore(0);
  // a: a 50 ms kernel, then signal 1. b: wait 1, then a kernel that writes right away.
  ASSERT_TRUE(spinThenWrite(*driver, exe, out, 1, 50'000'000, a.get()).ok());
  ASSERT_TRUE(driver->queueSignal(a.get(), sem.get(), 1).ok());
  ASSERT_TRUE(driver->queueWait(b.get(), sem.get(), 1).ok());
  EXPECT_EQ(*driver->heldBackCount(b.get()), 0u)
      << "a wait on a recorded signal must be a device-side event wait";
  ASSERT_TRUE(spinThenWrite(*driver, exe, out + 1, 2, 0, b.get()).ok());
  ASSERT_TRUE(driver->synchronize(b.get()).ok());
  EXPECT_EQ(out[0], 1u) << "b ran before a signalled";
  EXPECT_EQ(out[1], 2u);
  ASSERT_TRUE(sem->wait(1, 10s).ok());
  ASSERT_TRUE(driver->deallocate(out).ok());
}

TEST_F(CudaDeviceTest, FailedSemaphoreDropsHeldWorkAndReportsOnSynchronize) {
  auto stream = *driver->createStream();
  auto in = *driver->createSemaphore(0);
  auto out = *driver->createSemaphore(0);
  ASSERT_TRUE(driver->queueWait(stream.get(), in.get(), 1).ok());
  ASSERT_TRUE(driver->queueSignal(stream.get(), out.get(), 1).ok());
  in->fail(dataLoss("upstream failed"));
  EXPECT_EQ(out->wait(1, 10s).code(), StatusCode::kDataLoss);
  EXPECT_EQ(driver->synchronize(stream.get()).code(), StatusCode::kDataLoss);
  EXPECT_TRUE(driver->synchronize(stream.get()).ok());
}

TEST_F(CudaDeviceTest, RealPtxLoadsAndRuns) {
  RAL_REQUIRE_REAL_CUDA_DEVICE();
  ExecutableSpec spec = ptxSpec();
  spec.data = kPtx;
  spec.size = sizeof(kPtx) - 1;
  auto exe = driver->load(spec);
  ASSERT_TRUE(exe.ok()) << exe.status();
  ASSERT_TRUE(driver->launch(*exe, 1, LaunchConfig{}, {}).ok());
  EXPECT_TRUE(driver->synchronize().ok());
}

TEST_F(CudaDeviceTest, PtxOnTheSimulatedDeviceIsAnInvalidImage) {
  if (!testing::isSimulatedDevice()) GTEST_SKIP() << "not the simulated CUDA device";
  ExecutableSpec spec = ptxSpec();
  spec.name = "real_ptx";
  spec.data = kPtx;
  spec.size = sizeof(kPtx) - 1;
  auto exe = driver->load(spec);
  ASSERT_FALSE(exe.ok());
  EXPECT_EQ(exe.status().code(), StatusCode::kInvalidArgument) << exe.status();
  EXPECT_NE(exe.status().message().find("CUDA_ERROR_INVALID_IMAGE"), std::string::npos)
      << exe.status();
}

TEST_F(CudaDeviceTest, DeviceOutOfMemoryIsACleanError) {
  auto huge = driver->allocate(size_t{1} << 40);  // 1 TiB: more than any device (or the sim) has
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.status().code(), StatusCode::kOutOfMemory) << huge.status();
  EXPECT_NE(huge.status().message().find("cuMemAlloc"), std::string::npos) << huge.status();
  auto small = driver->allocate(1024);
  ASSERT_TRUE(small.ok()) << small.status();
  EXPECT_TRUE(driver->deallocate(*small).ok());
}

TEST_F(CudaDeviceTest, PointersAreClassified) {
  void* dev = *driver->allocate(64);
  void* pinned = *driver->allocate(64, 64, MemoryKind::kHostVisible);
  int local = 0;
  EXPECT_TRUE(*driver->isDevicePointer(dev));
  EXPECT_FALSE(*driver->isDevicePointer(pinned));
  EXPECT_FALSE(*driver->isDevicePointer(&local));
  ASSERT_TRUE(driver->deallocate(dev).ok());
  ASSERT_TRUE(driver->deallocate(pinned).ok());
}

TEST_F(CudaDeviceTest, DeviceNameAndContextFromTheRegistry) {
  EXPECT_NE(driver->deviceName().find("cuda:"), std::string::npos);
  EXPECT_GE(driver->computeCapability(), 50);
  Context context;
  auto d = context.driver<CudaDriver>();
  ASSERT_TRUE(d.ok()) << d.status();
}

// A wrapped CUstream runs RAL work, and destroying the wrapper leaves it usable.
TEST(CudaDriverTest, WrappedNativeStreamIsUsableAndOutlivesItsWrapper) {
  if (!CudaLibrary::get().ok()) GTEST_SKIP() << "no CUDA driver here";
  auto driver = CudaDriver::create();
  if (!driver.ok()) GTEST_SKIP() << driver.status();
  auto owner = (*driver)->createStream();  // stands in for the host's own stream
  ASSERT_TRUE(owner.ok()) << owner.status();
  auto native = (*driver)->streamHandle(owner->get());
  ASSERT_TRUE(native.ok()) << native.status();
  auto host = (*driver)->allocate(256, 64, MemoryKind::kHostVisible);
  auto device = (*driver)->allocate(256);
  ASSERT_TRUE(host.ok() && device.ok());
  {
    auto wrapped = (*driver)->wrapNativeStream(*native);
    ASSERT_TRUE(wrapped.ok()) << wrapped.status();
    const uint32_t pattern = 0x01020304;
    ASSERT_TRUE((*driver)->fill(*device, 256, &pattern, 4, wrapped->get()).ok());
    ASSERT_TRUE((*driver)->copy(*host, *device, 256, CopyKind::kDeviceToHost, wrapped->get()).ok());
    ASSERT_TRUE((*driver)->synchronize(wrapped->get()).ok());
    EXPECT_EQ(static_cast<uint32_t*>(*host)[63], pattern);
  }
  // The native stream is still alive: work on it runs.
  const uint32_t zero = 0;
  ASSERT_TRUE((*driver)->fill(*device, 256, &zero, 4, owner->get()).ok());
  ASSERT_TRUE((*driver)->copy(*host, *device, 256, CopyKind::kDeviceToHost, owner->get()).ok());
  ASSERT_TRUE((*driver)->synchronize(owner->get()).ok());
  EXPECT_EQ(static_cast<uint32_t*>(*host)[63], 0u);
  ASSERT_TRUE((*driver)->deallocate(*host).ok());
  ASSERT_TRUE((*driver)->deallocate(*device).ok());
}

}  // namespace
}  // namespace ral::cuda
