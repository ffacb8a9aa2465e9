#include "ral/layout.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "ral/memref.h"

namespace ral {
namespace {

// Beyond this many elements a layout is refused (as io_checks::numelOf refuses shapes).
constexpr int64_t kMaxElements = int64_t{1} << 48;

// One row of a strided copy; fixed-size element types let the compiler use plain loads.
template <typename T>
void copyRow(char* d, int64_t ds, const char* s, int64_t ss, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, s + i * ss, sizeof(T));
    std::memcpy(d + i * ds, &v, sizeof(T));
  }
}

void copyRow(char* d, int64_t ds, const char* s, int64_t ss, int64_t n, size_t elem) {
  switch (elem) {
    case 1:
      return copyRow<uint8_t>(d, ds, s, ss, n);
    case 2:
      return copyRow<uint16_t>(d, ds, s, ss, n);
    case 4:
      return copyRow<uint32_t>(d, ds, s, ss, n);
    case 8:
      return copyRow<uint64_t>(d, ds, s, ss, n);
    default:
      for (int64_t i = 0; i < n; ++i) std::memcpy(d + i * ds, s + i * ss, elem);
  }
}

bool isEmpty(const int64_t* sizes, int rank) {
  for (int d = 0; d < rank; ++d)
    if (sizes[d] == 0) return true;
  return false;
}

}  // namespace

void rowMajorStrides(const int64_t* sizes, int rank, int64_t* strides) {
  int64_t s = 1;
  for (int d = rank - 1; d >= 0; --d) {
    strides[d] = s;
    s *= std::max<int64_t>(sizes[d], 1);
  }
}

std::string stridesString(const int64_t* strides, int rank) {
  std::string s = "[";
  for (int d = 0; d < rank; ++d) {
    if (d > 0) s += ',';
    s += std::to_string(strides[d]);
  }
  return s + "]";
}

bool layoutAccepts(const TensorSignature& sig, const int64_t* sizes, const int64_t* strides,
                   int rank) {
  if (isEmpty(sizes, rank)) return true;
  if (sig.hasIdentityLayout()) {
    int64_t expected = 1;
    for (int d = rank - 1; d >= 0; --d) {
      if (sizes[d] > 1 && strides[d] != expected) return false;
      expected *= sizes[d];
    }
    return true;
  }
  for (int d = 0; d < rank; ++d)
    if (sizes[d] > 1 && sig.strides[d] != kDynamicDim && strides[d] != sig.strides[d]) return false;
  return true;
}

StatusOr<int64_t> layoutFor(const TensorSignature& sig, const int64_t* sizes, int rank,
                            int64_t* strides) {
  // Open strides are filled innermost first, each just past the elements of the dimensions
  // inside it, which is row-major when every stride is open.
  int64_t span = 1;  // elements covered by the dimensions placed so far
  for (int d = rank - 1; d >= 0; --d) {
    const bool open = sig.hasIdentityLayout() || sig.strides[d] == kDynamicDim;
    strides[d] = open ? span : sig.strides[d];
    const int64_t extra = std::max<int64_t>(sizes[d], 1) - 1;
    if (extra > 0 && strides[d] > (kMaxElements - span) / extra)
      return invalidArgument("a buffer in layout ", sig.layoutString(), " for ",
                             shapeString(sig.dtype, sizes, rank), " needs more than 2^48 elements");
    span += strides[d] * extra;
  }
  // Fixed strides may make two indices meet; taken innermost first, each dimension that is
  // walked must start past everything the smaller ones cover.
  int order[kMaxMemRefRank];
  int walked = 0;
  for (int d = 0; d < rank; ++d)
    if (sizes[d] > 1) order[walked++] = d;
  for (int i = 1; i < walked; ++i)  // insertion sort by stride: at most 8 entries
    for (int j = i; j > 0 && strides[order[j]] < strides[order[j - 1]]; --j)
      std::swap(order[j], order[j - 1]);
  int64_t covered = 1;
  for (int i = 0; i < walked; ++i) {
    const int d = order[i];
    if (strides[d] < covered)
      return invalidArgument("layout ", sig.layoutString(), " makes elements of ",
                             shapeString(sig.dtype, sizes, rank), " overlap (strides ",
                             stridesString(strides, rank),
                             "), so RAL cannot copy an input into it");
    covered += strides[d] * (sizes[d] - 1);
  }
  return isEmpty(sizes, rank) ? 0 : span;
}

StatusOr<InputBinding> chooseInputBinding(const TensorSignature& sig, size_t index,
                                          const int64_t* sizes, const int64_t* strides, int rank,
                                          bool strict_zero_copy) {
  if (layoutAccepts(sig, sizes, strides, rank)) return InputBinding::kAsIs;
  if (strict_zero_copy)
    return invalidArgument("input ", index, " (", shapeString(sig.dtype, sizes, rank),
                           ") has strides ", stridesString(strides, rank),
                           " but the module was compiled for layout ", sig.layoutString(), " (",
                           sig.typeString(),
                           "); strict zero-copy is on, so it is not copied: pass "
                           "a tensor in that layout (e.g. a contiguous one)");
  return InputBinding::kCopy;
}

void copyStrided(void* dst, const int64_t* dst_strides, const void* src, const int64_t* src_strides,
                 const int64_t* sizes, int rank, size_t elem) {
  auto* d_base = static_cast<char*>(dst);
  const auto* s_base = static_cast<const char*>(src);
  const auto e = static_cast<int64_t>(elem);
  if (isEmpty(sizes, rank)) return;
  if (rank == 0) {
    std::memcpy(d_base, s_base, elem);
    return;
  }
  const int last = rank - 1;
  const int64_t row = sizes[last];
  const int64_t ds = dst_strides[last] * e, ss = src_strides[last] * e;
  const bool dense_rows = dst_strides[last] == 1 && src_strides[last] == 1;
  int64_t idx[kMaxMemRefRank] = {};
  for (;;) {
    int64_t d_off = 0, s_off = 0;
    for (int k = 0; k < last; ++k) {
      d_off += idx[k] * dst_strides[k];
      s_off += idx[k] * src_strides[k];
    }
    char* d = d_base + d_off * e;
    const char* s = s_base + s_off * e;
    if (dense_rows) {
      std::memcpy(d, s, static_cast<size_t>(row * e));
    } else {
      copyRow(d, ds, s, ss, row, elem);
    }
    int k = last - 1;
    for (; k >= 0; --k) {
      if (++idx[k] < sizes[k]) break;
      idx[k] = 0;
    }
    if (k < 0) return;
  }
}

}  // namespace ral
