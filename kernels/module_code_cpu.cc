// ral_kernel_launch and ral_constant for device "cpu" (kernels/module_code.h). Host kernels run
// on the CPU driver's pool before the call returns: the host code after a launch reads the
// results at once.
#include "kernels/kernel_types.h"
#include "kernels/module_code.h"
#include "ral/api.h"

namespace ral::kernels {
namespace {

void kernelLaunch(ExecutionContext* ctx, int64_t executable, int64_t entry, int64_t gx, int64_t gy,
                  int64_t gz, int64_t bx, int64_t by, int64_t bz, int64_t shared, void** args,
                  int64_t* sizes, int64_t count) {
  const LaunchRequest r{executable, entry, {gx, gy, gz}, {bx, by, bz}, shared, args, sizes, count};
  RAL_SIGNAL_IF_ERROR(ctx, launchModuleKernel(ctx, DeviceKind::kCpu, nullptr, r));
}
RAL_API("ral_kernel_launch", "cpu", kernelLaunch);

template <typename T, int N>
MemRef<T, N> constant(ExecutionContext* ctx, int64_t index) {
  return moduleConstant<T, N>(ctx, DeviceKind::kCpu, index);
}
#define RAL_REGISTER_CONSTANT_RANK(T, N) RAL_API("ral_constant", "cpu", constant<T, N>);
#define RAL_REGISTER_CONSTANT(T) \
  RAL_REGISTER_CONSTANT_RANK(T, 0) RAL_KERNEL_RANKS_1_TO_6(RAL_REGISTER_CONSTANT_RANK, T)
RAL_KERNEL_DATA_TYPES(RAL_REGISTER_CONSTANT)

}  // namespace
}  // namespace ral::kernels
