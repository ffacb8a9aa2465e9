// The CPU driver's specifics: caching allocator, thread pool, workgroup launches, copies and
// fills. What every driver must do (streams, semaphores, memory) is in the driver conformance
// suite (tests/cts). Tests whose names contain "Thread" or "Concurrency" also run under
// ThreadSanitizer.
#include "drivers/cpu/cpu_driver.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "drivers/cpu/caching_allocator.h"
#include "drivers/cpu/cpu_info.h"
#include "drivers/cpu/thread_pool.h"
#include "ral/context.h"

namespace ral::cpu {
namespace {

std::unique_ptr<CpuDriver> makeDriver(CpuDriverOptions options = {}) {
  auto driver = CpuDriver::create(options);
  EXPECT_TRUE(driver.ok()) << driver.status();
  return std::move(driver).value();
}

// ---- allocator -------------------------------------------------------------------------------

TEST(CachingAllocatorTest, BucketsRoundUpByAtMostAQuarter) {
  size_t previous = 0;
  for (size_t n = 1; n < (size_t{1} << 34); n = n * 3 / 2 + 1) {
    const size_t index = CachingAllocator::bucketIndex(n);
    const size_t size = CachingAllocator::bucketSize(index);
    EXPECT_GE(size, n);
    if (n > 128) {
      EXPECT_LE(size, n + n / 4 + 1) << n;
    }
    EXPECT_GE(index, previous);
    previous = index;
    if (index > 0) {
      EXPECT_LT(CachingAllocator::bucketSize(index - 1), n);
    }
  }
}

TEST(CachingAllocatorTest, BlocksAreAlignedAndWritable) {
  CachingAllocator alloc;
  std::vector<std::pair<void*, size_t>> live;
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{63}, size_t{64}, size_t{1000}, size_t{4096},
                       size_t{300000}, size_t{5} << 20}) {
    for (size_t alignment : {size_t{1}, size_t{64}, size_t{128}, size_t{4096}}) {
      auto p = alloc.allocate(bytes, alignment);
      ASSERT_TRUE(p.ok()) << p.status();
      EXPECT_EQ(reinterpret_cast<uintptr_t>(*p) % std::max<size_t>(alignment, 64), 0u);
      std::memset(*p, 0xab, bytes);
      auto usable = alloc.usableSize(*p);
      ASSERT_TRUE(usable.ok());
      EXPECT_GE(*usable, bytes);
      live.emplace_back(*p, bytes);
    }
  }
  std::vector<void*> ptrs;
  for (auto& [p, n] : live) ptrs.push_back(p);
  std::sort(ptrs.begin(), ptrs.end());
  EXPECT_EQ(std::unique(ptrs.begin(), ptrs.end()), ptrs.end()) << "pointers must be distinct";
  for (auto& [p, n] : live) EXPECT_TRUE(alloc.deallocate(p).ok());
  EXPECT_EQ(alloc.stats().bytes_in_use, 0u);
}

TEST(CachingAllocatorTest, ReusesFreedBlocksOfTheSameBucket) {
  CachingAllocator alloc;
  for (size_t bytes : {size_t{100}, size_t{1} << 20, size_t{16} << 20}) {
    void* p = *alloc.allocate(bytes);
    ASSERT_TRUE(alloc.deallocate(p).ok());
    const uint64_t hits = alloc.stats().cache_hits;
    void* q = *alloc.allocate(bytes);
    EXPECT_EQ(p, q) << bytes;
    EXPECT_EQ(alloc.stats().cache_hits, hits + 1);
    ASSERT_TRUE(alloc.deallocate(q).ok());
  }
}

