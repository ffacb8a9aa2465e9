// StackDriver: a Driver whose allocate/deallocate only pop and push a pointer stack, with no
// bucket, no check and no statistics. Timed through the same virtual calls as CpuDriver, it is
// the floor any allocator behind the Driver interface pays: the two calls and the StatusOr and
// Status they return. Everything else is unimplemented.
#ifndef RAL_BENCHMARKS_STACK_DRIVER_H_
#define RAL_BENCHMARKS_STACK_DRIVER_H_

#include <memory>

#include "ral/driver.h"

namespace ral::bench {

// Defined in its own file so the caller cannot see through the virtual calls.
std::unique_ptr<Driver> makeStackDriver();

}  // namespace ral::bench

#endif  // RAL_BENCHMARKS_STACK_DRIVER_H_
