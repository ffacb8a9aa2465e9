// BlockPool: a suballocator over fixed-size blocks of one backing memory pool. Backing
// allocations are expensive (system calls, page-table updates), so they happen in whole blocks
// (the pool's allocation granule or a multiple) and are kept for reuse until trim():
//  - small requests (up to block_size / 8) are slots of a power-of-two size class carved from
//    shared blocks; a block whose slots are all free again returns to the free-block cache and
//    may serve any class later;
//  - large requests are rounded up to whole blocks and allocated dedicated; freed, they are
//    cached by block count and reused for a request of the same count.
// When the backing allocator is out of memory the pool trims its cache and tries once more.
//
// The pool owns every backing allocation it made and frees all of them when destroyed (live or
// not). It knows nothing about devices: the backing allocator is two functions, so the pool is
// unit-tested on host memory. Every member function is thread-safe (one mutex).
#ifndef RAL_DRIVERS_HSA_BLOCK_POOL_H_
#define RAL_DRIVERS_HSA_BLOCK_POOL_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ral/driver.h"
#include "ral/status.h"

namespace ral::hsa {

class BlockPool {
 public:
  // `allocate(bytes)` returns memory aligned to at least kMaxAlignment (OutOfMemory when there is
  // none left); `release(ptr, bytes)` gives it back.
  using AllocateFn = std::function<StatusOr<void*>(size_t bytes)>;
  using ReleaseFn = std::function<void(void* ptr, size_t bytes)>;
  static constexpr size_t kMaxAlignment = 4096;
  static constexpr size_t kMinSlot = 256;

  // `name` appears in error messages ("hsa device memory"); `block_size` is a power of two >=
  // 4 * kMinSlot.
  BlockPool(std::string name, size_t block_size, AllocateFn allocate, ReleaseFn release);
  ~BlockPool();
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;

  // `bytes` may be 0 (a unique slot is still returned); `alignment` a power of two up to
  // kMaxAlignment.
  StatusOr<void*> allocate(size_t bytes, size_t alignment = 64);
  // InvalidArgument for a pointer this pool did not hand out (or handed out and got back).
  Status deallocate(void* ptr);
  // Whether [ptr, ptr + bytes) lies inside one live allocation of this pool.
  bool contains(const void* ptr, size_t bytes) const;
  // Returns every cached block (free slots' blocks and free large allocations) to the backing.
  void trim();
  // bytes_in_use counts what live allocations hold (slot or whole-block sizes); bytes_cached
  // what the pool holds from the backing beyond that.
  MemoryStats stats() const;
  size_t blockSize() const { return block_size_; }

 private:
  struct SmallBlock {
    char* base = nullptr;
    size_t slot = 0;
    std::vector<uint32_t> free_slots;
    uint32_t used = 0;
  };
  struct Live {
    size_t held = 0;
    SmallBlock* block = nullptr;  // small allocations
    uint32_t slot_index = 0;
    size_t blocks = 0;  // large allocations: whole blocks
  };

  StatusOr<void*> backingAllocate(size_t bytes, bool* hit_cache);
  StatusOr<void*> allocateSmall(size_t slot, bool* hit);
  StatusOr<void*> allocateLarge(size_t blocks, bool* hit);
  void trimLocked();

  const std::string name_;
  const size_t block_size_;
  const size_t small_limit_;
  const AllocateFn allocate_;
  const ReleaseFn release_;

  mutable std::mutex mutex_;
  std::map<size_t, std::vector<SmallBlock*>> partial_;  // by slot size: blocks with a free slot
  std::vector<std::unique_ptr<SmallBlock>> small_blocks_;
  std::vector<char*> free_blocks_;           // whole free blocks, any class
  std::multimap<size_t, char*> free_large_;  // by block count
  std::map<uintptr_t, Live> live_;
  size_t backing_bytes_ = 0;
  MemoryStats stats_;
};

}  // namespace ral::hsa

#endif  // RAL_DRIVERS_HSA_BLOCK_POOL_H_