TEST(CachingAllocatorTest, StatisticsTrackInUseCachedAndPeak) {
  CachingAllocator alloc;
  MemoryStats s = alloc.stats();
  EXPECT_EQ(s.bytes_in_use, 0u);
  EXPECT_EQ(s.bytes_cached, 0u);
  EXPECT_EQ(s.peak_bytes_in_use, 0u);

  void* a = *alloc.allocate(1000);
  void* b = *alloc.allocate(100000);
  void* c = *alloc.allocate(size_t{10} << 20);  // above the thread-cache limit
  s = alloc.stats();
  EXPECT_GE(s.bytes_in_use, 1000u + 100000u + (size_t{10} << 20));
  EXPECT_LE(s.bytes_in_use, (1000u + 100000u + (size_t{10} << 20)) * 5 / 4 + 3 * 128);
  EXPECT_EQ(s.peak_bytes_in_use, s.bytes_in_use);
  EXPECT_EQ(s.allocations, 3u);
  const size_t peak = s.peak_bytes_in_use;

  ASSERT_TRUE(alloc.deallocate(b).ok());
  ASSERT_TRUE(alloc.deallocate(c).ok());
  s = alloc.stats();
  EXPECT_GE(s.bytes_in_use, 1000u);
  EXPECT_LT(s.bytes_in_use, 2000u);
  EXPECT_GE(s.bytes_cached, 100000u + (size_t{10} << 20));
  EXPECT_EQ(s.peak_bytes_in_use, peak);

  ASSERT_TRUE(alloc.deallocate(a).ok());
  s = alloc.stats();
  EXPECT_EQ(s.bytes_in_use, 0u);
  EXPECT_EQ(s.peak_bytes_in_use, peak);
}

TEST(CachingAllocatorTest, TrimReturnsCachedMemory) {
  CachingAllocator alloc;
  std::vector<void*> ptrs;
  for (size_t i = 0; i < 40; ++i) ptrs.push_back(*alloc.allocate(size_t{1} << (6 + i % 20)));
  void* kept = ptrs.back();
  ptrs.pop_back();
  for (void* p : ptrs) ASSERT_TRUE(alloc.deallocate(p).ok());
  const MemoryStats before = alloc.stats();
  EXPECT_GT(before.bytes_cached, 0u);
  alloc.trim();
  const MemoryStats after = alloc.stats();
  EXPECT_EQ(after.bytes_cached, 0u);
  EXPECT_EQ(after.bytes_in_use, before.bytes_in_use);
  std::memset(kept, 1, size_t{1} << (6 + 39 % 20));  // still usable
  ASSERT_TRUE(alloc.deallocate(kept).ok());
}

TEST(CachingAllocatorTest, HugeRequestsAreOutOfMemory) {
  CachingAllocator alloc;
  // Beyond any x86-64/AArch64 user address space, so no system (overcommit or not) can grant it.
  for (size_t bytes : {size_t{1} << 50, size_t{1} << 60, ~size_t{0} - 100}) {
    auto p = alloc.allocate(bytes);
    ASSERT_FALSE(p.ok()) << bytes;
    EXPECT_EQ(p.status().code(), StatusCode::kOutOfMemory) << p.status();
  }
  // The allocator still works.
  void* p = *alloc.allocate(128);
  EXPECT_TRUE(alloc.deallocate(p).ok());
}

TEST(CachingAllocatorTest, MemoryLimitTrimsThenFails) {
  CachingAllocatorOptions options;
  options.memory_limit = size_t{1} << 20;
  CachingAllocator alloc(options);
  void* a = *alloc.allocate(600 << 10);
  auto b = alloc.allocate(600 << 10);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), StatusCode::kOutOfMemory);
  ASSERT_TRUE(alloc.deallocate(a).ok());
  // The freed block is cached; a different bucket needs the cache released first.
  auto c = alloc.allocate(900 << 10);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(alloc.deallocate(*c).ok());
}

