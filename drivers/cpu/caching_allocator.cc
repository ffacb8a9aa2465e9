// The out-of-line half of CachingAllocator: thread-cache attachment, the shared pool, the system,
// errors and statistics. The inline fast paths are in the header.
#include "drivers/cpu/caching_allocator.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

namespace ral::cpu {

using namespace alloc_detail;

namespace {

constexpr size_t kMaxRequest = size_t{1} << 46;  // beyond any machine's address space
constexpr size_t kMmapThreshold = size_t{256} << 10;
constexpr size_t kNumBuckets = 1 + (48 - 7) * 4;
static_assert(bucketIndexOf(CachingAllocator::kThreadCacheMaxBlock) == kCachedBuckets - 1,
              "the largest cached bucket holds exactly kThreadCacheMaxBlock");

uint64_t nextAllocatorId() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

struct LiveAllocators {
  std::mutex mutex;
  std::unordered_map<uint64_t, CachingAllocator*> by_id;
};
LiveAllocators& liveAllocators() {
  static LiveAllocators* live = new LiveAllocators();  // outlives every thread's exit hook
  return *live;
}

// Per bucket: how many free blocks a thread keeps, an eighth of its cache budget's worth.
uint32_t bucketLimit(size_t index, size_t thread_cache_bytes) {
  const size_t by_bytes = thread_cache_bytes / 8 / bucketSizeOf(index);
  return static_cast<uint32_t>(std::clamp<size_t>(by_bytes, 2, kSlotsPerBucket));
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
  unpoison(base, bytes);
  if (bytes >= kMmapThreshold) {
    munmap(base, bytes);
  } else {
    std::free(base);
  }
}

// Error paths live out of line and cold.
[[gnu::noinline, gnu::cold]] Status badRequest(size_t bytes, size_t alignment) {
  if ((alignment & (alignment - 1)) != 0 || alignment > CachingAllocator::kMaxAlignment)
    return invalidArgument("cpu: alignment ", alignment, " is not a power of two up to ",
                           CachingAllocator::kMaxAlignment);
  return outOfMemory("cpu: cannot allocate ", bytes, " bytes (larger than any address space)");
}

[[gnu::noinline, gnu::cold]] Status badFree(const void* ptr, bool freed) {
  if (freed) return invalidArgument("cpu: deallocate(", ptr, "): already freed");
  return invalidArgument("cpu: deallocate(", ptr, "): not a pointer from this allocator");
}

}  // namespace

__thread TlsEntry alloc_detail::tls_entries[kTlsEntries] __attribute__((tls_model("initial-exec")));

// Returns an exiting thread's caches to their allocators.
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

// ---- lifetime --------------------------------------------------------------------------------

CachingAllocator::CachingAllocator(CachingAllocatorOptions options)
    : options_(options), id_(nextAllocatorId()), pool_(kNumBuckets, nullptr) {
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
    for (size_t i = 0; i < kCachedBuckets; ++i)
      for (uint32_t k = 0; k < cache->counts[i]; ++k)
        systemFree(cache->slots[i][k], bucketSizeOf(i));
  }
  releasePoolLocked();
}

// ---- thread caches ---------------------------------------------------------------------------

CachingAllocator::ThreadCache* CachingAllocator::threadCache() {
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

// ---- pool and system -------------------------------------------------------------------------

void CachingAllocator::pushPoolLocked(BlockHeader* block, size_t index) {
  block->next = pool_[index];
  pool_[index] = block;
  pool_cached_bytes_ += bucketSizeOf(index);
}

void CachingAllocator::flushThreadCache(ThreadCache* cache) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (size_t i = 0; i < kCachedBuckets; ++i) {
    for (uint32_t k = 0; k < cache->counts[i]; ++k) pushPoolLocked(cache->slots[i][k], i);
    cache->counts[i] = 0;
  }
  cache->held.store(cache->in_use.load(std::memory_order_relaxed), std::memory_order_relaxed);
  const uint64_t epoch = trim_epoch_.load(std::memory_order_relaxed);
  if (cache->epoch_seen != epoch) {
    cache->epoch_seen = epoch;
    releasePoolLocked();  // a trim was requested since this cache last looked
  }
}

// Moves the oldest of a bucket's cached blocks to the pool, keeping the `keep` newest (the ones
// most likely still in the CPU's caches).
void CachingAllocator::returnToPool(ThreadCache* cache, size_t index, uint32_t keep) {
  const uint32_t n = cache->counts[index];
  if (n <= keep) return;
  const uint32_t moved = n - keep;
  BlockHeader** slots = cache->slots[index];
  std::lock_guard<std::mutex> lock(mutex_);
  for (uint32_t k = 0; k < moved; ++k) pushPoolLocked(slots[k], index);
  std::memmove(slots, slots + moved, keep * sizeof(BlockHeader*));
  cache->counts[index] = keep;
  addOwned(cache->held, -static_cast<int64_t>(moved * bucketSizeOf(index)));
  samplePeakLocked();
}

