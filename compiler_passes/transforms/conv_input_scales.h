// Convolutions whose input is a broadcast multiply used nowhere else: y = conv(x * s) with s one
// value per image and channel (the squeeze-and-excitation of EfficientNet and MobileNet-V3).
// ral_conv_scaled (kernels/conv/conv_scaled.h) scales each block of x as the convolution reads
// it, so x * s never goes to memory; disc-ral-lower-to-library-calls emits it, on the CPU.
#ifndef RAL_COMPILER_PASSES_TRANSFORMS_CONV_INPUT_SCALES_H_
#define RAL_COMPILER_PASSES_TRANSFORMS_CONV_INPUT_SCALES_H_

#include "compiler_passes/dialect/dialect.h"
#include "llvm/ADT/SmallVector.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir {
namespace disc_ral {

struct ScaledConvInput {
  ConvOp conv;
  linalg::GenericOp multiply;  // writes conv's input: data * scale
  Value data;                  // shaped as conv's input
  Value scale;                 // [N, 1, 1, C] (channels-last) or [N, C, 1, 1]
  // The product's allocation and deallocations, dead once the multiply is gone.
  SmallVector<Operation*> intermediates;
};

// The convolutions of `module` (f32, 2-D, on buffers) that read a fresh buffer written only by
// such a multiply, earlier in the same block, with nothing in between writing or freeing the
// multiply's operands: the call may read them where the convolution was.
SmallVector<ScaledConvInput> findScaledConvInputs(ModuleOp module);

}  // namespace disc_ral
}  // namespace mlir

#endif  // RAL_COMPILER_PASSES_TRANSFORMS_CONV_INPUT_SCALES_H_
