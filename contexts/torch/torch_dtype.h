// Conversions between RAL element types / devices and torch's (c10 only, no ATen).
#ifndef RAL_CONTEXTS_TORCH_TORCH_DTYPE_H_
#define RAL_CONTEXTS_TORCH_TORCH_DTYPE_H_

#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>

#include "ral/driver.h"
#include "ral/dtype.h"
#include "ral/status.h"

namespace ral::torch_host {

// Unsupported for types torch lacks (ui16/ui32/ui64 before torch 2.3).
StatusOr<c10::ScalarType> toScalarType(DType dtype);
// kInvalid for a torch type RAL has no equivalent of (complex, quantized, ...).
DType fromScalarType(c10::ScalarType type);

// Unsupported for device kinds the torch context does not run (only cpu and cuda).
StatusOr<c10::DeviceType> toDeviceType(DeviceKind kind);

}  // namespace ral::torch_host

#endif  // RAL_CONTEXTS_TORCH_TORCH_DTYPE_H_
