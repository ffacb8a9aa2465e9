// Timeline semaphores of the Vulkan driver: host and queue signal/wait in every order, several
// waiters, timeouts, failure propagation and an 8-thread stress test.
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

TEST_F(VulkanSemaphoreTest, SignalBeforeWait) {
  auto s = semaphore(2);
  ASSERT_EQ(*s->query(), 2u);
  ASSERT_TRUE(s->signal(5).ok());
  EXPECT_TRUE(s->wait(3).ok());
  EXPECT_TRUE(s->wait(5, Timeout::zero()).ok());
  EXPECT_EQ(*s->query(), 5u);
  EXPECT_TRUE(s->signal(5).ok());  // the current value: no-op
  EXPECT_EQ(s->signal(4).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(*s->query(), 5u);
}

TEST_F(VulkanSemaphoreTest, WaitBeforeSignal) {
  auto s = semaphore();
  std::atomic<bool> done{false};
  Status result;
  std::thread waiter([&] {
    result = s->wait(7);
    done = true;
  });
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(done);
  ASSERT_TRUE(s->signal(7).ok());
  waiter.join();
  EXPECT_TRUE(result.ok()) << result;
}

TEST_F(VulkanSemaphoreTest, SeveralWaitersOnDifferentValues) {
  auto s = semaphore();
  constexpr int kWaiters = 6;
  std::vector<std::thread> threads;
  std::vector<uint64_t> seen(kWaiters + 1, 0);
  std::vector<Status> results(kWaiters + 1);
  for (int v = 1; v <= kWaiters; ++v) {
    threads.emplace_back([&, v] {
      results[v] = s->wait(v);
      seen[v] = s->query().ok() ? *s->query() : 0;
    });
  }
  for (int v = 1; v <= kWaiters; ++v) {
    std::this_thread::sleep_for(2ms);
    ASSERT_TRUE(s->signal(v).ok());
  }
  for (auto& t : threads) t.join();
  for (int v = 1; v <= kWaiters; ++v) {
    EXPECT_TRUE(results[v].ok()) << results[v];
    EXPECT_GE(seen[v], static_cast<uint64_t>(v));
  }
}

TEST_F(VulkanSemaphoreTest, TimesOut) {
  auto s = semaphore(1);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(s->wait(2, 20ms).code(), StatusCode::kDeadlineExceeded);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 20ms);
  EXPECT_EQ(s->wait(2, Timeout::zero()).code(), StatusCode::kDeadlineExceeded);
  EXPECT_TRUE(s->wait(1, Timeout::zero()).ok());
  // A queued signal that cannot run yet: the host wait times out too.
  auto gate = semaphore();
  auto st = stream();
  ASSERT_TRUE(driver_->queueWait(st.get(), gate.get(), 1).ok());
  ASSERT_TRUE(driver_->queueSignal(st.get(), s.get(), 2).ok());
  EXPECT_EQ(s->wait(2, 10ms).code(), StatusCode::kDeadlineExceeded);
  ASSERT_TRUE(gate->signal(1).ok());
  EXPECT_TRUE(s->wait(2, 5s).ok());
}

TEST_F(VulkanSemaphoreTest, QueueSignalReachesTheHost) {
  void* data = buffer(64, 0);
  auto s = semaphore();
  auto st = stream();
  ASSERT_TRUE(addOne(data, 64, st.get()).ok());
  ASSERT_TRUE(driver_->queueSignal(st.get(), s.get(), 1).ok());
  ASSERT_TRUE(s->wait(1).ok());
  EXPECT_EQ(*s->query(), 1u);
  const auto range = driver_->resolve(data);
  ASSERT_TRUE(range.ok());
  if (range->host != nullptr) {
    EXPECT_EQ(*static_cast<uint32_t*>(range->host), 1u);
  }
  EXPECT_EQ(first(data), 1u);
}

TEST_F(VulkanSemaphoreTest, HostSignalUnblocksAQueuedDeviceWait) {
  void* data = buffer(64, 10);
  auto gate = semaphore(), done = semaphore();
  auto st = stream();
  ASSERT_TRUE(driver_->queueWait(st.get(), gate.get(), 3).ok());
  ASSERT_TRUE(addOne(data, 64, st.get()).ok());
  ASSERT_TRUE(driver_->queueSignal(st.get(), done.get(), 1).ok());
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(*done->query(), 0u);
  EXPECT_EQ(done->wait(1, Timeout::zero()).code(), StatusCode::kDeadlineExceeded);
  ASSERT_TRUE(gate->signal(3).ok());
  ASSERT_TRUE(done->wait(1, 10s).ok());
  EXPECT_EQ(first(data), 11u);
}

// Stream A queues a wait whose signal stream B queues only later; on a single-queue device this
// must not deadlock, and A must see B's result.
TEST_F(VulkanSemaphoreTest, DeviceWaitQueuedBeforeItsDeviceSignal) {
  void* data = buffer(64, 0);
  auto s = semaphore();
  auto a = stream(), b = stream();
  ASSERT_TRUE(driver_->queueWait(a.get(), s.get(), 1).ok());
  ASSERT_TRUE(addOne(data, 64, a.get()).ok());  // runs after B's fill
  ASSERT_TRUE(driver_->fill(data, 64 * 4, "\x05\0\0\0", 4, b.get()).ok());
  ASSERT_TRUE(addOne(data, 64, b.get()).ok());
  ASSERT_TRUE(driver_->queueSignal(b.get(), s.get(), 1).ok());
  ASSERT_TRUE(driver_->synchronize(a.get()).ok());
  EXPECT_EQ(first(data), 7u);
}

