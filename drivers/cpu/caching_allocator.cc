#include "drivers/cpu/caching_allocator.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <thread>
#include <unordered_map>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define RAL_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define RAL_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define RAL_POISON(p, n) ((void)(p), (void)(n))
#define RAL_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace ral::cpu {
namespace {

constexpr size_t kHeaderBytes = 64;
constexpr size_t kMaxRequest = size_t{1} << 46;  // beyond any machine's address space
constexpr size_t kMmapThreshold = size_t{256} << 10;
constexpr size_t kNumBuckets = 1 + (48 - 7) * 4;
constexpr uint64_t kLiveMagic = 0x52414c2d4c495645ull;   // "RAL-LIVE"
constexpr uint64_t kFreedMagic = 0x52414c2d46524545ull;  // "RAL-FREE"

// Owner-only counters: a plain load + store, no locked instruction, still race-free for readers.
inline void bump(std::atomic<uint64_t>& counter, uint64_t delta) {
  counter.store(counter.load(std::memory_order_relaxed) + delta, std::memory_order_relaxed);
}

uint64_t nextAllocatorId() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

// The first bytes of a free block link it into a bucket list. When the header sits at the start
// of the block (64-byte alignment) `next` overlaps the header's `base`, which is no longer needed.
struct CachingAllocator::Block {
  uint64_t header_magic;
  Block* next;
};

namespace {
struct alignas(64) Header {
  uint64_t magic;  // kLiveMagic ^ user address while live
  void* base;      // start of the block
  uint64_t allocator_id;
  CachingAllocator::ThreadCache* owner;  // whose counters account this block; null when large
  uint32_t bucket;
};
static_assert(sizeof(Header) == kHeaderBytes, "the header fills exactly the reserved space");

constexpr size_t kCachedBuckets = 1 + (21 - 7) * 4 + 3 + 1;  // up to the 4 MiB bucket
static_assert(kCachedBuckets <= 64, "see CachingAllocator::bucket_limits_");
}  // namespace

struct CachingAllocator::ThreadCache {
  Block* lists[kCachedBuckets] = {};
  uint32_t counts[kCachedBuckets] = {};
  size_t private_cached = 0;  // owner only
  uint64_t epoch_seen = 0;    // owner only
  // Written by the owner only; read by stats().
  std::atomic<uint64_t> allocated{0};
  std::atomic<uint64_t> freed{0};
  std::atomic<uint64_t> allocations{0};
  std::atomic<uint64_t> hits{0};
  std::atomic<uint64_t> cached{0};
  std::atomic<uint64_t> peak{0};
  // Frees of this cache's blocks by other threads; on its own line, as others write it.
  alignas(64) std::atomic<uint64_t> remote_freed{0};
  // Guarded by the allocator's mutex.
  bool attached = true;
  std::thread::id thread;
};

namespace {

inline size_t bucketIndexOf(size_t n) {
  if (n <= 128) return 0;
  const size_t m = n - 1;
  const int p = 63 - __builtin_clzll(m);  // 2^p <= m < 2^(p+1), p >= 7
  const size_t sub = (m - (size_t{1} << p)) >> (p - 2);
  return 1 + static_cast<size_t>(p - 7) * 4 + sub;
}

inline size_t bucketSizeOf(size_t index) {
  if (index == 0) return 128;
  const size_t p = 7 + (index - 1) / 4, sub = (index - 1) % 4;
  return (size_t{1} << p) + (sub + 1) * (size_t{1} << (p - 2));
}

// Thread-local lookup of the calling thread's cache per allocator. Plain data, so the fast path
// needs no TLS initialisation guard; the hook below (touched only on the slow path) returns the
// caches of an exiting thread to their allocators.
struct TlsEntry {
  uint64_t id;
  CachingAllocator::ThreadCache* cache;
};
constexpr int kTlsEntries = 8;
// initial-exec: a plain %fs-relative access instead of a __tls_get_addr call per operation
// (128 bytes of static TLS, as fast allocators such as tcmalloc and jemalloc also use).
__attribute__((tls_model("initial-exec"))) thread_local TlsEntry tls_entries[kTlsEntries];

struct LiveAllocators {
  std::mutex mutex;
  std::unordered_map<uint64_t, CachingAllocator*> by_id;
};
LiveAllocators& liveAllocators() {
  static LiveAllocators* live = new LiveAllocators();  // outlives every thread's exit hook
  return *live;
}

uint32_t bucketLimit(size_t index, size_t thread_cache_bytes) {
  const size_t by_bytes = thread_cache_bytes / 8 / bucketSizeOf(index);
  return static_cast<uint32_t>(std::clamp<size_t>(by_bytes, 2, 64));
}

void* systemAlloc(size_t bytes) {
  if (bytes >= kMmapThreshold) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? nullptr : p;
  }
  void* p = nullptr;
  return posix_memalign(&p, CachingAllocator::kMinAlignment, bytes) == 0 ? p : nullptr;
}

void systemFree(void* base, size_t bytes) {
  RAL_UNPOISON(base, bytes);
  if (bytes >= kMmapThreshold) {
    munmap(base, bytes);
  } else {
    std::free(base);
  }
}

}  // namespace

