// Helpers shared by the custom kernels: argument validation, shape strings, scratch memory from
// the context's driver, and row-major walks over strided MemRefs.
#ifndef RAL_KERNELS_COMMON_KERNEL_UTIL_H_
#define RAL_KERNELS_COMMON_KERNEL_UTIL_H_

#include <array>
#include <cstdint>
#include <sstream>
#include <string>

#include "ral/context.h"
#include "ral/driver.h"
#include "ral/execution_context.h"
#include "ral/memref.h"
#include "ral/status.h"

namespace ral::kernels {

template <typename T, int N>
std::string shapeString(const MemRef<T, N>& m) {
  std::ostringstream os;
  os << "[";
  for (int d = 0; d < N; ++d) os << (d ? "x" : "") << m.sizes[d];
  os << "]";
  return os.str();
}

// Sizes are non-negative and a non-empty MemRef has data.
template <typename T, int N>
Status checkMemRef(const MemRef<T, N>& m, const char* kernel, const char* what) {
  for (int d = 0; d < N; ++d) {
    if (m.sizes[d] < 0)
      return invalidArgument(kernel, ": ", what, " has a negative size ", shapeString(m));
  }
  if (m.numel() > 0 && m.aligned == nullptr)
    return invalidArgument(kernel, ": ", what, " ", shapeString(m), " has no data");
  return Status();
}

template <typename A, int NA, typename B, int NB>
bool sameSizes(const MemRef<A, NA>& a, const MemRef<B, NB>& b) {
  if (NA != NB) return false;
  for (int d = 0; d < NA; ++d)
    if (a.sizes[d] != b.sizes[d]) return false;
  return true;
}

// Byte range [first, last) the elements of a strided view touch (any stride signs); empty when
// it has no element.
inline std::pair<uintptr_t, uintptr_t> byteSpan(const void* data, int rank, const int64_t* sizes,
                                                const int64_t* strides, size_t elem_size) {
  int64_t lo = 0, hi = 0;
  for (int d = 0; d < rank; ++d) {
    if (sizes[d] == 0) return {0, 0};
    const int64_t extent = (sizes[d] - 1) * strides[d];
    (extent < 0 ? lo : hi) += extent;
  }
  const auto base = reinterpret_cast<uintptr_t>(data);
  const auto elem = static_cast<int64_t>(elem_size);
  return {base + lo * elem, base + (hi + 1) * elem};
}

template <typename T, int N>
std::pair<uintptr_t, uintptr_t> byteSpan(const MemRef<T, N>& m) {
  if (m.numel() == 0) return {0, 0};
  return byteSpan(m.data(), N, m.sizes, m.strides, sizeof(T));
}

// A GPU kernel's operand is memory the device's kernels can access: a host pointer (or another
// device's) is an error naming the operand, not a device fault, which on CUDA and HSA would end
// the process's GPU context. `span` is byteSpan's.
Status checkDeviceAccess(const Driver& driver, std::pair<uintptr_t, uintptr_t> span,
                         const char* kernel, const char* what);
template <typename T, int N>
Status checkDeviceAccess(const Driver& driver, const MemRef<T, N>& m, const char* kernel,
                         const char* what) {
  return checkDeviceAccess(driver, byteSpan(m), kernel, what);
}

template <typename A, int NA, typename B, int NB>
bool overlaps(const MemRef<A, NA>& a, const MemRef<B, NB>& b) {
  auto [a0, a1] = byteSpan(a);
  auto [b0, b1] = byteSpan(b);
  return a0 < a1 && b0 < b1 && a0 < b1 && b0 < a1;
}

// No two elements of m share memory: its strides, ordered, each step past the span of the dims
// inside it (size-1 dims aside). A zero or negative stride counts as overlapping.
template <typename T, int N>
bool nonOverlapping(const MemRef<T, N>& m) {
  int64_t stride[N], size[N];
  int n = 0;
  for (int d = 0; d < N; ++d) {
    if (m.sizes[d] == 1) continue;
    if (m.strides[d] <= 0) return false;
    int i = n++;
    for (; i > 0 && stride[i - 1] > m.strides[d]; --i) {
      stride[i] = stride[i - 1];
      size[i] = size[i - 1];
    }
    stride[i] = m.strides[d];
    size[i] = m.sizes[d];
  }
  for (int i = 1; i < n; ++i)
    if (stride[i] < stride[i - 1] * size[i - 1]) return false;
  return true;
}

// Memory from the driver, returned on scope exit (kernels never call malloc for data-sized
// scratch, so a host's own allocator serves them too).
class Scratch {
 public:
  Scratch() = default;
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() {
    if (ptr_ != nullptr) (void)driver_->deallocate(ptr_);
  }
  Status allocate(Driver* driver, size_t bytes) {
    driver_ = driver;
    RAL_ASSIGN_OR_RETURN(ptr_, driver->allocate(bytes == 0 ? 1 : bytes));
    return Status();
  }
  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }

 private:
  Driver* driver_ = nullptr;
  void* ptr_ = nullptr;
};

// Walks the row-major logical indices [begin, ...) of a shape of runtime rank (<= 8), keeping
// the element offsets of two strided views in step (no division per element).
class IndexWalker {
 public:
  IndexWalker(int rank, const int64_t* sizes, const int64_t* strides_a, const int64_t* strides_b,
              int64_t begin)
      : rank_(rank) {
    int64_t rest = begin;
    for (int d = rank - 1; d >= 0; --d) {
      sizes_[d] = sizes[d];
      sa_[d] = strides_a[d];
      sb_[d] = strides_b != nullptr ? strides_b[d] : 0;
      idx_[d] = sizes[d] > 0 ? rest % sizes[d] : 0;
      rest = sizes[d] > 0 ? rest / sizes[d] : 0;
      off_a_ += idx_[d] * sa_[d];
      off_b_ += idx_[d] * sb_[d];
    }
  }
  int64_t offsetA() const { return off_a_; }
  int64_t offsetB() const { return off_b_; }
  void next() {
    for (int d = rank_ - 1; d >= 0; --d) {
      ++idx_[d];
      off_a_ += sa_[d];
      off_b_ += sb_[d];
      if (idx_[d] < sizes_[d]) return;
      off_a_ -= idx_[d] * sa_[d];
      off_b_ -= idx_[d] * sb_[d];
      idx_[d] = 0;
    }
  }

 private:
  int rank_;
  int64_t sizes_[kMaxMemRefRank] = {};
  int64_t sa_[kMaxMemRefRank] = {};
  int64_t sb_[kMaxMemRefRank] = {};
  int64_t idx_[kMaxMemRefRank] = {};
  int64_t off_a_ = 0;
  int64_t off_b_ = 0;
};

}  // namespace ral::kernels

#endif  // RAL_KERNELS_COMMON_KERNEL_UTIL_H_