TEST(CachingAllocatorTest, BadFreesAreErrors) {
  CachingAllocator alloc;
  CachingAllocator other;
  EXPECT_TRUE(alloc.deallocate(nullptr).ok());
  void* p = *alloc.allocate(256);
  EXPECT_EQ(alloc.deallocate(static_cast<char*>(p) + 1).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(other.deallocate(p).code(), StatusCode::kInvalidArgument);
  alignas(64) static char foreign[256] = {};
  EXPECT_EQ(alloc.deallocate(foreign + 128).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(alloc.deallocate(p).ok());
  EXPECT_EQ(alloc.deallocate(p).code(), StatusCode::kInvalidArgument);  // double free
  EXPECT_EQ(alloc.allocate(64, 3).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(alloc.stats().bytes_in_use, 0u);
}

// A block handed out with a larger alignment carries a second header; after its free the block
// is reused at the default alignment (and back), with every byte it offers written each time.
TEST(CachingAllocatorTest, BlocksChangeAlignmentBetweenUses) {
  CachingAllocator alloc;
  // 1000 + 64 and 1000 + 128 round up to the same bucket (1280 bytes).
  ASSERT_EQ(CachingAllocator::bucketIndex(1000 + 64), CachingAllocator::bucketIndex(1000 + 128));
  std::vector<void*> seen;
  for (int round = 0; round < 6; ++round) {
    const size_t alignment = round % 2 == 0 ? 128 : 64;
    auto p = alloc.allocate(1000, alignment);
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(*p) % alignment, 0u);
    const size_t usable = *alloc.usableSize(*p);
    EXPECT_GE(usable, 1000u);
    std::memset(*p, 0x5a, usable);  // every usable byte, right up to the next header
    seen.push_back(*p);
    ASSERT_TRUE(alloc.deallocate(*p).ok()) << round;
    EXPECT_EQ(alloc.deallocate(*p).code(), StatusCode::kInvalidArgument) << "double free";
  }
  const MemoryStats s = alloc.stats();
  EXPECT_EQ(s.bytes_in_use, 0u);
  EXPECT_EQ(s.allocations, 6u);
  EXPECT_EQ(s.cache_hits, 5u) << "one block from the system, then reused";
  EXPECT_EQ(s.bytes_cached, CachingAllocator::bucketSize(CachingAllocator::bucketIndex(1064)));
}

// A thread that frees more than its cache budget passes blocks to the pool, where another
// thread finds them instead of asking the system.
TEST(CachingAllocatorTest, ThreadCacheBudgetFeedsThePool) {
  CachingAllocatorOptions options;
  options.thread_cache_bytes = 64 << 10;
  CachingAllocator alloc(options);
  constexpr int kBlocks = 100;
  std::vector<void*> blocks;
  for (int i = 0; i < kBlocks; ++i) blocks.push_back(*alloc.allocate(4000));
  for (void* p : blocks) ASSERT_TRUE(alloc.deallocate(p).ok());
  MemoryStats s = alloc.stats();
  EXPECT_EQ(s.bytes_in_use, 0u);
  const size_t block = CachingAllocator::bucketSize(CachingAllocator::bucketIndex(4064));
  EXPECT_EQ(s.bytes_cached, kBlocks * block);
  EXPECT_EQ(s.cache_hits, 0u);

  std::thread other([&] {
    std::vector<void*> mine;
    for (int i = 0; i < kBlocks / 2; ++i) mine.push_back(*alloc.allocate(4000));
    for (void* p : mine) EXPECT_TRUE(alloc.deallocate(p).ok());
  });
  other.join();
  s = alloc.stats();
  EXPECT_EQ(s.cache_hits, uint64_t{kBlocks / 2}) << "the other thread took pooled blocks";
  EXPECT_EQ(s.bytes_cached, kBlocks * block) << "nothing new came from the system";
}

// Blocks freed by other threads than their allocator, threads that exit with cached blocks.
TEST(CachingAllocatorConcurrencyTest, ThreadsShareBlocksAndAccountingStaysExact) {
  CachingAllocator alloc;
  constexpr int kThreads = 8;
  constexpr int kRounds = 3000;
  std::vector<std::atomic<void*>> mailbox(kThreads);
  for (auto& m : mailbox) m.store(nullptr);
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(t);
      std::vector<void*> mine;
      for (int i = 0; i < kRounds; ++i) {
        const size_t bytes = size_t{1} << (rng() % 21);
        auto p = alloc.allocate(bytes);
        if (!p.ok()) {
          ++errors;
          continue;
        }
        static_cast<char*>(*p)[0] = static_cast<char>(i);
        static_cast<char*>(*p)[bytes - 1] = static_cast<char>(i);
        // Hand every third block to the next thread, which frees it.
        if (i % 3 == 0) {
          void* old = mailbox[(t + 1) % kThreads].exchange(*p);
          if (old != nullptr && !alloc.deallocate(old).ok()) ++errors;
        } else {
          mine.push_back(*p);
        }
        if (mine.size() > 16) {
          if (!alloc.deallocate(mine.front()).ok()) ++errors;
          mine.erase(mine.begin());
        }
        if (void* in = mailbox[t].exchange(nullptr)) {
          if (!alloc.deallocate(in).ok()) ++errors;
        }
      }
      for (void* p : mine)
        if (!alloc.deallocate(p).ok()) ++errors;
    });
  }
  for (auto& t : threads) t.join();
  for (auto& m : mailbox) {
    if (void* p = m.exchange(nullptr)) {
      ASSERT_TRUE(alloc.deallocate(p).ok());
    }
  }
  EXPECT_EQ(errors.load(), 0);
  MemoryStats s = alloc.stats();
  EXPECT_EQ(s.bytes_in_use, 0u);
  EXPECT_GT(s.peak_bytes_in_use, 0u);
  EXPECT_EQ(s.allocations, uint64_t{kThreads} * kRounds);
  // The exited threads returned their caches to the pool, so a trim releases everything.
  alloc.trim();
  EXPECT_EQ(alloc.stats().bytes_cached, 0u);
}

