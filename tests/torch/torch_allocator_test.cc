// The torch host's CPU buffer cache (contexts/torch/torch_allocator.h), over a c10::Allocator that
// counts what it hands out: which frees are kept, which allocations reuse them, and how much the
// cache may hold. Buffers are never touched, so the large sizes cost address space, not memory.
#include "contexts/torch/torch_allocator.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

namespace ral::torch_host {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

// aligned_alloc/free behind the c10 interface, counting calls and outstanding bytes.
class CountingAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(size_t bytes) const override {
    // 64-byte aligned, as torch's CPU allocator (the cache keeps only blocks freed by pointer).
    void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
    ++allocations;
    outstanding += bytes;
    sizes().push_back({p, bytes});
    return c10::DataPtr(p, p, &rawDelete, c10::Device(c10::DeviceType::CPU));
  }
  c10::DeleterFnPtr raw_deleter() const override { return &rawDelete; }

  static void rawDelete(void* p) {
    for (auto& [q, bytes] : sizes()) {
      if (q != p) continue;
      outstanding -= bytes;
      q = nullptr;
      break;
    }
    std::free(p);
  }

  static inline size_t allocations = 0;
  static inline size_t outstanding = 0;

 private:
  struct Block {
    void* p;
    size_t bytes;
  };
  static std::vector<Block>& sizes() {
    static std::vector<Block> blocks;
    return blocks;
  }
};

class TorchAllocatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    CountingAllocator::allocations = 0;
    CountingAllocator::outstanding = 0;
  }
  CountingAllocator counting_;
};

void* allocateOrDie(TorchAllocator& allocator, size_t bytes) {
  StatusOr<void*> p = allocator.allocate(bytes);
  EXPECT_TRUE(p.ok()) << p.status().message();
  return p.ok() ? *p : nullptr;
}

TEST_F(TorchAllocatorTest, TemporariesAreReusedBySize) {
  TorchAllocator allocator(&counting_, c10::Device(c10::DeviceType::CPU));
  void* a = allocateOrDie(allocator, 1 * kMiB);
  ASSERT_TRUE(allocator.deallocate(a).ok());
  EXPECT_EQ(allocateOrDie(allocator, 1 * kMiB), a);
  EXPECT_EQ(CountingAllocator::allocations, 1u);
  // Another size is not served from a block of the wrong size.
  void* b = allocateOrDie(allocator, 2 * kMiB);
  EXPECT_NE(b, a);
  EXPECT_EQ(CountingAllocator::allocations, 2u);
}

TEST_F(TorchAllocatorTest, SmallBuffersAreNotCached) {
  TorchAllocator allocator(&counting_, c10::Device(c10::DeviceType::CPU));
  void* a = allocateOrDie(allocator, TorchAllocator::kMinCachedBytes - 1);
  ASSERT_TRUE(allocator.deallocate(a).ok());
  EXPECT_EQ(CountingAllocator::outstanding, 0u);
}

// A model that frees one large size while it needs another, call after call (a ViT at batch 8):
// the peak live bytes are one buffer, but reuse by size needs both kept.
TEST_F(TorchAllocatorTest, ACallThatAlternatesLargeSizesAllocatesNothingTheSecondTime) {
  TorchAllocator allocator(&counting_, c10::Device(c10::DeviceType::CPU));
  const size_t x = 300 * kMiB, y = 301 * kMiB;  // each above kMaxCachedBytes alone
  static_assert(300 * kMiB > TorchAllocator::kMaxCachedBytes);
  auto call = [&] {
    ASSERT_TRUE(allocator.deallocate(allocateOrDie(allocator, x)).ok());
    ASSERT_TRUE(allocator.deallocate(allocateOrDie(allocator, y)).ok());
  };
  call();
  EXPECT_EQ(CountingAllocator::allocations, 2u);
  for (int i = 0; i < 3; ++i) call();
  EXPECT_EQ(CountingAllocator::allocations, 2u);
}

// A model run at many shapes: each size is live alone, so the cache keeps at most twice the
// peak live bytes, not one buffer per shape ever seen.
TEST_F(TorchAllocatorTest, ManyShapesDoNotHoardOneBufferPerShape) {
  TorchAllocator allocator(&counting_, c10::Device(c10::DeviceType::CPU));
  const size_t base = 300 * kMiB;
  for (size_t i = 0; i < 10; ++i)
    ASSERT_TRUE(allocator.deallocate(allocateOrDie(allocator, base + i * kMiB)).ok());
  EXPECT_EQ(CountingAllocator::allocations, 10u);
  EXPECT_LE(CountingAllocator::outstanding, 2 * (base + 9 * kMiB));
  EXPECT_GT(CountingAllocator::outstanding, 0u);
}

// An output handed to torch leaves the cache's books: freeing it is torch's job.
TEST_F(TorchAllocatorTest, ReleasedBuffersBelongToTorch) {
  TorchAllocator allocator(&counting_, c10::Device(c10::DeviceType::CPU));
  void* a = allocateOrDie(allocator, 1 * kMiB);
  {
    c10::DataPtr owned = allocator.release(a);
    EXPECT_EQ(owned.get(), a);
  }
  EXPECT_EQ(CountingAllocator::outstanding, 0u);
  EXPECT_NE(allocateOrDie(allocator, 1 * kMiB), nullptr);
  EXPECT_EQ(CountingAllocator::allocations, 2u);
}

TEST_F(TorchAllocatorTest, DestructionFreesTheCache) {
  {
    TorchAllocator allocator(&counting_, c10::Device(c10::DeviceType::CPU));
    ASSERT_TRUE(allocator.deallocate(allocateOrDie(allocator, 1 * kMiB)).ok());
    EXPECT_EQ(CountingAllocator::outstanding, 1 * kMiB);
  }
  EXPECT_EQ(CountingAllocator::outstanding, 0u);
}

}  // namespace
}  // namespace ral::torch_host
