#include "kernels/cuda/cuda_env.h"

#include <iterator>
#include <string>
#include <vector>

#include "kernels/common/device_kernel_library.h"
#include "kernels/cuda/embedded_fatbin.h"

namespace ral::kernels::cuda {
namespace {

constexpr const char* kEntryNames[] = {RAL_CUDA_LIBRARY_ENTRIES(RAL_GPU_LIBRARY_NAME)};
static_assert(sizeof(kEntryNames) / sizeof(kEntryNames[0]) == static_cast<size_t>(Entry::kCount),
              "one name per entry");

const DeviceKernelLibrary& library() {
  static const DeviceKernelLibrary* const lib = new DeviceKernelLibrary(
      std::string("ral_cuda_builtin_kernels_") + embeddedFatbinMd5(), ExecutableFormat::kFatbin,
      std::vector<std::string>(std::begin(kEntryNames), std::end(kEntryNames)),
      {DeviceKernelVariant{"", embeddedFatbin(), embeddedFatbinSize()}});
  return *lib;
}

}  // namespace

StatusOr<CudaEnv> cudaEnv(ExecutionContext* ctx) {
  RAL_ASSIGN_OR_RETURN(KernelEnv env, kernelEnv(ctx, DeviceKind::kCuda));
  return cudaEnv(env);
}

StatusOr<CudaEnv> cudaEnv(const KernelEnv& env) {
  RAL_ASSIGN_OR_RETURN(CudaQueueService * queue,
                       requireService<CudaQueueService>(env.driver, "a CUDA queue"));
  RAL_ASSIGN_OR_RETURN(Executable * kernels, library().load(env));
  return CudaEnv{env.driver, queue, env.stream, kernels};
}

DeviceScratch::~DeviceScratch() {
  if (ptr_ != nullptr) (void)driver_->deallocate(ptr_);
}

Status DeviceScratch::allocate(const CudaEnv& env, size_t bytes) {
  driver_ = env.driver;
  RAL_ASSIGN_OR_RETURN(ptr_, env.queue->allocateOn(bytes, env.stream));
  return Status();
}

}  // namespace ral::kernels::cuda
