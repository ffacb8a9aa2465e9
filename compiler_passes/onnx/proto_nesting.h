// Why a serialized ONNX model that protobuf refuses to parse was refused, when the reason is its
// nesting: protobuf stops at 100 levels of nested messages (its recursion limit), which a model
// reaches only through the ONNX messages that can contain themselves (a graph attribute of a node
// holding a graph, a type whose element type is a type). Found by an iterative walk of the wire
// format along those fields, so no input can make it recurse.
#ifndef RAL_COMPILER_PASSES_ONNX_PROTO_NESTING_H_
#define RAL_COMPILER_PASSES_ONNX_PROTO_NESTING_H_

#include <optional>
#include <string>

#include "llvm/ADT/StringRef.h"

namespace mlir {
namespace disc_ral {
namespace onnx {

struct DeepNesting {
  int depth = 0;      // nested messages, the model itself at 0
  std::string where;  // "node 'if_0' (If), attribute 'then_branch'", "graph input 'x'", ...
};

// The deepest path of `bytes` (a ModelProto) when it nests more than `limit` messages; nullopt
// otherwise, and for bytes that are not a well-formed message along those paths.
std::optional<DeepNesting> findDeepNesting(llvm::StringRef bytes, int limit);

}  // namespace onnx
}  // namespace disc_ral
}  // namespace mlir

#endif  // RAL_COMPILER_PASSES_ONNX_PROTO_NESTING_H_
