// drivers/common/deadline.h: how every driver turns a wait's Timeout into a deadline.
#include "drivers/common/deadline.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>

namespace ral::drivers {
namespace {

using namespace std::chrono_literals;

TEST(DeadlineTest, ZeroAndNegativeHaveExpired) {
  for (const Timeout t : {Timeout::zero(), Timeout(-1), Timeout(-1s)}) {
    const Deadline d(t);
    EXPECT_FALSE(d.infinite());
    EXPECT_TRUE(d.expired());
    EXPECT_EQ(d.remaining(), Timeout::zero());
  }
}

TEST(DeadlineTest, InfiniteAndTooLargeForTheClockNeverExpire) {
  for (const Timeout t : {kInfiniteTimeout, kInfiniteTimeout - Timeout(1)}) {
    const Deadline d(t);
    EXPECT_TRUE(d.infinite()) << t.count();
    EXPECT_FALSE(d.expired());
    EXPECT_EQ(d.remaining(), kInfiniteTimeout);
  }
  // A century and more still fits the clock: a finite deadline, far away.
  const Deadline far(Timeout(kInfiniteTimeout.count() / 2));
  EXPECT_FALSE(far.expired());
  EXPECT_GT(far.remaining(), std::chrono::hours(24 * 365 * 100));
}

TEST(DeadlineTest, FiniteCountsDownAndBoundsAWait) {
  const Deadline year(std::chrono::hours(24 * 366));
  EXPECT_FALSE(year.infinite());
  EXPECT_GT(year.remaining(), std::chrono::hours(24 * 365));
  const Deadline d(20ms);
  EXPECT_LE(d.remaining(), 20ms);
  std::mutex m;
  std::condition_variable cv;
  std::unique_lock<std::mutex> lock(m);
  const auto start = Deadline::Clock::now();
  EXPECT_FALSE(d.wait(cv, lock, [] { return false; }));
  EXPECT_GE(Deadline::Clock::now() - start, 15ms);
  EXPECT_TRUE(d.expired());
  EXPECT_TRUE(Deadline(kInfiniteTimeout).wait(cv, lock, [] { return true; }));
}

}  // namespace
}  // namespace ral::drivers
