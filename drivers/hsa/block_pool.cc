#include "drivers/hsa/block_pool.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace ral::hsa {
namespace {

size_t roundUpPow2(size_t v) {
  size_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

bool isPow2(size_t v) { return v != 0 && (v & (v - 1)) == 0; }

}  // namespace

BlockPool::BlockPool(std::string name, size_t block_size, AllocateFn allocate, ReleaseFn release)
    : name_(std::move(name)),
      block_size_(block_size),
      small_limit_(block_size / 8),
      allocate_(std::move(allocate)),
      release_(std::move(release)) {}

BlockPool::~BlockPool() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& block : small_blocks_) release_(block->base, block_size_);
  for (const auto& [key, live] : live_)
    if (live.block == nullptr) release_(reinterpret_cast<void*>(key), live.blocks * block_size_);
  for (char* block : free_blocks_) release_(block, block_size_);
  for (const auto& [blocks, base] : free_large_) release_(base, blocks * block_size_);
}

StatusOr<void*> BlockPool::backingAllocate(size_t bytes, bool* hit_cache) {
  StatusOr<void*> p = allocate_(bytes);
  if (!p.ok() && p.status().code() == StatusCode::kOutOfMemory &&
      (!free_blocks_.empty() || !free_large_.empty())) {
    trimLocked();
    p = allocate_(bytes);
  }
  if (!p.ok())
    return Status(p.status().code(), internal::strCat(name_, ": cannot allocate ", bytes,
                                                      " bytes: ", p.status().message()));
  backing_bytes_ += bytes;
  *hit_cache = false;
  return p;
}

StatusOr<void*> BlockPool::allocateSmall(size_t slot, bool* hit) {
  std::vector<SmallBlock*>& partial = partial_[slot];
  if (partial.empty()) {
    char* base = nullptr;
    if (!free_blocks_.empty()) {
      base = free_blocks_.back();
      free_blocks_.pop_back();
    } else {
      RAL_ASSIGN_OR_RETURN(void* fresh, backingAllocate(block_size_, hit));
      base = static_cast<char*>(fresh);
    }
    auto block = std::make_unique<SmallBlock>();
    block->base = base;
    block->slot = slot;
    const auto slots = static_cast<uint32_t>(block_size_ / slot);
    for (uint32_t i = slots; i > 0; --i) block->free_slots.push_back(i - 1);
    partial.push_back(block.get());
    small_blocks_.push_back(std::move(block));
  }
  SmallBlock* block = partial.back();
  const uint32_t index = block->free_slots.back();
  block->free_slots.pop_back();
  ++block->used;
  if (block->free_slots.empty()) partial.pop_back();
  char* p = block->base + size_t{index} * slot;
  live_[reinterpret_cast<uintptr_t>(p)] = Live{slot, block, index, 0};
  return static_cast<void*>(p);
}

StatusOr<void*> BlockPool::allocateLarge(size_t blocks, bool* hit) {
  char* base = nullptr;
  if (auto it = free_large_.find(blocks); it != free_large_.end()) {
    base = it->second;
    free_large_.erase(it);
  } else {
    RAL_ASSIGN_OR_RETURN(void* fresh, backingAllocate(blocks * block_size_, hit));
    base = static_cast<char*>(fresh);
  }
  live_[reinterpret_cast<uintptr_t>(base)] = Live{blocks * block_size_, nullptr, 0, blocks};
  return static_cast<void*>(base);
}

StatusOr<void*> BlockPool::allocate(size_t bytes, size_t alignment) {
  if (!isPow2(alignment) || alignment > kMaxAlignment)
    return invalidArgument(name_, ": alignment ", alignment, " is not a power of two up to ",
                           kMaxAlignment);
  if (bytes > std::numeric_limits<size_t>::max() / 4)
    return outOfMemory(name_, ": cannot allocate ", bytes, " bytes");
  std::lock_guard<std::mutex> lock(mutex_);
  bool hit = true;
  const size_t slot = roundUpPow2(std::max({bytes, alignment, kMinSlot}));
  StatusOr<void*> p = slot <= small_limit_
                          ? allocateSmall(slot, &hit)
                          : allocateLarge((bytes + block_size_ - 1) / block_size_, &hit);
  if (!p.ok()) return p;
  ++stats_.allocations;
  if (hit) ++stats_.cache_hits;
  stats_.bytes_in_use += live_[reinterpret_cast<uintptr_t>(*p)].held;
  stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
  return p;
}

Status BlockPool::deallocate(void* ptr) {
  if (ptr == nullptr) return Status();
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = live_.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == live_.end())
    return invalidArgument(name_, ": ", ptr,
                           " is not a live allocation of this driver (foreign or freed twice)");
  const Live live = it->second;
  live_.erase(it);
  stats_.bytes_in_use -= live.held;
  if (live.block == nullptr) {
    free_large_.emplace(live.blocks, static_cast<char*>(ptr));
    return Status();
  }
  SmallBlock* block = live.block;
  if (block->free_slots.empty()) partial_[block->slot].push_back(block);
  block->free_slots.push_back(live.slot_index);
  if (--block->used == 0) {
    // Wholly free: back to the shared block cache, for any size class.
    auto& partial = partial_[block->slot];
    partial.erase(std::find(partial.begin(), partial.end(), block));
    free_blocks_.push_back(block->base);
    small_blocks_.erase(std::find_if(small_blocks_.begin(), small_blocks_.end(),
                                     [&](const auto& b) { return b.get() == block; }));
  }
  return Status();
}

bool BlockPool::contains(const void* ptr, size_t bytes) const {
  const auto p = reinterpret_cast<uintptr_t>(ptr);
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = live_.upper_bound(p);
  if (it == live_.begin()) return false;
  --it;
  return p - it->first <= it->second.held && bytes <= it->second.held - (p - it->first);
}

void BlockPool::trimLocked() {
  for (char* block : free_blocks_) {
    release_(block, block_size_);
    backing_bytes_ -= block_size_;
  }
  free_blocks_.clear();
  for (const auto& [blocks, base] : free_large_) {
    release_(base, blocks * block_size_);
    backing_bytes_ -= blocks * block_size_;
  }
  free_large_.clear();
}

void BlockPool::trim() {
  std::lock_guard<std::mutex> lock(mutex_);
  trimLocked();
}

MemoryStats BlockPool::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  MemoryStats s = stats_;
  s.bytes_cached = backing_bytes_ - stats_.bytes_in_use;
  return s;
}

}  // namespace ral::hsa
