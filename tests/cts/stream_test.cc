// Conformance: streams (creation, ordering of work on one stream, independent streams,
// synchronize, foreign streams).
#include <thread>

#include "cts.h"

namespace ral::cts {
namespace {

using Streams = DriverTest;

TEST_P(Streams, WorkOnOneStreamRunsInOrder) {
  auto s = stream();
  ASSERT_NE(s, nullptr);
  constexpr uint32_t kN = 1000;
  void* data = buffer(kN, 0);
  const std::vector<uint32_t> fives(kN, 5);
  // copy, then 20 dependent launches, then a read-back: each needs the one before.
  ASSERT_TRUE(driver().copy(data, fives.data(), kN * 4, CopyKind::kHostToDevice, s.get()).ok());
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(addOne(data, kN, s.get()).ok());
  void* copy = buffer(kN, 0);
  ASSERT_TRUE(driver().copy(copy, data, kN * 4, CopyKind::kDeviceToDevice, s.get()).ok());
  const uint32_t zero = 0;
  ASSERT_TRUE(driver().fill(data, kN * 4, &zero, 4, s.get()).ok());
  std::vector<uint32_t> out(kN, 0);
  ASSERT_TRUE(driver().copy(out.data(), copy, kN * 4, CopyKind::kDeviceToHost, s.get()).ok());
  ASSERT_TRUE(driver().synchronize(s.get()).ok());
  EXPECT_EQ(out, std::vector<uint32_t>(kN, 25));
  EXPECT_EQ(read(data, kN), std::vector<uint32_t>(kN, 0));
}

TEST_P(Streams, ManyStreamsAndTheDefaultStream) {
  constexpr int kStreams = 6;
  std::vector<std::unique_ptr<Stream>> streams;
  std::vector<void*> data;
  for (int i = 0; i < kStreams; ++i) {
    streams.push_back(stream());
    data.push_back(buffer(256, static_cast<uint32_t>(i)));
  }
  for (int round = 0; round < 10; ++round)
    for (int i = 0; i < kStreams; ++i) ASSERT_TRUE(addOne(data[i], 256, streams[i].get()).ok());
  void* mine = buffer(256, 100);
  ASSERT_TRUE(addOne(mine, 256).ok());
  for (int i = 0; i < kStreams; ++i) {
    ASSERT_TRUE(driver().synchronize(streams[i].get()).ok());
    EXPECT_EQ(read(data[i], 256), std::vector<uint32_t>(256, static_cast<uint32_t>(i + 10)));
  }
  ASSERT_TRUE(driver().synchronize(nullptr).ok());
  EXPECT_EQ(read(mine, 256), std::vector<uint32_t>(256, 101));
}

TEST_P(Streams, SynchronizeOfAnIdleStreamAndStreamDestruction) {
  auto s = stream();
  ASSERT_TRUE(driver().synchronize(s.get()).ok());
  ASSERT_TRUE(driver().synchronize(s.get()).ok());
  void* data = buffer(64, 0);
  ASSERT_TRUE(addOne(data, 64, s.get()).ok());
  s.reset();  // destroying a stream with work queued: the work still completes
  EXPECT_EQ(read(data, 64), std::vector<uint32_t>(64, 1));
}

TEST_P(Streams, ForeignStreamsAreRejected) {
  auto other = backend().createDriver();
  ASSERT_TRUE(other.ok()) << other.status();
  auto foreign = (*other)->createStream();
  ASSERT_TRUE(foreign.ok()) << foreign.status();
  void* data = buffer(64, 0);
  const uint32_t zero = 0;
  EXPECT_EQ(driver().fill(data, 4, &zero, 4, foreign->get()).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(driver().synchronize(foreign->get()).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(addOne(data, 64, foreign->get()).code(), StatusCode::kInvalidArgument);
}

// Eight threads allocate, copy, launch and free at once, half on their own stream and half on
// the shared default stream.
// A stream the host made with the device's own API (torch's current CUDA stream, say) carries RAL
// work in order; the wrapper does not own it. Devices without native streams refuse, by name.
TEST_P(Streams, WrappedNativeStreamRunsWorkAndIsNotOwned) {
  void* native = backend().createNativeStream(driver());
  if (native == nullptr) {
    int not_a_stream = 0;
    auto wrapped = driver().wrapNativeStream(&not_a_stream);
    EXPECT_EQ(wrapped.status().code(), StatusCode::kUnsupported) << wrapped.status();
    EXPECT_NE(wrapped.status().message().find(deviceKindName(driver().kind())), std::string::npos)
        << wrapped.status();
    return;
  }
  constexpr uint32_t kN = 1000;
  void* data = buffer(kN, 5);
  {
    auto wrapped = driver().wrapNativeStream(native);
    ASSERT_TRUE(wrapped.ok()) << wrapped.status();
    Stream* s = wrapped->get();
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(addOne(data, kN, s).ok());
    auto done = semaphore(0);
    ASSERT_TRUE(driver().queueSignal(s, done.get(), 1).ok());
    ASSERT_TRUE(done->wait(1).ok());
    ASSERT_TRUE(driver().synchronize(s).ok());
  }
  EXPECT_EQ(read(data, kN), std::vector<uint32_t>(kN, 8));
  // Still alive after the wrapper went away: destroying it is the host's job, and works.
  Status destroyed = backend().destroyNativeStream(driver(), native);
  EXPECT_TRUE(destroyed.ok()) << destroyed;
}

TEST_P(Streams, ConcurrencyAllocateLaunchFree) {
  constexpr int kThreads = 8, kIterations = 40;
  ASSERT_NE(kernel(KernelId::kAddOne), nullptr);
  std::vector<Status> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto st = driver().createStream();
      if (!st.ok()) {
        errors[t] = st.status();
        return;
      }
      Stream* s = t % 2 == 0 ? st->get() : nullptr;
      for (int i = 0; i < kIterations; ++i) {
        const uint32_t n = 64 * (1 + (i + t) % 7);
        auto p = driver().allocate(n * 4);
        if (!p.ok()) {
          errors[t] = p.status();
          return;
        }
        std::vector<uint32_t> in(n, static_cast<uint32_t>(t * 1000 + i)), out(n);
        Status status = driver().copy(*p, in.data(), n * 4, CopyKind::kHostToDevice, s);
        if (status.ok()) status = addOne(*p, n, s);
        if (status.ok()) status = driver().copy(out.data(), *p, n * 4, CopyKind::kDeviceToHost, s);
        if (status.ok()) status = driver().synchronize(s);
        if (status.ok() && out[n - 1] != in[0] + 1)
          status = internalError("thread ", t, " iteration ", i, ": got ", out[n - 1]);
        Status freed = driver().deallocate(*p);
        if (!status.ok() || !freed.ok()) {
          errors[t] = status.ok() ? freed : status;
          return;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_TRUE(errors[t].ok()) << t << ": " << errors[t];
}

RAL_CTS_INSTANTIATE(Streams);

}  // namespace
}  // namespace ral::cts
