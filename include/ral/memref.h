// MemRef<T, N>: MLIR's ranked memref descriptor, bit for bit, so compiled code and RAL functions
// exchange tensors without conversion:
//   { T* allocated; T* aligned; int64_t offset; int64_t sizes[N]; int64_t strides[N]; }
// Strides and offset count elements, not bytes. Rank 0 has no sizes/strides arrays.
#ifndef RAL_MEMREF_H_
#define RAL_MEMREF_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace ral {

inline constexpr int kMaxMemRefRank = 8;

template <typename T, int N>
struct MemRef {
  static_assert(N >= 0, "rank must be non-negative");
  using element_type = T;
  static constexpr int kRank = N;

  T* allocated;
  T* aligned;
  int64_t offset;
  int64_t sizes[N];
  int64_t strides[N];

  // Pointer to the first element (aligned + offset).
  T* data() const { return aligned + offset; }
  int64_t size(int d) const { return sizes[d]; }
  int64_t stride(int d) const { return strides[d]; }
  int64_t numel() const {
    int64_t n = 1;
    for (int d = 0; d < N; ++d) n *= sizes[d];
    return n;
  }
  bool empty() const { return numel() == 0; }
  // Row-major dense: strides are the suffix products of sizes (dims of size 1 may carry any
  // stride, as in MLIR and DLPack).
  bool isContiguous() const {
    int64_t expected = 1;
    for (int d = N - 1; d >= 0; --d) {
      if (sizes[d] != 1 && strides[d] != expected) return false;
      expected *= sizes[d];
    }
    return true;
  }
  // Element offset (from data()) of a multi-index.
  int64_t linearIndex(const std::array<int64_t, N>& idx) const {
    int64_t off = 0;
    for (int d = 0; d < N; ++d) off += idx[d] * strides[d];
    return off;
  }
  T& at(const std::array<int64_t, N>& idx) const { return data()[linearIndex(idx)]; }
  template <typename... I, typename = std::enable_if_t<sizeof...(I) == N>>
  T& operator()(I... idx) const {
    return at({static_cast<int64_t>(idx)...});
  }
};

template <typename T>
struct MemRef<T, 0> {
  using element_type = T;
  static constexpr int kRank = 0;

  T* allocated;
  T* aligned;
  int64_t offset;

  T* data() const { return aligned + offset; }
  int64_t numel() const { return 1; }
  bool empty() const { return false; }
  bool isContiguous() const { return true; }
  T& at(const std::array<int64_t, 0>&) const { return *data(); }
  T& operator()() const { return *data(); }
};

// Builds a descriptor over an existing buffer with row-major strides.
template <typename T, int N>
MemRef<T, N> makeMemRef(T* data, const std::array<int64_t, N>& sizes) {
  MemRef<T, N> m{};
  m.allocated = data;
  m.aligned = data;
  m.offset = 0;
  if constexpr (N > 0) {
    int64_t stride = 1;
    for (int d = N - 1; d >= 0; --d) {
      m.sizes[d] = sizes[d];
      m.strides[d] = stride;
      stride *= sizes[d];
    }
  }
  return m;
}

// Builds a descriptor over existing memory with the given offset, sizes and strides (N values
// each; not read at rank 0).
template <typename T, int N>
MemRef<T, N> viewMemRef(T* base, int64_t offset, const int64_t* sizes, const int64_t* strides) {
  MemRef<T, N> m{};
  m.allocated = base;
  m.aligned = base;
  m.offset = offset;
  if constexpr (N > 0) {
    for (int d = 0; d < N; ++d) {
      m.sizes[d] = sizes[d];
      m.strides[d] = strides[d];
    }
  }
  return m;
}

// A descriptor's sizes and strides arrays, or nullptr at rank 0, which has none.
template <typename T, int N>
const int64_t* sizesOf(const MemRef<T, N>& m) {
  if constexpr (N > 0) {
    return m.sizes;
  } else {
    return nullptr;
  }
}
template <typename T, int N>
const int64_t* stridesOf(const MemRef<T, N>& m) {
  if constexpr (N > 0) {
    return m.strides;
  } else {
    return nullptr;
  }
}

template <typename T>
struct IsMemRef : std::false_type {};
template <typename T, int N>
struct IsMemRef<MemRef<T, N>> : std::true_type {};

// Layout must match MLIR's descriptor exactly.
static_assert(sizeof(MemRef<float, 0>) == 3 * 8, "rank-0 descriptor layout");
static_assert(sizeof(MemRef<float, 2>) == (3 + 2 * 2) * 8, "rank-2 descriptor layout");
using MemRefF32R3 = MemRef<float, 3>;
static_assert(offsetof(MemRefF32R3, sizes) == 24, "sizes follow offset");
static_assert(std::is_standard_layout_v<MemRef<float, 4>>, "C layout");
static_assert(std::is_trivially_copyable_v<MemRef<double, 8>>, "C layout");

}  // namespace ral

#endif  // RAL_MEMREF_H_
