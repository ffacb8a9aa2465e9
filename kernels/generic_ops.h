// The ops written once for every device, with no code of a device's own: ral_memcpy,
// ral_memset, ral_read_element, ral_write_element (kernels/memory_ops), ral_transpose
// (kernels/transpose), ral_kernel_launch and ral_constant (kernels/module_code), and the
// collectives (kernels/collective: host staging over the Driver interface, or the device's own
// transport where its registration file names one). Their device part is the Driver interface
// and kernels/copy's strided primitive, so a device registers them from its registration file
// (registration_<device>.cc) with one line:
//
//   RAL_REGISTER_GENERIC_OPS(cuda, "cuda")   // the tag namespace ral::kernels::cuda, its name
#ifndef RAL_KERNELS_GENERIC_OPS_H_
#define RAL_KERNELS_GENERIC_OPS_H_

#include "kernels/collective/collective.h"
#include "kernels/collective/host_staging.h"
#include "kernels/memory_ops/memory_ops.h"
#include "kernels/module_code/module_code.h"
#include "kernels/transpose/transpose.h"
#include "ral/registration.h"

#define RAL_REGISTER_GENERIC_OPS(tag_namespace, device_name) \
  namespace ral::kernels::tag_namespace {                    \
  namespace {                                                \
  using Dev = Tag;                                           \
  constexpr char kDevice[] = device_name;                    \
  RAL_REGISTER_MEMORY_OPS()                                  \
  RAL_REGISTER_MODULE_CODE()                                 \
  RAL_REGISTER_TRANSPOSE()                                   \
  using Impl = CollectiveImplOf<Tag>::type;                  \
  RAL_REGISTER_COLLECTIVES()                                 \
  }                                                          \
  }

#endif  // RAL_KERNELS_GENERIC_OPS_H_
