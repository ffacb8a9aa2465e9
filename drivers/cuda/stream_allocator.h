// StreamOrderedAllocator: the CUDA driver's caching allocator.
//
// Freed blocks are cached in size buckets (four per power of two, at least 512 bytes) per memory
// kind and per stream. Reuse is stream-ordered: a block freed on stream S goes straight back to
// S's cache, and the next allocation on S may take it at once, because everything S does with the
// new owner runs after everything it did with the old one. A block also used on other streams
// (recordUse) gets an event recorded on each of them when it is freed, and becomes reusable once
// those events completed; so does a host-visible block on its own stream, since the host writes
// those outside stream order (a new owner's host writes must not overtake the old owner's
// kernels). Nothing here synchronizes on the fast path; trim() (and an allocation
// that fails for lack of memory) first waits for the device, then returns cached blocks.
#ifndef RAL_DRIVERS_CUDA_STREAM_ALLOCATOR_H_
#define RAL_DRIVERS_CUDA_STREAM_ALLOCATOR_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "drivers/common/size_classes.h"
#include "drivers/cuda/event_backend.h"
#include "drivers/cuda/event_pool.h"
#include "ral/driver.h"
#include "ral/status.h"

namespace ral::cuda {

// Raw device memory (cuMemAlloc / cuMemHostAlloc in the driver; malloc in tests).
class MemoryBackend {
 public:
  virtual ~MemoryBackend();
  virtual StatusOr<void*> allocate(size_t bytes, MemoryKind kind) = 0;
  virtual void free(void* ptr, MemoryKind kind) = 0;
  // Waits until the device finished all queued work (before memory goes back to the system).
  virtual Status synchronizeDevice() = 0;
};

class StreamOrderedAllocator {
 public:
  static constexpr size_t kMinBlock = 512;
  static_assert(drivers::SizeClasses<9>::kMin == kMinBlock);
  static constexpr size_t kMaxAlignment = 256;  // what cuMemAlloc guarantees

  StreamOrderedAllocator(MemoryBackend* memory, EventPool* events)
      : memory_(memory), events_(events) {}
  ~StreamOrderedAllocator();
  StreamOrderedAllocator(const StreamOrderedAllocator&) = delete;
  StreamOrderedAllocator& operator=(const StreamOrderedAllocator&) = delete;

  // Zero bytes give a valid, unique pointer. `alignment` is a power of two up to 256.
  StatusOr<void*> allocate(size_t bytes, size_t alignment, MemoryKind kind, BackendStream stream);
  // OK for nullptr; InvalidArgument for a pointer this allocator does not own (or freed twice).
  Status deallocate(void* ptr);
  // `ptr` is also used by work queued on `stream`: its reuse waits for that work.
  Status recordUse(void* ptr, BackendStream stream);
  MemoryStats stats() const;
  // Waits for the device, then returns every cached block to the system.
  Status trim();
  // Releases everything, live blocks included (the owner is going away).
  void releaseAll();
  // Bucket size for a request, exposed for tests.
  static size_t bucketSize(size_t bytes);

 private:
  struct Block {
    void* ptr = nullptr;
    size_t size = 0;
    MemoryKind kind = MemoryKind::kDevice;
    BackendStream stream = nullptr;
    std::vector<BackendStream> other_streams;
    std::vector<GpuEvent*> pending;  // recorded at free on other_streams
    bool live = false;
  };
  using CacheKey = std::pair<BackendStream, std::pair<int, size_t>>;  // stream, kind, size

  void collectReadyLocked();
  Status trimLocked(std::unique_lock<std::mutex>& lock);

  MemoryBackend* const memory_;
  EventPool* const events_;
  mutable std::mutex mutex_;
  std::unordered_map<void*, Block> blocks_;
  std::map<CacheKey, std::vector<void*>> cache_;
  std::vector<void*> waiting_;  // freed, with events still pending
  MemoryStats stats_;
};

}  // namespace ral::cuda

#endif  // RAL_DRIVERS_CUDA_STREAM_ALLOCATOR_H_
