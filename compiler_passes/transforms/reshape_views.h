// memref.reshape with a shape buffer the program fills with known sizes -> a view
// (reshape_views.cc). Run by disc-ral-bufferize after bufferization.
#ifndef RAL_COMPILER_PASSES_TRANSFORMS_RESHAPE_VIEWS_H_
#define RAL_COMPILER_PASSES_TRANSFORMS_RESHAPE_VIEWS_H_

#include "mlir/IR/BuiltinOps.h"

namespace mlir {
namespace disc_ral {

void reshapesToViews(ModuleOp module);

}  // namespace disc_ral
}  // namespace mlir

#endif  // RAL_COMPILER_PASSES_TRANSFORMS_RESHAPE_VIEWS_H_