struct ThreadExitHook {
  bool armed = false;
  ~ThreadExitHook() {
    auto& live = liveAllocators();
    std::lock_guard<std::mutex> lock(live.mutex);
    for (TlsEntry& e : tls_entries) {
      if (e.id == 0) continue;
      auto it = live.by_id.find(e.id);
      if (it != live.by_id.end()) it->second->orphan(e.cache);
      e = TlsEntry{0, nullptr};
    }
  }
};
namespace {
thread_local ThreadExitHook tls_exit_hook;
}  // namespace

// ---- buckets ---------------------------------------------------------------------------------

size_t CachingAllocator::bucketIndex(size_t n) { return bucketIndexOf(n); }
size_t CachingAllocator::bucketSize(size_t index) { return bucketSizeOf(index); }

// ---- lifetime --------------------------------------------------------------------------------

CachingAllocator::CachingAllocator(CachingAllocatorOptions options)
    : options_(options),
      id_(nextAllocatorId()),
      pool_(kNumBuckets, nullptr),
      pool_counts_(kNumBuckets, 0) {
  for (size_t i = 0; i < kCachedBuckets; ++i)
    bucket_limits_[i] = bucketLimit(i, options_.thread_cache_bytes);
  auto& live = liveAllocators();
  std::lock_guard<std::mutex> lock(live.mutex);
  live.by_id[id_] = this;
}

CachingAllocator::~CachingAllocator() {
  {
    auto& live = liveAllocators();
    std::lock_guard<std::mutex> lock(live.mutex);
    live.by_id.erase(id_);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& cache : caches_) {
    for (size_t i = 0; i < kCachedBuckets; ++i) {
      for (Block* b = cache->lists[i]; b != nullptr;) {
        Block* next = b->next;
        systemFree(b, bucketSizeOf(i));
        b = next;
      }
    }
  }
  releasePoolLocked();
}

// ---- thread caches ---------------------------------------------------------------------------

inline CachingAllocator::ThreadCache* CachingAllocator::threadCache() {
  if (tls_entries[0].id == id_) return tls_entries[0].cache;
  return attachThreadCache();
}

CachingAllocator::ThreadCache* CachingAllocator::lookupThreadCache() {
  for (int i = 0; i < kTlsEntries; ++i) {
    if (tls_entries[i].id == id_) {
      const TlsEntry hit = tls_entries[i];
      for (int j = i; j > 0; --j) tls_entries[j] = tls_entries[j - 1];
      tls_entries[0] = hit;
      return hit.cache;
    }
  }
  return nullptr;
}

CachingAllocator::ThreadCache* CachingAllocator::attachThreadCache() {
  if (ThreadCache* cache = lookupThreadCache()) return cache;
  tls_exit_hook.armed = true;  // constructs the hook, so this thread's exit returns its caches
  const std::thread::id self = std::this_thread::get_id();
  ThreadCache* cache = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // This thread's cache if it was evicted from the TLS entries, else an orphan to reuse.
    for (auto& c : caches_)
      if (c->attached && c->thread == self) cache = c.get();
    if (cache == nullptr) {
      for (auto& c : caches_) {
        if (!c->attached) {
          cache = c.get();
          break;
        }
      }
    }
    if (cache == nullptr) {
      caches_.push_back(std::make_unique<ThreadCache>());
      cache = caches_.back().get();
    }
    cache->attached = true;
    cache->thread = self;
    cache->epoch_seen = trim_epoch_.load(std::memory_order_relaxed);
  }
  for (int j = kTlsEntries - 1; j > 0; --j) tls_entries[j] = tls_entries[j - 1];
  tls_entries[0] = TlsEntry{id_, cache};
  return cache;
}