uint64_t CachingAllocator::inUseLocked() const {
  int64_t total = static_cast<int64_t>(large_in_use_);
  for (const auto& c : caches_) {
    // remote_freed first: a remote free happens after its allocation, so `in_use` read later
    // already includes it and the difference cannot go transiently negative.
    const int64_t remote = c->remote_freed.load(std::memory_order_acquire);
    total += c->in_use.load(std::memory_order_relaxed) - remote;
  }
  return total > 0 ? static_cast<uint64_t>(total) : 0;
}

void CachingAllocator::samplePeakLocked() const {
  peak_sampled_ = std::max<uint64_t>(peak_sampled_, inUseLocked());
}

void CachingAllocator::releasePoolLocked() {
  for (size_t i = 0; i < kNumBuckets; ++i) {
    const size_t size = bucketSizeOf(i);
    while (BlockHeader* b = pool_[i]) {
      pool_[i] = b->next;
      systemFree(b, size);
      system_bytes_ -= size;
    }
  }
  pool_cached_bytes_ = 0;
}

// With the mutex held. The block's own header is written here, once for its lifetime.
StatusOr<CachingAllocator::BlockHeader*> CachingAllocator::systemAllocate(size_t index) {
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
  auto* block = static_cast<BlockHeader*>(base);
  *block = BlockHeader{};
  block->magic = kFreedMagic ^ (reinterpret_cast<uintptr_t>(block) + kHeaderBytes);
  block->base = block;
  block->allocator_id = id_;
  block->bucket = static_cast<uint32_t>(index);
  return block;
}

// A cached bucket's stack is empty: take a block from the pool, with up to half the bucket's
// limit more so the next allocations stay local, or else one from the system.
StatusOr<CachingAllocator::BlockHeader*> CachingAllocator::refill(size_t index,
                                                                  ThreadCache* cache) {
  const int64_t size = static_cast<int64_t>(bucketSizeOf(index));
  std::lock_guard<std::mutex> lock(mutex_);
  BlockHeader* block = pool_[index];
  if (block == nullptr) {
    RAL_ASSIGN_OR_RETURN(block, systemAllocate(index));
    ++cache->system_allocations;
    addOwned(cache->held, size);
    return block;
  }
  pool_[index] = block->next;
  pool_cached_bytes_ -= size;
  uint32_t n = cache->counts[index];
  int64_t taken = size;
  const uint32_t batch = bucket_limits_[index] / 2;
  while (n < batch && pool_[index] != nullptr) {
    BlockHeader* b = pool_[index];
    pool_[index] = b->next;
    pool_cached_bytes_ -= size;
    cache->slots[index][n++] = b;
    taken += size;
  }
  cache->counts[index] = n;
  addOwned(cache->held, taken);
  return block;
}

StatusOr<CachingAllocator::BlockHeader*> CachingAllocator::obtainLarge(size_t index) {
  std::lock_guard<std::mutex> lock(mutex_);
  BlockHeader* block = pool_[index];
  if (block != nullptr) {
    pool_[index] = block->next;
    pool_cached_bytes_ -= bucketSizeOf(index);
    ++large_hits_;
  } else {
    RAL_ASSIGN_OR_RETURN(block, systemAllocate(index));
  }
  large_in_use_ += bucketSizeOf(index);
  ++large_allocations_;
  samplePeakLocked();
  return block;
}

// ---- allocate / deallocate: the general paths ------------------------------------------------

void* CachingAllocator::place(BlockHeader* block, ThreadCache* cache, size_t bytes,
                              size_t alignment) {
  const uintptr_t base = reinterpret_cast<uintptr_t>(block);
  const uintptr_t user = (base + kHeaderBytes + alignment - 1) & ~(uintptr_t{alignment} - 1);
  auto* header = reinterpret_cast<BlockHeader*>(user - kHeaderBytes);
  if (header != block) {
    // A second header right before the pointer; the block's own header stays as it is.
    unpoison(header, kHeaderBytes);
    *header = *block;
  }
  header->magic = kLiveMagic ^ user;
  header->owner = cache;
  block->owner = cache;
  unpoisonUser(header, reinterpret_cast<void*>(user), bytes);
  return reinterpret_cast<void*>(user);
}

