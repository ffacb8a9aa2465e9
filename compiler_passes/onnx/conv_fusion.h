// Convolution epilogues in an ONNX graph: a Conv whose output feeds only an inference
// BatchNormalization (folded into the weights), then a residual Add, then one activation, each
// optional, runs as one ral_conv call that applies them to each output
// element while it is in registers (kernels/conv/conv.h). The plan is made on the graph before
// any node is converted; ops_linear.cc's Conv converter carries it out, or declines (a type,
// shape or bound it cannot vouch for), and then the nodes convert one by one as usual.
#ifndef RAL_COMPILER_PASSES_ONNX_CONV_FUSION_H_
#define RAL_COMPILER_PASSES_ONNX_CONV_FUSION_H_

#include <limits>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"

namespace mlir {
namespace disc_ral {
namespace onnx {

struct ConvEpilogue {
  int conv = -1;              // the Conv node's index
  std::vector<int> absorbed;  // the nodes folded into it, in graph order
  // An inference BatchNormalization right after the Conv, folded into its weights and bias at
  // compile time: its scale, B, mean and var inputs (empty for none) and epsilon.
  std::vector<std::string> batch_norm;
  float epsilon = 1e-5f;
  std::string residual;  // the residual Add's other operand, or ""
  // none, relu, clip, sigmoid, silu (x * Sigmoid(x)) or hardswish.
  std::string activation = "none";
  int activation_node = -1;  // the Relu / Clip / Sigmoid / HardSwish, or the Mul of a SiLU
  // Clip's bounds: the inputs named here (opset 11 on; "" for none), else its min/max attributes.
  std::string clip_min, clip_max;
  float attr_min = -std::numeric_limits<float>::infinity();
  float attr_max = std::numeric_limits<float>::infinity();
  std::string output;  // the value the fused convolution defines (the last node's output)
  bool fused = false;        // set by the converter when it took the plan
};

// Every Conv with an epilogue: the Conv's output (and the Add's) has exactly one consumer and is
// not a graph output; a SiLU's x has exactly its Sigmoid and its Mul.
// `hardswish`: whether a HardSwish may join an epilogue (the device's ral_conv applies it).
std::vector<ConvEpilogue> planConvEpilogues(const ::onnx::GraphProto& graph, bool hardswish = true);

}  // namespace onnx
}  // namespace disc_ral
}  // namespace mlir

#endif  // RAL_COMPILER_PASSES_ONNX_CONV_FUSION_H_
