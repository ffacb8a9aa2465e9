// Shared by the CUDA tests: a driver or a skip with the reason.
#ifndef RAL_TESTS_CUDA_CUDA_TEST_UTIL_H_
#define RAL_TESTS_CUDA_CUDA_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "drivers/cuda/cuda_driver.h"

namespace ral::cuda::testing {

// Why the GPU tests cannot run here, or an empty string when a CUDA device is usable.
inline std::string noDeviceReason() {
  static const std::string reason = [] {
    auto driver = CudaDriver::create();
    return driver.ok() ? std::string() : "no usable CUDA device: " + driver.status().toString();
  }();
  return reason;
}

}  // namespace ral::cuda::testing

// Skips the test (stating why) on machines without a CUDA driver or device.
#define RAL_REQUIRE_CUDA_DEVICE()                                           \
  do {                                                                      \
    const std::string ral_reason_ = ::ral::cuda::testing::noDeviceReason(); \
    if (!ral_reason_.empty()) GTEST_SKIP() << ral_reason_;                  \
  } while (0)

#endif  // RAL_TESTS_CUDA_CUDA_TEST_UTIL_H_
