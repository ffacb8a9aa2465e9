// The size classes every caching allocator rounds to (the CPU driver's CachingAllocator, Vulkan's
// VulkanMemory, CUDA's StreamOrderedAllocator): sizes up to 2^kLog2Min bytes share the smallest
// class; above it there are four classes per power of two, 2^p * {1.25, 1.5, 1.75, 2}, so a block
// wastes under a quarter of its size and freed blocks of similar sizes are reused. Each
// allocator picks its own minimum (what its smallest useful block is). Header-only, constexpr.
#ifndef RAL_DRIVERS_COMMON_SIZE_CLASSES_H_
#define RAL_DRIVERS_COMMON_SIZE_CLASSES_H_

#include <cstddef>

namespace ral::drivers {

template <int kLog2Min>
struct SizeClasses {
  static_assert(kLog2Min >= 3 && kLog2Min < 40, "minimum class out of range");
  static constexpr size_t kMin = size_t{1} << kLog2Min;

  // The class of the smallest size >= n. With 2^p <= m = n - 1 < 2^(p+1), m's top three bits are
  // 4 + q (q: the quarter of the power of two), so the index is 4 * (p - kLog2Min) + q + 1 =
  // (m >> (p - 2)) + 4 * p - (4 * kLog2Min + 3). Clamping m to kMin - 1 maps every n <= kMin to
  // 0 through the same formula, without a branch (the CPU allocator's fast path).
  static constexpr size_t index(size_t n) {
    const size_t m = n <= kMin ? kMin - 1 : n - 1;
    const int p = 63 - __builtin_clzll(static_cast<unsigned long long>(m));
    return (m >> (p - 2)) + 4 * static_cast<size_t>(p) - (4 * kLog2Min + 3);
  }

  // The size of class `i`.
  static constexpr size_t size(size_t i) {
    if (i == 0) return kMin;
    const size_t p = kLog2Min + (i - 1) / 4, q = (i - 1) % 4;
    return (size_t{1} << p) + (q + 1) * (size_t{1} << (p - 2));
  }

  // n rounded up to its class.
  static constexpr size_t roundUp(size_t n) { return size(index(n)); }
};

}  // namespace ral::drivers

#endif  // RAL_DRIVERS_COMMON_SIZE_CLASSES_H_
