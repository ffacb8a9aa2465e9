// The CPU primitive of the strided copy (kernels/copy/strided_copy.h): rows split over the
// context's CPU driver (parallelFor); a transposing copy goes tile by tile so both sides stay in
// cache.
#include <algorithm>
#include <cstring>

#include "kernels/common/kernel_util.h"
#include "kernels/common/parallel.h"
#include "kernels/copy/strided_copy.h"

namespace ral::kernels {
namespace {

constexpr int64_t kTile = 32;
constexpr int64_t kGrainElements = 1 << 15;

template <typename E>
Status copyTyped(Driver* driver, int rank, const int64_t* sizes, const E* src, const int64_t* ss,
                 E* dst, const int64_t* ds) {
  int64_t numel = 1;
  for (int d = 0; d < rank; ++d) numel *= sizes[d];
  const int last = rank - 1;
  const int64_t inner = sizes[last];
  // A transposing copy: the source is contiguous along another dim p. Copy tile by tile.
  int p = -1;
  if (ss[last] != 1 && inner > 1) {
    for (int d = 0; d < last; ++d)
      if (ss[d] == 1 && sizes[d] > 1) p = d;
  }
  if (p >= 0) {
    int64_t osizes[kMaxMemRefRank], oss[kMaxMemRefRank], ods[kMaxMemRefRank];
    int orank = 0;
    for (int d = 0; d < last; ++d) {
      if (d == p) continue;
      osizes[orank] = sizes[d], oss[orank] = ss[d], ods[orank] = ds[d];
      ++orank;
    }
    int64_t outer = 1;
    for (int d = 0; d < orank; ++d) outer *= osizes[d];
    const int64_t tile_rows = (sizes[p] + kTile - 1) / kTile;
    const int64_t units = outer * tile_rows;
    const int64_t grain = std::max<int64_t>(1, kGrainElements / (kTile * inner));
    return parallelFor(driver, units, grain, [&](int64_t begin, int64_t end) {
      for (int64_t u = begin; u < end; ++u) {
        IndexWalker w(orank, osizes, oss, ods, u / tile_rows);
        const E* s = src + w.offsetA();
        E* t = dst + w.offsetB();
        const int64_t i0 = (u % tile_rows) * kTile, i1 = std::min(sizes[p], i0 + kTile);
        for (int64_t j0 = 0; j0 < inner; j0 += kTile) {
          const int64_t j1 = std::min(inner, j0 + kTile);
          for (int64_t i = i0; i < i1; ++i)
            for (int64_t j = j0; j < j1; ++j)
              t[i * ds[p] + j * ds[last]] = s[i * ss[p] + j * ss[last]];
        }
      }
      return Status();
    });
  }
  const int64_t rows = numel / inner;
  const int64_t grain = std::max<int64_t>(1, kGrainElements / inner);
  const bool dense_rows = ss[last] == 1 && ds[last] == 1;
  return parallelFor(driver, rows, grain, [&](int64_t begin, int64_t end) {
    IndexWalker w(last, sizes, ss, ds, begin);
    for (int64_t r = begin; r < end; ++r, w.next()) {
      const E* s = src + w.offsetA();
      E* t = dst + w.offsetB();
      if (dense_rows) {
        std::memcpy(t, s, sizeof(E) * inner);
      } else {
        for (int64_t j = 0; j < inner; ++j) t[j * ds[last]] = s[j * ss[last]];
      }
    }
    return Status();
  });
}

template <typename E>
Status fillTyped(Driver* driver, int rank, const int64_t* sizes, E* dst, const int64_t* ds,
                 E value) {
  int64_t numel = 1;
  for (int d = 0; d < rank; ++d) numel *= sizes[d];
  const int last = rank - 1;
  const int64_t inner = sizes[last];
  const int64_t rows = numel / inner;
  return parallelFor(driver, rows, std::max<int64_t>(1, kGrainElements / inner),
                     [&](int64_t begin, int64_t end) {
                       IndexWalker w(last, sizes, ds, nullptr, begin);
                       for (int64_t r = begin; r < end; ++r, w.next()) {
                         E* t = dst + w.offsetA();
                         for (int64_t j = 0; j < inner; ++j) t[j * ds[last]] = value;
                       }
                       return Status();
                     });
}

template <typename F>
Status withElementType(int size_index, F&& f) {
  switch (size_index) {
    case 0:
      return f(uint8_t{});
    case 1:
      return f(uint16_t{});
    case 2:
      return f(uint32_t{});
    default:
      return f(uint64_t{});
  }
}

}  // namespace

Status copyPrimitive(cpu::Tag, const KernelEnv& env, const StridedCopy& w) {
  return withElementType(w.size_index, [&](auto e) {
    using E = decltype(e);
    return copyTyped(env.driver, w.rank, w.sizes, static_cast<const E*>(w.src), w.src_strides,
                     static_cast<E*>(w.dst), w.dst_strides);
  });
}

Status fillPrimitive(cpu::Tag, const KernelEnv& env, const StridedFill& w) {
  return withElementType(w.size_index, [&](auto e) {
    using E = decltype(e);
    return fillTyped(env.driver, w.rank, w.sizes, static_cast<E*>(w.dst), w.dst_strides,
                     static_cast<E>(w.value));
  });
}

Status readIndices(cpu::Tag, const KernelEnv&, const int64_t* src, int64_t stride, int n,
                   int64_t* out) {
  for (int d = 0; d < n; ++d) out[d] = src[d * stride];
  return Status();
}

}  // namespace ral::kernels
