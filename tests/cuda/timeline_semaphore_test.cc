// The CUDA driver's timeline-semaphore machinery against the in-process fake event backend:
// device signals through host functions, device waits on recorded events, event and timepoint
// reuse, work held in the pending queue, and failure propagation through it. Behaviour every
// driver shares (host signal/wait orderings, races, chains across streams) is in the driver
// conformance suite (tests/cts), which runs the CUDA driver on the simulated CUDA library.
#include "drivers/cuda/timeline_semaphore.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "drivers/cuda/pending_queue.h"
#include "fake_event_backend.h"

namespace ral::cuda {
namespace {

using namespace std::chrono_literals;
using testing::FakeEventBackend;

class Log {
 public:
  void add(std::string s) {
    std::lock_guard<std::mutex> lock(mutex_);
    entries_.push_back(std::move(s));
  }
  std::vector<std::string> entries() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return entries_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> entries_;
};

class TimelineTest : public ::testing::Test {
 protected:
  void TearDown() override {
    backend->waitIdle();
    EXPECT_EQ(backend->violations(), 0) << "a host function called the backend";
  }

  std::shared_ptr<QueueStream> newStream() {
    return QueueStream::create(backend->createStream(), backend->createStream());
  }
  std::shared_ptr<TimelineSemaphore> newSemaphore(uint64_t value = 0) {
    return TimelineSemaphore::create(resources, value);
  }
  // Queues device work that appends `tag` to the log when the fake device runs it.
  Status work(QueueStream& s, const std::string& tag) {
    auto issue = [this, tag](BackendStream stream) {
      backend->enqueueWork(stream, [this, tag] { log.add(tag); });
      return Status();
    };
    return queue->submit(s, issue, [&] { return PendingQueueActions::IssueFn(issue); });
  }
  // Waits until `pred` holds (the worker thread releases held work asynchronously).
  template <typename Pred>
  bool eventually(Pred pred) {
    for (int i = 0; i < 5000; ++i) {
      if (pred()) return true;
      std::this_thread::sleep_for(1ms);
    }
    return pred();
  }