TEST_F(VulkanSemaphoreTest, FailureReachesEveryWaiter) {
  void* data = buffer(64, 0);
  auto producer = semaphore(), downstream = semaphore();
  auto st = stream();
  ASSERT_TRUE(driver_->queueWait(st.get(), producer.get(), 5).ok());
  ASSERT_TRUE(addOne(data, 64, st.get()).ok());
  ASSERT_TRUE(driver_->queueSignal(st.get(), downstream.get(), 1).ok());

  std::vector<std::thread> threads;
  std::vector<Status> results(4);
  for (int i = 0; i < 3; ++i) threads.emplace_back([&, i] { results[i] = producer->wait(5 + i); });
  threads.emplace_back([&] { results[3] = downstream->wait(1); });
  std::this_thread::sleep_for(20ms);
  producer->fail(aborted("the producer crashed"));
  for (auto& t : threads) t.join();
  for (const Status& r : results) {
    EXPECT_EQ(r.code(), StatusCode::kAborted) << r;
    EXPECT_NE(r.message().find("the producer crashed"), std::string_view::npos);
  }
  // Future waiters, queries and signals see it too; so does the stream, once.
  EXPECT_EQ(producer->wait(1).code(), StatusCode::kAborted);
  EXPECT_EQ(producer->query().status().code(), StatusCode::kAborted);
  EXPECT_EQ(producer->signal(9).code(), StatusCode::kAborted);
  EXPECT_EQ(driver_->queueWait(st.get(), producer.get(), 1).code(), StatusCode::kAborted);
  EXPECT_EQ(driver_->synchronize(st.get()).code(), StatusCode::kAborted);
  EXPECT_EQ(first(data), 0u) << "work behind a failed wait must not run";
  // The stream works again afterwards.
  ASSERT_TRUE(addOne(data, 64, st.get()).ok());
  EXPECT_TRUE(driver_->synchronize(st.get()).ok());
  EXPECT_EQ(first(data), 1u);
}

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

// Eight threads pass a token around a ring of semaphores, 200 times. Even threads use the host
// (wait, then signal); odd threads only queue device work (wait, launch, signal) and never block,
// so their waits are queued long before the matching signals.
TEST_F(VulkanSemaphoreTest, ConcurrencyEightThreadRing) {
  constexpr int kThreads = 8, kRounds = 200;
  std::vector<std::shared_ptr<Semaphore>> ring;
  for (int t = 0; t < kThreads; ++t) ring.push_back(semaphore());
  std::vector<void*> data;
  std::vector<std::unique_ptr<Stream>> streams;
  for (int t = 0; t < kThreads; ++t) {
    data.push_back(buffer(64, 0));
    streams.push_back(stream());
  }
  std::vector<Status> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Semaphore* in = ring[(t + kThreads - 1) % kThreads].get();
      Semaphore* out = ring[t].get();
      for (uint64_t i = 0; i < kRounds; ++i) {
        const uint64_t need = t == 0 ? i : i + 1;
        Status s;
        if (t % 2 == 0) {
          s = in->wait(need, 60s);
          if (s.ok()) s = out->signal(i + 1);
        } else {
          s = driver_->queueWait(streams[t].get(), in, need);
          if (s.ok()) s = addOne(data[t], 64, streams[t].get());
          if (s.ok()) s = driver_->queueSignal(streams[t].get(), out, i + 1);
        }
        if (!s.ok()) {
          errors[t] = s;
          return;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_TRUE(errors[t].ok()) << t << ": " << errors[t];
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_TRUE(ring[t]->wait(kRounds, 60s).ok());
    ASSERT_TRUE(driver_->synchronize(streams[t].get()).ok());
  }
  for (int t = 1; t < kThreads; t += 2) EXPECT_EQ(first(data[t]), static_cast<uint32_t>(kRounds));
}

// Eight threads allocate, copy, launch and free at once, each on its own stream and on the
// shared default stream.
TEST_F(VulkanSemaphoreTest, ConcurrencyAllocateLaunchFree) {
  constexpr int kThreads = 8, kIterations = 60;
  std::vector<Status> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto st = driver_->createStream();
      if (!st.ok()) {
        errors[t] = st.status();
        return;
      }
      Stream* s = t % 2 == 0 ? st->get() : nullptr;
      for (int i = 0; i < kIterations; ++i) {
        const uint32_t n = 64 * (1 + (i + t) % 7);
        auto p = driver_->allocate(n * 4);
        if (!p.ok()) {
          errors[t] = p.status();
          return;
        }
        std::vector<uint32_t> in(n, static_cast<uint32_t>(t * 1000 + i)), out(n);
        Status status = driver_->copy(*p, in.data(), n * 4, CopyKind::kHostToDevice, s);
        if (status.ok()) status = addOne(*p, n, s);
        if (status.ok()) status = driver_->copy(out.data(), *p, n * 4, CopyKind::kDeviceToHost, s);
        if (status.ok() && out[n - 1] != in[0] + 1)
          status = internalError("thread ", t, " iteration ", i, ": got ", out[n - 1]);
        Status freed = driver_->deallocate(*p);
        if (!status.ok() || !freed.ok()) {
          errors[t] = status.ok() ? freed : status;
          return;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_TRUE(errors[t].ok()) << t << ": " << errors[t];
  EXPECT_EQ(driver_->memoryStats().bytes_in_use, 0u);
}

}  // namespace
}  // namespace ral::vulkan
