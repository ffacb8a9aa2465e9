// ApiCache: the lock-free lookup behind ral_api_call.
//
// Slots are keyed by the name *pointer* (compiled modules pass string constants, so the same
// pointer comes back on every call). A pointer can be reused for other text by a hand-written
// caller, so a hit is confirmed by comparing the text with the entry's own copy: a stale pointer
// can cost a slow lookup, never a wrong call. Keys are written once and never cleared; writers
// are serialised by the owner, readers take no lock and never allocate.
#ifndef RAL_API_CACHE_H_
#define RAL_API_CACHE_H_

#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>

#include "ral/abi.h"

namespace ral {

class ApiCache {
 public:
  struct Entry {
    std::string name;
    ral_fn fn;
  };

  static constexpr size_t kCapacity = 1024;  // power of two
  static constexpr size_t kMaxProbe = 16;

  ral_fn find(const char* name) const {
    const size_t h = hash(name);
    for (size_t i = 0; i < kMaxProbe; ++i) {
      const Slot& slot = slots_[(h + i) & (kCapacity - 1)];
      const char* key = slot.key.load(std::memory_order_acquire);
      if (key == name) {
        const Entry* e = slot.entry.load(std::memory_order_acquire);
        return e && std::strcmp(e->name.c_str(), name) == 0 ? e->fn : nullptr;
      }
      if (key == nullptr) return nullptr;
    }
    return nullptr;
  }

  // Caller holds the owner's write lock. `entry` must outlive the cache. Returns false when the
  // probe window is full (lookups then stay on the slow path, still correct).
  bool insert(const char* name, const Entry* entry) {
    const size_t h = hash(name);
    for (size_t i = 0; i < kMaxProbe; ++i) {
      Slot& slot = slots_[(h + i) & (kCapacity - 1)];
      const char* key = slot.key.load(std::memory_order_relaxed);
      if (key == name) {
        slot.entry.store(entry, std::memory_order_release);
        return true;
      }
      if (key == nullptr) {
        slot.entry.store(entry, std::memory_order_release);
        slot.key.store(name, std::memory_order_release);
        return true;
      }
    }
    return false;
  }

 private:
  struct Slot {
    std::atomic<const char*> key{nullptr};
    std::atomic<const Entry*> entry{nullptr};
  };
  static size_t hash(const char* p) {
    const auto v = reinterpret_cast<uintptr_t>(p);
    return static_cast<size_t>((v * 0x9E3779B97F4A7C15ull) >> 54);  // top 10 bits
  }
  Slot slots_[kCapacity];
};

}  // namespace ral

#endif  // RAL_API_CACHE_H_
