// CachingAllocator: the CPU driver's host memory. Every block is 64-byte aligned (or more, on
// request) and carries a 64-byte header in front of the pointer handed out; freed blocks are kept
// in size buckets and handed out again instead of going back to the system.
//
// Buckets: four per power of two (128, 160, 192, 224, 256, 320, ...), so at most 25% is lost to
// rounding. Blocks up to kThreadCacheMaxBlock live in per-thread caches: each cache holds, per
// bucket, a small stack of free blocks. A cached allocate or free touches only the calling
// thread's stack and counters (no lock, no atomic read-modify-write) and is inlined into the
// caller (CpuDriver); everything else (first use on a thread, an empty or full stack, another
// thread's block, a non-default alignment, a trim to follow, errors) takes the out-of-line path.
// Caches exchange blocks in batches with a shared pool behind a mutex; larger blocks go through
// the pool directly.
//
// Every block keeps, at its start, a header naming its base, bucket and allocator; it is written
// once when the block comes from the system, so reusing a block rewrites only the header's magic
// (live / freed) and, when the block changed threads, its owner. A block handed out with a larger
// alignment gets a second header just before the pointer.
//
// Statistics (MemoryStats) are kept per thread and summed on request:
//  - bytes_in_use: bytes of live blocks (bucket sizes, so >= what was requested); exact;
//  - bytes_cached: bytes of free blocks held by thread caches and the pool; exact;
//  - peak_bytes_in_use: exact when one thread allocates; with several threads it is the largest
//    of each thread's own peak and the totals sampled at every pool operation and stats() call,
//    so it never exceeds the true peak but may miss a short spike.
// A thread's cached bytes are `held - in_use`: a cached allocate or free moves a block between
// the two without changing `held`, so the fast paths update one byte counter, not two.
//
// trim() returns the pool's and the calling thread's cached blocks to the system at once; other
// threads' caches follow at their next free or uncached allocate. Blocks below 256 KiB come from
// posix_memalign, larger ones from mmap, so a request the system cannot satisfy is an
// OUT_OF_MEMORY status, never a crash. An optional memory limit caps in-use + cached bytes.
#ifndef RAL_DRIVERS_CPU_CACHING_ALLOCATOR_H_
#define RAL_DRIVERS_CPU_CACHING_ALLOCATOR_H_

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "drivers/common/size_classes.h"
#include "ral/driver.h"
#include "ral/status.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

