// Shared helpers of the kernel tests (tests/unit, tests/kernel_cts): calling a RAL function by
// its encoded name, strided test buffers in several layouts, random fills.
#ifndef RAL_TESTS_SUPPORT_KERNELS_TEST_UTIL_H_
#define RAL_TESTS_SUPPORT_KERNELS_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "ral/api.h"
#include "ral/api_call.h"
#include "ral/context.h"

namespace ral::testing {

// The encoded name RAL_API gives a `void f(ExecutionContext*, A...)` registered as target/cpu.
template <typename... A>
std::string cpuName(const std::string& target) {
  return apiNameFor<A...>(target, "cpu");
}

// Calls target with `args` through ral_api_call on a fresh execution of `context`; returns the
// status the call left on it.
template <typename... A>
Status callCpu(Context& context, const std::string& target, A... args) {
  auto exec = context.acquireExecution();
  const std::string name = cpuName<A...>(target);
  callApi(exec->abi(), name.c_str(), args...);
  return exec->status();
}

enum class Layout { kDense, kPadded, kColumnMajor };
inline const char* layoutName(Layout l) {
  return l == Layout::kDense ? "dense" : l == Layout::kPadded ? "padded" : "column-major";
}

// Storage plus a MemRef view over it in the requested layout (padded: every dim is one longer in
// memory and the view starts at an offset; column-major: dims stored in reverse order).
template <typename T, int N>
struct Buffer {
  // std::vector<bool> packs bits: keep bools in bytes.
  using Stored = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;
  std::vector<Stored> storage;
  MemRef<T, N> view{};

  Buffer(const std::array<int64_t, N>& sizes, Layout layout) {
    const int64_t pad = layout == Layout::kPadded ? 1 : 0;
    int64_t running = 1;
    for (int k = 0; k < N; ++k) {
      const int d = layout == Layout::kColumnMajor ? k : N - 1 - k;
      view.sizes[d] = sizes[d];
      view.strides[d] = running;
      running *= sizes[d] + pad;
    }
    view.offset = layout == Layout::kPadded ? 3 : 0;
    storage.assign(static_cast<size_t>(running + view.offset + 1), Stored{});
    view.allocated = reinterpret_cast<T*>(storage.data());
    view.aligned = reinterpret_cast<T*>(storage.data());
  }
  int64_t numel() const { return view.numel(); }
  // Element at row-major logical index i.
  T& at(int64_t i) const {
    int64_t off = 0;
    for (int d = N - 1; d >= 0; --d) {
      off += (i % view.sizes[d]) * view.strides[d];
      i /= view.sizes[d];
    }
    return view.data()[off];
  }
};

template <typename T>
T fromDouble(double v) {
  if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
    return T(static_cast<float>(v));
  } else {
    return static_cast<T>(v);
  }
}
template <typename T>
double toDouble(T v) {
  if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
    return v.toFloat();
  } else {
    return static_cast<double>(v);
  }
}

template <typename T, int N>
void fillRandom(Buffer<T, N>& b, std::mt19937& rng, double lo = -1, double hi = 1) {
  std::uniform_real_distribution<double> dist(lo, hi);
  for (int64_t i = 0; i < b.numel(); ++i) b.at(i) = fromDouble<T>(dist(rng));
}

}  // namespace ral::testing

#endif  // RAL_TESTS_SUPPORT_KERNELS_TEST_UTIL_H_