void CachingAllocator::orphan(ThreadCache* cache) {
  flushThreadCache(cache);
  std::lock_guard<std::mutex> lock(mutex_);
  cache->attached = false;
}

void CachingAllocator::flushThreadCache(ThreadCache* cache) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (size_t i = 0; i < kCachedBuckets; ++i) {
    while (Block* b = cache->lists[i]) {
      cache->lists[i] = b->next;
      b->next = pool_[i];
      pool_[i] = b;
      ++pool_counts_[i];
      pool_cached_bytes_ += bucketSizeOf(i);
    }
    cache->counts[i] = 0;
  }
  cache->private_cached = 0;
  cache->cached.store(0, std::memory_order_relaxed);
  const uint64_t epoch = trim_epoch_.load(std::memory_order_relaxed);
  if (cache->epoch_seen != epoch) {
    cache->epoch_seen = epoch;
    releasePoolLocked();  // a trim was requested since this cache last looked
  }
}

void CachingAllocator::returnToPool(ThreadCache* cache, size_t index, size_t keep) {
  const size_t size = bucketSizeOf(index);
  std::lock_guard<std::mutex> lock(mutex_);
  while (cache->counts[index] > keep) {
    Block* b = cache->lists[index];
    cache->lists[index] = b->next;
    --cache->counts[index];
    b->next = pool_[index];
    pool_[index] = b;
    ++pool_counts_[index];
    pool_cached_bytes_ += size;
    cache->private_cached -= size;
  }
  cache->cached.store(cache->private_cached, std::memory_order_relaxed);
  samplePeakLocked();
}

// ---- pool and system -------------------------------------------------------------------------

uint64_t CachingAllocator::inUseLocked() const {
  int64_t total = static_cast<int64_t>(large_in_use_);
  for (const auto& c : caches_) {
    // remote_freed first: a remote free happens after its allocation, so `allocated` read later
    // already includes it and the difference cannot go transiently negative.
    const uint64_t remote = c->remote_freed.load(std::memory_order_acquire);
    const uint64_t allocated = c->allocated.load(std::memory_order_relaxed);
    const uint64_t freed = c->freed.load(std::memory_order_relaxed);
    total += static_cast<int64_t>(allocated - freed - remote);
  }
  return total > 0 ? static_cast<uint64_t>(total) : 0;
}

void CachingAllocator::samplePeakLocked() const {
  peak_sampled_ = std::max<uint64_t>(peak_sampled_, inUseLocked());
}

void CachingAllocator::releasePoolLocked() {
  for (size_t i = 0; i < kNumBuckets; ++i) {
    const size_t size = bucketSizeOf(i);
    while (Block* b = pool_[i]) {
      pool_[i] = b->next;
      systemFree(b, size);
      system_bytes_ -= size;
    }
    pool_counts_[i] = 0;
  }
  pool_cached_bytes_ = 0;
}

StatusOr<CachingAllocator::Block*> CachingAllocator::systemAllocate(
    size_t index, std::unique_lock<std::mutex>& lock) {
  (void)lock;  // held by the caller
  const size_t size = bucketSizeOf(index);
  const size_t limit = options_.memory_limit;
  if (limit != 0 && system_bytes_ + size > limit) {
    releasePoolLocked();
    trim_epoch_.fetch_add(1, std::memory_order_relaxed);  // other threads release theirs too
    if (system_bytes_ + size > limit)
      return outOfMemory("cpu: cannot allocate ", size, " bytes: the memory limit of ", limit,
                         " bytes is reached (", system_bytes_, " bytes held)");
  }
  void* base = systemAlloc(size);
  if (base == nullptr) {
    releasePoolLocked();  // give the system back what is cached, then try once more
    base = systemAlloc(size);
  }
  if (base == nullptr)
    return outOfMemory("cpu: the system cannot provide ", size, " bytes (", system_bytes_,
                       " bytes held by this allocator)");
  system_bytes_ += size;
  return static_cast<Block*>(base);
}