// ---- thread pool -----------------------------------------------------------------------------

struct Hits {
  std::vector<std::atomic<int>> counts;
  explicit Hits(size_t n) : counts(n) {
    for (auto& c : counts) c.store(0);
  }
};

Status countHits(void* state, uint64_t begin, uint64_t end) {
  auto& hits = *static_cast<Hits*>(state);
  for (uint64_t i = begin; i < end; ++i) hits.counts[i].fetch_add(1);
  return Status();
}

// Every test runs on the pool's own threads and on OpenMP's (where RAL is built with OpenMP).
class ThreadPoolTest : public ::testing::TestWithParam<bool> {
 protected:
  bool openmp() const { return GetParam(); }
};

INSTANTIATE_TEST_SUITE_P(Threads, ThreadPoolTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "OpenMP" : "Own"; });

TEST_P(ThreadPoolTest, ThreadPoolRunsEveryTaskExactlyOnce) {
  for (int threads : {1, 2, 4, 7, 9}) {  // 9: past the shares kept on the stack
    ThreadPool pool(threads, openmp());
    EXPECT_EQ(pool.threadCount(), threads);
    for (uint64_t count : {uint64_t{0}, uint64_t{1}, uint64_t{5}, uint64_t{1000}}) {
      for (uint64_t chunk : {uint64_t{0}, uint64_t{1}, uint64_t{7}}) {
        Hits hits(count);
        ASSERT_TRUE(pool.run(count, chunk, countHits, &hits).ok());
        for (auto& c : hits.counts) ASSERT_EQ(c.load(), 1);
      }
    }
  }
}

TEST_P(ThreadPoolTest, ThreadPoolReturnsTheFirstError) {
  ThreadPool pool(3, openmp());
  auto fn = [](void*, uint64_t begin, uint64_t) -> Status {
    if (begin == 17) return invalidArgument("task 17 failed");
    return Status();
  };
  Status s = pool.run(100, 1, fn, nullptr);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "task 17 failed");
  auto throws = [](void*, uint64_t, uint64_t) -> Status { throw std::runtime_error("boom"); };
  EXPECT_EQ(pool.run(10, 1, throws, nullptr).code(), StatusCode::kInternal);
  Hits hits(50);
  EXPECT_TRUE(pool.run(50, 1, countHits, &hits).ok());  // still usable
}

TEST_P(ThreadPoolTest, ThreadPoolConcurrencyManyCallersAndNestedRuns) {
  ThreadPool pool(4, openmp());
  struct Nested {
    ThreadPool* pool;
    std::atomic<int> total{0};
  } nested{&pool};
  auto outer = [](void* state, uint64_t begin, uint64_t end) -> Status {
    auto& n = *static_cast<Nested*>(state);
    for (uint64_t i = begin; i < end; ++i) {
      Hits hits(20);
      RAL_RETURN_IF_ERROR(n.pool->run(20, 3, countHits, &hits));
      for (auto& c : hits.counts) n.total += c.load();
    }
    return Status();
  };
  std::vector<std::thread> callers;
  for (int t = 0; t < 6; ++t) {
    callers.emplace_back([&] {
      for (int r = 0; r < 20; ++r) EXPECT_TRUE(pool.run(16, 1, outer, &nested).ok());
    });
  }
  for (auto& t : callers) t.join();
  EXPECT_EQ(nested.total.load(), 6 * 20 * 16 * 20);
}

