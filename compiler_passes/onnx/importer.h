// The ONNX importer: an ONNX model (opset 7..17 of the default domain) becomes a tensor-level
// MLIR module whose entry function takes the graph's inputs and returns its outputs, in order.
// Initializers and Constant nodes become dense constants (disc-ral-module-constants later moves
// the large ones to the module's constants section); symbolic or unknown dims become dynamic
// dims. Ops are linalg (named ops where one exists, linalg.generic otherwise), tensor and arith,
// ready for disc-ral-bufferize and the rest of ral-compile's pipeline.
//
// Anything the importer does not handle (an operator, an attribute or attribute value, a dtype,
// external data, a graph of unknown rank) fails the import with an error naming the node, its
// op type and what is missing; it never guesses. Every unsupported node of a graph is reported,
// not only the first.
//
// Thread-safety: importModel may run concurrently on different MLIRContexts.
#ifndef RAL_COMPILER_PASSES_ONNX_IMPORTER_H_
#define RAL_COMPILER_PASSES_ONNX_IMPORTER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "llvm/ADT/StringRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace mlir {
class MLIRContext;
namespace disc_ral {
namespace onnx {

struct ImportOptions {
  std::string entry = "main";  // the entry function's name
  std::string source_name;     // the file name, for messages and locations
  // Bytes of constant data the import may hold (initializers, Constant nodes and what it folds):
  // the constant that would cross it is refused, by name, before its data is copied. At most
  // limits.h's kMaxConstantBytes, which every module obeys anyway.
  int64_t max_constant_bytes = (int64_t{1} << 31) - (int64_t{1} << 26);
  // Asked after each node; a non-empty answer fails the import with it (how a compile's memory
  // budget reaches the importer; compile_driver.cc).
  std::function<std::string()> check_budget;
  // f32 Conv and ConvTranspose become disc_ral.conv (run by the ral_conv library kernel: oneDNN
  // on the CPU, cuDNN on CUDA); off, they are im2col and a GEMM, which every device runs.
  bool library_conv = false;
  // Whether the device's ral_conv applies hardswish itself (cuDNN's legacy API has no such
  // activation: on CUDA a HardSwish after a Conv stays a loop of its own).
  bool conv_hardswish = true;
  // And whether it applies GELU (oneDNN's eltwise does; cuDNN's legacy API does not).
  bool conv_gelu = false;
  // f32 MatMul and Gemm by a constant matrix, with a bias Add, a residual Add and an activation
  // after them, become disc_ral.conv too (a 1x1 channels-last convolution over the rows: the
  // kernel keeps the weights packed and applies the epilogue before each store). Off, they are
  // linalg.matmul (ral_gemm) and loops. Only where ral_conv runs on the CPU (oneDNN).
  bool library_linear = false;
  // With library_conv, ONNX's QDQ form around a Conv (DequantizeLinear of 8-bit activations and
  // of constant int8 weights, an optional QuantizeLinear after it) becomes one quantized
  // disc_ral.conv (the ral_qconv kernel: oneDNN's int8 convolution; the CPU only). Off, the
  // dequantized values convolve in f32.
  bool int8_conv = false;
  // Whether the module's host code may loop over tensor elements (the CPU device). On GPUs
  // tensors live in device memory: the host reads single elements back (a condition, a trip
  // count, a K: ral_read_element waits for the device), but operators whose host code walks
  // every element (Unique's grouping, NonMaxSuppression's selection) are refused by name there.
  bool host_reads_tensors = true;
};

struct ImportStatus {
  std::vector<std::string> errors;  // one line each, naming the node where there is one
  bool unsupported = false;         // the errors are about what the importer does not handle
};

// Parses the ModelProto in `bytes` and imports its main graph. Null with `status` filled on
// failure.
OwningOpRef<ModuleOp> importModel(llvm::StringRef bytes, const ImportOptions& options,
                                  MLIRContext* context, ImportStatus* status);

}  // namespace onnx
}  // namespace disc_ral
}  // namespace mlir

#endif  // RAL_COMPILER_PASSES_ONNX_IMPORTER_H_