StatusOr<CachingAllocator::Block*> CachingAllocator::obtainBlock(size_t index, ThreadCache* cache) {
  std::unique_lock<std::mutex> lock(mutex_);
  const size_t size = bucketSizeOf(index);
  Block* block = pool_[index];
  if (block != nullptr) {
    pool_[index] = block->next;
    --pool_counts_[index];
    pool_cached_bytes_ -= size;
    if (cache != nullptr) {
      bump(cache->hits, 1);
      // Refill: move up to half the bucket's limit along, so the next misses stay local.
      const size_t batch = bucket_limits_[index] / 2;
      while (cache->counts[index] < batch && pool_[index] != nullptr) {
        Block* b = pool_[index];
        pool_[index] = b->next;
        --pool_counts_[index];
        pool_cached_bytes_ -= size;
        b->next = cache->lists[index];
        cache->lists[index] = b;
        ++cache->counts[index];
        cache->private_cached += size;
      }
      cache->cached.store(cache->private_cached, std::memory_order_relaxed);
    } else {
      ++large_hits_;
    }
  } else {
    RAL_ASSIGN_OR_RETURN(block, systemAllocate(index, lock));
  }
  if (cache == nullptr) {
    large_in_use_ += size;
    ++large_allocations_;
  }
  samplePeakLocked();
  return block;
}

// ---- allocate / deallocate -------------------------------------------------------------------

namespace {
// Error paths live out of line so the fast paths stay small.
[[gnu::noinline, gnu::cold]] Status badRequest(size_t bytes, size_t alignment) {
  if ((alignment & (alignment - 1)) != 0 || alignment > CachingAllocator::kMaxAlignment)
    return invalidArgument("cpu: alignment ", alignment, " is not a power of two up to ",
                           CachingAllocator::kMaxAlignment);
  return outOfMemory("cpu: cannot allocate ", bytes, " bytes (larger than any address space)");
}

[[gnu::noinline, gnu::cold]] Status badFree(const void* ptr, uint64_t magic, uint64_t freed) {
  if (magic == freed) return invalidArgument("cpu: deallocate(", ptr, "): already freed");
  return invalidArgument("cpu: deallocate(", ptr, "): not a pointer from this allocator");
}
}  // namespace

StatusOr<void*> CachingAllocator::allocate(size_t bytes, size_t alignment) {
  if (__builtin_expect(((alignment & (alignment - 1)) != 0) | (alignment > kMaxAlignment) |
                           (bytes > kMaxRequest),
                       0))
    return badRequest(bytes, alignment);
  if (alignment < kMinAlignment) alignment = kMinAlignment;
  const size_t index = bucketIndexOf(bytes + alignment);
  const size_t size = bucketSizeOf(index);
  Block* block;
  ThreadCache* cache = nullptr;
  if (index < kCachedBuckets) {
    cache = threadCache();
    if (cache->epoch_seen != trim_epoch_.load(std::memory_order_relaxed)) flushThreadCache(cache);
    block = cache->lists[index];
    if (block != nullptr) {
      cache->lists[index] = block->next;
      --cache->counts[index];
      cache->private_cached -= size;
      cache->cached.store(cache->private_cached, std::memory_order_relaxed);
      bump(cache->hits, 1);
    } else {
      RAL_ASSIGN_OR_RETURN(block, obtainBlock(index, cache));
    }
    bump(cache->allocated, size);
    bump(cache->allocations, 1);
    const uint64_t net = cache->allocated.load(std::memory_order_relaxed) -
                         cache->freed.load(std::memory_order_relaxed) -
                         cache->remote_freed.load(std::memory_order_relaxed);
    if (net > cache->peak.load(std::memory_order_relaxed) && net < (uint64_t{1} << 63))
      cache->peak.store(net, std::memory_order_relaxed);
  } else {
    RAL_ASSIGN_OR_RETURN(block, obtainBlock(index, nullptr));
  }
  const uintptr_t base = reinterpret_cast<uintptr_t>(block);
  const uintptr_t user = (base + kHeaderBytes + alignment - 1) & ~(uintptr_t{alignment} - 1);
  auto* header = reinterpret_cast<Header*>(user - kHeaderBytes);
  header->magic = kLiveMagic ^ user;
  header->base = block;
  header->allocator_id = id_;
  header->owner = cache;
  header->bucket = static_cast<uint32_t>(index);
  RAL_UNPOISON(reinterpret_cast<void*>(user), bytes);
  return reinterpret_cast<void*>(user);
}

