// Test tensors of the kernel conformance suite: host storage in one of three layouts and its copy
// in the backend's device memory with the same view; and the index arithmetic the references
// of copies, fills and transposes are written in.
#ifndef RAL_TESTS_KERNEL_CTS_TENSOR_H_
#define RAL_TESTS_KERNEL_CTS_TENSOR_H_

#include <array>
#include <cstring>
#include <random>
#include <type_traits>
#include <vector>

#include "kernel_cts.h"
#include "tests/support/kernels_test_util.h"

namespace ral::kernel_cts {

using ::ral::testing::Layout;
using ::ral::testing::layoutName;

// Host storage in `layout` (tests/support's Buffer) and its copy in the backend's device memory,
// with the same view.
template <typename T, int N>
struct Tensor {
  KernelTest& test;
  ::ral::testing::Buffer<T, N> buffer;
  void* device = nullptr;
  MemRef<T, N> host_view{}, device_view{};
  using Index = std::array<int64_t, N>;

  Tensor(KernelTest& t, const Index& sizes, Layout layout) : test(t), buffer(sizes, layout) {
    host_view = buffer.view;
    device = test.allocate(bytes());
    device_view = host_view;
    device_view.allocated = device_view.aligned = static_cast<T*>(device);
  }
  size_t bytes() const { return buffer.storage.size() * sizeof(buffer.storage[0]); }
  unsigned char* host() { return reinterpret_cast<unsigned char*>(buffer.storage.data()); }
  const unsigned char* host() const {
    return reinterpret_cast<const unsigned char*>(buffer.storage.data());
  }
  // Random bytes everywhere (padding included); floats in [-1, 1), bools 0 or 1.
  void randomize(std::mt19937& rng) {
    for (size_t i = 0; i < bytes(); ++i) host()[i] = static_cast<unsigned char>(rng());
    if constexpr (std::is_same_v<T, bool>) {
      for (size_t i = 0; i < bytes(); ++i) host()[i] &= 1;
    } else if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, float16> ||
                         std::is_same_v<T, bfloat16>) {
      std::uniform_real_distribution<double> dist(-1, 1);
      for (auto& v : buffer.storage) v = ::ral::testing::fromDouble<T>(dist(rng));
    }
  }
  void upload() { test.copyIn(device, host(), bytes()); }
  std::vector<unsigned char> download() const {
    std::vector<unsigned char> out(bytes());
    test.copyOut(out.data(), device, out.size());
    return out;
  }
  // The host storage's element at a logical index.
  T& at(const Index& index) {
    int64_t off = host_view.offset;
    for (int d = 0; d < N; ++d) off += index[d] * host_view.strides[d];
    return host_view.aligned[off];
  }
};

// Calls fn(index) for every index of `sizes`, in row-major order.
template <int N, typename Fn>
void forEachIndex(const std::array<int64_t, N>& sizes, Fn fn) {
  for (int d = 0; d < N; ++d)
    if (sizes[d] == 0) return;
  std::array<int64_t, N> index{};
  while (true) {
    fn(index);
    int d = N - 1;
    for (; d >= 0; --d) {
      if (++index[d] < sizes[d]) break;
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

template <typename T, int N>
std::array<int64_t, N> viewSizes(const MemRef<T, N>& m) {
  std::array<int64_t, N> s{};
  for (int d = 0; d < N; ++d) s[d] = m.sizes[d];
  return s;
}

// Every element of `got` (a download of `t`) outside t's view has the bytes it had on the host.
template <typename T, int N>
void expectOutsideViewUnchanged(const Tensor<T, N>& t, const std::vector<unsigned char>& got) {
  std::vector<bool> in_view(t.bytes() / sizeof(T), false);
  forEachIndex<N>(viewSizes(t.host_view), [&](const std::array<int64_t, N>& index) {
    int64_t off = t.host_view.offset;
    for (int d = 0; d < N; ++d) off += index[d] * t.host_view.strides[d];
    in_view[off] = true;
  });
  for (size_t e = 0; e < in_view.size(); ++e)
    if (!in_view[e]) {
      ASSERT_EQ(std::memcmp(&got[e * sizeof(T)], t.host() + e * sizeof(T), sizeof(T)), 0)
          << "storage element " << e << ", outside the view, changed";
    }
}

// `got`'s element at a logical index of t's view.
template <typename T, int N>
T elementOf(const Tensor<T, N>& t, const std::vector<unsigned char>& got,
            const typename Tensor<T, N>::Index& index) {
  int64_t off = t.host_view.offset;
  for (int d = 0; d < N; ++d) off += index[d] * t.host_view.strides[d];
  T v;
  std::memcpy(static_cast<void*>(&v), &got[off * sizeof(T)], sizeof(T));
  return v;
}

}  // namespace ral::kernel_cts

#endif  // RAL_TESTS_KERNEL_CTS_TENSOR_H_
