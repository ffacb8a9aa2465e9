#include "drivers/vulkan/vulkan_memory.h"

#include <algorithm>

namespace ral::vulkan {
namespace {

constexpr size_t kNumBuckets = 1 + 4 * 56;

int kindIndex(MemoryKind kind) { return kind == MemoryKind::kHostVisible ? 1 : 0; }

bool isPowerOfTwo(size_t v) { return v != 0 && (v & (v - 1)) == 0; }

}  // namespace

struct VulkanMemory::Chunk {
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceAddress address = 0;
  void* mapped = nullptr;
  size_t size = 0;
  MemoryKind kind = MemoryKind::kDevice;
  uintptr_t base = 0;  // the pointer value of offset 0
  size_t bump = 0;
  size_t live = 0;     // blocks handed out
  size_t pending = 0;  // blocks freed but not yet reusable
  bool dedicated = false;
  std::vector<std::unique_ptr<Block>> blocks;
};

size_t VulkanMemory::bucketIndex(size_t bytes) { return Buckets::index(bytes); }

size_t VulkanMemory::bucketSize(size_t index) { return Buckets::size(index); }

VulkanMemory::VulkanMemory(std::shared_ptr<VulkanDevice> device)
    : device_(std::move(device)),
      min_alignment_(std::max<size_t>(
          {kMinBlock, static_cast<size_t>(device_->limits().minStorageBufferOffsetAlignment),
           static_cast<size_t>(device_->limits().nonCoherentAtomSize)})) {
  for (auto& lists : free_) lists.resize(kNumBuckets);
}

VulkanMemory::~VulkanMemory() {
  for (auto& chunk : chunks_) destroyChunk(chunk.get());
}

StatusOr<VulkanMemory::Chunk*> VulkanMemory::newChunk(size_t bytes, MemoryKind kind,
                                                      bool dedicated) {
  const auto& api = device_->api();
  VkDevice dev = device_->device();
  auto chunk = std::make_unique<Chunk>();
  chunk->size = bytes;
  chunk->kind = kind;
  chunk->dedicated = dedicated;
  auto fail = [&](VkResult r, const char* what) {
    destroyChunk(chunk.get());
    return vkStatus(r, what).withContext(internal::strCat("allocating ", bytes, " bytes"));
  };

  VkBufferCreateInfo binfo{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  binfo.size = bytes;
  binfo.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
  binfo.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkResult r = api.vkCreateBuffer(dev, &binfo, nullptr, &chunk->buffer);
  if (r != VK_SUCCESS) return fail(r, "vkCreateBuffer");
  VkMemoryRequirements req;
  api.vkGetBufferMemoryRequirements(dev, chunk->buffer, &req);
  const uint32_t type =
      kind == MemoryKind::kHostVisible ? device_->hostMemoryType() : device_->deviceMemoryType();
  if (!(req.memoryTypeBits & (1u << type)))
    return fail(VK_ERROR_FEATURE_NOT_PRESENT, "the chosen memory type cannot back storage buffers");
  VkMemoryAllocateFlagsInfo flags{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
  flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
  VkMemoryAllocateInfo ainfo{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ainfo.pNext = &flags;
  ainfo.allocationSize = req.size;
  ainfo.memoryTypeIndex = type;
  r = api.vkAllocateMemory(dev, &ainfo, nullptr, &chunk->memory);
  if (r != VK_SUCCESS) {
    chunk->memory = VK_NULL_HANDLE;
    return fail(r, "vkAllocateMemory");
  }
  r = api.vkBindBufferMemory(dev, chunk->buffer, chunk->memory, 0);
  if (r != VK_SUCCESS) return fail(r, "vkBindBufferMemory");
  // Map whatever is host-visible (on unified-memory devices such as llvmpipe that is device
  // memory too): host copies then skip the queue.
  const bool host_visible =
      kind == MemoryKind::kHostVisible || device_->deviceMemoryIsHostVisible();
  if (host_visible) {
    r = api.vkMapMemory(dev, chunk->memory, 0, VK_WHOLE_SIZE, 0, &chunk->mapped);
    if (r != VK_SUCCESS) {
      chunk->mapped = nullptr;
      return fail(r, "vkMapMemory");
    }
  }
  VkBufferDeviceAddressInfo dinfo{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
  dinfo.buffer = chunk->buffer;
  chunk->address = api.vkGetBufferDeviceAddress(dev, &dinfo);
  chunk->base = kind == MemoryKind::kHostVisible ? reinterpret_cast<uintptr_t>(chunk->mapped)
                                                 : static_cast<uintptr_t>(chunk->address);
  if (chunk->base == 0) return fail(VK_ERROR_UNKNOWN, "a chunk has a null address");

  // Pointer values of different chunks must never overlap, or resolve() would be ambiguous.
  auto next = chunk_ranges_.lower_bound(chunk->base);
  const bool overlaps_next = next != chunk_ranges_.end() && next->first < chunk->base + bytes;
  bool overlaps_prev = false;
  if (next != chunk_ranges_.begin()) {
    auto prev = std::prev(next);
    overlaps_prev = prev->first + prev->second->size > chunk->base;
  }
  if (overlaps_next || overlaps_prev)
    return fail(VK_ERROR_UNKNOWN, "a chunk's addresses overlap another chunk's");
  chunk_ranges_[chunk->base] = chunk.get();
  chunks_.push_back(std::move(chunk));
  return chunks_.back().get();
}

void VulkanMemory::destroyChunk(Chunk* chunk) {
  const auto& api = device_->api();
  VkDevice dev = device_->device();
  if (chunk->mapped != nullptr) api.vkUnmapMemory(dev, chunk->memory);
  if (chunk->buffer != VK_NULL_HANDLE) api.vkDestroyBuffer(dev, chunk->buffer, nullptr);
  if (chunk->memory != VK_NULL_HANDLE) api.vkFreeMemory(dev, chunk->memory, nullptr);
  chunk->mapped = nullptr;
  chunk->buffer = VK_NULL_HANDLE;
  chunk->memory = VK_NULL_HANDLE;
}

StatusOr<VulkanMemory::Block*> VulkanMemory::obtain(size_t bucket, size_t alignment,
                                                    MemoryKind kind) {
  auto& list = free_[kindIndex(kind)][bucket];
  for (size_t i = list.size(); i-- > 0;) {
    Block* b = list[i];
    if (b->pointer % alignment != 0) continue;
    list.erase(list.begin() + static_cast<std::ptrdiff_t>(i));
    ++hits_;
    cached_ -= b->size;
    return b;
  }
  const size_t size = bucketSize(bucket);
  Chunk* chunk = nullptr;
  size_t offset = 0;
  if (size > kMaxSmallBlock) {
    // A chunk of its own, with room to align the pointer when the base is not aligned enough.
    const size_t slack = alignment > min_alignment_ ? alignment : 0;
    RAL_ASSIGN_OR_RETURN(chunk, newChunk(size + slack, kind, /*dedicated=*/true));
    while ((chunk->base + offset) % alignment != 0) offset += min_alignment_;
    chunk->bump = chunk->size;
  } else {
    auto fits = [&](Chunk* c, size_t* at) {
      if (c == nullptr) return false;
      size_t o = (c->bump + min_alignment_ - 1) / min_alignment_ * min_alignment_;
      while (o + size <= c->size && (c->base + o) % alignment != 0) o += min_alignment_;
      if (o + size > c->size) return false;
      *at = o;
      return true;
    };
    chunk = current_[kindIndex(kind)];
    if (!fits(chunk, &offset)) {
      RAL_ASSIGN_OR_RETURN(chunk, newChunk(kChunkBytes, kind, /*dedicated=*/false));
      current_[kindIndex(kind)] = chunk;
      if (!fits(chunk, &offset))
        return invalidArgument("vulkan: cannot align a block to ", alignment, " bytes");
    }
    chunk->bump = offset + size;
  }
  auto block = std::make_unique<Block>();
  block->chunk = chunk;
  block->offset = offset;
  block->size = size;
  block->bucket = bucket;
  block->pointer = chunk->base + offset;
  chunk->blocks.push_back(std::move(block));
  return chunk->blocks.back().get();
}

StatusOr<void*> VulkanMemory::allocate(size_t bytes, size_t alignment, MemoryKind kind) {
  if (alignment == 0) alignment = 1;
  if (!isPowerOfTwo(alignment) || alignment > kMaxAlignment)
    return invalidArgument("vulkan: alignment ", alignment, " is not a power of two up to ",
                           kMaxAlignment);
  if (bytes > (size_t{1} << 40)) return outOfMemory("vulkan: cannot allocate ", bytes, " bytes");
  alignment = std::max(alignment, min_alignment_);
  const size_t bucket = bucketIndex(std::max<size_t>(bytes, 1));
  std::lock_guard<std::mutex> lock(mutex_);
  if (free_[kindIndex(kind)][bucket].empty()) collectPending(false);
  auto block = obtain(bucket, alignment, kind);
  if (!block.ok() && block.status().code() == StatusCode::kOutOfMemory) {
    // Give cached memory back and try once more.
    collectPending(false);
    releaseUnusedLocked();
    block = obtain(bucket, alignment, kind);
  }
  RAL_RETURN_IF_ERROR(block);
  Block* b = *block;
  b->requested = bytes;
  ++b->chunk->live;
  live_[b->pointer] = b;
  in_use_ += b->size;
  peak_ = std::max(peak_, in_use_);
  ++allocations_;
  return reinterpret_cast<void*>(b->pointer);
}

Status VulkanMemory::deallocate(void* ptr, UseFence fence) {
  if (ptr == nullptr) return Status();
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = live_.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == live_.end())
    return invalidArgument("vulkan: deallocate of ", ptr,
                           ", which is not a live allocation of this driver");
  Block* b = it->second;
  live_.erase(it);
  in_use_ -= b->size;
  cached_ += b->size;
  --b->chunk->live;
  ++b->chunk->pending;
  pending_.push_back(Pending{b, std::move(fence)});
  collectPending(false);
  return Status();
}

void VulkanMemory::collectPending(bool) {
  // Fences complete roughly in order; stop at the first one still running so a poll stays cheap.
  while (!pending_.empty() && fenceReached(pending_.front().fence)) {
    Block* b = pending_.front().block;
    pending_.pop_front();
    --b->chunk->pending;
    free_[kindIndex(b->chunk->kind)][b->bucket].push_back(b);
  }
}

void VulkanMemory::releaseUnusedLocked() {
  std::vector<Chunk*> doomed;
  for (auto& c : chunks_)
    if (c->live == 0 && c->pending == 0 && c->memory != VK_NULL_HANDLE) doomed.push_back(c.get());
  if (doomed.empty()) return;
  auto is_doomed = [&](const Chunk* c) {
    return std::find(doomed.begin(), doomed.end(), c) != doomed.end();
  };
  for (auto& lists : free_) {
    for (auto& list : lists) {
      list.erase(std::remove_if(list.begin(), list.end(),
                                [&](Block* b) {
                                  if (!is_doomed(b->chunk)) return false;
                                  cached_ -= b->size;
                                  return true;
                                }),
                 list.end());
    }
  }
  for (Chunk* c : doomed) {
    chunk_ranges_.erase(c->base);
    for (auto& cur : current_)
      if (cur == c) cur = nullptr;
    destroyChunk(c);
  }
  chunks_.erase(std::remove_if(chunks_.begin(), chunks_.end(),
                               [&](const std::unique_ptr<Chunk>& c) { return is_doomed(c.get()); }),
                chunks_.end());
}

void VulkanMemory::trim() {
  std::lock_guard<std::mutex> lock(mutex_);
  collectPending(false);
  releaseUnusedLocked();
}

StatusOr<BufferRange> VulkanMemory::resolve(const void* ptr, size_t bytes) const {
  const auto p = reinterpret_cast<uintptr_t>(ptr);
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = live_.upper_bound(p);
  if (it == live_.begin()) return notFound("vulkan: ", ptr, " is not device memory of this driver");
  --it;
  const Block* b = it->second;
  const size_t end = b->pointer + std::max<size_t>(b->requested, 1);
  if (p >= end) return notFound("vulkan: ", ptr, " is not device memory of this driver");
  const size_t delta = p - b->pointer;
  if (bytes > end - p)
    return outOfRange("vulkan: ", bytes, " bytes at ", ptr, " run past the end of its ",
                      b->requested, "-byte allocation");
  BufferRange r;
  r.buffer = b->chunk->buffer;
  r.offset = b->offset + delta;
  r.available = end - p;
  r.host = b->chunk->mapped != nullptr ? static_cast<char*>(b->chunk->mapped) + r.offset : nullptr;
  r.address = b->chunk->address + r.offset;
  r.kind = b->chunk->kind;
  return r;
}

bool VulkanMemory::owns(const void* ptr) const { return resolve(ptr, 0).ok(); }

MemoryStats VulkanMemory::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  MemoryStats s;
  s.bytes_in_use = in_use_;
  s.bytes_cached = cached_;
  s.peak_bytes_in_use = peak_;
  s.allocations = allocations_;
  s.cache_hits = hits_;
  return s;
}

}  // namespace ral::vulkan
