// Shared by the CUDA tests: a driver or a skip with the reason, and whether the device is the
// simulated one.
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

// True when the CUDA driver library is the simulated one (tests/sim_cuda), which runs host
// functions instead of PTX.
inline bool isSimulatedDevice() {
  static const bool simulated = [] {
    auto driver = CudaDriver::create();
    return driver.ok() &&
           (*driver)->deviceName().find("RAL simulated CUDA device") != std::string::npos;
  }();
  return simulated;
}

}  // namespace ral::cuda::testing

// Skips the test (stating why) on machines without a CUDA driver or device.
#define RAL_REQUIRE_CUDA_DEVICE()                                           \
  do {                                                                      \
    const std::string ral_reason_ = ::ral::cuda::testing::noDeviceReason(); \
    if (!ral_reason_.empty()) GTEST_SKIP() << ral_reason_;                  \
  } while (0)

// Skips the test on the simulated CUDA device too (it needs real PTX or a real GPU).
#define RAL_REQUIRE_REAL_CUDA_DEVICE()                                                \
  do {                                                                                \
    RAL_REQUIRE_CUDA_DEVICE();                                                        \
    if (::ral::cuda::testing::isSimulatedDevice())                                    \
      GTEST_SKIP() << "needs a real GPU (this is the simulated CUDA device, no PTX)"; \
  } while (0)

#endif  // RAL_TESTS_CUDA_CUDA_TEST_UTIL_H_
