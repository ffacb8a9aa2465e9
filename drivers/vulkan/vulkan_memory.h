// VulkanMemory: the Vulkan driver's caching suballocator and its pointer scheme.
//
// Memory comes from chunks: one VkDeviceMemory bound to one VkBuffer (storage, transfer source
// and destination, device address). Small blocks (up to kMaxSmallBlock) are carved from shared
// 32 MiB chunks; larger ones get a chunk of their own. Freed blocks stay cached in size buckets
// (four per power of two, like the CPU allocator) and are handed out again; trim() gives unused
// chunks back.
//
// Pointers. The void* RAL hands out for a block is
//   - kHostVisible: the block's host address in the persistently mapped chunk, so host code
//     reads and writes it directly;
//   - kDevice: the block's buffer device address (vkGetBufferDeviceAddress + offset), which a
//     shader can also use directly through GL_EXT_buffer_reference.
// An ordered map of live blocks resolves any pointer inside a block (a MemRef's aligned + offset)
// back to (VkBuffer, offset); the chunk address ranges are checked never to overlap, so the
// resolution is unambiguous.
//
// Frees are stream-ordered: a block freed while queued work may still use it carries a UseFence
// and is only reused once the device has passed it.
#ifndef RAL_DRIVERS_VULKAN_VULKAN_MEMORY_H_
#define RAL_DRIVERS_VULKAN_VULKAN_MEMORY_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "drivers/common/size_classes.h"
#include "drivers/vulkan/timeline.h"
#include "drivers/vulkan/vulkan_device.h"
#include "ral/driver.h"
#include "ral/status.h"

namespace ral::vulkan {

// Where a pointer lies.
struct BufferRange {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;      // of the pointer in `buffer`
  size_t available = 0;         // bytes from the pointer to the end of its allocation
  void* host = nullptr;         // host address of the pointer when mapped, else null
  VkDeviceAddress address = 0;  // device address of the pointer
  MemoryKind kind = MemoryKind::kDevice;
};

class VulkanMemory {
 public:
  static constexpr size_t kChunkBytes = size_t{32} << 20;
  static constexpr size_t kMaxSmallBlock = size_t{2} << 20;
  static constexpr size_t kMinBlock = 256;
  // drivers/common/size_classes.h, from kMinBlock.
  using Buckets = drivers::SizeClasses<8>;
  static_assert(Buckets::kMin == kMinBlock);
  static constexpr size_t kMaxAlignment = size_t{1} << 16;

  explicit VulkanMemory(std::shared_ptr<VulkanDevice> device);
  ~VulkanMemory();
  VulkanMemory(const VulkanMemory&) = delete;
  VulkanMemory& operator=(const VulkanMemory&) = delete;

  // `alignment`: a power of two up to kMaxAlignment; blocks are at least aligned to the device's
  // storage-buffer offset alignment and 256 bytes. Zero bytes give a unique pointer.
  StatusOr<void*> allocate(size_t bytes, size_t alignment, MemoryKind kind);
  // The block becomes reusable once `fence` is reached. InvalidArgument for a pointer that is not
  // the start of a live block.
  Status deallocate(void* ptr, UseFence fence);
  // NotFound when `ptr` is not inside a live block (e.g. ordinary host memory); OutOfRange when
  // [ptr, ptr + bytes) runs past the end of its block.
  StatusOr<BufferRange> resolve(const void* ptr, size_t bytes) const;
  bool owns(const void* ptr) const;

  MemoryStats stats() const;
  // Releases cached blocks whose fences are reached and every chunk left without live blocks.
  void trim();

 private:
  struct Chunk;
  struct Block {
    Chunk* chunk;
    size_t offset;
    size_t size;       // bucket size
    size_t requested;  // what the caller asked for
    size_t bucket;
    uintptr_t pointer;
  };
  struct Pending {
    Block* block;
    UseFence fence;
  };

  StatusOr<Block*> obtain(size_t bucket, size_t alignment, MemoryKind kind);
  StatusOr<Chunk*> newChunk(size_t bytes, MemoryKind kind, bool dedicated);
  void destroyChunk(Chunk* chunk);
  void collectPending(bool wait);
  void releaseUnusedLocked();
  static size_t bucketIndex(size_t bytes);
  static size_t bucketSize(size_t index);

  std::shared_ptr<VulkanDevice> device_;
  const size_t min_alignment_;

  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Chunk>> chunks_;
  Chunk* current_[2] = {nullptr, nullptr};    // bump chunk per MemoryKind
  std::map<uintptr_t, Chunk*> chunk_ranges_;  // pointer base → chunk
  std::map<uintptr_t, Block*> live_;          // block pointer → block
  std::vector<std::vector<Block*>> free_[2];  // per kind, per bucket
  std::deque<Pending> pending_;
  size_t in_use_ = 0, cached_ = 0, peak_ = 0;
  uint64_t allocations_ = 0, hits_ = 0;
};

}  // namespace ral::vulkan

#endif  // RAL_DRIVERS_VULKAN_VULKAN_MEMORY_H_