// The tasks of one run() spread over more than the calling thread, whichever threads they are.
TEST_P(ThreadPoolTest, ThreadPoolUsesSeveralThreads) {
  ThreadPool pool(2, openmp());
  EXPECT_EQ(pool.threadCount(), 2);
  if (openmp()) {
    EXPECT_EQ(pool.usesOpenmp(), ThreadPool::openmpByDefault());
  }
  struct Seen {
    std::mutex mutex;
    std::set<std::thread::id> ids;
  } seen;
  // Each task waits (bounded) until another thread has started one: one thread alone cannot
  // finish them early.
  auto fn = [](void* state, uint64_t, uint64_t) -> Status {
    auto& s = *static_cast<Seen*>(state);
    {
      std::lock_guard<std::mutex> lock(s.mutex);
      s.ids.insert(std::this_thread::get_id());
    }
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < until) {
      std::lock_guard<std::mutex> lock(s.mutex);
      if (s.ids.size() >= 2) break;
    }
    return Status();
  };
  ASSERT_TRUE(pool.run(8, 1, fn, &seen).ok());
  EXPECT_GE(seen.ids.size(), 2u);
}

// Each thread starts on its own contiguous part of the range (the caller on the first), so the
// t-th part of one layer's rows and of the next layer's runs on the same core.
TEST_P(ThreadPoolTest, ThreadPoolThreadsStartOnTheirOwnShare) {
  ThreadPool pool(2, openmp());
  struct Firsts {
    std::mutex mutex;
    std::vector<std::pair<std::thread::id, uint64_t>> first;  // each thread's first task
  } firsts;
  // Every task waits (bounded) until both threads have started one, so neither can run through
  // the other's share before the other arrives.
  auto fn = [](void* state, uint64_t begin, uint64_t) -> Status {
    auto& f = *static_cast<Firsts*>(state);
    {
      std::lock_guard<std::mutex> lock(f.mutex);
      bool seen = false;
      for (auto& [id, task] : f.first) seen = seen || id == std::this_thread::get_id();
      if (!seen) f.first.emplace_back(std::this_thread::get_id(), begin);
    }
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < until) {
      std::lock_guard<std::mutex> lock(f.mutex);
      if (f.first.size() >= 2) break;
    }
    return Status();
  };
  const std::thread::id caller = std::this_thread::get_id();
  ASSERT_TRUE(pool.run(8, 1, fn, &firsts).ok());
  ASSERT_EQ(firsts.first.size(), 2u);
  for (auto& [id, task] : firsts.first) EXPECT_EQ(task, id == caller ? 0u : 4u);
}

// ---- driver: registration, launch, copy/fill, streams ------------------------------------

TEST(CpuDriverTest, IsTheDefaultCpuDriverOfAContext) {
  Context context;
  auto driver = context.driver<CpuDriver>();
  ASSERT_TRUE(driver.ok()) << driver.status();
  EXPECT_EQ((*driver)->kind(), DeviceKind::kCpu);
  EXPECT_EQ((*driver)->threadCount(), defaultThreadCount());
  EXPECT_NE((*driver)->deviceName().find("cpu"), std::string::npos);
}

TEST(CpuDriverTest, ThreadCountIsSettable) {
  EXPECT_GE(usableCpuCount(), 1);
  EXPECT_EQ(makeDriver({3, {}})->threadCount(), 3);
  EXPECT_EQ(CpuDriver::create({-1, {}}).status().code(), StatusCode::kInvalidArgument);
  Context context;
  ASSERT_TRUE(context.setDriverFactory(DeviceKind::kCpu, cpuDriverFactory({5, {}})).ok());
  EXPECT_EQ((*context.driver<CpuDriver>())->threadCount(), 5);
}

void recordWorkgroup(const ral_host_workgroup* wg, void* const* args) {
  auto* hits = *static_cast<std::atomic<int>* const*>(args[0]);
  const int64_t scale = *static_cast<const int64_t*>(args[1]);
  const uint32_t linear =
      wg->group_id[0] + wg->grid[0] * (wg->group_id[1] + wg->grid[1] * wg->group_id[2]);
  if (wg->shared_memory_bytes > 0) std::memset(wg->shared_memory, 1, wg->shared_memory_bytes);
  hits[linear].fetch_add(static_cast<int>(scale * wg->block[0]));
}

ExecutableSpec recordSpec() {
  static const ral_host_kernel table[] = {recordWorkgroup};
  ExecutableSpec spec;
  spec.name = "test.record";
  spec.format = ExecutableFormat::kHostFunction;
  spec.data = table;
  spec.size = sizeof(table);
  spec.entries = {{"record", {}}};
  return spec;
}

