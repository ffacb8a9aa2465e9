#include "contexts/torch/torch_allocator.h"

#include <c10/util/Exception.h>

#include <algorithm>
#include <utility>

namespace ral::torch_host {

TorchAllocator::TorchAllocator(c10::Allocator* allocator, c10::Device device)
    : allocator_(allocator),
      device_(device),
      raw_deleter_(allocator->raw_deleter()),
      caching_(device.is_cpu() && raw_deleter_ != nullptr) {}

TorchAllocator::~TorchAllocator() {
  std::lock_guard<std::mutex> lock(mutex_);
  trimLocked();
}

void TorchAllocator::trimLocked() {
  for (auto& [bytes, ptr] : cached_) raw_deleter_(ptr);
  cached_.clear();
  cached_bytes_ = 0;
}

StatusOr<void*> TorchAllocator::allocate(size_t bytes, size_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0)
    return invalidArgument("torch allocator: alignment ", alignment, " is not a power of two");
  if (bytes == 0) bytes = 1;  // a valid, unique pointer, as every RAL driver gives
  const bool cacheable = caching_ && bytes >= kMinCachedBytes;
  if (cacheable) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = cached_.find(bytes); it != cached_.end() && it->first == bytes; ++it) {
      void* p = it->second;
      if (reinterpret_cast<uintptr_t>(p) % alignment != 0) continue;
      cached_.erase(it);
      cached_bytes_ -= bytes;
      cacheable_.emplace(p, bytes);
      addLiveLocked(bytes);
      allocations_.fetch_add(1, std::memory_order_relaxed);
      live_.fetch_add(1, std::memory_order_relaxed);
      return p;
    }
  }
  try {
    c10::DataPtr data;
    try {
      data = allocator_->allocate(bytes);
    } catch (const c10::Error&) {
      // Out of memory: what the cache holds goes back first.
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (cached_.empty()) throw;
        trimLocked();
      }
      data = allocator_->allocate(bytes);
    }
    void* p = data.get();
    if (p == nullptr) return outOfMemory("torch allocator: ", bytes, " bytes on ", device_.str());
    const bool aligned = reinterpret_cast<uintptr_t>(p) % alignment == 0;
    if (aligned && raw_deleter_ != nullptr && data.get_context() == p &&
        data.get_deleter() == raw_deleter_) {
      // The common case: the raw deleter frees it by pointer, no bookkeeping needed.
      (void)data.release_context();
      if (cacheable) {
        std::lock_guard<std::mutex> lock(mutex_);
        cacheable_.emplace(p, bytes);
        addLiveLocked(bytes);
      }
    } else {
      if (!aligned) {
        data = allocator_->allocate(bytes + alignment);
        if (data.get() == nullptr)
          return outOfMemory("torch allocator: ", bytes + alignment, " bytes on ", device_.str());
        const auto base = reinterpret_cast<uintptr_t>(data.get());
        p = reinterpret_cast<void*>((base + alignment - 1) & ~(uintptr_t{alignment} - 1));
      }
      std::lock_guard<std::mutex> lock(mutex_);
      held_.emplace(p, std::move(data));
      held_count_.fetch_add(1, std::memory_order_relaxed);
    }
    allocations_.fetch_add(1, std::memory_order_relaxed);
    live_.fetch_add(1, std::memory_order_relaxed);
    return p;
  } catch (const c10::Error& e) {
    return outOfMemory("torch allocator: ", bytes, " bytes on ", device_.str(), ": ",
                       e.what_without_backtrace());
  }
}

Status TorchAllocator::deallocate(void* ptr) {
  if (ptr == nullptr) return Status();
  if (held_count_.load(std::memory_order_relaxed) != 0) {
    c10::DataPtr owned;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = held_.find(ptr);
      if (it != held_.end()) {
        owned = std::move(it->second);
        held_.erase(it);
        held_count_.fetch_sub(1, std::memory_order_relaxed);
      }
    }
    if (owned) {
      live_.fetch_sub(1, std::memory_order_relaxed);
      return Status();  // freed by `owned` going out of scope, outside the lock
    }
  }
  if (raw_deleter_ == nullptr)
    return invalidArgument("torch allocator: pointer ", ptr, " was not allocated here");
  live_.fetch_sub(1, std::memory_order_relaxed);
  if (caching_) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = cacheable_.find(ptr);
    if (it != cacheable_.end()) {
      const size_t bytes = it->second;
      cacheable_.erase(it);
      removeLiveLocked(bytes);
      if (cached_bytes_ + bytes <= cacheCapLocked()) {
        cached_.emplace(bytes, ptr);
        cached_bytes_ += bytes;
        return Status();
      }
    }
  }
  raw_deleter_(ptr);
  return Status();
}

c10::DataPtr TorchAllocator::release(void* ptr) {
  if (held_count_.load(std::memory_order_relaxed) != 0) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = held_.find(ptr);
    if (it != held_.end()) {
      c10::DataPtr owned = std::move(it->second);
      held_.erase(it);
      held_count_.fetch_sub(1, std::memory_order_relaxed);
      live_.fetch_sub(1, std::memory_order_relaxed);
      return owned;
    }
  }
  live_.fetch_sub(1, std::memory_order_relaxed);
  if (caching_) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = cacheable_.find(ptr);
    if (it != cacheable_.end()) {
      removeLiveLocked(it->second);
      cacheable_.erase(it);  // torch frees it now
    }
  }
  return c10::DataPtr(ptr, ptr, raw_deleter_, device_);
}

void TorchAllocator::addLiveLocked(size_t bytes) {
  live_bytes_ += bytes;
  peak_live_bytes_ = std::max(peak_live_bytes_, live_bytes_);
  SizeUse& use = uses_[bytes];
  if (++use.live > use.peak) {
    use.peak = use.live;
    reuse_bytes_ += bytes;
  }
}

void TorchAllocator::removeLiveLocked(size_t bytes) {
  live_bytes_ -= bytes;
  --uses_[bytes].live;
}

size_t TorchAllocator::cacheCapLocked() const {
  // A model frees one size while it needs another: capping at the peak live bytes alone (a ViT
  // at batch 8) would map and fault some temporaries in again on every call.
  return std::max(kMaxCachedBytes, std::min(reuse_bytes_, 2 * peak_live_bytes_));
}

MemoryStats TorchAllocator::stats() const {
  // Torch keeps byte counts itself (torch.cuda.memory_stats, the profiler); RAL counts calls.
  MemoryStats s;
  s.allocations = allocations_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace ral::torch_host
