// Timeline semaphores of the Vulkan driver, its specifics: which queue signals are refused
// (a value not above the current one, another driver's semaphore, a host signal overtaking a
// pending queue signal). Host and queue signal/wait orderings, timeouts, failure propagation and
// the multi-threaded stress tests are in the driver conformance suite (tests/cts).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "drivers/vulkan/vulkan_driver.h"
#include "tests/vulkan/test_support.h"

namespace ral::vulkan {
namespace {

using namespace std::chrono_literals;
using testing::makeDriver;

class VulkanSemaphoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    driver_ = makeDriver();
    ASSERT_NE(driver_, nullptr);
    auto exe = driver_->load(testing::addOneSpec());
    ASSERT_TRUE(exe.ok()) << exe.status();
    add_one_ = *exe;
  }
  std::shared_ptr<Semaphore> semaphore(uint64_t initial = 0) {
    auto s = driver_->createSemaphore(initial);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? *s : nullptr;
  }
  void* buffer(uint32_t n, uint32_t value) {
    auto p = driver_->allocate(n * 4);
    EXPECT_TRUE(p.ok());
    std::vector<uint32_t> init(n, value);
    EXPECT_TRUE(driver_->copy(*p, init.data(), n * 4, CopyKind::kHostToDevice).ok());
    EXPECT_TRUE(driver_->synchronize().ok());
    buffers_.push_back(*p);
    return *p;
  }
  Status addOne(void* data, uint32_t n, Stream* stream) {
    void* values[] = {&data, &n};
    size_t sizes[] = {sizeof(void*), 4};
    LaunchConfig cfg;
    cfg.grid.x = (n + 63) / 64;
    return driver_->launch(add_one_, 0, cfg, KernelArgs{values, sizes, 2}, stream);
  }
  uint32_t first(void* data) {
    uint32_t v = 0;
    EXPECT_TRUE(driver_->copy(&v, data, 4, CopyKind::kDeviceToHost).ok());
    return v;
  }
  std::unique_ptr<Stream> stream() {
    auto s = driver_->createStream();
    EXPECT_TRUE(s.ok());
    return std::move(s).value();
  }
  void TearDown() override {
    if (driver_) {
      (void)driver_->synchronize();
      for (void* p : buffers_) EXPECT_TRUE(driver_->deallocate(p).ok());
    }
  }

  std::unique_ptr<VulkanDriver> driver_;
  Executable* add_one_ = nullptr;
  std::vector<void*> buffers_;
};

TEST_F(VulkanSemaphoreTest, RejectsBadQueueOperations) {
  auto s = semaphore(3);
  auto st = stream();
  EXPECT_EQ(driver_->queueSignal(st.get(), s.get(), 3).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(driver_->queueSignal(st.get(), s.get(), 4).ok());
  {
    Status st2 = driver_->queueSignal(st.get(), s.get(), 4);
    EXPECT_EQ(st2.code(), StatusCode::kInvalidArgument) << st2;
  }
  ASSERT_TRUE(s->wait(4).ok());
  auto other = makeDriver();
  ASSERT_NE(other, nullptr);
  auto foreign = other->createSemaphore();
  ASSERT_TRUE(foreign.ok());
  EXPECT_EQ(driver_->queueSignal(st.get(), foreign->get(), 1).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(driver_->queueWait(nullptr, foreign->get(), 1).code(), StatusCode::kInvalidArgument);
  // A host signal may not overtake a queued device signal that has not run.
  auto gate = semaphore();
  ASSERT_TRUE(driver_->queueWait(st.get(), gate.get(), 1).ok());
  ASSERT_TRUE(driver_->queueSignal(st.get(), s.get(), 10).ok());
  EXPECT_EQ(s->signal(12).code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(s->signal(6).ok());  // below the pending 10: fine
  ASSERT_TRUE(gate->signal(1).ok());
  EXPECT_TRUE(s->wait(10).ok());
  EXPECT_TRUE(driver_->synchronize(st.get()).ok());
}

}  // namespace
}  // namespace ral::vulkan
