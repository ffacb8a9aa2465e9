// The pixels of a pointwise convolution's channels-first views x and y as GEMM rows: RAL's own
// CPU kernels for such convolutions (the tiles of conv_tiles_cpu.cc, the linear layers of
// conv_linear_cpu.cc) run one GEMM per outer index over `pixels` evenly strided rows. Plain
// values, thread-safe.
#ifndef RAL_KERNELS_CONV_PIXEL_DIMS_H_
#define RAL_KERNELS_CONV_PIXEL_DIMS_H_

#include <cstdint>

#include "ral/memref.h"

namespace ral::kernels::cpu {

// The pixels of x and y: the batch and spatial dims of the channels-first views, outermost
// first, size-1 dims left out. The innermost ones that are evenly strided in both x and y
// collapse into the rows of one GEMM (`pixels` rows, strides x_row / y_row); the others stay
// outer dims, each task finding its rows' start from their strides.
struct PixelDims {
  static constexpr int kMax = 4;  // batch + 3 spatial dims
  int outer = 0;                  // outer dims: size, x_stride, y_stride below
  int64_t size[kMax] = {}, x_stride[kMax] = {}, y_stride[kMax] = {};
  int64_t outer_count = 1;
  int64_t pixels = 1, x_row = 0, y_row = 0;
  // Adds the element offsets of outer index `index` (row-major over the outer dims) to x_offset
  // and y_offset; returns what is left of `index` past them.
  int64_t offsets(int64_t index, int64_t* x_offset, int64_t* y_offset) const {
    for (int i = outer - 1; i >= 0; --i) {
      const int64_t idx = index % size[i];
      index /= size[i];
      *x_offset += idx * x_stride[i];
      *y_offset += idx * y_stride[i];
    }
    return index;
  }
};

template <int R>
PixelDims pixelDims(const MemRef<float, R>& x, const MemRef<float, R>& y) {
  PixelDims p;
  int64_t size[PixelDims::kMax], xs[PixelDims::kMax], ys[PixelDims::kMax];
  int n = 0;
  for (int d = 0; d < R; ++d) {
    if (d == 1 || x.sizes[d] == 1) continue;
    size[n] = x.sizes[d];
    xs[n] = x.strides[d];
    ys[n++] = y.strides[d];
  }
  int first = n;  // the first collapsed dim
  int64_t x_next = 0, y_next = 0;
  for (int i = n - 1; i >= 0; --i) {
    if (i == n - 1) {
      p.x_row = xs[i];
      p.y_row = ys[i];
    } else if (xs[i] != x_next || ys[i] != y_next) {
      break;
    }
    p.pixels *= size[i];
    x_next = xs[i] * size[i];
    y_next = ys[i] * size[i];
    first = i;
  }
  for (int i = 0; i < first; ++i) {
    p.size[p.outer] = size[i];
    p.x_stride[p.outer] = xs[i];
    p.y_stride[p.outer++] = ys[i];
    p.outer_count *= size[i];
  }
  return p;
}

}  // namespace ral::kernels::cpu

#endif  // RAL_KERNELS_CONV_PIXEL_DIMS_H_
