// CachingAllocator: the CPU driver's host memory. Every block is 64-byte aligned (or more, on
// request) and carries a 64-byte header in front of it; freed blocks are kept in size buckets and
// handed out again instead of going back to the system.
//
// Buckets: four per power of two (128, 160, 192, 224, 256, 320, ...), so at most 25% is lost to
// rounding. Blocks up to kThreadCacheMaxBlock live in per-thread caches: allocate/free on the
// fast path touch only the calling thread's lists and counters (no lock, no atomic
// read-modify-write), which is what makes a cached alloc+free cheaper than malloc/free. Caches
// exchange blocks in batches with a shared pool behind a mutex; larger blocks go through the pool
// directly.
//
// Statistics (MemoryStats) are kept per thread and summed on request:
//  - bytes_in_use: bytes of live blocks (bucket sizes, so >= what was requested); exact;
//  - bytes_cached: bytes of free blocks held by thread caches and the pool; exact;
//  - peak_bytes_in_use: exact when one thread allocates; with several threads it is the largest
//    of each thread's own peak and the totals sampled at every pool operation and stats() call,
//    so it never exceeds the true peak but may miss a short spike.
//
// trim() returns the pool's and the calling thread's cached blocks to the system at once; other
// threads' caches follow at their next allocate/free. Blocks below 256 KiB come from
// posix_memalign, larger ones from mmap, so a request the system cannot satisfy is an
// OUT_OF_MEMORY status, never a crash. An optional memory limit caps in-use + cached bytes.
#ifndef RAL_DRIVERS_CPU_CACHING_ALLOCATOR_H_
#define RAL_DRIVERS_CPU_CACHING_ALLOCATOR_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "ral/driver.h"
#include "ral/status.h"

namespace ral::cpu {

struct CachingAllocatorOptions {
  // Upper bound on bytes in use + cached (0: none). Reaching it first trims the caches.
  size_t memory_limit = 0;
  // Bytes one thread may keep cached privately before it returns blocks to the shared pool.
  size_t thread_cache_bytes = size_t{16} << 20;
};

class CachingAllocator {
 public:
  static constexpr size_t kMinAlignment = 64;
  static constexpr size_t kMaxAlignment = size_t{1} << 21;
  static constexpr size_t kThreadCacheMaxBlock = size_t{4} << 20;

  explicit CachingAllocator(CachingAllocatorOptions options = {});
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // `alignment`: 0 or a power of two up to kMaxAlignment (below 64 means 64). Zero bytes give a
  // valid, unique pointer.
  StatusOr<void*> allocate(size_t bytes, size_t alignment = kMinAlignment);
  // OK for nullptr. InvalidArgument for a pointer this allocator did not hand out (as far as its
  // header can tell) or one freed twice.
  Status deallocate(void* ptr);
  MemoryStats stats() const;
  void trim();
  // Usable bytes behind a live pointer (its bucket size minus the header and alignment padding).
  StatusOr<size_t> usableSize(const void* ptr) const;

  // Bucket helpers, exposed for tests.
  static size_t bucketIndex(size_t block_bytes);
  static size_t bucketSize(size_t index);

  struct ThreadCache;  // defined in the .cc

 private:
  struct Block;
  ThreadCache* threadCache();
  ThreadCache* lookupThreadCache();
  ThreadCache* attachThreadCache();
  StatusOr<Block*> obtainBlock(size_t index, ThreadCache* cache);
  StatusOr<Block*> systemAllocate(size_t index, std::unique_lock<std::mutex>& lock);
  void returnToPool(ThreadCache* cache, size_t index, size_t keep);
  void flushThreadCache(ThreadCache* cache);
  void releasePoolLocked();
  void samplePeakLocked() const;
  uint64_t inUseLocked() const;
  void freeLargeLocked(Block* block, size_t index);
  void orphan(ThreadCache* cache);
  friend struct ThreadExitHook;

  const CachingAllocatorOptions options_;
  const uint64_t id_;  // unique per instance, never reused: keys the thread-local lookup
  std::atomic<uint64_t> trim_epoch_{0};

  mutable std::mutex mutex_;
  std::vector<Block*> pool_;  // per bucket: a singly linked list of free blocks
  std::vector<size_t> pool_counts_;
  std::vector<std::unique_ptr<ThreadCache>> caches_;  // every cache ever attached
  size_t pool_cached_bytes_ = 0;
  uint64_t large_in_use_ = 0;  // blocks above kThreadCacheMaxBlock
  uint64_t large_allocations_ = 0;
  uint64_t large_hits_ = 0;
  size_t system_bytes_ = 0;  // obtained from the system and not released
  mutable uint64_t peak_sampled_ = 0;
  uint32_t bucket_limits_[64] = {};  // blocks a thread keeps per cached bucket
};

}  // namespace ral::cpu

#endif  // RAL_DRIVERS_CPU_CACHING_ALLOCATOR_H_