  std::shared_ptr<FakeEventBackend> backend = std::make_shared<FakeEventBackend>();
  std::shared_ptr<SyncResources> resources = std::make_shared<SyncResources>(backend);
  std::shared_ptr<PendingQueueActions> queue = PendingQueueActions::create(resources);
  Log log;
};

TEST_F(TimelineTest, WaitTimesOutThenSucceeds) {
  auto sem = newSemaphore();
  EXPECT_EQ(sem->wait(1, 0ns).code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(sem->wait(1, 5ms).code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(sem->timelineSizeForTesting(), 0u) << "a timed-out waiter left its timepoint";
  ASSERT_TRUE(sem->signal(1).ok());
  EXPECT_TRUE(sem->wait(1, 5ms).ok());
}

TEST_F(TimelineTest, DeviceSignalAdvancesTheTimelineFromAHostFunction) {
  auto sem = newSemaphore();
  auto s = newStream();
  backend->pause(s->stream());
  ASSERT_TRUE(work(*s, "kernel").ok());
  ASSERT_TRUE(queue->signal(*s, *sem, 5).ok());
  std::this_thread::sleep_for(2ms);
  EXPECT_EQ(*sem->query(), 0u) << "signalled before the stream got there";
  backend->resume(s->stream());
  EXPECT_TRUE(sem->wait(5, 10s).ok());
  backend->waitIdle();
  EXPECT_EQ(*sem->query(), 5u);
  EXPECT_EQ(backend->hostFunctionsRun(), 1);
  EXPECT_EQ(resources->events.liveCount(), 0u) << "the signal's event went back to the pool";
  EXPECT_EQ(sem->timelineSizeForTesting(), 0u);
}

TEST_F(TimelineTest, InfiniteHostWaitUsesTheSignalEvent) {
  auto sem = newSemaphore();
  auto s = newStream();
  backend->pause(s->stream());
  ASSERT_TRUE(queue->signal(*s, *sem, 1).ok());
  std::thread waiter([&] { EXPECT_TRUE(sem->wait(1).ok()); });
  std::this_thread::sleep_for(2ms);
  backend->resume(s->stream());
  waiter.join();
  EXPECT_EQ(*sem->query(), 1u);
}

TEST_F(TimelineTest, DeviceWaitOnRecordedSignalNeedsNoHost) {
  auto sem = newSemaphore();
  auto a = newStream();
  auto b = newStream();
  backend->pause(a->stream());
  ASSERT_TRUE(work(*a, "a").ok());
  ASSERT_TRUE(queue->signal(*a, *sem, 1).ok());
  const int waits_before = backend->streamWaits();
  ASSERT_TRUE(queue->wait(*b, *sem, 1).ok());
  EXPECT_EQ(b->heldBackCount(), 0u) << "a recorded signal must turn into a device wait";
  EXPECT_EQ(backend->streamWaits(), waits_before + 1);
  ASSERT_TRUE(work(*b, "b").ok());
  std::this_thread::sleep_for(2ms);
  EXPECT_TRUE(log.entries().empty()) << "b ran before a signalled";
  backend->resume(a->stream());
  backend->waitIdle();
  EXPECT_EQ(log.entries(), (std::vector<std::string>{"a", "b"}));
}

TEST_F(TimelineTest, OneEventServesManyDeviceWaits) {
  auto sem = newSemaphore();
  auto a = newStream();
  backend->pause(a->stream());
  ASSERT_TRUE(queue->signal(*a, *sem, 2).ok());
  std::vector<std::shared_ptr<QueueStream>> waiters;
  for (int i = 0; i < 8; ++i) {
    waiters.push_back(newStream());
    ASSERT_TRUE(queue->wait(*waiters.back(), *sem, 1 + i % 2).ok());
    ASSERT_TRUE(work(*waiters.back(), "w").ok());
  }
  EXPECT_EQ(backend->eventsCreated(), 1) << "every wait must reuse the signal's event";
  backend->resume(a->stream());
  backend->waitIdle();
  EXPECT_EQ(log.entries().size(), 8u);
  EXPECT_EQ(resources->events.liveCount(), 0u);
}

TEST_F(TimelineTest, WaitBeforeHostSignalHoldsWorkInOrder) {
  auto sem = newSemaphore();
  auto s = newStream();
  ASSERT_TRUE(work(*s, "before").ok());
  ASSERT_TRUE(queue->wait(*s, *sem, 3).ok());
  ASSERT_TRUE(work(*s, "after1").ok());
  ASSERT_TRUE(work(*s, "after2").ok());
  EXPECT_EQ(s->heldBackCount(), 3u);
  backend->waitIdle();
  EXPECT_EQ(log.entries(), (std::vector<std::string>{"before"}));
  ASSERT_TRUE(sem->signal(2).ok());
  EXPECT_EQ(s->heldBackCount(), 3u) << "released below the waited value";
  ASSERT_TRUE(sem->signal(3).ok());
  EXPECT_EQ(s->heldBackCount(), 0u) << "a host signal releases held work on its own thread";
  EXPECT_TRUE(queue->drain(*s).ok());
  backend->waitIdle();
  EXPECT_EQ(log.entries(), (std::vector<std::string>{"before", "after1", "after2"}));
}

TEST_F(TimelineTest, WaitBeforeDeviceSignalBecomesADeviceWait) {
  auto sem = newSemaphore();
  auto a = newStream();
  auto b = newStream();
  ASSERT_TRUE(queue->wait(*b, *sem, 1).ok());
  ASSERT_TRUE(work(*b, "b").ok());
  EXPECT_EQ(b->heldBackCount(), 2u);
  backend->pause(a->stream());
  ASSERT_TRUE(work(*a, "a").ok());
  ASSERT_TRUE(queue->signal(*a, *sem, 1).ok());
  // Recording the signal associates its event with b's wait; b's work is then issued behind a
  // device wait while `a` is still paused, with no host signal involved.
  ASSERT_TRUE(eventually([&] { return b->heldBackCount() == 0; }));
  EXPECT_EQ(*sem->query(), 0u);
  backend->waitIdle();
  EXPECT_TRUE(log.entries().empty());
  backend->resume(a->stream());
  backend->waitIdle();
  EXPECT_EQ(log.entries(), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(sem->wait(1, 10s).ok());
}

TEST_F(TimelineTest, SignalBelowCurrentValueIsRejected) {
  auto sem = newSemaphore(4);
  auto s = newStream();
  EXPECT_EQ(queue->signal(*s, *sem, 3).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(queue->signal(*s, *sem, 4).ok());  // already reached: nothing to do
  EXPECT_TRUE(queue->wait(*s, *sem, 4).ok());
  EXPECT_EQ(s->heldBackCount(), 0u);
}

TEST_F(TimelineTest, FailureReachesEveryWaiter) {
  auto input = newSemaphore();
  auto output = newSemaphore();
  auto s = newStream();
  auto t = newStream();
  ASSERT_TRUE(queue->wait(*s, *input, 1).ok());
  ASSERT_TRUE(work(*s, "dropped").ok());
  ASSERT_TRUE(queue->signal(*s, *output, 1).ok());
  ASSERT_TRUE(queue->wait(*t, *output, 1).ok());  // a device waiter of the downstream semaphore
  ASSERT_TRUE(work(*t, "dropped too").ok());
  Status host_wait;
  std::thread waiter([&] { host_wait = output->wait(1); });
  input->fail(dataLoss("producer crashed"));
  waiter.join();
  EXPECT_EQ(host_wait.code(), StatusCode::kDataLoss) << host_wait;
  EXPECT_EQ(output->query().status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(input->signal(2).code(), StatusCode::kDataLoss);
  EXPECT_EQ(input->wait(1).code(), StatusCode::kDataLoss);
  Status s_error = queue->drain(*s);
  Status t_error = queue->drain(*t);
  EXPECT_EQ(s_error.code(), StatusCode::kDataLoss) << s_error;
  EXPECT_EQ(t_error.code(), StatusCode::kDataLoss) << t_error;
  // Reported once; the streams then serve new work.
  EXPECT_TRUE(queue->drain(*s).ok());
  ASSERT_TRUE(work(*s, "next").ok());
  backend->waitIdle();
  EXPECT_EQ(log.entries(), (std::vector<std::string>{"next"}));
  // A later wait on a failed semaphore fails at once.
  EXPECT_EQ(queue->wait(*t, *input, 1).code(), StatusCode::kDataLoss);
  EXPECT_EQ(queue->drain(*t).code(), StatusCode::kDataLoss);
  EXPECT_EQ(resources->timepoints.liveCount(), 0u);
}

TEST_F(TimelineTest, RecordFailureFailsTheSemaphore) {
  auto sem = newSemaphore();
  auto s = newStream();
  backend->failNextRecord(internalError("record failed"));
  Status st = queue->signal(*s, *sem, 1);
  EXPECT_EQ(st.code(), StatusCode::kInternal);
  EXPECT_EQ(sem->wait(1).code(), StatusCode::kInternal);
}

TEST_F(TimelineTest, ShutdownCancelsHeldWork) {
  auto in = newSemaphore();
  auto out = newSemaphore();
  auto s = newStream();
  ASSERT_TRUE(queue->wait(*s, *in, 1).ok());
  ASSERT_TRUE(queue->signal(*s, *out, 1).ok());
  queue->shutdown();
  EXPECT_EQ(out->wait(1).code(), StatusCode::kCancelled);
  EXPECT_EQ(s->heldBackCount(), 0u);
}

TEST_F(TimelineTest, EventsAndTimepointsAreRecycled) {
  auto sem = newSemaphore();
  auto s = newStream();
  for (uint64_t v = 1; v <= 50; ++v) {
    ASSERT_TRUE(queue->signal(*s, *sem, v).ok());
    ASSERT_TRUE(sem->wait(v, 10s).ok());
    backend->waitIdle();
  }
  EXPECT_LE(backend->eventsCreated(), 2);
  EXPECT_EQ(resources->events.liveCount(), 0u);
  EXPECT_EQ(resources->timepoints.liveCount(), 0u);
  resources->events.trim();
  EXPECT_EQ(backend->eventsDestroyed(), backend->eventsCreated());
}

// Eight threads, each with its own stream, form a ring of semaphores: thread i waits for
// sem[i] = k on the device, logs, then signals sem[i+1] = k. Thread 0's input is signalled from
// the host by the last thread's host wait. Everything must arrive, in order, with no host
// function touching the backend and no timepoint or event lost.
TEST_F(TimelineTest, EightThreadConcurrencyStress) {
  constexpr int kThreads = 8;
  constexpr uint64_t kRounds = 60;
  std::vector<std::shared_ptr<TimelineSemaphore>> sems;
  std::vector<std::shared_ptr<QueueStream>> streams;
  for (int i = 0; i <= kThreads; ++i) sems.push_back(newSemaphore());
  for (int i = 0; i < kThreads; ++i) streams.push_back(newStream());
  std::vector<std::atomic<uint64_t>> progress(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      for (uint64_t k = 1; k <= kRounds; ++k) {
        QueueStream& s = *streams[i];
        ASSERT_TRUE(queue->wait(s, *sems[i], k).ok());
        auto issue = [&, i, k](BackendStream stream) {
          backend->enqueueWork(
              stream, [&, i, k] { EXPECT_EQ(progress[i].exchange(k), k - 1) << "thread " << i; });
          return Status();
        };
        ASSERT_TRUE(
            queue->submit(s, issue, [&] { return PendingQueueActions::IssueFn(issue); }).ok());
        ASSERT_TRUE(queue->signal(s, *sems[i + 1], k).ok());
        if (i % 2 == 1) {
          ASSERT_TRUE(sems[i + 1]->wait(k, 30s).ok());  // some host waiters too
        }
      }
      ASSERT_TRUE(queue->drain(*streams[i]).ok());
    });
  }
  std::thread feeder([&] {
    for (uint64_t k = 1; k <= kRounds; ++k) {
      ASSERT_TRUE(sems[0]->signal(k).ok());
      ASSERT_TRUE(sems[kThreads]->wait(k, 30s).ok());
    }
  });
  for (auto& t : threads) t.join();
  feeder.join();
  backend->waitIdle();
  for (int i = 0; i < kThreads; ++i) EXPECT_EQ(progress[i].load(), kRounds);
  for (auto& sem : sems) EXPECT_EQ(*sem->query(), kRounds);
  EXPECT_EQ(resources->events.liveCount(), 0u);
  EXPECT_EQ(resources->timepoints.liveCount(), 0u);
}

}  // namespace
}  // namespace ral::cuda
