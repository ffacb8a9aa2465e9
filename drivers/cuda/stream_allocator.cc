#include "drivers/cuda/stream_allocator.h"

#include <algorithm>

namespace ral::cuda {

MemoryBackend::~MemoryBackend() = default;

StreamOrderedAllocator::~StreamOrderedAllocator() { releaseAll(); }

size_t StreamOrderedAllocator::bucketSize(size_t bytes) {
  return drivers::SizeClasses<9>::roundUp(bytes);  // from kMinBlock
}

StatusOr<void*> StreamOrderedAllocator::allocate(size_t bytes, size_t alignment, MemoryKind kind,
                                                 BackendStream stream) {
  if (alignment == 0) alignment = 1;
  if ((alignment & (alignment - 1)) != 0 || alignment > kMaxAlignment)
    return invalidArgument("cuda: alignment ", alignment, " must be a power of two no larger than ",
                           kMaxAlignment);
  if (bytes > (size_t{1} << 48)) return outOfMemory("cuda: cannot allocate ", bytes, " bytes");
  const size_t size = bucketSize(bytes);
  std::unique_lock<std::mutex> lock(mutex_);
  ++stats_.allocations;
  if (!waiting_.empty()) collectReadyLocked();
  auto it = cache_.find({stream, {static_cast<int>(kind), size}});
  if (it != cache_.end() && !it->second.empty()) {
    void* ptr = it->second.back();
    it->second.pop_back();
    Block& block = blocks_[ptr];
    block.live = true;
    stats_.bytes_cached -= size;
    stats_.bytes_in_use += size;
    stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
    ++stats_.cache_hits;
    return ptr;
  }
  auto raw = memory_->allocate(size, kind);
  if (!raw.ok() && raw.status().code() == StatusCode::kOutOfMemory && stats_.bytes_cached > 0) {
    RAL_RETURN_IF_ERROR(trimLocked(lock));
    raw = memory_->allocate(size, kind);
  }
  if (!raw.ok()) return raw.status();
  Block block;
  block.ptr = *raw;
  block.size = size;
  block.kind = kind;
  block.stream = stream;
  block.live = true;
  blocks_.emplace(*raw, std::move(block));
  stats_.bytes_in_use += size;
  stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
  return *raw;
}

Status StreamOrderedAllocator::recordUse(void* ptr, BackendStream stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = blocks_.find(ptr);
  if (it == blocks_.end() || !it->second.live)
    return invalidArgument("cuda: recordUse of ", ptr, ", which is not a live allocation");
  Block& block = it->second;
  if (stream != block.stream && std::find(block.other_streams.begin(), block.other_streams.end(),
                                          stream) == block.other_streams.end())
    block.other_streams.push_back(stream);
  return Status();
}

Status StreamOrderedAllocator::deallocate(void* ptr) {
  if (ptr == nullptr) return Status();
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = blocks_.find(ptr);
  if (it == blocks_.end())
    return invalidArgument("cuda: deallocate of ", ptr, ", which this driver did not allocate");
  Block& block = it->second;
  if (!block.live) return invalidArgument("cuda: ", ptr, " was freed twice");
  block.live = false;
  stats_.bytes_in_use -= block.size;
  stats_.bytes_cached += block.size;
  // The host writes host-visible memory outside stream order (input copies, say): such a block
  // is reusable only once the work queued on its own stream before the free is done, too.
  if (block.kind == MemoryKind::kHostVisible &&
      std::find(block.other_streams.begin(), block.other_streams.end(), block.stream) ==
          block.other_streams.end())
    block.other_streams.push_back(block.stream);
  Status result;
  for (BackendStream other : block.other_streams) {
    auto event = events_->acquire();
    Status s =
        event.ok() ? events_->backend()->recordEvent((*event)->handle(), other) : event.status();
    if (!s.ok()) {
      if (event.ok()) (*event)->release();
      // Without the event the block cannot be reused safely: keep it out of the cache.
      if (result.ok()) result = s;
      continue;
    }
    block.pending.push_back(*event);
  }
  block.other_streams.clear();
  if (!result.ok()) {
    for (GpuEvent* e : block.pending) e->release();
    block.pending.clear();
    // It goes back to the system at the next trim (after a device synchronization).
    waiting_.push_back(ptr);
    block.other_streams.push_back(nullptr);  // marks "never reusable"
    return result;
  }
  if (block.pending.empty()) {
    cache_[{block.stream, {static_cast<int>(block.kind), block.size}}].push_back(ptr);
  } else {
    waiting_.push_back(ptr);
  }
  return Status();
}

void StreamOrderedAllocator::collectReadyLocked() {
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    Block& block = blocks_[*it];
    bool ready = block.other_streams.empty();
    for (GpuEvent* e : block.pending) {
      auto done = events_->backend()->queryEvent(e->handle());
      if (!done.ok() || !*done) {
        ready = false;
        break;
      }
    }
    if (ready) {
      for (GpuEvent* e : block.pending) e->release();
      block.pending.clear();
      cache_[{block.stream, {static_cast<int>(block.kind), block.size}}].push_back(*it);
      it = waiting_.erase(it);
    } else {
      ++it;
    }
  }
}

Status StreamOrderedAllocator::trim() {
  std::unique_lock<std::mutex> lock(mutex_);
  return trimLocked(lock);
}

Status StreamOrderedAllocator::trimLocked(std::unique_lock<std::mutex>& lock) {
  (void)lock;
  RAL_RETURN_IF_ERROR(memory_->synchronizeDevice());
  // After a device synchronization every pending event has completed.
  for (void* ptr : waiting_) {
    Block& block = blocks_[ptr];
    for (GpuEvent* e : block.pending) e->release();
    block.pending.clear();
    block.other_streams.clear();
    cache_[{block.stream, {static_cast<int>(block.kind), block.size}}].push_back(ptr);
  }
  waiting_.clear();
  for (auto& [key, ptrs] : cache_) {
    for (void* ptr : ptrs) {
      auto it = blocks_.find(ptr);
      memory_->free(ptr, it->second.kind);
      stats_.bytes_cached -= it->second.size;
      blocks_.erase(it);
    }
  }
  cache_.clear();
  return Status();
}

void StreamOrderedAllocator::releaseAll() {
  std::unique_lock<std::mutex> lock(mutex_);
  (void)memory_->synchronizeDevice();
  for (auto& [ptr, block] : blocks_) {
    for (GpuEvent* e : block.pending) e->release();
    memory_->free(ptr, block.kind);
  }
  blocks_.clear();
  cache_.clear();
  waiting_.clear();
  stats_.bytes_in_use = 0;
  stats_.bytes_cached = 0;
}

MemoryStats StreamOrderedAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

}  // namespace ral::cuda
