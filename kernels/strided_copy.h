// Element copies and fills over strided views, shared by ral_transpose, ral_memcpy, ral_memset.
// Work is split over the context's CPU driver (parallelFor); a transposing copy goes tile by tile
// so both sides stay in cache.
#ifndef RAL_KERNELS_STRIDED_COPY_H_
#define RAL_KERNELS_STRIDED_COPY_H_

#include <cstddef>
#include <cstdint>

#include "ral/driver.h"
#include "ral/status.h"

namespace ral::kernels {

// dst[i] = src[i] for every row-major index i of `sizes` (rank <= 8); strides count elements of
// `elem_size` bytes (1, 2, 4 or 8).
Status stridedCopy(Driver* driver, size_t elem_size, int rank, const int64_t* sizes,
                   const void* src, const int64_t* src_strides, void* dst,
                   const int64_t* dst_strides);

// dst[i] = *value for every index.
Status stridedFill(Driver* driver, size_t elem_size, int rank, const int64_t* sizes, void* dst,
                   const int64_t* dst_strides, const void* value);

}  // namespace ral::kernels

#endif  // RAL_KERNELS_STRIDED_COPY_H_
