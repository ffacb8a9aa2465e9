// Conformance: timeline semaphores (query, host signal and wait, timeouts, queue waits and
// signals in every order across streams, failure propagation, and multi-threaded stress).
#include <atomic>
#include <chrono>
#include <thread>

#include "cts.h"

namespace ral::cts {
namespace {

using namespace std::chrono_literals;
using Semaphores = DriverTest;

TEST_P(Semaphores, HostSignalQueryAndOrdering) {
  auto s = semaphore(5);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(*s->query(), 5u);
  EXPECT_TRUE(s->wait(5, Timeout::zero()).ok());
  EXPECT_TRUE(s->wait(3).ok());
  EXPECT_TRUE(s->signal(5).ok());  // the current value: a no-op
  EXPECT_TRUE(s->signal(9).ok());
  EXPECT_EQ(*s->query(), 9u);
  EXPECT_EQ(s->signal(8).code(), StatusCode::kInvalidArgument) << "values never decrease";
  EXPECT_EQ(*s->query(), 9u);
  EXPECT_TRUE(s->signal(uint64_t{1} << 62).ok());
  EXPECT_TRUE(s->wait(uint64_t{1} << 62).ok());
}

TEST_P(Semaphores, HostWaitTimesOut) {
  auto s = semaphore(1);
  EXPECT_EQ(s->wait(2, Timeout::zero()).code(), StatusCode::kDeadlineExceeded);
  const auto start = std::chrono::steady_clock::now();
  Status st = s->wait(2, 30ms);
  EXPECT_EQ(st.code(), StatusCode::kDeadlineExceeded) << st;
  EXPECT_GE(std::chrono::steady_clock::now() - start, 30ms);
  EXPECT_EQ(*s->query(), 1u);
  ASSERT_TRUE(s->signal(2).ok());
  EXPECT_TRUE(s->wait(2, 5ms).ok());
}

// A finite timeout too large to add to the clock (a "wait for a year or more" a host computes)
// waits like an infinite one, on the host and behind a queued signal; a negative one is zero.
TEST_P(Semaphores, HugeAndNegativeTimeouts) {
  auto s = semaphore();
  EXPECT_EQ(s->wait(1, Timeout(-5)).code(), StatusCode::kDeadlineExceeded);
  for (const Timeout huge : {kInfiniteTimeout - Timeout(1), Timeout(kInfiniteTimeout.count() / 2),
                             std::chrono::duration_cast<Timeout>(std::chrono::hours(24 * 366))}) {
    const uint64_t next = *s->query() + 1;
    Status result = internalError("not run");
    std::thread waiter([&] { result = s->wait(next, huge); });
    std::this_thread::sleep_for(20ms);
    ASSERT_TRUE(s->signal(next).ok());
    waiter.join();
    EXPECT_TRUE(result.ok()) << result << " (timeout " << huge.count() << " ns)";
  }
  auto gate = semaphore();
  auto st = stream();
  ASSERT_TRUE(driver().queueWait(st.get(), gate.get(), 1).ok());
  ASSERT_TRUE(driver().queueSignal(st.get(), s.get(), 100).ok());
  Status result = internalError("not run");
  std::thread waiter([&] { result = s->wait(100, kInfiniteTimeout - Timeout(1)); });
  std::this_thread::sleep_for(20ms);
  ASSERT_TRUE(gate->signal(1).ok());
  waiter.join();
  EXPECT_TRUE(result.ok()) << result;
}

TEST_P(Semaphores, HostWaitTimesOutOnAQueuedSignalThatCannotRunYet) {
  auto s = semaphore(), gate = semaphore();
  auto st = stream();
  ASSERT_TRUE(driver().queueWait(st.get(), gate.get(), 1).ok());
  ASSERT_TRUE(driver().queueSignal(st.get(), s.get(), 2).ok());
  EXPECT_EQ(s->wait(2, 10ms).code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(s->wait(2, Timeout::zero()).code(), StatusCode::kDeadlineExceeded);
  ASSERT_TRUE(gate->signal(1).ok());
  EXPECT_TRUE(s->wait(2, 10s).ok());
}

TEST_P(Semaphores, ThreadWaitsBeforeTheHostSignal) {
  auto s = semaphore();
  std::atomic<bool> woke{false};
  Status result;
  std::thread waiter([&] {
    result = s->wait(2);
    woke = true;
  });
  std::this_thread::sleep_for(10ms);
  ASSERT_TRUE(s->signal(1).ok());
  std::this_thread::sleep_for(10ms);
  EXPECT_FALSE(woke.load()) << "woke before the value was reached";
  ASSERT_TRUE(s->signal(2).ok());
  waiter.join();
  EXPECT_TRUE(result.ok()) << result;
}

TEST_P(Semaphores, ThreadWaitersOnDifferentValuesWakeInOrder) {
  auto s = semaphore();
  constexpr int kWaiters = 8;
  std::vector<std::atomic<uint64_t>> woke_at(kWaiters);
  std::vector<Status> results(kWaiters);
  std::vector<std::thread> waiters;
  for (int i = 0; i < kWaiters; ++i) {
    woke_at[i] = 0;
    waiters.emplace_back([&, i] {
      const uint64_t target = 10 * (kWaiters - i);  // registered in reverse order
      results[i] = s->wait(target, 60s);
      auto v = s->query();
      woke_at[i] = v.ok() ? *v : 0;
    });
  }
  for (uint64_t v = 1; v <= 10 * kWaiters; ++v) {
    ASSERT_TRUE(s->signal(v).ok());
    if (v % 10 == 0) std::this_thread::sleep_for(1ms);
  }
  for (auto& t : waiters) t.join();
  for (int i = 0; i < kWaiters; ++i) {
    EXPECT_TRUE(results[i].ok()) << results[i];
    EXPECT_GE(woke_at[i].load(), 10u * (kWaiters - i));
  }
}

TEST_P(Semaphores, QueueSignalReachesTheHost) {
  void* data = buffer(64, 0);
  auto s = semaphore();
  auto st = stream();
  ASSERT_TRUE(addOne(data, 64, st.get()).ok());
  ASSERT_TRUE(driver().queueSignal(st.get(), s.get(), 1).ok());
  ASSERT_TRUE(s->wait(1, 10s).ok());
  EXPECT_EQ(*s->query(), 1u);
  EXPECT_EQ(read(data, 64), std::vector<uint32_t>(64, 1));
}

TEST_P(Semaphores, QueueWaitHoldsWorkUntilTheHostSignal) {
  void* data = buffer(64, 10);
  auto gate = semaphore(), done = semaphore();
  auto st = stream();
  ASSERT_TRUE(driver().queueWait(st.get(), gate.get(), 3).ok());
  ASSERT_TRUE(addOne(data, 64, st.get()).ok());
  const uint32_t seven = 7;
  void* other = buffer(64, 0);
  ASSERT_TRUE(driver().fill(other, 64 * 4, &seven, 4, st.get()).ok());
  ASSERT_TRUE(driver().queueSignal(st.get(), done.get(), 1).ok());
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(*done->query(), 0u);
  EXPECT_EQ(done->wait(1, Timeout::zero()).code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(read(data, 64), std::vector<uint32_t>(64, 10)) << "ran before the wait was met";
  ASSERT_TRUE(gate->signal(2).ok());
  EXPECT_EQ(done->wait(1, 10ms).code(), StatusCode::kDeadlineExceeded) << "released below 3";
  ASSERT_TRUE(gate->signal(3).ok());
  ASSERT_TRUE(done->wait(1, 10s).ok());
  ASSERT_TRUE(driver().synchronize(st.get()).ok());
  EXPECT_EQ(read(data, 64), std::vector<uint32_t>(64, 11));
  EXPECT_EQ(read(other, 64), std::vector<uint32_t>(64, 7));
}

// Stream A queues a wait whose signal stream B queues only later; A must see B's result.
TEST_P(Semaphores, QueueWaitBeforeItsQueueSignalAcrossStreams) {
  void* data = buffer(64, 0);
  auto s = semaphore();
  auto a = stream(), b = stream();
  ASSERT_TRUE(driver().queueWait(a.get(), s.get(), 1).ok());
  ASSERT_TRUE(addOne(data, 64, a.get()).ok());  // after B's fill and add
  const uint32_t five = 5;
  ASSERT_TRUE(driver().fill(data, 64 * 4, &five, 4, b.get()).ok());
  ASSERT_TRUE(addOne(data, 64, b.get()).ok());
  ASSERT_TRUE(driver().queueSignal(b.get(), s.get(), 1).ok());
  ASSERT_TRUE(driver().synchronize(a.get()).ok());
  EXPECT_EQ(read(data, 64), std::vector<uint32_t>(64, 7));
  EXPECT_TRUE(s->wait(1, 10s).ok());
}

// The signal is queued first (and may be pending on the device), then the wait.
TEST_P(Semaphores, QueueSignalBeforeItsQueueWaitAcrossStreams) {
  void* data = buffer(64, 0);
  auto gate = semaphore(), s = semaphore();
  auto a = stream(), b = stream();
  ASSERT_TRUE(driver().queueWait(b.get(), gate.get(), 1).ok());
  ASSERT_TRUE(addOne(data, 64, b.get()).ok());
  ASSERT_TRUE(driver().queueSignal(b.get(), s.get(), 1).ok());
  ASSERT_TRUE(driver().queueWait(a.get(), s.get(), 1).ok());
  ASSERT_TRUE(addOne(data, 64, a.get()).ok());
  ASSERT_TRUE(driver().queueSignal(a.get(), s.get(), 2).ok());
  std::this_thread::sleep_for(10ms);
  EXPECT_EQ(*s->query(), 0u);
  ASSERT_TRUE(gate->signal(1).ok());
  ASSERT_TRUE(s->wait(2, 10s).ok());
  ASSERT_TRUE(driver().synchronize(a.get()).ok());
  EXPECT_EQ(read(data, 64), std::vector<uint32_t>(64, 2));
}

// first -> stream a -> second -> stream b -> third: held work chains across streams.
TEST_P(Semaphores, HeldSignalsChainAcrossStreams) {
  void* data = buffer(64, 0);
  auto first = semaphore(), second = semaphore(), third = semaphore();
  auto a = stream(), b = stream();
  ASSERT_TRUE(driver().queueWait(b.get(), second.get(), 1).ok());
  ASSERT_TRUE(addOne(data, 64, b.get()).ok());
  ASSERT_TRUE(driver().queueSignal(b.get(), third.get(), 1).ok());
  ASSERT_TRUE(driver().queueWait(a.get(), first.get(), 1).ok());
  const uint32_t ten = 10;
  ASSERT_TRUE(driver().fill(data, 64 * 4, &ten, 4, a.get()).ok());
  ASSERT_TRUE(driver().queueSignal(a.get(), second.get(), 1).ok());
  ASSERT_TRUE(first->signal(1).ok());
  ASSERT_TRUE(third->wait(1, 10s).ok());
  EXPECT_TRUE(driver().synchronize(a.get()).ok());
  EXPECT_TRUE(driver().synchronize(b.get()).ok());
  EXPECT_EQ(read(data, 64), std::vector<uint32_t>(64, 11));
}

TEST_P(Semaphores, LaunchBehindAWaitCopiesItsArguments) {
  Executable* exe = kernel(KernelId::kArgs);
  ASSERT_NE(exe, nullptr);
  void* out = buffer(kArgsWords, 0);
  auto gate = semaphore();
  auto st = stream();
  ASSERT_TRUE(driver().queueWait(st.get(), gate.get(), 1).ok());
  {
    uint8_t a = 1;
    uint16_t b = 2;
    uint32_t c = 3;
    uint64_t d = 4;
    uint32_t e[4] = {5, 6, 7, 8};
    void* values[] = {&out, &a, &b, &c, &d, e};
    const size_t sizes[] = {sizeof(void*), 1, 2, 4, 8, 16};
    ASSERT_TRUE(
        driver().launch(exe, 0, {{1, 1, 1}, {1, 1, 1}, 0}, {values, sizes, 6}, st.get()).ok());
    a = 0, b = 0, c = 0, d = 0, e[0] = 0;  // gone by the time the launch runs
  }
  ASSERT_TRUE(gate->signal(1).ok());
  ASSERT_TRUE(driver().synchronize(st.get()).ok());
  EXPECT_EQ(read(out, kArgsWords), (std::vector<uint32_t>{1, 2, 3, 4, 0, 5, 6, 7, 8}));
}

TEST_P(Semaphores, FailureReachesCurrentAndFutureWaiters) {
  void* data = buffer(64, 0);
  auto producer = semaphore(), downstream = semaphore();
  auto st = stream(), other = stream();
  ASSERT_TRUE(driver().queueWait(st.get(), producer.get(), 5).ok());
  ASSERT_TRUE(addOne(data, 64, st.get()).ok());
  ASSERT_TRUE(driver().queueSignal(st.get(), downstream.get(), 1).ok());
  // A queue waiter of the downstream semaphore, on another stream.
  ASSERT_TRUE(driver().queueWait(other.get(), downstream.get(), 1).ok());
  ASSERT_TRUE(addOne(data, 64, other.get()).ok());

  std::vector<std::thread> threads;
  std::vector<Status> results(4);
  for (int i = 0; i < 3; ++i) threads.emplace_back([&, i] { results[i] = producer->wait(5 + i); });
  threads.emplace_back([&] { results[3] = downstream->wait(1); });
  ASSERT_TRUE(producer->signal(2).ok());
  std::this_thread::sleep_for(20ms);
  producer->fail(aborted("the producer crashed"));
  producer->fail(internalError("a second failure is ignored"));
  for (auto& t : threads) t.join();
  for (const Status& r : results) {
    EXPECT_EQ(r.code(), StatusCode::kAborted) << r;
    EXPECT_NE(r.message().find("the producer crashed"), std::string_view::npos) << r;
  }
  // Future waiters, queries and signals see it too; so do the streams, once.
  EXPECT_EQ(producer->wait(1).code(), StatusCode::kAborted);
  EXPECT_EQ(producer->query().status().code(), StatusCode::kAborted);
  EXPECT_EQ(producer->signal(9).code(), StatusCode::kAborted);
  EXPECT_EQ(downstream->query().status().code(), StatusCode::kAborted);
  EXPECT_EQ(driver().synchronize(st.get()).code(), StatusCode::kAborted);
  EXPECT_EQ(driver().synchronize(other.get()).code(), StatusCode::kAborted);
  EXPECT_TRUE(driver().synchronize(st.get()).ok()) << "reported once";
  EXPECT_EQ(read(data, 64), std::vector<uint32_t>(64, 0)) << "work behind a failed wait ran";
  // A later queue wait on the failed semaphore fails too.
  Status late = driver().queueWait(st.get(), producer.get(), 1);
  if (late.ok()) late = driver().synchronize(st.get());
  EXPECT_EQ(late.code(), StatusCode::kAborted) << late;
  (void)driver().synchronize(st.get());
  // The stream works again afterwards.
  ASSERT_TRUE(addOne(data, 64, st.get()).ok());
  EXPECT_TRUE(driver().synchronize(st.get()).ok());
  EXPECT_EQ(read(data, 64), std::vector<uint32_t>(64, 1));
  // A failure without a reason is still an error.
  auto unexplained = semaphore();
  unexplained->fail(Status());
  EXPECT_FALSE(unexplained->wait(1).ok());
}

// Signallers, waiters and one failure race; every waiter returns (the value or the error).
TEST_P(Semaphores, ThreadedHostSignalsAndFailureRace) {
  for (int round = 0; round < 20; ++round) {
    auto s = semaphore();
    std::vector<std::thread> threads;
    std::atomic<int> returned{0};
    for (int i = 0; i < 8; ++i) {
      threads.emplace_back([&, i] {
        if (i < 4) {
          Status st = s->wait(100);
          EXPECT_TRUE(st.ok() || st.code() == StatusCode::kAborted) << st;
          ++returned;
        } else if (i < 7) {
          for (uint64_t v = 1; v <= 100; ++v) (void)s->signal(v);  // may be lower, or failed
        } else if (round % 2 == 0) {
          s->fail(aborted("stop"));
        }
      });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(returned.load(), 4);
  }
}

// 8 threads pass a token around one semaphore: thread t waits for 8k + t, then signals
// 8k + t + 1, while a poller checks the value never goes backwards.
TEST_P(Semaphores, ConcurrencyEightThreadHostRing) {
  auto s = semaphore();
  constexpr int kThreads = 8, kLaps = 200;
  std::atomic<bool> stop{false};
  std::atomic<int> errors{0};
  std::thread poller([&] {
    uint64_t last = 0;
    while (!stop.load()) {
      const uint64_t v = *s->query();
      if (v < last) ++errors;
      last = v;
      (void)s->wait(v + 1, 50us);
    }
  });
  std::vector<std::thread> ring;
  for (int t = 0; t < kThreads; ++t) {
    ring.emplace_back([&, t] {
      for (int k = 0; k < kLaps; ++k) {
        const uint64_t mine = uint64_t{kThreads} * k + t;
        if (!s->wait(mine, 60s).ok()) ++errors;
        if (!s->signal(mine + 1).ok()) ++errors;
      }
    });
  }
  for (auto& t : ring) t.join();
  stop = true;
  poller.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(*s->query(), uint64_t{kThreads} * kLaps);
}

// Eight threads pass a token around a ring of semaphores. Even threads use the host (wait, then
// signal); odd threads only queue device work (wait, launch, signal) and never block, so their
// waits are queued long before the matching signals.
TEST_P(Semaphores, ConcurrencyEightThreadQueueRing) {
  constexpr int kThreads = 8, kRounds = 100;
  ASSERT_NE(kernel(KernelId::kAddOne), nullptr);
  std::vector<std::shared_ptr<Semaphore>> ring;
  std::vector<void*> data;
  std::vector<std::unique_ptr<Stream>> streams;
  for (int t = 0; t < kThreads; ++t) {
    ring.push_back(semaphore());
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
          s = driver().queueWait(streams[t].get(), in, need);
          if (s.ok()) s = addOne(data[t], 64, streams[t].get());
          if (s.ok()) s = driver().queueSignal(streams[t].get(), out, i + 1);
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
    ASSERT_TRUE(driver().synchronize(streams[t].get()).ok());
  }
  for (int t = 1; t < kThreads; t += 2)
    EXPECT_EQ(read(data[t], 64), std::vector<uint32_t>(64, kRounds));
}

RAL_CTS_INSTANTIATE(Semaphores);

}  // namespace
}  // namespace ral::cts