namespace ral::cpu {

struct CachingAllocatorOptions {
  // Upper bound on bytes in use + cached (0: none). Reaching it first trims the caches.
  size_t memory_limit = 0;
  // Bytes one thread may keep cached privately before it returns blocks to the shared pool.
  size_t thread_cache_bytes = size_t{16} << 20;
};

namespace alloc_detail {

constexpr size_t kHeaderBytes = 64;
constexpr size_t kCachedBuckets = 1 + (21 - 7) * 4 + 3 + 1;  // 128 B ... the 4 MiB bucket
constexpr size_t kSlotsPerBucket = 64;                       // most a thread keeps per bucket
constexpr uint64_t kLiveMagic = 0x52414c2d4c495645ull;       // "RAL-LIVE"
constexpr uint64_t kFreedMagic = 0x52414c2d46524545ull;      // "RAL-FREE"

// drivers/common/size_classes.h, from 128 bytes.
using Buckets = drivers::SizeClasses<7>;
constexpr size_t bucketIndexOf(size_t n) { return Buckets::index(n); }
constexpr size_t bucketSizeOf(size_t index) { return Buckets::size(index); }

// The fast paths look sizes up instead of computing them.
constexpr std::array<uint32_t, kCachedBuckets> kCachedBucketSizes = [] {
  std::array<uint32_t, kCachedBuckets> sizes{};
  for (size_t i = 0; i < kCachedBuckets; ++i) sizes[i] = static_cast<uint32_t>(bucketSizeOf(i));
  return sizes;
}();

struct ThreadCache;

struct alignas(64) BlockHeader {
  uint64_t magic;     // kLiveMagic ^ user address while live, kFreedMagic ^ user address once freed
  BlockHeader* base;  // start of the block (== this for the header every block starts with)
  uint64_t allocator_id;
  ThreadCache* owner;  // whose counters account the block; null for blocks above the caches
  BlockHeader* next;   // link in the shared pool; unused otherwise
  uint32_t bucket;
  uint32_t padding;
  uint64_t requested;  // under AddressSanitizer only: the bytes asked for, all that is unpoisoned
};
static_assert(sizeof(BlockHeader) == kHeaderBytes, "the header fills exactly the reserved space");

// One thread's cache for one allocator. Counters marked "owner" are written by the owning thread
// only (a relaxed load + store, no locked instruction) and read by stats().
struct ThreadCache {
  // Touched on every cached allocate / free.
  std::atomic<int64_t> in_use{0};        // owner: bytes of blocks this cache accounts as live
  std::atomic<int64_t> held{0};          // owner: in_use + bytes in `slots`
  std::atomic<int64_t> allocations{0};   // owner
  std::atomic<int64_t> peak{0};          // owner: the largest in_use - remote_freed seen
  uint64_t epoch_seen = 0;               // owner: the allocator's trim epoch last acted on
  uint32_t counts[kCachedBuckets] = {};  // owner
  BlockHeader* slots[kCachedBuckets][kSlotsPerBucket];  // owner: free blocks, per bucket
  // Guarded by the allocator's mutex.
  uint64_t system_allocations = 0;  // blocks this cache had to get from the system
  bool attached = true;
  std::thread::id thread;
  // Frees of this cache's blocks by other threads; on its own line, as others write it.
  alignas(64) std::atomic<int64_t> remote_freed{0};
};

// The calling thread's caches, most recently used first, keyed by allocator id. Plain data with
// initial-exec TLS, so the fast path reads it with one %fs-relative load and no guard.
struct TlsEntry {
  uint64_t id;
  ThreadCache* cache;
};
constexpr int kTlsEntries = 8;
extern __thread TlsEntry tls_entries[kTlsEntries] __attribute__((tls_model("initial-exec")));

inline void addOwned(std::atomic<int64_t>& counter, int64_t delta) {
  counter.store(counter.load(std::memory_order_relaxed) + delta, std::memory_order_relaxed);
}

inline void poison(const void* p, size_t n) {
#if defined(__SANITIZE_ADDRESS__)
  ASAN_POISON_MEMORY_REGION(p, n);
#else
  (void)p, (void)n;
#endif
}

inline void unpoison(const void* p, size_t n) {
#if defined(__SANITIZE_ADDRESS__)
  ASAN_UNPOISON_MEMORY_REGION(p, n);
#else
  (void)p, (void)n;
#endif
}

// Unpoisons a block's user bytes. Under AddressSanitizer only what was asked for becomes
// addressable (a write past it is reported), and usableSize() then says so.
inline void unpoisonUser(BlockHeader* header, const void* user, size_t bytes) {
#if defined(__SANITIZE_ADDRESS__)
  header->requested = bytes;
  ASAN_UNPOISON_MEMORY_REGION(user, bytes);
#else
  (void)header, (void)user, (void)bytes;
#endif
}

}  // namespace alloc_detail

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
  // Usable bytes behind a live pointer: its bucket size minus the header and alignment padding
  // (under AddressSanitizer: the bytes requested, the only ones addressable).
  StatusOr<size_t> usableSize(const void* ptr) const;

  // Bucket helpers, exposed for tests.
  static size_t bucketIndex(size_t block_bytes) { return alloc_detail::bucketIndexOf(block_bytes); }
  static size_t bucketSize(size_t index) { return alloc_detail::bucketSizeOf(index); }

 private:
  using BlockHeader = alloc_detail::BlockHeader;
  using ThreadCache = alloc_detail::ThreadCache;

  StatusOr<void*> allocateSlow(size_t bytes, size_t alignment);
  Status deallocateSlow(void* ptr);
  ThreadCache* threadCache();
  ThreadCache* lookupThreadCache();
  ThreadCache* attachThreadCache();
  StatusOr<BlockHeader*> refill(size_t index, ThreadCache* cache);
  StatusOr<BlockHeader*> obtainLarge(size_t index);
  StatusOr<BlockHeader*> systemAllocate(size_t index);
  void* place(BlockHeader* block, ThreadCache* cache, size_t bytes, size_t alignment);
  void accountAllocation(ThreadCache* cache, int64_t size);
  void returnToPool(ThreadCache* cache, size_t index, uint32_t keep);
  void flushThreadCache(ThreadCache* cache);
  void pushPoolLocked(BlockHeader* block, size_t index);
  void releasePoolLocked();
  void samplePeakLocked() const;
  uint64_t inUseLocked() const;
  void orphan(ThreadCache* cache);
  friend struct ThreadExitHook;

  const CachingAllocatorOptions options_;
  const uint64_t id_;  // unique per instance, never reused: keys the thread-local lookup
  std::atomic<uint64_t> trim_epoch_{0};
  uint32_t bucket_limits_[alloc_detail::kCachedBuckets] = {};  // blocks a thread keeps per bucket

