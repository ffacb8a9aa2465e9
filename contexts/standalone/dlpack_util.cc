#include "ral/dlpack_util.h"

namespace ral::standalone {

StatusOr<DType> dtypeFromDLPack(DLDataType type) {
  if (type.lanes != 1)
    return unsupported("DLPack tensors with ", type.lanes, " lanes are not supported");
  switch (type.code) {
    case kDLInt:
      switch (type.bits) {
        case 8:
          return DType::kI8;
        case 16:
          return DType::kI16;
        case 32:
          return DType::kI32;
        case 64:
          return DType::kI64;
      }
      break;
    case kDLUInt:
      switch (type.bits) {
        case 1:
          return DType::kBool;
        case 8:
          return DType::kUI8;
        case 16:
          return DType::kUI16;
        case 32:
          return DType::kUI32;
        case 64:
          return DType::kUI64;
      }
      break;
    case kDLFloat:
      switch (type.bits) {
        case 16:
          return DType::kF16;
        case 32:
          return DType::kF32;
        case 64:
          return DType::kF64;
      }
      break;
    case kDLBfloat:
      if (type.bits == 16) return DType::kBF16;
      break;
    case kDLBoolCode:
      if (type.bits == 8) return DType::kBool;
      break;
  }
  return unsupported("DLPack element type (code ", int{type.code}, ", ", int{type.bits},
                     " bits) has no RAL equivalent");
}

DLDataType dtypeToDLPack(DType type) {
  const auto bits = static_cast<uint8_t>(dtypeSize(type) * 8);
  switch (type) {
    case DType::kBool:
      return DLDataType{kDLBoolCode, 8, 1};
    case DType::kI8:
    case DType::kI16:
    case DType::kI32:
    case DType::kI64:
      return DLDataType{kDLInt, bits, 1};
    case DType::kUI8:
    case DType::kUI16:
    case DType::kUI32:
    case DType::kUI64:
      return DLDataType{kDLUInt, bits, 1};
    case DType::kF16:
    case DType::kF32:
    case DType::kF64:
      return DLDataType{kDLFloat, bits, 1};
    case DType::kBF16:
      return DLDataType{kDLBfloat, 16, 1};
    case DType::kInvalid:
      break;
  }
  return DLDataType{kDLOpaqueHandle, 0, 1};
}

StatusOr<DeviceKind> deviceFromDLPack(DLDevice device) {
  switch (device.device_type) {
    case kDLCPU:
    case kDLCUDAHost:
      return DeviceKind::kCpu;
    case kDLCUDA:
      return DeviceKind::kCuda;
    case kDLVulkan:
      return DeviceKind::kVulkan;
    case kDLROCM:
      return DeviceKind::kHsa;
    default:
      break;
  }
  return unsupported("DLPack device type ", static_cast<int>(device.device_type),
                     " has no RAL driver");
}

DLDevice deviceToDLPack(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::kCpu:
      return DLDevice{kDLCPU, 0};
    case DeviceKind::kCuda:
      return DLDevice{kDLCUDA, 0};
    case DeviceKind::kVulkan:
      return DLDevice{kDLVulkan, 0};
    case DeviceKind::kHsa:
      return DLDevice{kDLROCM, 0};
  }
  return DLDevice{kDLCPU, 0};
}

}  // namespace ral::standalone
