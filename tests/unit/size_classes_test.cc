// drivers/common/size_classes.h: the one rounding policy of the CPU, Vulkan and CUDA allocators.
#include "drivers/common/size_classes.h"

#include <gtest/gtest.h>

namespace ral::drivers {
namespace {

// Every size lands in the smallest class that holds it, and a class wastes under a quarter.
template <int kLog2Min>
void checkClasses() {
  using C = SizeClasses<kLog2Min>;
  EXPECT_EQ(C::index(0), 0u);
  EXPECT_EQ(C::index(1), 0u);
  EXPECT_EQ(C::index(C::kMin), 0u);
  EXPECT_EQ(C::size(0), C::kMin);
  for (size_t n = 1; n <= (size_t{1} << 20) + 7; n += (n < 4096 ? 1 : 97)) {
    const size_t i = C::index(n);
    ASSERT_GE(C::size(i), n) << n;
    if (i > 0) {
      ASSERT_LT(C::size(i - 1), n) << n;
      ASSERT_LT(C::size(i) - n, C::size(i) / 4 + 1) << n;
    }
    ASSERT_EQ(C::roundUp(n), C::size(i));
  }
  // Four classes per power of two above the minimum.
  EXPECT_EQ(C::size(1), C::kMin + C::kMin / 4);
  EXPECT_EQ(C::size(4), 2 * C::kMin);
  EXPECT_EQ(C::size(8), 4 * C::kMin);
}

TEST(SizeClassesTest, CpuVulkanAndCudaMinimums) {
  checkClasses<7>();  // CachingAllocator
  checkClasses<8>();  // VulkanMemory
  checkClasses<9>();  // StreamOrderedAllocator
}

}  // namespace
}  // namespace ral::drivers
