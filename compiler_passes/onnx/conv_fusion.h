// Convolution epilogues in an ONNX graph: a Conv whose output feeds only an inference
// BatchNormalization (folded into the weights), then a residual Add, then one activation, each
// optional, runs as one ral_conv call that applies them to each output
// element while it is in registers (kernels/conv/conv.h). A linear layer (MatMul or Gemm by a
// constant matrix) is a 1x1 convolution over its rows: with `linear`, it gets the same plan, with
// a bias Add of a constant in place of the BatchNormalization. The plan is made on the graph before
// any node is converted; ops_conv.cc's Conv converter carries it out, or declines (a type,
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

// A DequantizeLinear's operands (its input's name, the scale's and the zero point's, "" for
// none) and axis, or a QuantizeLinear's with its output's name.
struct QuantizeNode {
  int node = -1;  // the node's index; -1: none
  std::string value, scale, zero_point, output;
  int64_t axis = 1;
};

struct ConvEpilogue {
  int conv = -1;              // the Conv node's index (or the MatMul's or Gemm's)
  bool linear = false;        // a MatMul or Gemm
  std::vector<int> absorbed;  // the nodes folded into it, in graph order
  // An inference BatchNormalization right after the Conv, folded into its weights and bias at
  // compile time: its scale, B, mean and var inputs (empty for none) and epsilon.
  std::vector<std::string> batch_norm;
  float epsilon = 1e-5f;
  std::string bias;      // linear: the bias Add's constant operand, or ""
  std::string residual;  // the residual Add's other operand, or ""
  // none, relu, clip, sigmoid, silu (x * Sigmoid(x)), hardswish or gelu_erf
  // (x * (Erf(x / sqrt(2)) + 1) * 0.5, as torch exports nn.GELU).
  std::string activation = "none";
  int activation_node = -1;  // the Relu / Clip / Sigmoid / HardSwish, or a SiLU's or GELU's Mul
  // Clip's bounds: the inputs named here (opset 11 on; "" for none), else its min/max attributes.
  std::string clip_min, clip_max;
  float attr_min = -std::numeric_limits<float>::infinity();
  float attr_max = std::numeric_limits<float>::infinity();
  std::string output;  // the value the fused convolution defines (the last node's output)
  bool fused = false;        // set by the converter when it took the plan
  // ONNX's QDQ form around a Conv (EpiloguePlanOptions::int8): the DequantizeLinear nodes that
  // give its input and its constant weights, and a QuantizeLinear reading the epilogue's output
  // alone. The converter may run them as one integer convolution; the DequantizeLinear nodes
  // still convert (other nodes may read them), the QuantizeLinear converts only when the
  // converter did not fold it in (`quantize_fused`, then `output` is the QuantizeLinear's).
  QuantizeNode dequantize_input, dequantize_filter, quantize;
  bool quantize_fused = false;
};

// What the device's ral_conv computes, so may be planned.
struct EpiloguePlanOptions {
  bool hardswish = true;  // a HardSwish may join an epilogue
  bool gelu = false;      // a GELU may
  // MatMul and Gemm nodes get plans too (a bias Add's operand counts as constant when it is an
  // initializer, a Constant's output or an Identity of one; the converter checks the rest).
  bool linear = false;
  // Conv nodes between DequantizeLinear and QuantizeLinear nodes get plans (ConvEpilogue's
  // dequantize_input, dequantize_filter and quantize), with or without other nodes to fold.
  bool int8 = false;
};

// Every Conv with an epilogue: the Conv's output (and the Add's) has exactly one consumer and is
// not a graph output; a SiLU's x has exactly its Sigmoid and its Mul, a GELU's x its Div (or
// Mul) and its Mul.
std::vector<ConvEpilogue> planConvEpilogues(const ::onnx::GraphProto& graph,
                                            const EpiloguePlanOptions& options);

}  // namespace onnx
}  // namespace disc_ral
}  // namespace mlir

#endif  // RAL_COMPILER_PASSES_ONNX_CONV_FUSION_H_
