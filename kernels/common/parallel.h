// parallelFor: splits [0, n) into chunks and runs them on the context's CPU driver through
// Driver::load/launch of a host-function executable, so kernels use whichever CPU driver the host
// installed. A driver that cannot run host functions gets the work done inline.
#ifndef RAL_KERNELS_COMMON_PARALLEL_H_
#define RAL_KERNELS_COMMON_PARALLEL_H_

#include <cstdint>
#include <functional>

#include "ral/driver.h"
#include "ral/status.h"

namespace ral::kernels {

// Runs body(begin, end) over chunks of at least `grain` indices; returns the first error a chunk
// returned. Chunks may run concurrently and in any order.
Status parallelFor(Driver* driver, int64_t n, int64_t grain,
                   const std::function<Status(int64_t, int64_t)>& body);

}  // namespace ral::kernels

#endif  // RAL_KERNELS_COMMON_PARALLEL_H_
