// What generated code calls to reach the module's own executables and constants: generated
// kernels are launched through RAL, and constants live in the module file. Each device registers
// the two RAL functions with its own device name and stream:
//
//   void ral_kernel_launch(ctx, int64_t executable, int64_t entry,
//                          int64_t grid_x, grid_y, grid_z, block_x, block_y, block_z,
//                          int64_t shared_bytes, void** args, int64_t* arg_sizes, int64_t count)
//       ral_kernel_launch___<dev>___pvoid_i64_i64_i64_i64_i64_i64_i64_i64_i64_ppvoid_pi64_i64___void
//     Launches entry `entry` of the module's executable #`executable`, loading it on the device
//     first if this Context has not yet (Context::moduleExecutable). `args[i]` points to argument
//     i of `arg_sizes[i]` bytes, as in cuLaunchKernel. A grid with a zero dimension launches
//     nothing; a negative or oversized dimension, an empty block, an unknown executable or entry
//     fail the execution with an error naming them.
//
//   MemRef<T, N> ral_constant(ctx, int64_t index)
//       ral_constant___<dev>___pvoid_i64___m<N>d<T>
//     Constant #`index` of the module as a dense row-major view on the device: the module file's
//     bytes on the CPU, a copy uploaded once per Context elsewhere. Its element type and rank
//     must be those the module file records.
//
// Thread-safe: executions of one Context may launch and fetch concurrently.
#ifndef RAL_KERNELS_MODULE_CODE_MODULE_CODE_H_
#define RAL_KERNELS_MODULE_CODE_MODULE_CODE_H_

#include <algorithm>
#include <array>
#include <cstdint>

#include "kernels/common/kernel_types.h"
#include "ral/api.h"
#include "ral/context.h"
#include "ral/driver.h"
#include "ral/execution_context.h"
#include "ral/memref.h"
#include "ral/status.h"

namespace ral::kernels {

struct LaunchRequest {
  int64_t executable, entry;
  int64_t grid[3], block[3];
  int64_t shared_bytes;
  void** args;
  const int64_t* arg_sizes;
  int64_t count;
};

// Checks `request` and launches it on the `kind` driver of the execution's Context, on `stream`.
Status launchModuleKernel(ExecutionContext* ctx, DeviceKind kind, Stream* stream,
                          const LaunchRequest& request);

// The data of constant `index` on `kind`, after checking its element type and rank.
StatusOr<void*> moduleConstantData(ExecutionContext* ctx, DeviceKind kind, int64_t index,
                                   DType dtype, int rank, const int64_t** shape);

template <typename T, int N>
MemRef<T, N> moduleConstant(ExecutionContext* ctx, DeviceKind kind, int64_t index) {
  const int64_t* shape = nullptr;
  auto data = moduleConstantData(ctx, kind, index, kDTypeOf<T>, N, &shape);
  if (!data.ok()) {
    ctx->signalError(data.status());
    return MemRef<T, N>{};
  }
  std::array<int64_t, N> sizes{};
  std::copy_n(shape, N, sizes.begin());
  return makeMemRef<T, N>(static_cast<T*>(*data), sizes);
}

// The two RAL functions for device kind K: launches go to the execution's stream (the CPU runs
// them before returning, so host code may read the results at once).
template <DeviceKind K>
void kernelLaunch(ExecutionContext* ctx, int64_t executable, int64_t entry, int64_t gx, int64_t gy,
                  int64_t gz, int64_t bx, int64_t by, int64_t bz, int64_t shared, void** args,
                  int64_t* sizes, int64_t count) {
  const LaunchRequest r{executable, entry, {gx, gy, gz}, {bx, by, bz}, shared, args, sizes, count};
  Stream* stream = K == DeviceKind::kCpu ? nullptr : ctx->stream();
  RAL_SIGNAL_IF_ERROR(ctx, launchModuleKernel(ctx, K, stream, r));
}

template <DeviceKind K, typename T, int N>
MemRef<T, N> constant(ExecutionContext* ctx, int64_t index) {
  return moduleConstant<T, N>(ctx, K, index);
}

}  // namespace ral::kernels

// Registers ral_kernel_launch and ral_constant (every kernel data type, ranks 0-6) for the device
// named by `kDevice` (a constexpr string) whose tag is `Dev`, which the including file defines in
// the namespace where it uses this, once per device (kernels/generic_ops.h).
#define RAL_REGISTER_MODULE_CODE()                                                 \
  RAL_API("ral_kernel_launch", kDevice, ::ral::kernels::kernelLaunch<Dev::kKind>); \
  RAL_KERNEL_DATA_TYPES(RAL_MODULE_CODE_CONSTANTS_OF_TYPE_)
#define RAL_MODULE_CODE_CONSTANT_(T, N) \
  RAL_API("ral_constant", kDevice, ::ral::kernels::constant<Dev::kKind, T, N>);
#define RAL_MODULE_CODE_CONSTANTS_OF_TYPE_(T) \
  RAL_MODULE_CODE_CONSTANT_(T, 0) RAL_KERNEL_RANKS_1_TO_6(RAL_MODULE_CODE_CONSTANT_, T)

#endif  // RAL_KERNELS_MODULE_CODE_MODULE_CODE_H_
