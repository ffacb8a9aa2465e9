// TorchAllocator: memory from a c10::Allocator (torch's CPU allocator, or the CUDA caching
// allocator of one device) handed out as raw pointers, so that RAL's driver interface and the
// modules' ral_alloc use torch's memory, and turned back into a c10::DataPtr when a buffer becomes
// a tensor's storage (no copy). Thread-safe.
//
// On the CPU, buffers of at least kMinCachedBytes that a module frees (its temporaries) are kept
// for the next allocation of the same size: torch's CPU allocator is glibc's malloc, which maps
// and unmaps large blocks on every call, and the page faults of fresh pages cost more than a
// model's arithmetic. The cache holds up to kMaxCachedBytes or, when larger, what reusing by size
// needs: the sum over sizes of size x the most buffers of that size ever live at once, capped at
// twice the most bytes ever live (so a model's whole working set is reused call after call, and a
// model run at many shapes does not hoard one set per shape). The CUDA caching allocator needs no
// such help.
#ifndef RAL_CONTEXTS_TORCH_TORCH_ALLOCATOR_H_
#define RAL_CONTEXTS_TORCH_TORCH_ALLOCATOR_H_

#include <c10/core/Allocator.h>
#include <c10/core/Device.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <unordered_map>

#include "ral/driver.h"
#include "ral/host_execution_context.h"
#include "ral/status.h"

namespace ral::torch_host {

class TorchAllocator final : public BufferAllocator {
 public:
  TorchAllocator(c10::Allocator* allocator, c10::Device device);
  TorchAllocator(const TorchAllocator&) = delete;
  TorchAllocator& operator=(const TorchAllocator&) = delete;
  ~TorchAllocator() override;

  c10::Device device() const { return device_; }
  c10::Allocator* torchAllocator() const { return allocator_; }

  // At least one byte; `alignment` a power of two. OutOfMemory when torch cannot allocate.
  StatusOr<void*> allocate(size_t bytes, size_t alignment = 64) override;
  // OK for nullptr.
  Status deallocate(void* ptr) override;
  // Hands ownership of a live pointer to a DataPtr (the storage of an output tensor); the
  // allocator forgets it. The DataPtr's get() lies below `ptr` for an over-aligned allocation.
  c10::DataPtr release(void* ptr);

  MemoryStats stats() const;

  static constexpr size_t kMinCachedBytes = 64 << 10;
  static constexpr size_t kMaxCachedBytes = 256 << 20;

 private:
  // Frees every cached buffer. Called with mutex_ held.
  void trimLocked();
  // Counts a cacheable buffer handed out or given back. Called with mutex_ held.
  void addLiveLocked(size_t bytes);
  void removeLiveLocked(size_t bytes);
  // The cache's cap (see above). Called with mutex_ held.
  size_t cacheCapLocked() const;

  c10::Allocator* allocator_;
  c10::Device device_;
  c10::DeleterFnPtr raw_deleter_;
  std::atomic<uint64_t> allocations_{0};
  std::atomic<int64_t> live_{0};
  // Allocations the raw interface cannot free by pointer (over-aligned, or an allocator whose
  // DataPtr context is not the data): kept by the pointer handed out.
  mutable std::mutex mutex_;
  std::unordered_map<void*, c10::DataPtr> held_;
  std::atomic<size_t> held_count_{0};
  // The CPU cache: sizes of live cacheable buffers, and freed ones by size.
  const bool caching_;
  std::unordered_map<void*, size_t> cacheable_;
  std::multimap<size_t, void*> cached_;
  size_t cached_bytes_ = 0;
  size_t live_bytes_ = 0;       // cacheable buffers handed out and not freed
  size_t peak_live_bytes_ = 0;  // the most live_bytes_ has been
  struct SizeUse {
    size_t live = 0;  // buffers of this size handed out and not freed
    size_t peak = 0;  // the most `live` has been
  };
  std::unordered_map<size_t, SizeUse> uses_;
  size_t reuse_bytes_ = 0;  // sum over uses_ of size x peak
};

}  // namespace ral::torch_host

#endif  // RAL_CONTEXTS_TORCH_TORCH_ALLOCATOR_H_
