// DriverTest: the fixture every conformance test runs in (a fresh driver per test, helpers,
// expected failures). See cts.h.
#include "cts.h"

namespace ral::cts {

ExecutableSpec CtsBackend::missingEntry() const {
  ExecutableSpec spec = kernel(KernelId::kAddOne);
  spec.name = "cts.missing_entry";
  spec.entries.push_back({"no_such_entry", {0, 0, 0}});
  return spec;
}

std::string backendName(const ::testing::TestParamInfo<const CtsBackend*>& info) {
  return info.param->name();
}

void DriverTest::SetUp() {
  auto created = backend().createDriver();
  if (!created.ok()) GTEST_SKIP() << backend().name() << " unavailable: " << created.status();
  driver_ = std::move(created).value();
  xfail_.begin(::ral::testing::expectedFailureFor(kExpectedFailures, backend().name()));
}

void DriverTest::TearDown() {
  if (driver_ != nullptr) {
    EXPECT_TRUE(driver_->synchronize().ok());
    for (void* p : buffers_) EXPECT_TRUE(driver_->deallocate(p).ok());
  }
  xfail_.finish();
}

Executable* DriverTest::kernel(KernelId id) {
  Executable*& exe = kernels_[static_cast<int>(id)];
  if (exe == nullptr) {
    auto loaded = driver_->load(backend().kernel(id));
    EXPECT_TRUE(loaded.ok()) << loaded.status();
    if (loaded.ok()) exe = *loaded;
  }
  return exe;
}

Status DriverTest::addOne(void* data, uint32_t n, Stream* stream) {
  Executable* exe = kernel(KernelId::kAddOne);
  if (exe == nullptr) return internalError("cts: the add_one kernel did not load");
  void* values[] = {&data, &n};
  const size_t sizes[] = {sizeof(void*), sizeof(n)};
  LaunchConfig config{{(n + kWorkgroupSize - 1) / kWorkgroupSize, 1, 1}, {kWorkgroupSize, 1, 1}, 0};
  return driver_->launch(exe, 0, config, KernelArgs{values, sizes, 2}, stream);
}

Status DriverTest::fillIndex(void* data, uint32_t n, uint32_t add, Stream* stream) {
  Executable* exe = kernel(KernelId::kFillIndex);
  if (exe == nullptr) return internalError("cts: the fill_index kernel did not load");
  void* values[] = {&data, &n, &add};
  const size_t sizes[] = {sizeof(void*), sizeof(n), sizeof(add)};
  LaunchConfig config{{(n + kWorkgroupSize - 1) / kWorkgroupSize, 1, 1}, {kWorkgroupSize, 1, 1}, 0};
  return driver_->launch(exe, 0, config, KernelArgs{values, sizes, 3}, stream);
}

void* DriverTest::buffer(uint32_t n, uint32_t value) {
  auto p = driver_->allocate(size_t{n} * 4);
  EXPECT_TRUE(p.ok()) << p.status();
  if (!p.ok()) return nullptr;
  buffers_.push_back(*p);
  std::vector<uint32_t> init(n, value);
  EXPECT_TRUE(driver_->copy(*p, init.data(), size_t{n} * 4, CopyKind::kHostToDevice).ok());
  EXPECT_TRUE(driver_->synchronize().ok());
  return *p;
}

std::vector<uint32_t> DriverTest::read(const void* data, uint32_t n) {
  std::vector<uint32_t> out(n, 0xdeadbeef);
  Status s = driver_->copy(out.data(), data, size_t{n} * 4, CopyKind::kDeviceToHost);
  EXPECT_TRUE(s.ok()) << s;
  s = driver_->synchronize();
  EXPECT_TRUE(s.ok()) << s;
  return out;
}

std::unique_ptr<Stream> DriverTest::stream() {
  auto s = driver_->createStream();
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? std::move(s).value() : nullptr;
}

std::shared_ptr<Semaphore> DriverTest::semaphore(uint64_t initial) {
  auto s = driver_->createSemaphore(initial);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *s : nullptr;
}

}  // namespace ral::cts