TEST(CpuDriverTest, LaunchRunsEveryWorkgroupOnce) {
  auto driver = makeDriver({4, {}});
  auto exe = driver->load(recordSpec());
  ASSERT_TRUE(exe.ok()) << exe.status();
  EXPECT_EQ(*driver->load(recordSpec()), *exe);  // cached by name
  EXPECT_EQ(*(*exe)->entryIndex("record"), 0u);

  std::vector<std::atomic<int>> hits(7 * 5 * 3);
  for (auto& h : hits) h.store(0);
  std::atomic<int>* hits_ptr = hits.data();
  int64_t scale = 2;
  void* values[] = {&hits_ptr, &scale};
  size_t sizes[] = {sizeof(hits_ptr), sizeof(scale)};
  LaunchConfig config{{7, 5, 3}, {4, 1, 1}, 256};
  ASSERT_TRUE(driver->launch(*exe, 0, config, {values, sizes, 2}).ok());
  for (auto& h : hits) EXPECT_EQ(h.load(), 8);
}

TEST(CpuDriverTest, BadLoadsAndLaunchesAreErrors) {
  auto driver = makeDriver();
  ExecutableSpec spec = recordSpec();
  spec.name = "test.bad";
  spec.format = ExecutableFormat::kSpirv;
  EXPECT_EQ(driver->load(spec).status().code(), StatusCode::kUnsupported);
  spec.format = ExecutableFormat::kHostFunction;
  spec.size = 3;
  EXPECT_EQ(driver->load(spec).status().code(), StatusCode::kInvalidArgument);
  const ral_host_kernel null_table[] = {nullptr};
  spec.data = null_table;
  spec.size = sizeof(null_table);
  EXPECT_EQ(driver->load(spec).status().code(), StatusCode::kInvalidArgument);

  Executable* exe = *driver->load(recordSpec());
  LaunchConfig empty{{0, 1, 1}, {1, 1, 1}, 0};
  EXPECT_EQ(driver->launch(exe, 0, empty, {}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(driver->launch(exe, 1, LaunchConfig{}, {}).code(), StatusCode::kOutOfRange);
  auto other = makeDriver();
  Executable* foreign = *other->load(recordSpec());
  EXPECT_EQ(driver->launch(foreign, 0, LaunchConfig{}, {}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(driver->launch(nullptr, 0, LaunchConfig{}, {}).code(), StatusCode::kInvalidArgument);
}

TEST(CpuDriverTest, CopyAndFill) {
  auto driver = makeDriver({2, {}});
  for (size_t bytes : {size_t{8}, size_t{1000}, size_t{24} << 20}) {
    auto* a = static_cast<unsigned char*>(*driver->allocate(bytes));
    auto* b = static_cast<unsigned char*>(*driver->allocate(bytes));
    const uint64_t patterns[] = {0x5a, 0x1234, 0x89abcdef, 0x0102030405060708ull};
    const size_t pattern_sizes[] = {1, 2, 4, 8};
    for (int k = 0; k < 4; ++k) {
      ASSERT_TRUE(driver->fill(a, bytes, &patterns[k], pattern_sizes[k]).ok());
      for (size_t i = 0; i < bytes; i += bytes / 8 + 1)
        ASSERT_EQ(a[i], reinterpret_cast<const unsigned char*>(&patterns[k])[i % pattern_sizes[k]]);
      ASSERT_TRUE(driver->copy(b, a, bytes, CopyKind::kDeviceToDevice).ok());
      ASSERT_EQ(std::memcmp(a, b, bytes), 0);
    }
    EXPECT_EQ(driver->copy(a + 1, a, 4, CopyKind::kHostToHost).code(),
              StatusCode::kInvalidArgument);
    uint32_t p = 7;
    EXPECT_EQ(driver->fill(a, 6, &p, 4).code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(driver->fill(a, 6, &p, 3).code(), StatusCode::kInvalidArgument);
    ASSERT_TRUE(driver->deallocate(a).ok());
    ASSERT_TRUE(driver->deallocate(b).ok());
  }
}

// The CPU has no native streams: wrapping one is refused, naming the driver.
TEST(CpuDriverTest, WrapNativeStreamIsUnsupported) {
  auto driver = CpuDriver::create();
  ASSERT_TRUE(driver.ok()) << driver.status();
  int native = 0;
  auto wrapped = (*driver)->wrapNativeStream(&native);
  EXPECT_EQ(wrapped.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(wrapped.status().message().find("cpu"), std::string::npos) << wrapped.status();
}

}  // namespace
}  // namespace ral::cpu