StatusOr<void*> CachingAllocator::allocateSlow(size_t bytes, size_t alignment) {
  if (__builtin_expect(((alignment & (alignment - 1)) != 0) | (alignment > kMaxAlignment) |
                           (bytes > kMaxRequest),
                       0))
    return badRequest(bytes, alignment);
  if (alignment < kMinAlignment) alignment = kMinAlignment;
  const size_t index = bucketIndexOf(bytes + alignment);
  if (index >= kCachedBuckets) {
    RAL_ASSIGN_OR_RETURN(BlockHeader * block, obtainLarge(index));
    return place(block, nullptr, bytes, alignment);
  }
  ThreadCache* cache = threadCache();
  if (cache->epoch_seen != trim_epoch_.load(std::memory_order_relaxed)) flushThreadCache(cache);
  BlockHeader* block;
  if (const uint32_t n = cache->counts[index]; n != 0) {
    block = cache->slots[index][n - 1];
    cache->counts[index] = n - 1;
  } else {
    RAL_ASSIGN_OR_RETURN(block, refill(index, cache));
  }
  accountAllocation(cache, static_cast<int64_t>(bucketSizeOf(index)));
  return place(block, cache, bytes, alignment);
}

Status CachingAllocator::deallocateSlow(void* ptr) {
  if (ptr == nullptr) return Status();
  const uintptr_t user = reinterpret_cast<uintptr_t>(ptr);
  if (user % kMinAlignment != 0) return badFree(ptr, false);
  auto* header = reinterpret_cast<BlockHeader*>(user - kHeaderBytes);
  if (header->magic != (kLiveMagic ^ user))
    return badFree(ptr, header->magic == (kFreedMagic ^ user));
  if (header->allocator_id != id_)
    return badFree(ptr, false).withContext("allocated by another CPU driver");
  const size_t index = header->bucket;
  const size_t size = bucketSizeOf(index);
  ThreadCache* owner = header->owner;
  BlockHeader* block = header->base;
  header->magic = kFreedMagic ^ user;
  poison(ptr, reinterpret_cast<uintptr_t>(block) + size - user);

  if (index >= kCachedBuckets) {
    std::lock_guard<std::mutex> lock(mutex_);
    large_in_use_ -= size;
    pushPoolLocked(block, index);
    return Status();
  }
  ThreadCache* cache = threadCache();
  if (owner == cache) {
    addOwned(cache->in_use, -static_cast<int64_t>(size));
  } else {
    // Another thread's block: it leaves that thread's accounting and joins this cache.
    owner->remote_freed.fetch_add(static_cast<int64_t>(size), std::memory_order_release);
    addOwned(cache->held, static_cast<int64_t>(size));
  }
  if (cache->counts[index] >= bucket_limits_[index])
    returnToPool(cache, index, cache->counts[index] / 2);
  cache->slots[index][cache->counts[index]++] = block;
  if (cache->epoch_seen != trim_epoch_.load(std::memory_order_relaxed)) {
    flushThreadCache(cache);
  } else if (cache->held.load(std::memory_order_relaxed) -
                 cache->in_use.load(std::memory_order_relaxed) >
             static_cast<int64_t>(options_.thread_cache_bytes)) {
    returnToPool(cache, index, cache->counts[index] / 2);
    if (cache->held.load(std::memory_order_relaxed) -
            cache->in_use.load(std::memory_order_relaxed) >
        static_cast<int64_t>(options_.thread_cache_bytes))
      flushThreadCache(cache);
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
    const int64_t cached =
        c->held.load(std::memory_order_relaxed) - c->in_use.load(std::memory_order_relaxed);
    s.bytes_cached += static_cast<size_t>(std::max<int64_t>(cached, 0));
    const uint64_t allocations =
        static_cast<uint64_t>(c->allocations.load(std::memory_order_relaxed));
    s.allocations += allocations;
    // An allocation is counted just after its refill, so a reader in between sees one less.
    s.cache_hits += allocations > c->system_allocations ? allocations - c->system_allocations : 0;
    peak = std::max<uint64_t>(peak, static_cast<uint64_t>(c->peak.load(std::memory_order_relaxed)));
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
  const auto* header = reinterpret_cast<const BlockHeader*>(user - kHeaderBytes);
  if (header->magic != (kLiveMagic ^ user) || header->allocator_id != id_)
    return invalidArgument("cpu: not a live pointer from this allocator");
#if defined(__SANITIZE_ADDRESS__)
  return static_cast<size_t>(header->requested);
#else
  return bucketSizeOf(header->bucket) - (user - reinterpret_cast<uintptr_t>(header->base));
#endif
}

}  // namespace ral::cpu
