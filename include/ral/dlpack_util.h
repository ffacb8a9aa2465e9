// Conversions between RAL element types / devices and DLPack (dlpack 0.6, <dlpack/dlpack.h>).
#ifndef RAL_DLPACK_UTIL_H_
#define RAL_DLPACK_UTIL_H_

#include <dlpack/dlpack.h>

#include <memory>

#include "ral/driver.h"
#include "ral/dtype.h"
#include "ral/status.h"

namespace ral::standalone {

// dlpack 0.6 has no boolean code; later versions define kDLBool = 6, which RAL uses for i1
// (8 bits per element), so bool tensors round-trip with newer frameworks.
inline constexpr uint8_t kDLBoolCode = 6;

StatusOr<DType> dtypeFromDLPack(DLDataType type);
DLDataType dtypeToDLPack(DType type);
StatusOr<DeviceKind> deviceFromDLPack(DLDevice device);
DLDevice deviceToDLPack(DeviceKind kind);

// Calls the tensor's deleter; for std::unique_ptr.
struct DLManagedTensorDeleter {
  void operator()(DLManagedTensor* t) const {
    if (t != nullptr && t->deleter != nullptr) t->deleter(t);
  }
};
using DLTensorPtr = std::unique_ptr<DLManagedTensor, DLManagedTensorDeleter>;

}  // namespace ral::standalone

#endif  // RAL_DLPACK_UTIL_H_
