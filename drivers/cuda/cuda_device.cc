#include "drivers/cuda/cuda_device.h"

#include <cstdlib>
#include <string>

namespace ral::cuda {

StatusOr<std::shared_ptr<CudaDevice>> CudaDevice::open(int ordinal) {
  RAL_ASSIGN_OR_RETURN(const CudaLibrary* lib, CudaLibrary::get());
  if (ordinal < 0) {
    ordinal = 0;
    if (const char* env = std::getenv(kCudaDeviceEnv); env != nullptr && env[0] != '\0') {
      char* end = nullptr;
      const long v = std::strtol(env, &end, 10);
      if (*end != '\0' || v < 0 || v > 1024)
        return invalidArgument("cuda: ", kCudaDeviceEnv, "='", env,
                               "' is not a device ordinal (0, 1, ...)");
      ordinal = static_cast<int>(v);
    }
  }
  int count = 0;
  RAL_RETURN_IF_ERROR(RAL_CUDA_CALL(*lib, cuDeviceGetCount, &count));
  if (count == 0) return unavailable("cuda: the CUDA driver reports no device");
  if (ordinal >= count)
    return invalidArgument("cuda: device ", ordinal, " requested but only ", count,
                           " device(s) exist");
  std::shared_ptr<CudaDevice> device(new CudaDevice());
  device->lib_ = lib;
  device->ordinal_ = ordinal;
  RAL_RETURN_IF_ERROR(RAL_CUDA_CALL(*lib, cuDeviceGet, &device->device_, ordinal));
  char name[256] = {};
  RAL_RETURN_IF_ERROR(
      RAL_CUDA_CALL(*lib, cuDeviceGetName, name, sizeof(name) - 1, device->device_));
  device->name_ = name;
  RAL_RETURN_IF_ERROR(RAL_CUDA_CALL(*lib, cuDeviceGetAttribute, &device->cc_major_,
                                    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device->device_));
  RAL_RETURN_IF_ERROR(RAL_CUDA_CALL(*lib, cuDeviceGetAttribute, &device->cc_minor_,
                                    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device->device_));
  CUcontext context = nullptr;
  RAL_RETURN_IF_ERROR(RAL_CUDA_CALL(*lib, cuDevicePrimaryCtxRetain, &context, device->device_));
  device->context_ = context;
  return device;
}

CudaDevice::~CudaDevice() {
  if (context_ != nullptr) (void)cu().cuDevicePrimaryCtxRelease_v2(device_);
}

// ---- events

StatusOr<BackendEvent> CudaEventBackend::createEvent() {
  RAL_RETURN_IF_ERROR(device_->makeCurrent());
  CUevent event = nullptr;
  RAL_RETURN_IF_ERROR(
      RAL_CUDA_CALL(device_->lib(), cuEventCreate, &event, CU_EVENT_DISABLE_TIMING));
  return static_cast<BackendEvent>(event);
}

void CudaEventBackend::destroyEvent(BackendEvent event) {
  if (device_->makeCurrent().ok())
    (void)device_->cu().cuEventDestroy_v2(static_cast<CUevent>(event));
}

// Every call may come from a thread with no current context of its own: the pending queue's
// worker, or any host thread waiting for a semaphore.
Status CudaEventBackend::recordEvent(BackendEvent event, BackendStream stream) {
  RAL_RETURN_IF_ERROR(device_->makeCurrent());
  return RAL_CUDA_CALL(device_->lib(), cuEventRecord, static_cast<CUevent>(event),
                       static_cast<CUstream>(stream));
}

StatusOr<bool> CudaEventBackend::queryEvent(BackendEvent event) {
  RAL_RETURN_IF_ERROR(device_->makeCurrent());
  const CUresult r = device_->cu().cuEventQuery(static_cast<CUevent>(event));
  if (r == CUDA_SUCCESS) return true;
  if (r == CUDA_ERROR_NOT_READY) return false;
  return device_->lib().check(r, "cuEventQuery");
}

Status CudaEventBackend::synchronizeEvent(BackendEvent event) {
  RAL_RETURN_IF_ERROR(device_->makeCurrent());
  return RAL_CUDA_CALL(device_->lib(), cuEventSynchronize, static_cast<CUevent>(event));
}

Status CudaEventBackend::streamWaitEvent(BackendStream stream, BackendEvent event) {
  RAL_RETURN_IF_ERROR(device_->makeCurrent());
  return RAL_CUDA_CALL(device_->lib(), cuStreamWaitEvent, static_cast<CUstream>(stream),
                       static_cast<CUevent>(event), CU_EVENT_WAIT_DEFAULT);
}

Status CudaEventBackend::launchHostFunc(BackendStream stream, HostFn fn, void* user) {
  RAL_RETURN_IF_ERROR(device_->makeCurrent());
  return RAL_CUDA_CALL(device_->lib(), cuLaunchHostFunc, static_cast<CUstream>(stream), fn, user);
}

// ---- memory

StatusOr<void*> CudaMemoryBackend::allocate(size_t bytes, MemoryKind kind) {
  RAL_RETURN_IF_ERROR(device_->makeCurrent());
  if (kind == MemoryKind::kHostVisible) {
    void* ptr = nullptr;
    RAL_RETURN_IF_ERROR(RAL_CUDA_CALL(device_->lib(), cuMemHostAlloc, &ptr, bytes,
                                      CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP));
    return ptr;
  }
  CUdeviceptr ptr = 0;
  RAL_RETURN_IF_ERROR(RAL_CUDA_CALL(device_->lib(), cuMemAlloc_v2, &ptr, bytes));
  return reinterpret_cast<void*>(ptr);
}

void CudaMemoryBackend::free(void* ptr, MemoryKind kind) {
  if (!device_->makeCurrent().ok()) return;
  if (kind == MemoryKind::kHostVisible) {
    (void)device_->cu().cuMemFreeHost(ptr);
  } else {
    (void)device_->cu().cuMemFree_v2(reinterpret_cast<CUdeviceptr>(ptr));
  }
}

Status CudaMemoryBackend::synchronizeDevice() {
  RAL_RETURN_IF_ERROR(device_->makeCurrent());
  return RAL_CUDA_CALL(device_->lib(), cuCtxSynchronize);
}

}  // namespace ral::cuda