Status CachingAllocator::deallocate(void* ptr) {
  if (ptr == nullptr) return Status();
  const uintptr_t user = reinterpret_cast<uintptr_t>(ptr);
  if (__builtin_expect(user % kMinAlignment != 0, 0)) return badFree(ptr, 0, 1);
  auto* header = reinterpret_cast<Header*>(user - kHeaderBytes);
  if (__builtin_expect(header->magic != (kLiveMagic ^ user), 0))
    return badFree(ptr, header->magic, kFreedMagic ^ user);
  if (__builtin_expect(header->allocator_id != id_, 0))
    return badFree(ptr, 0, 1).withContext("allocated by another CPU driver");
  const size_t index = header->bucket;
  const size_t size = bucketSizeOf(index);
  ThreadCache* owner = header->owner;
  Block* block = static_cast<Block*>(header->base);
  header->magic = kFreedMagic ^ user;
  RAL_POISON(ptr, reinterpret_cast<uintptr_t>(block) + size - user);

  if (index >= kCachedBuckets) {
    std::lock_guard<std::mutex> lock(mutex_);
    large_in_use_ -= size;
    block->next = pool_[index];
    pool_[index] = block;
    ++pool_counts_[index];
    pool_cached_bytes_ += size;
    return Status();
  }
  ThreadCache* cache = threadCache();
  if (owner == cache) {
    bump(cache->freed, size);
  } else {
    owner->remote_freed.fetch_add(size, std::memory_order_release);
  }
  block->next = cache->lists[index];
  cache->lists[index] = block;
  const uint32_t count = ++cache->counts[index];
  cache->private_cached += size;
  cache->cached.store(cache->private_cached, std::memory_order_relaxed);
  if (cache->epoch_seen != trim_epoch_.load(std::memory_order_relaxed)) {
    flushThreadCache(cache);
  } else if (count > bucket_limits_[index] || cache->private_cached > options_.thread_cache_bytes) {
    returnToPool(cache, index, count / 2);
  }
  return Status();
}

// ---- queries ---------------------------------------------------------------------------------

MemoryStats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  MemoryStats s;
  s.bytes_in_use = inUseLocked();
  s.bytes_cached = pool_cached_bytes_;
  s.allocations = large_allocations_;
  s.cache_hits = large_hits_;
  uint64_t peak = std::max<uint64_t>(peak_sampled_, s.bytes_in_use);
  for (const auto& c : caches_) {
    s.bytes_cached += c->cached.load(std::memory_order_relaxed);
    s.allocations += c->allocations.load(std::memory_order_relaxed);
    s.cache_hits += c->hits.load(std::memory_order_relaxed);
    peak = std::max<uint64_t>(peak, c->peak.load(std::memory_order_relaxed));
  }
  peak_sampled_ = peak;
  s.peak_bytes_in_use = peak;
  return s;
}

void CachingAllocator::trim() {
  trim_epoch_.fetch_add(1, std::memory_order_relaxed);
  if (ThreadCache* cache = lookupThreadCache()) {
    flushThreadCache(cache);  // also releases the pool
    return;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  releasePoolLocked();
}

StatusOr<size_t> CachingAllocator::usableSize(const void* ptr) const {
  const uintptr_t user = reinterpret_cast<uintptr_t>(ptr);
  if (ptr == nullptr || user % kMinAlignment != 0)
    return invalidArgument("cpu: not a pointer from this allocator");
  const auto* header = reinterpret_cast<const Header*>(user - kHeaderBytes);
  if (header->magic != (kLiveMagic ^ user) || header->allocator_id != id_)
    return invalidArgument("cpu: not a live pointer from this allocator");
  return bucketSizeOf(header->bucket) - (user - reinterpret_cast<uintptr_t>(header->base));
}

}  // namespace ral::cpu
