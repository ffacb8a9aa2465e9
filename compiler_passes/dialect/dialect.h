// The disc_ral dialect: the execution context type and the operations that model
// how a compiled module talks to RAL, defined in DiscRalOps.td.
//
//   %ctx : !disc_ral.context
//   %x = disc_ral.recv_input %ctx, 0 : memref<?x4xf32>
//   disc_ral.send_output %ctx, 0, %y : memref<?x8xf32>
//   disc_ral.dispatch %ctx, "ral_gemm", "cpu" (%a, %b, %c, %f, %f)
//       : (memref<?x4xf32>, memref<4x8xf32>, memref<?x8xf32>, i1, i1) -> ()
//   %m = disc_ral.alloc %ctx(%n) : memref<?x8xf32>
//   disc_ral.dealloc %ctx, %m : memref<?x8xf32>
//   disc_ral.launch %ctx, @ral_kernel_0 grid(%g, %c1, %c1) block(%r, %c1, %c1) args(%x) : ...
//   %w = disc_ral.constant %ctx, 0 : memref<784x128xf32>
//   %y = disc_ral.conv ins(%x, %w, %b : ...) outs(%init : ...) {strides = ..., ...} -> ...
//
// Thread-safety: as for any MLIR dialect; ops are built and verified under their MLIRContext.
#ifndef RAL_COMPILER_PASSES_DIALECT_DIALECT_H_
#define RAL_COMPILER_PASSES_DIALECT_DIALECT_H_

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

// Generated declarations (mlir-tblgen, DiscRalOps.td).
// clang-format off
#include "compiler_passes/DiscRalOpsDialect.h.inc"
#define GET_TYPEDEF_CLASSES
#include "compiler_passes/DiscRalOpsTypes.h.inc"
#define GET_OP_CLASSES
#include "compiler_passes/DiscRalOps.h.inc"
// clang-format on

namespace mlir {
namespace disc_ral {

// Attributes that mark a function declaration as a RAL custom call:
//   func.func private @softmax(memref<?x?xf32>, memref<?x?xf32>)
//       attributes {disc_ral.custom_call = "ral_softmax", disc_ral.device = "cpu"}
inline constexpr const char kCustomCallAttr[] = "disc_ral.custom_call";
inline constexpr const char kCustomCallDeviceAttr[] = "disc_ral.device";
// Marks a kernel function outlined by disc-ral-outline-kernels:
//   func.func @ral_kernel_0(%workgroup: !llvm.ptr, %args: !llvm.ptr) attributes {disc_ral.kernel}
// i.e. a `ral_host_kernel` (drivers/cpu/host_kernel.h) once lowered to LLVM.
inline constexpr const char kKernelAttr[] = "disc_ral.kernel";
// Module attribute: the constants section, [{name, value: dense elements}], index = position.
inline constexpr const char kConstantsAttr[] = "disc_ral.constants";
// On a memref.global: a constant read by a library kernel's host side (ral_conv's config), kept
// in the host code by disc-ral-module-constants whatever the device.
inline constexpr const char kHostConstantAttr[] = "disc_ral.host_constant";
// On an entry function's argument or result: its integers are unsigned. The code treats them as
// the signless integers MLIR's arith ops take; the module's signature says uint8..uint64, so
// hosts bind unsigned tensors there (compile_driver.cc). Set by the ONNX importer.
inline constexpr const char kUnsignedAttr[] = "disc_ral.unsigned";
// Module attribute set by disc-ral-serialize-kernels and disc-ral-serialize-gpu-kernels: one
// dictionary per device kernel {name, format ("spirv", "ptx", "hsaco"), data (the binary) or
// variants ([{target, data}], one per GPU architecture), workgroup}; kernel i is executable i,
// entry 0.
inline constexpr const char kDeviceKernelsAttr[] = "disc_ral.device_kernels";
// Module attribute set by disc-ral-to-llvm: the kernel symbols of the module's host executable,
// in entry order. The host executable follows the device kernels' executables.
inline constexpr const char kHostKernelsAttr[] = "disc_ral.host_kernels";

// Attach the bufferization models of disc_ral.conv and disc_ral.topk (destination style: the
// inits become the output buffers). Called by the dialect's initialize().
void registerConvBufferization(MLIRContext* context);
void registerTopKBufferization(MLIRContext* context);

}  // namespace disc_ral
}  // namespace mlir

#endif  // RAL_COMPILER_PASSES_DIALECT_DIALECT_H_
