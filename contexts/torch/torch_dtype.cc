#include "contexts/torch/torch_dtype.h"

#include <torch/version.h>

// Unsigned 16/32/64-bit tensors exist from torch 2.3 on.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
#define RAL_TORCH_HAS_WIDE_UNSIGNED 1
#else
#define RAL_TORCH_HAS_WIDE_UNSIGNED 0
#endif

namespace ral::torch_host {

StatusOr<c10::ScalarType> toScalarType(DType dtype) {
  switch (dtype) {
    case DType::kBool:
      return c10::ScalarType::Bool;
    case DType::kI8:
      return c10::ScalarType::Char;
    case DType::kI16:
      return c10::ScalarType::Short;
    case DType::kI32:
      return c10::ScalarType::Int;
    case DType::kI64:
      return c10::ScalarType::Long;
    case DType::kUI8:
      return c10::ScalarType::Byte;
    case DType::kF16:
      return c10::ScalarType::Half;
    case DType::kBF16:
      return c10::ScalarType::BFloat16;
    case DType::kF32:
      return c10::ScalarType::Float;
    case DType::kF64:
      return c10::ScalarType::Double;
#if RAL_TORCH_HAS_WIDE_UNSIGNED
    case DType::kUI16:
      return c10::ScalarType::UInt16;
    case DType::kUI32:
      return c10::ScalarType::UInt32;
    case DType::kUI64:
      return c10::ScalarType::UInt64;
#else
    case DType::kUI16:
    case DType::kUI32:
    case DType::kUI64:
#endif
    case DType::kInvalid:
      break;
  }
  return unsupported("element type ", dtypeName(dtype), " has no torch equivalent in torch ",
                     TORCH_VERSION_MAJOR, ".", TORCH_VERSION_MINOR);
}

DType fromScalarType(c10::ScalarType type) {
  switch (type) {
    case c10::ScalarType::Bool:
      return DType::kBool;
    case c10::ScalarType::Char:
      return DType::kI8;
    case c10::ScalarType::Short:
      return DType::kI16;
    case c10::ScalarType::Int:
      return DType::kI32;
    case c10::ScalarType::Long:
      return DType::kI64;
    case c10::ScalarType::Byte:
      return DType::kUI8;
    case c10::ScalarType::Half:
      return DType::kF16;
    case c10::ScalarType::BFloat16:
      return DType::kBF16;
    case c10::ScalarType::Float:
      return DType::kF32;
    case c10::ScalarType::Double:
      return DType::kF64;
#if RAL_TORCH_HAS_WIDE_UNSIGNED
    case c10::ScalarType::UInt16:
      return DType::kUI16;
    case c10::ScalarType::UInt32:
      return DType::kUI32;
    case c10::ScalarType::UInt64:
      return DType::kUI64;
#endif
    default:
      break;
  }
  return DType::kInvalid;
}

StatusOr<c10::DeviceType> toDeviceType(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::kCpu:
      return c10::DeviceType::CPU;
    case DeviceKind::kCuda:
      return c10::DeviceType::CUDA;
    case DeviceKind::kVulkan:
    case DeviceKind::kHsa:
      break;
  }
  return unsupported("the torch context runs modules on cpu and cuda, not ", deviceKindName(kind));
}

}  // namespace ral::torch_host