  mutable std::mutex mutex_;
  std::vector<BlockHeader*> pool_;  // per bucket: a list of free blocks linked through `next`
  std::vector<std::unique_ptr<ThreadCache>> caches_;  // every cache ever attached
  size_t pool_cached_bytes_ = 0;
  uint64_t large_in_use_ = 0;  // blocks above kThreadCacheMaxBlock
  uint64_t large_allocations_ = 0;
  uint64_t large_hits_ = 0;
  size_t system_bytes_ = 0;  // obtained from the system and not released
  mutable uint64_t peak_sampled_ = 0;
};

// ---- fast paths ------------------------------------------------------------------------------
// A default-aligned request served from the calling thread's cache, and the free of a
// default-aligned block of this thread back into it. Any other case goes out of line.

[[gnu::always_inline]] inline StatusOr<void*> CachingAllocator::allocate(size_t bytes,
                                                                         size_t alignment) {
  using namespace alloc_detail;
  const size_t index = bucketIndexOf(bytes + kHeaderBytes);  // used only once `bytes` is checked
  const TlsEntry entry = tls_entries[0];
  // Alignment 0, 1, 2, ..., 64 all mean 64; bytes + header within the largest cached bucket.
  if (__builtin_expect((alignment & (alignment - 1)) == 0 && alignment <= kMinAlignment &&
                           bytes <= kThreadCacheMaxBlock - kHeaderBytes && entry.id == id_,
                       1)) {
    ThreadCache* cache = entry.cache;
    const uint32_t n = cache->counts[index];
    if (__builtin_expect(n != 0, 1)) {
      BlockHeader* block = cache->slots[index][n - 1];
      cache->counts[index] = n - 1;
      accountAllocation(cache, kCachedBucketSizes[index]);
      const uintptr_t user = reinterpret_cast<uintptr_t>(block) + kHeaderBytes;
      block->magic = kLiveMagic ^ user;
      if (__builtin_expect(block->owner != cache, 0)) block->owner = cache;
      unpoisonUser(block, reinterpret_cast<void*>(user), bytes);
      return reinterpret_cast<void*>(user);
    }
  }
  return allocateSlow(bytes, alignment);
}

[[gnu::always_inline]] inline Status CachingAllocator::deallocate(void* ptr) {
  using namespace alloc_detail;
  const uintptr_t user = reinterpret_cast<uintptr_t>(ptr);
  auto* header = reinterpret_cast<BlockHeader*>(user - kHeaderBytes);
  const TlsEntry entry = tls_entries[0];
  if (__builtin_expect(user != 0 && user % kMinAlignment == 0, 1) &&
      __builtin_expect(header->magic == (kLiveMagic ^ user) && header->base == header &&
                           header->allocator_id == id_ && header->owner == entry.cache &&
                           entry.id == id_,
                       1)) {
    // owner == this thread's cache implies a cached bucket (larger blocks have no owner).
    ThreadCache* cache = entry.cache;
    const size_t index = header->bucket;
    const uint32_t n = cache->counts[index];
    const int64_t size = kCachedBucketSizes[index];
    const int64_t in_use = cache->in_use.load(std::memory_order_relaxed) - size;
    if (__builtin_expect(n < bucket_limits_[index] &&
                             cache->held.load(std::memory_order_relaxed) - in_use <=
                                 static_cast<int64_t>(options_.thread_cache_bytes) &&
                             cache->epoch_seen == trim_epoch_.load(std::memory_order_relaxed),
                         1)) {
      header->magic = kFreedMagic ^ user;
      poison(ptr, static_cast<size_t>(size) - kHeaderBytes);
      cache->slots[index][n] = header;
      cache->counts[index] = n + 1;
      cache->in_use.store(in_use, std::memory_order_relaxed);
      return Status();
    }
  }
  return deallocateSlow(ptr);
}

[[gnu::always_inline]] inline void CachingAllocator::accountAllocation(ThreadCache* cache,
                                                                       int64_t size) {
  const int64_t in_use = cache->in_use.load(std::memory_order_relaxed) + size;
  cache->in_use.store(in_use, std::memory_order_relaxed);
  alloc_detail::addOwned(cache->allocations, 1);
  const int64_t net = in_use - cache->remote_freed.load(std::memory_order_relaxed);
  if (net > cache->peak.load(std::memory_order_relaxed))
    cache->peak.store(net, std::memory_order_relaxed);
}

}  // namespace ral::cpu

#endif  // RAL_DRIVERS_CPU_CACHING_ALLOCATOR_H_
