// The elementwise fusion disc-ral-bufferize runs on tensors (fuse_elementwise.cc says how it
// differs from upstream's linalg-fuse-elementwise-ops).
#ifndef RAL_COMPILER_PASSES_TRANSFORMS_FUSE_ELEMENTWISE_H_
#define RAL_COMPILER_PASSES_TRANSFORMS_FUSE_ELEMENTWISE_H_

#include <memory>

#include "mlir/Pass/Pass.h"

namespace mlir {
namespace disc_ral {

std::unique_ptr<Pass> createFuseElementwisePass();

}  // namespace disc_ral
}  // namespace mlir

#endif  // RAL_COMPILER_PASSES_TRANSFORMS_FUSE_ELEMENTWISE_H_
