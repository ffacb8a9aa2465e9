// The CUDA devices for device URIs (ral/device_uri.h): every device the driver API reports, after
// CUDA_VISIBLE_DEVICES, with its UUID as nvidia-smi prints it ("GPU-xxxxxxxx-xxxx-...").
#include <string>
#include <vector>

#include "drivers/cuda/cuda_driver.h"
#include "drivers/cuda/cuda_library.h"
#include "ral/device_uri.h"

namespace ral::cuda {
namespace {

std::string uuidText(const CUuuid& uuid) {
  static const char kHex[] = "0123456789abcdef";
  std::string text = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) text.push_back('-');
    const auto b = static_cast<unsigned char>(uuid.bytes[i]);
    text.push_back(kHex[b >> 4]);
    text.push_back(kHex[b & 15]);
  }
  return text;
}

}  // namespace

StatusOr<std::vector<DeviceInfo>> listCudaDevices() {
  RAL_ASSIGN_OR_RETURN(const CudaLibrary* lib, CudaLibrary::get());
  const CudaSymbols& cu = lib->symbols();
  int count = 0;
  RAL_RETURN_IF_ERROR(RAL_CUDA_CALL(*lib, cuDeviceGetCount, &count));
  std::vector<DeviceInfo> devices;
  for (int i = 0; i < count; ++i) {
    CUdevice device = 0;
    RAL_RETURN_IF_ERROR(RAL_CUDA_CALL(*lib, cuDeviceGet, &device, i));
    char name[256] = {};
    RAL_RETURN_IF_ERROR(RAL_CUDA_CALL(*lib, cuDeviceGetName, name, sizeof(name) - 1, device));
    int major = 0, minor = 0;
    RAL_RETURN_IF_ERROR(RAL_CUDA_CALL(*lib, cuDeviceGetAttribute, &major,
                                      CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device));
    RAL_RETURN_IF_ERROR(RAL_CUDA_CALL(*lib, cuDeviceGetAttribute, &minor,
                                      CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device));
    CUuuid uuid{};
    DeviceInfo d;
    d.kind = DeviceKind::kCuda;
    d.ordinal = i;
    if (cu.cuDeviceGetUuid_v2(&uuid, device) == CUDA_SUCCESS) d.uuid = uuidText(uuid);
    d.name = name;
    d.arch = internal::strCat("sm_", major, minor);
    devices.push_back(std::move(d));
  }
  return devices;
}

}  // namespace ral::cuda
