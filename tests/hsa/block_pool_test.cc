// BlockPool on a fake backing allocator (host memory, counted): small allocations share blocks,
// large ones take whole blocks, freed memory is reused, trim returns it, out-of-memory trims and
// retries, and bad frees are errors.
#include "drivers/hsa/block_pool.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <set>

namespace ral::hsa {
namespace {

constexpr size_t kBlock = 64 * 1024;

struct FakeBacking {
  size_t limit = size_t{64} << 20;
  size_t used = 0;
  int allocations = 0;
  std::set<void*> live;
  BlockPool make() {
    return BlockPool(
        "test pool", kBlock,
        [this](size_t bytes) -> StatusOr<void*> {
          if (bytes > limit - used) return outOfMemory("fake backing is full");
          void* p = std::aligned_alloc(BlockPool::kMaxAlignment, bytes);
          used += bytes;
          ++allocations;
          live.insert(p);
          return p;
        },
        [this](void* p, size_t bytes) {
          used -= bytes;
          live.erase(p);
          std::free(p);
        });
  }
};

TEST(BlockPool, SmallAllocationsShareOneBlockAndAreAligned) {
  FakeBacking backing;
  BlockPool pool = backing.make();
  std::set<void*> seen;
  for (size_t alignment : {1u, 64u, 256u, 4096u}) {
    auto p = pool.allocate(100, alignment);
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(*p) % alignment, 0u);
    EXPECT_TRUE(seen.insert(*p).second);
  }
  for (int i = 0; i < 20; ++i) seen.insert(*pool.allocate(300));
  // One shared block per size class used: 256 (alignments up to 256), 4096 and 512.
  EXPECT_EQ(backing.allocations, 3);
  EXPECT_EQ(pool.stats().allocations, 24u);
  for (void* p : seen) EXPECT_TRUE(pool.deallocate(p).ok());
  EXPECT_EQ(pool.stats().bytes_in_use, 0u);
}

TEST(BlockPool, LargeAllocationsAreWholeBlocksReusedBySize) {
  FakeBacking backing;
  BlockPool pool = backing.make();
  void* a = *pool.allocate(3 * kBlock + 1);
  EXPECT_EQ(pool.stats().bytes_in_use, 4 * kBlock);
  EXPECT_TRUE(pool.contains(static_cast<char*>(a) + 4 * kBlock - 8, 8));
  EXPECT_FALSE(pool.contains(static_cast<char*>(a) + 4 * kBlock - 8, 9));
  ASSERT_TRUE(pool.deallocate(a).ok());
  EXPECT_EQ(pool.stats().bytes_cached, 4 * kBlock);
  const uint64_t hits = pool.stats().cache_hits;
  void* b = *pool.allocate(4 * kBlock);
  EXPECT_EQ(b, a) << "the cached 4-block allocation is reused";
  EXPECT_EQ(pool.stats().cache_hits, hits + 1);
  EXPECT_EQ(backing.allocations, 1);
  ASSERT_TRUE(pool.deallocate(b).ok());
}

TEST(BlockPool, FreeBlocksServeOtherSizeClassesAndTrimReturnsThem) {
  FakeBacking backing;
  BlockPool pool = backing.make();
  void* small = *pool.allocate(256);
  ASSERT_TRUE(pool.deallocate(small).ok());
  void* other = *pool.allocate(2000);  // another class, from the now free block
  EXPECT_EQ(backing.allocations, 1);
  ASSERT_TRUE(pool.deallocate(other).ok());
  void* large = *pool.allocate(kBlock * 2);
  ASSERT_TRUE(pool.deallocate(large).ok());
  EXPECT_GT(pool.stats().bytes_cached, 0u);
  pool.trim();
  EXPECT_EQ(pool.stats().bytes_cached, 0u);
  EXPECT_EQ(backing.used, 0u);
  EXPECT_TRUE(backing.live.empty());
}

TEST(BlockPool, OutOfMemoryTrimsTheCacheAndRetries) {
  FakeBacking backing;
  backing.limit = 4 * kBlock;
  BlockPool pool = backing.make();
  void* a = *pool.allocate(3 * kBlock);
  ASSERT_TRUE(pool.deallocate(a).ok());  // cached: 3 of the 4 blocks
  auto b = pool.allocate(2 * kBlock);    // needs the cache given back first
  ASSERT_TRUE(b.ok()) << b.status();
  auto c = pool.allocate(3 * kBlock);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kOutOfMemory);
  EXPECT_NE(c.status().message().find("test pool"), std::string_view::npos) << c.status();
  EXPECT_EQ(pool.allocate(size_t{1} << 62).status().code(), StatusCode::kOutOfMemory);
  ASSERT_TRUE(pool.deallocate(*b).ok());
}

TEST(BlockPool, BadFreesAndAlignmentsAreErrors) {
  FakeBacking backing;
  BlockPool pool = backing.make();
  void* p = *pool.allocate(10);
  int local = 0;
  EXPECT_EQ(pool.deallocate(&local).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(pool.deallocate(static_cast<char*>(p) + 1).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(pool.deallocate(p).ok());
  EXPECT_EQ(pool.deallocate(p).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(pool.allocate(10, 3).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(pool.allocate(10, 8192).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ral::hsa
