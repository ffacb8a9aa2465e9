// Convolution and pool windows: the node's kernel_shape, strides, dilations, pads and auto_pad
// checked and resolved against the input (Window), and each window element's input index.
#include "compiler_passes/onnx/builders.h"
#include "compiler_passes/onnx/checked_int.h"
#include "compiler_passes/onnx/linear_common.h"
#include "compiler_passes/onnx/node_context.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir {
namespace disc_ral {
namespace onnx {

// Every value of a window attribute in [lo, 2^48]: what the window arithmetic may then compute
// without overflowing.
LogicalResult checkWindowAttribute(NodeContext& n, llvm::StringRef name, ArrayRef<int64_t> values,
                                   int64_t lo) {
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i] < lo || values[i] > kMaxSize)
      return n.error(name + "[" + std::to_string(i) + "] = " + std::to_string(values[i]) +
                     " is out of range (" + std::to_string(lo) + " to 2^48)");
  return success();
}

FailureOr<Window> windowOf(NodeContext& n, Value x, ArrayRef<int64_t> kernel, bool ceil_mode) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  const int64_t spatial = static_cast<int64_t>(kernel.size());
  Window w;
  w.kernel.assign(kernel.begin(), kernel.end());
  w.strides = n.ints("strides");
  w.dilations = n.ints("dilations");
  SmallVector<int64_t> pads = n.ints("pads");
  if (w.strides.empty()) w.strides.assign(spatial, 1);
  if (w.dilations.empty()) w.dilations.assign(spatial, 1);
  if (pads.empty()) pads.assign(2 * spatial, 0);
  if (static_cast<int64_t>(w.strides.size()) != spatial ||
      static_cast<int64_t>(w.dilations.size()) != spatial ||
      static_cast<int64_t>(pads.size()) != 2 * spatial)
    return n.error("strides, dilations or pads do not match the kernel's rank");
  if (failed(checkWindowAttribute(n, "strides", w.strides, 1)) ||
      failed(checkWindowAttribute(n, "dilations", w.dilations, 1)) ||
      failed(checkWindowAttribute(n, "pads", pads, 0)) ||
      failed(checkWindowAttribute(n, "kernel_shape", w.kernel, 1)))
    return failure();
  w.pad_begin.assign(pads.begin(), pads.begin() + spatial);
  w.pad_end.assign(pads.begin() + spatial, pads.end());
  const std::string auto_pad = n.s("auto_pad", "NOTSET");
  SmallVector<OpFoldResult> in = dimsOf(b, loc, x);
  for (int64_t i = 0; i < spatial; ++i) {
    const CheckedInt checked_extent = CheckedInt(w.dilations[i]) * (w.kernel[i] - 1) + 1;
    if (!checked_extent.isSize())
      return n.error("dilations[" + std::to_string(i) + "] and kernel_shape[" + std::to_string(i) +
                     "] give a window larger than 2^48");
    const int64_t extent = checked_extent.value();
    OpFoldResult size = in[2 + i];
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      auto s = constantIndex(size);
      if (!s) return n.unsupported("auto_pad=" + auto_pad + " with a dynamic spatial dim");
      // Sizes and attributes are at most 2^48 here: none of this overflows.
      const int64_t out = (*s + w.strides[i] - 1) / w.strides[i];
      const int64_t total = std::max<int64_t>((out - 1) * w.strides[i] + extent - *s, 0);
      w.pad_begin[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.pad_end[i] = total - w.pad_begin[i];
    } else if (auto_pad == "VALID") {
      w.pad_begin[i] = w.pad_end[i] = 0;
    } else if (auto_pad != "NOTSET") {
      return n.error("unknown auto_pad '" + auto_pad + "'");
    }
    OpFoldResult padded = addIndex(b, loc, size, b.getIndexAttr(w.pad_begin[i] + w.pad_end[i]));
    OpFoldResult span = subIndex(b, loc, padded, b.getIndexAttr(extent));
    OpFoldResult out = ceil_mode ? ceilDivIndex(b, loc, span, b.getIndexAttr(w.strides[i]))
                                 : floorDivIndex(b, loc, span, b.getIndexAttr(w.strides[i]));
    out = addIndex(b, loc, out, b.getIndexAttr(1));
    // No window fits: an empty output, which a structured op over a static empty range cannot
    // express (its verifier takes the range's last index as -1).
    if (auto o = constantIndex(out); o && *o <= 0)
      return n.error("the window is larger than the padded input in spatial dim " +
                     std::to_string(i) + " (no output position)");
    if (ceil_mode) {
      // Windows past the padded end read extra padding (never counted by AveragePool). A window
      // that would start past the input and its begin padding reads nothing of either and is
      // dropped, as PyTorch, ONNX Runtime and ONNX's later reference do: ONNX 1.12's formula
      // would give it a -inf (max) or NaN (average) value.
      auto o = constantIndex(out), p = constantIndex(padded), s = constantIndex(size);
      if (!o || !p || !s) return n.unsupported("ceil_mode=1 with a dynamic spatial dim");
      int64_t windows = *o;  // sizes and attributes are at most 2^48: no overflow below
      if (windows > 1 && (windows - 1) * w.strides[i] >= *s + w.pad_begin[i]) --windows;
      out = b.getIndexAttr(windows);
      const int64_t extra = (windows - 1) * w.strides[i] + extent - *p;
      w.pad_end[i] += std::max<int64_t>(extra, 0);
    }
    if (failed(checkSize(b, loc, out,
                         "output spatial dim " + std::to_string(i) +
                             " (negative: the window is larger than the input)")))
      return failure();
    w.out.push_back(out);
  }
  return w;
}

// Input map expression of spatial dim i: out_i * stride + k_i * dilation.
AffineExpr windowExpr(OpBuilder& b, const Window& w, int64_t i, unsigned out_dim, unsigned k_dim) {
  return b.getAffineDimExpr(out_dim) * w.strides[i] + b.getAffineDimExpr(k_dim) * w.dilations[i];
}

}  // namespace onnx
}  // namespace disc_ral
}  // namespace mlir
