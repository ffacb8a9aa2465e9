// Convolutions: Conv and ConvTranspose (1d/2d/3d, groups, pads, strides, dilations) as library
// convolutions with their fused epilogues (conv_fusion.h) or im2col and GEMM, their QDQ form as
// one quantized convolution, ConvInteger and QLinearConv. The building blocks they share with
// linear layers are in conv_emit.h, the windows in window.cc.
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <vector>
#include "compiler_passes/dialect/dialect.h"
#include "compiler_passes/onnx/builders.h"
#include "compiler_passes/onnx/checked_int.h"
#include "compiler_passes/onnx/conv_emit.h"
#include "compiler_passes/onnx/conv_fusion.h"
#include "compiler_passes/onnx/linear_common.h"
#include "compiler_passes/onnx/node_context.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir {
namespace disc_ral {
namespace onnx {

namespace {

// A convolution's geometry from W's shape and the node's attributes (group, kernel_shape, pads,
// strides, dilations, auto_pad), checked against x: Conv, ConvInteger and QLinearConv share it.
struct ConvGeometry {
  int64_t group = 1, filters = 0, cg = 0;  // cg: input channels per group
  SmallVector<int64_t> kernel;
  Window window;
};

FailureOr<ConvGeometry> convGeometry(NodeContext& n, Value x, RankedTensorType tw) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  const int64_t spatial = tw.getRank() - 2;
  ConvGeometry g;
  g.group = n.i("group", 1);
  if (g.group < 1) return n.error("group must be positive");
  g.kernel = n.ints("kernel_shape");
  if (g.kernel.empty())
    for (int64_t i = 0; i < spatial; ++i) g.kernel.push_back(tw.getDimSize(2 + i));
  if (static_cast<int64_t>(g.kernel.size()) != spatial ||
      llvm::any_of(g.kernel, [](int64_t k) { return ShapedType::isDynamic(k); }))
    return n.unsupported("Conv with a kernel shape that is not static");
  for (int64_t i = 0; i < spatial; ++i)
    if (g.kernel[i] != tw.getDimSize(2 + i)) return n.error("kernel_shape does not match W");
  if (tw.isDynamicDim(0) || tw.isDynamicDim(1))
    return n.unsupported("Conv with dynamic output or input channels in W");
  g.filters = tw.getDimSize(0);
  g.cg = tw.getDimSize(1);
  if (g.filters % g.group != 0) return n.error("output channels are not divisible by group");
  // W's element count bounds every product of its dims below (window, depth); the input's
  // channels are W's dim 1 times group.
  if (!checkedProduct(tw.getShape()).isSize())
    return n.error("W's shape holds more than 2^48 elements");
  const CheckedInt channels = CheckedInt(g.cg) * g.group;
  if (!channels.isSize()) return n.error("W's dim 1 times group exceeds 2^48");
  if (failed(checkSameDim(n, dimOf(b, loc, x, 1), b.getIndexAttr(channels.value()),
                          "input channels (X's dim 1 and W's dim 1 times group)")))
    return failure();
  FailureOr<Window> w = windowOf(n, x, g.kernel, false);
  if (failed(w)) return failure();
  g.window = *w;
  return g;
}

// W's elements per filter (C/group times the window).
int64_t filterDepth(const ConvGeometry& g) {
  int64_t window = 1;
  for (int64_t k : g.kernel) window *= k;
  return g.cg * window;
}

// x padded with zeros as the window says, convolved with w3 [group, F/group, depth] by im2col and
// a GEMM, plus `bias` when given.
Value paddedIm2col(OpBuilder& b, Location loc, Value x, Value w3, Value bias,
                   const ConvGeometry& g) {
  SmallVector<int64_t> low(2, 0), high(2, 0);
  low.append(g.window.pad_begin);
  high.append(g.window.pad_end);
  Type t = cast<RankedTensorType>(x.getType()).getElementType();
  Value xp = pad(b, loc, x, low, high, scalarConstant(b, loc, t, 0));
  return im2colConvolution(b, loc, xp, w3, bias, g.window, g.kernel, g.group, g.filters, g.cg);
}

// The elements of a constant named `name` as doubles (integers read with their sign or
// without), or nothing when it is not a constant of f32 (`floats`) or 8-bit integers.
std::optional<SmallVector<double>> constantValues(NodeContext& n, const std::string& name,
                                                  bool floats, bool* is_unsigned = nullptr) {
  Tensor* t = name.empty() ? nullptr : n.named(name);
  if (!t || !t->data) return std::nullopt;
  SmallVector<double> v;
  Type e = t->data.getElementType();
  if (floats) {
    if (!e.isF32()) return std::nullopt;
    for (float f : t->data.getValues<float>()) v.push_back(f);
  } else {
    if (!e.isInteger(8)) return std::nullopt;
    for (const APInt& i : t->data.getValues<APInt>())
      v.push_back(t->is_unsigned ? static_cast<double>(i.getZExtValue())
                                 : static_cast<double>(i.getSExtValue()));
    if (is_unsigned) *is_unsigned = t->is_unsigned;
  }
  return v;
}

// What ONNX's QDQ form around a Conv or MatMul (conv_fusion.h's dequantize_input,
// dequantize_filter and quantize) gives an int8 kernel, when its values are what the kernel
// takes: an 8-bit input with a positive constant scalar scale and a constant scalar zero point;
// constant int8 weights with one positive scale or one per output channel (along
// `channel_axis`) and no zero points; and, unless `plain`, the QuantizeLinear after the
// epilogue when its scale is a positive scalar, its zero point an 8-bit scalar (uint8 0 when
// absent) and the activation commutes with dividing by the scale.
struct QdqOperands {
  Tensor* xq = nullptr;
  double sx = 1;
  int64_t x_zp = 0;
  DenseElementsAttr w;
  SmallVector<double> sw;  // one, or one per output channel
  bool quantize = false, y_unsigned = false;
  double sy = 1;
  int64_t y_zp = 0;
};

std::optional<QdqOperands> qdqOperands(NodeContext& n, const ConvEpilogue& e, int64_t channels,
                                       int64_t channel_axis, bool plain) {
  const QuantizeNode &dx = e.dequantize_input, &dw = e.dequantize_filter;
  QdqOperands q;
  q.xq = n.named(dx.value);
  if (!q.xq || !q.xq->type.getElementType().isInteger(8)) return std::nullopt;
  auto positiveScalar = [&](const std::string& name) -> std::optional<double> {
    auto v = constantValues(n, name, true);
    if (!v || v->size() != 1 || !std::isfinite((*v)[0]) || (*v)[0] <= 0) return std::nullopt;
    return (*v)[0];
  };
  std::optional<double> sx = positiveScalar(dx.scale);
  if (!sx) return std::nullopt;
  q.sx = *sx;
  if (!dx.zero_point.empty()) {
    bool zu = false;
    auto z = constantValues(n, dx.zero_point, false, &zu);
    if (!z || z->size() != 1 || zu != q.xq->is_unsigned) return std::nullopt;
    q.x_zp = static_cast<int64_t>((*z)[0]);
  }
  Tensor* wq = n.named(dw.value);
  if (!wq || !wq->data || !wq->data.getElementType().isInteger(8) || wq->is_unsigned)
    return std::nullopt;
  q.w = wq->data;
  const int64_t w_rank = wq->type.getRank();
  auto sw = constantValues(n, dw.scale, true);
  if (!sw || (sw->size() != 1 && static_cast<int64_t>(sw->size()) != channels)) return std::nullopt;
  if (sw->size() > 1 && dw.axis != channel_axis && dw.axis != channel_axis - w_rank)
    return std::nullopt;
  if (llvm::any_of(*sw, [](double v) { return !std::isfinite(v) || v == 0; })) return std::nullopt;
  q.sw = *sw;
  if (!dw.zero_point.empty()) {
    bool wu = false;
    auto z = constantValues(n, dw.zero_point, false, &wu);
    if (!z || llvm::any_of(*z, [](double v) { return v != 0; })) return std::nullopt;
  }
  q.quantize = !plain && e.quantize.node >= 0 &&
               (e.activation == "none" || e.activation == "relu" || e.activation == "clip");
  if (q.quantize) {
    std::optional<double> s = positiveScalar(e.quantize.scale);
    q.quantize = s.has_value();
    q.sy = s.value_or(1.0);
    q.y_unsigned = true;
  }
  if (q.quantize && !e.quantize.zero_point.empty()) {
    auto z = constantValues(n, e.quantize.zero_point, false, &q.y_unsigned);
    q.quantize = z && z->size() == 1;
    if (q.quantize) q.y_zp = static_cast<int64_t>((*z)[0]);
  }
  if (!q.quantize) {
    q.sy = 1;
    q.y_zp = 0;
    q.y_unsigned = false;
  }
  return q;
}

// The QuantizedConv of `d` with `bias` (one f32 value per output channel, or none) and the
// epilogue's activation (none when `plain`): scales[f] = sx * sw[f] / sy and the bias as
// b[f] / (sx * sw[f]), so that act(scales[f] * (acc + bias'[f])) is act(sx * sw[f] * acc + b[f])
// / sy. None when a folded value is not finite.
std::optional<QuantizedConv> quantizedOf(NodeContext& n, const ConvEpilogue& e,
                                         const QdqOperands& d, ArrayRef<double> bias,
                                         int64_t channels, bool plain) {
  QuantizedConv q;
  q.x_unsigned = d.xq->is_unsigned;
  q.x_zero_point = d.x_zp;
  q.int8_result = d.quantize;
  q.y_unsigned = d.y_unsigned;
  q.y_zero_point = d.y_zp;
  q.activation = plain ? "none" : e.activation;
  if (!plain) {
    // The epilogue's clip bounds (with neither residual nor BatchNormalization).
    FailureOr<EpilogueValues> ev = epilogueValues(n, e, n.value(0));
    if (failed(ev)) return std::nullopt;
    q.alpha = static_cast<float>(ev->alpha / d.sy);
    q.beta = static_cast<float>(ev->beta / d.sy);
  }
  for (int64_t f = 0; f < channels; ++f) {
    const double m = d.sx * d.sw[d.sw.size() > 1 ? f : 0];
    const double scale = m / d.sy, shifted = bias.empty() ? 0.0 : bias[f] / m;
    if (!std::isfinite(scale) || scale == 0 || !std::isfinite(shifted) || std::abs(shifted) > 1e30)
      return std::nullopt;
    q.scales.push_back(static_cast<float>(scale));
    if (!bias.empty()) q.bias.push_back(static_cast<float>(shifted));
  }
  return q;
}

// Defines what a quantized convolution or linear layer `y` computed: the node's own output
// (`plain`: the epilogue's nodes then convert one by one), or the epilogue's, or the
// QuantizeLinear's after it.
void defineQuantized(NodeContext& n, ConvEpilogue& e, const QuantizedConv& q, Value y,
                     bool plain) {
  if (plain) {
    n.setOutput(0, y);
    return;
  }
  if (q.int8_result) {
    e.output = e.quantize.output;
    e.quantize_fused = true;
  }
  n.defineNamed(e.output, y, q.int8_result && q.y_unsigned);
  e.fused = true;
}

// ONNX's QDQ form around a Conv as one quantized disc_ral.conv: the 8-bit input and the int8
// weights convolve in integers (ral_qconv), the scales folded into one per output channel,
// with the QuantizeLinear after it stored by the kernel. The result differs from the f32
// convolution of the dequantized values only by float rounding (a quantization step, rarely,
// after the QuantizeLinear). With a BatchNormalization or a residual Add planned after it, the
// int8 convolution gives the Conv's own f32 output and those nodes convert on their own. False
// when a value is not what the kernel takes: then the f32 path.
FailureOr<bool> quantizedConv(NodeContext& n, ConvEpilogue& e, const ConvGeometry& g) {
  if (!n.int8Conv() || e.dequantize_input.node < 0) return false;
  const bool plain = !e.batch_norm.empty() || !e.residual.empty();
  std::optional<QdqOperands> d = qdqOperands(n, e, g.filters, 0, plain);
  if (!d || d->w.getType().getShape() != n.type(1).getShape()) return false;
  // The bias: f32 constants (a QDQ model's int32 bias, dequantized, is one by now).
  SmallVector<double> bias;
  if (n.hasInput(2)) {
    auto bv = constantValues(n, n.node().input(2), true);
    if (!bv || static_cast<int64_t>(bv->size()) != g.filters) return false;
    bias = *bv;
  }
  std::optional<QuantizedConv> q = quantizedOf(n, e, *d, bias, g.filters, plain);
  if (!q) return false;
  q->x = n.materialize(*d->xq);
  q->w = d->w;
  FailureOr<Value> y = quantizedConvolution(n, *q);
  if (failed(y)) return failure();
  if (!*y) return false;
  defineQuantized(n, e, *q, *y, plain);
  return true;
}

}  // namespace

// ONNX's QDQ form around a MatMul (or a Gemm) by constant int8 weights as a quantized 1x1
// channels-last disc_ral.conv over the input's rows (as libraryLinear runs f32 ones), with the
// planned bias Add, activation and QuantizeLinear folded in; a residual Add stays a node after
// its f32 result.
FailureOr<bool> quantizedLinear(NodeContext& n, ConvEpilogue& e) {
  if (!n.int8Conv() || e.dequantize_input.node < 0) return false;
  OpBuilder& b = n.b();
  Location loc = n.loc();
  // Gemm (the caller checked transA = 0, alpha = 1 and a constant C at beta 1): its weights
  // are [N, K] with transB, and C is a bias of its own.
  const bool gemm = n.node().op_type() == "Gemm", nk = gemm && n.i("transB", 0) != 0;
  DenseElementsAttr own_bias = gemm && n.hasInput(2) && n.f("beta", 1.0f) != 0
                                   ? n.input(2).data
                                   : DenseElementsAttr();
  const bool plain = !e.residual.empty();
  auto tw = n.type(1);
  if (tw.getRank() != 2 || !tw.hasStaticShape() || n.rank(0) < 2) return false;
  const int64_t k = tw.getDimSize(nk ? 1 : 0), cols = tw.getDimSize(nk ? 0 : 1);
  const int64_t rank = n.rank(0);
  if (k == 0 || cols == 0) return false;
  std::optional<QdqOperands> d = qdqOperands(n, e, cols, nk ? 0 : 1, plain);
  if (!d || d->w.getType().getShape() != tw.getShape()) return false;
  // The bias: Gemm's C, or the planned bias Add (not both), one value per column.
  SmallVector<double> bias;
  if (own_bias && !e.bias.empty()) return false;
  DenseElementsAttr bias_data = own_bias;
  if (!plain && !e.bias.empty()) {
    Tensor* t = n.named(e.bias);
    bias_data = t ? t->data : DenseElementsAttr();
    if (!bias_data) return false;
  }
  if (bias_data) {
    if (!(bias_data = linearBias(bias_data, cols, rank))) return false;
    for (float f : bias_data.getValues<float>()) bias.push_back(f);
  }
  std::optional<QuantizedConv> q = quantizedOf(n, e, *d, bias, cols, plain);
  if (!q) return false;
  // The filter [N, K, 1]: the weights as they are ([N, K]) or transposed at import ([K, N]), a
  // second copy within the constant budget.
  if (!nk && !d->w.isSplat() &&
      (!n.constantFits(k * cols) || failed(n.chargeConstant(k * cols, "the transposed weights"))))
    return false;
  auto filter_type = RankedTensorType::get({cols, k, 1}, d->w.getElementType());
  DenseElementsAttr filter =
      d->w.isSplat() ? DenseElementsAttr::get(filter_type, d->w.getSplatValue<Attribute>())
      : nk           ? d->w
                     : transposeConstant(d->w, {1, 0});
  if (!filter) return false;
  if (!d->w.isSplat()) filter = filter.reshape(filter_type);
  Value a = n.materialize(*d->xq);
  FailureOr<LinearRows> shape = linearRows(n, a, k, cols);
  if (failed(shape)) return failure();
  SmallVector<OpFoldResult> out_dims = shape->out_dims;
  OpFoldResult rows = shape->rows;
  Type f32 = b.getF32Type();
  Value init = emptyTensor(b, loc, {b.getIndexAttr(1), rows, b.getIndexAttr(cols)},
                           q->int8_result ? b.getIntegerType(8) : f32);
  Value bias_value = b.create<arith::ConstantOp>(
      loc, DenseElementsAttr::get(RankedTensorType::get({static_cast<int64_t>(q->bias.size())}, f32),
                                  ArrayRef<float>(q->bias)));
  ConvOp conv = rowsConvolution(b, loc, a, rows, k, filter, bias_value, init);
  setQuantization(conv, *q);
  defineQuantized(n, e, *q, reshape(b, loc, conv.getResult()[0], out_dims), plain);
  return true;
}

namespace {

LogicalResult convertConv(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  Value x = n.value(0), wt = n.value(1);
  auto tx = cast<RankedTensorType>(x.getType());
  const int64_t rank = tx.getRank();
  if (rank < 3 || rank > 5) return n.unsupported("Conv of rank " + std::to_string(rank));
  if (n.rank(1) != rank) return n.error("W's rank differs from X's");
  Type t = tx.getElementType();
  if (!isFloat(t) || n.elementType(1) != t) return n.unsupported("Conv of non-float element type");
  auto tw = cast<RankedTensorType>(wt.getType());
  FailureOr<ConvGeometry> geometry = convGeometry(n, x, tw);
  if (failed(geometry)) return failure();
  const int64_t group = geometry->group, filters = geometry->filters;
  const Window* w = &geometry->window;

  Value bias;
  if (n.hasInput(2)) {
    if (n.rank(2) != 1 || (!n.type(2).isDynamicDim(0) && n.type(2).getDimSize(0) != filters))
      return n.error("B must be 1-D with one value per output channel");
    if (n.type(2).isDynamicDim(0)) return n.unsupported("a bias of dynamic size");
    bias = n.value(2);
  }
  if (n.libraryConv() && t.isF32()) {
    if (ConvEpilogue* e = n.epilogue()) {
      FailureOr<bool> quantized = quantizedConv(n, *e, *geometry);
      if (failed(quantized)) return failure();
      if (*quantized) return success();
    }
    SmallVector<OpFoldResult> out = {dimOf(b, loc, x, 0), b.getIndexAttr(filters)};
    out.append(w->out.begin(), w->out.end());
    Value init = emptyTensor(b, loc, out, t);
    ConvEpilogue* e = n.epilogue();
    FailureOr<EpilogueValues> ev =
        e ? epilogueValues(n, *e, init) : FailureOr<EpilogueValues>(failure());
    Value filter = n.value(1);
    if (succeeded(ev)) {
      if (ev->residual) init = ev->residual;
      if (ev->filter) {
        filter = b.create<arith::ConstantOp>(loc, ev->filter);
        bias = b.create<arith::ConstantOp>(loc, ev->bias);
      }
    }
    Value y = libraryConvolution(b, loc, x, filter, bias, init, *w, group, /*transposed=*/false);
    if (failed(ev)) {
      n.setOutput(0, y);
      return success();
    }
    applyEpilogue(n, *e, *ev, y.getDefiningOp<ConvOp>(), y);
    return success();
  }

  const int64_t fg = filters / group, depth = filterDepth(*geometry);
  Value w3;
  if (DenseElementsAttr data = n.input(1).data) {
    w3 = b.create<arith::ConstantOp>(loc,
                                     data.reshape(RankedTensorType::get({group, fg, depth}, t)));
  } else {
    w3 = reshape(b, loc, wt, {b.getIndexAttr(group), b.getIndexAttr(fg), b.getIndexAttr(depth)});
  }
  n.setOutput(0, paddedIm2col(b, loc, x, w3, bias, *geometry));
  return success();
}

// ConvTranspose as a convolution: the input with stride - 1 zeros between its elements, padded
// by dilation * (kernel - 1) less ONNX's pads (cropped where that is negative), convolved at
// stride 1 with the weights flipped and their in/out channels swapped (per group).
LogicalResult convertConvTranspose(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  Value x = n.value(0);
  auto tx = cast<RankedTensorType>(x.getType());
  const int64_t rank = tx.getRank();
  if (rank < 3 || rank > 5) return n.unsupported("ConvTranspose of rank " + std::to_string(rank));
  if (n.rank(1) != rank) return n.error("W's rank differs from X's");
  Type t = tx.getElementType();
  if (!isFloat(t) || n.elementType(1) != t)
    return n.unsupported("ConvTranspose of non-float element type");
  DenseElementsAttr wdata = n.input(1).data;
  if (wdata && wdata.isSplat()) wdata = {};  // flipped at run time like any other weights
  const int64_t spatial = rank - 2;
  const int64_t group = n.i("group", 1);
  if (group < 1) return n.error("group must be positive");
  auto tw = n.type(1);
  if (!tw.hasStaticShape()) return n.unsupported("ConvTranspose weights of a dynamic shape");
  const int64_t channels = tw.getDimSize(0), fg = tw.getDimSize(1);
  if (channels % group != 0) return n.error("input channels are not divisible by group");
  // As for Conv: W's element count bounds the products of its dims; filters is fg * group.
  if (!checkedProduct(tw.getShape()).isSize())
    return n.error("W's shape holds more than 2^48 elements");
  const CheckedInt checked_filters = CheckedInt(fg) * group;
  if (!checked_filters.isSize()) return n.error("W's dim 1 times group exceeds 2^48");
  const int64_t cg = channels / group, filters = checked_filters.value();
  SmallVector<int64_t> kernel;
  for (int64_t i = 0; i < spatial; ++i) kernel.push_back(tw.getDimSize(2 + i));
  if (n.has("kernel_shape") && n.ints("kernel_shape") != kernel)
    return n.error("kernel_shape does not match W");
  if (failed(checkSameDim(n, dimOf(b, loc, x, 1), b.getIndexAttr(channels),
                          "input channels (X's dim 1 and W's dim 0)")))
    return failure();
  auto attrOr = [&](llvm::StringRef name, int64_t fallback, int64_t count) {
    SmallVector<int64_t> v = n.ints(name);
    if (v.empty()) v.assign(count, fallback);
    return v;
  };
  SmallVector<int64_t> strides = attrOr("strides", 1, spatial),
                       dilations = attrOr("dilations", 1, spatial),
                       out_pad = attrOr("output_padding", 0, spatial),
                       pads = attrOr("pads", 0, 2 * spatial);
  if (static_cast<int64_t>(strides.size()) != spatial ||
      static_cast<int64_t>(dilations.size()) != spatial ||
      static_cast<int64_t>(out_pad.size()) != spatial ||
      static_cast<int64_t>(pads.size()) != 2 * spatial)
    return n.error("strides, dilations, output_padding or pads do not match the kernel's rank");
  if (failed(checkWindowAttribute(n, "strides", strides, 1)) ||
      failed(checkWindowAttribute(n, "dilations", dilations, 1)) ||
      failed(checkWindowAttribute(n, "output_padding", out_pad, 0)) ||
      failed(checkWindowAttribute(n, "pads", pads, 0)) ||
      failed(checkWindowAttribute(n, "output_shape", n.ints("output_shape"), 0)))
    return failure();
  // output_shape or auto_pad SAME_*: pads from the requested output size.
  const std::string auto_pad = n.s("auto_pad", "NOTSET");
  SmallVector<int64_t> output_shape = n.ints("output_shape");
  if (!output_shape.empty() || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    if (!output_shape.empty() && static_cast<int64_t>(output_shape.size()) == rank)
      output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
    if (!output_shape.empty() && static_cast<int64_t>(output_shape.size()) != spatial)
      return n.error("output_shape has " + std::to_string(output_shape.size()) +
                     " entries; it takes one per spatial dim (or per dim)");
    for (int64_t i = 0; i < spatial; ++i) {
      if (tx.isDynamicDim(2 + i))
        return n.unsupported("output_shape or auto_pad with a dynamic spatial dim");
      const int64_t in = tx.getDimSize(2 + i);
      const CheckedInt want =
          output_shape.empty() ? CheckedInt(in) * strides[i] : CheckedInt(output_shape[i]);
      const CheckedInt checked_total = CheckedInt(strides[i]) * (in - 1) + out_pad[i] +
                                       (CheckedInt(kernel[i]) - 1) * dilations[i] + 1 - want;
      if (!want.isSize() || !checked_total.within(-kMaxSize, kMaxSize))
        return n.error("strides[" + std::to_string(i) + "] = " + std::to_string(strides[i]) +
                       " makes the output larger than 2^48");
      const int64_t total = checked_total.value();
      const bool upper = auto_pad == "SAME_UPPER";
      // An output larger than the input gives extends the end (negative padding there).
      pads[i] = total < 0 ? 0 : upper ? total / 2 : total - total / 2;
      pads[spatial + i] = total - pads[i];
    }
  } else if (auto_pad == "VALID") {
    pads.assign(2 * spatial, 0);
  } else if (auto_pad != "NOTSET") {
    return n.error("unknown auto_pad '" + auto_pad + "'");
  }

  // The library kernel takes the pads as they are (none negative: an output_shape larger than
  // the input gives extends the end) and output_padding below max(stride, dilation), as ONNX
  // requires of it.
  bool library = n.libraryConv() && t.isF32();
  for (int64_t i = 0; i < spatial; ++i)
    library &= pads[i] >= 0 && pads[spatial + i] >= 0 &&
               out_pad[i] < std::max(strides[i], dilations[i]);
  if (library) {
    SmallVector<OpFoldResult> out = {dimOf(b, loc, x, 0), b.getIndexAttr(filters)};
    Window w;
    for (int64_t i = 0; i < spatial; ++i) {
      // (D - 1) * stride + dilation * (K - 1) + 1 + output_padding - pad_begin - pad_end.
      const CheckedInt tail = (CheckedInt(kernel[i]) - 1) * dilations[i] + 1 + out_pad[i] -
                              pads[i] - pads[spatial + i];
      if (!tail.within(-kMaxSize, kMaxSize))
        return n.error("dilations[" + std::to_string(i) + "] and the kernel give a window larger "
                       "than 2^48");
      OpFoldResult size = dimOf(b, loc, x, 2 + i);
      if (auto cs = constantIndex(size); cs && *cs == 0)
        return n.unsupported("ConvTranspose of an empty spatial dim");
      OpFoldResult o = addIndex(b, loc,
                                mulIndex(b, loc, subIndex(b, loc, size, b.getIndexAttr(1)),
                                         b.getIndexAttr(strides[i])),
                                b.getIndexAttr(tail.value()));
      if (auto co = constantIndex(o); co && *co <= 0) return n.error("pads leave no output");
      out.push_back(o);
    }
    w.strides = strides;
    w.dilations = dilations;
    w.pad_begin.assign(pads.begin(), pads.begin() + spatial);
    w.pad_end.assign(pads.begin() + spatial, pads.end());
    Value bias;
    if (n.hasInput(2)) {
      if (n.rank(2) != 1 || n.type(2).isDynamicDim(0) || n.type(2).getDimSize(0) != filters)
        return n.error("B must be 1-D with one value per output channel");
      bias = n.value(2);
    }
    n.setOutput(0, libraryConvolution(b, loc, x, n.value(1), bias, emptyTensor(b, loc, out, t), w,
                                      group, /*transposed=*/true));
    return success();
  }

  // Zeros between the elements: x into a [N, C, (S - 1) * s + 1] tensor with strides s.
  SmallVector<OpFoldResult> xd = dimsOf(b, loc, x), spread = {xd[0], xd[1]};
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)), steps(rank, b.getIndexAttr(1));
  for (int64_t i = 0; i < spatial; ++i) {
    OpFoldResult size = xd[2 + i];
    auto cs = constantIndex(size);
    if (cs && *cs == 0) return n.unsupported("ConvTranspose of an empty spatial dim");
    spread.push_back(addIndex(
        b, loc,
        mulIndex(b, loc, subIndex(b, loc, size, b.getIndexAttr(1)), b.getIndexAttr(strides[i])),
        b.getIndexAttr(1)));
    steps[2 + i] = b.getIndexAttr(strides[i]);
  }
  Value zeros = filled(b, loc, spread, scalarConstant(b, loc, t, 0));
  Value xs = b.create<tensor::InsertSliceOp>(loc, x, zeros, offsets, xd, steps);
  // Padding (or cropping) to the convolution's input.
  SmallVector<int64_t> low(2, 0), high(2, 0), crop_low(2, 0), crop_high(2, 0), extents;
  for (int64_t i = 0; i < spatial; ++i) {
    const CheckedInt checked_extent = (CheckedInt(kernel[i]) - 1) * dilations[i];
    if (!checked_extent.isSize())
      return n.error("dilations[" + std::to_string(i) +
                     "] and the kernel give a window larger "
                     "than 2^48");
    const int64_t extent = checked_extent.value();
    extents.push_back(extent);
    const int64_t lo = extent - pads[i], hi = extent - pads[spatial + i] + out_pad[i];
    low.push_back(std::max<int64_t>(lo, 0));
    high.push_back(std::max<int64_t>(hi, 0));
    crop_low.push_back(std::max<int64_t>(-lo, 0));
    crop_high.push_back(std::max<int64_t>(-hi, 0));
  }
  Value xp = pad(b, loc, xs, low, high, scalarConstant(b, loc, t, 0));
  if (llvm::any_of(crop_low, [](int64_t v) { return v > 0; }) ||
      llvm::any_of(crop_high, [](int64_t v) { return v > 0; })) {
    SmallVector<OpFoldResult> pd = dimsOf(b, loc, xp), starts, sizes;
    for (int64_t d = 0; d < rank; ++d) {
      starts.push_back(b.getIndexAttr(crop_low[d]));
      OpFoldResult s = subIndex(b, loc, pd[d], b.getIndexAttr(crop_low[d] + crop_high[d]));
      if (auto cs = constantIndex(s); cs && *cs <= 0) return n.error("pads leave no output");
      sizes.push_back(s);
    }
    auto type = RankedTensorType::get(staticSizes(sizes), t);
    xp = b.create<tensor::ExtractSliceOp>(loc, type, xp, starts, sizes,
                                          SmallVector<OpFoldResult>(rank, b.getIndexAttr(1)));
  }
  Window w;
  w.kernel = kernel;
  w.strides.assign(spatial, 1);
  w.dilations = dilations;
  w.pad_begin.assign(spatial, 0);
  w.pad_end.assign(spatial, 0);
  SmallVector<OpFoldResult> pd = dimsOf(b, loc, xp);
  for (int64_t i = 0; i < spatial; ++i)
    w.out.push_back(subIndex(b, loc, pd[2 + i], b.getIndexAttr(extents[i])));
  // Weights [C, Fg, K...] -> [G, Fg, Cg * K] flipped: w3[g, f, c, k] = W[g * Cg + c, f, K - 1 - k].
  int64_t window = 1;
  for (int64_t k : kernel) window *= k;
  Value w3;
  if (wdata) {
    const size_t width = t.getIntOrFloatBitWidth() / 8;
    ArrayRef<char> raw = wdata.getRawData();
    std::vector<char> flipped(raw.size());
    for (int64_t g = 0; g < group; ++g)
      for (int64_t f = 0; f < fg; ++f)
        for (int64_t ci = 0; ci < cg; ++ci)
          for (int64_t k = 0; k < window; ++k) {
            const int64_t src = (((g * cg + ci) * fg + f) * window) + (window - 1 - k);
            const int64_t dst = ((g * fg + f) * cg + ci) * window + k;
            std::memcpy(flipped.data() + dst * width, raw.data() + src * width, width);
          }
    w3 = b.create<arith::ConstantOp>(
        loc, DenseElementsAttr::getFromRawBuffer(RankedTensorType::get({group, fg, cg * window}, t),
                                                 flipped));
  } else {
    // The same at run time: a copy over (g, f, c, k...) reading W[g * Cg + c, f, K - 1 - k].
    const unsigned nd = 3 + spatial;
    SmallVector<AffineExpr> we = {b.getAffineDimExpr(0) * cg + b.getAffineDimExpr(2),
                                  b.getAffineDimExpr(1)};
    SmallVector<OpFoldResult> dims = {b.getIndexAttr(group), b.getIndexAttr(fg),
                                      b.getIndexAttr(cg)};
    for (int64_t i = 0; i < spatial; ++i) {
      we.push_back(b.getAffineConstantExpr(kernel[i] - 1) - b.getAffineDimExpr(3 + i));
      dims.push_back(b.getIndexAttr(kernel[i]));
    }
    Value init = emptyTensor(b, loc, dims, t);
    Value w5 =
        generate(b, loc, init, ValueRange{n.value(1)}, {AffineMap::get(nd, 0, we, b.getContext())},
                 [](OpBuilder&, Location, ValueRange a) { return a[0]; });
    w3 = reshape(b, loc, w5,
                 {b.getIndexAttr(group), b.getIndexAttr(fg), b.getIndexAttr(cg * window)});
  }
  Value bias;
  if (n.hasInput(2)) {
    if (n.rank(2) != 1 || n.type(2).isDynamicDim(0) || n.type(2).getDimSize(0) != filters)
      return n.error("B must be 1-D with one value per output channel");
    bias = n.value(2);
  }
  n.setOutput(0, im2colConvolution(b, loc, xp, w3, bias, w, kernel, group, filters, cg));
  return success();
}

}  // namespace

FailureOr<Value> quantizedConvolution(NodeContext& n, const QuantizedConv& q) {
  if (!n.int8Conv()) return Value();
  OpBuilder& b = n.b();
  Location loc = n.loc();
  auto tw = cast<RankedTensorType>(q.w.getType());
  FailureOr<ConvGeometry> g = convGeometry(n, q.x, tw);
  if (failed(g)) return failure();
  SmallVector<OpFoldResult> out = {dimOf(b, loc, q.x, 0), b.getIndexAttr(g->filters)};
  out.append(g->window.out.begin(), g->window.out.end());
  Type f32 = b.getF32Type();
  Value init = emptyTensor(b, loc, out, q.int8_result ? b.getIntegerType(8) : f32);
  Value bias = b.create<arith::ConstantOp>(
      loc, DenseElementsAttr::get(
               RankedTensorType::get({static_cast<int64_t>(q.bias.size())}, f32),
               ArrayRef<float>(q.bias)));
  Value y = libraryConvolution(b, loc, q.x, b.create<arith::ConstantOp>(loc, q.w), bias, init,
                               g->window, g->group, /*transposed=*/false);
  setQuantization(y.getDefiningOp<ConvOp>(), q);
  return y;
}

FailureOr<Value> integerConvolution(NodeContext& n, Value x, Value wt) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  auto tw = cast<RankedTensorType>(wt.getType());
  const int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
  if (rank < 3 || rank > 5) return n.unsupported("convolution of rank " + std::to_string(rank));
  if (tw.getRank() != rank) return n.error("W's rank differs from X's");
  FailureOr<ConvGeometry> g = convGeometry(n, x, tw);
  if (failed(g)) return failure();
  Value w3 = reshape(b, loc, wt,
                     {b.getIndexAttr(g->group), b.getIndexAttr(g->filters / g->group),
                      b.getIndexAttr(filterDepth(*g))});
  return paddedIm2col(b, loc, x, w3, Value(), *g);
}

void addConvOps(Registry& r) {
  r["Conv"] = {convertConv, {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"}};
  r["ConvTranspose"] = {convertConvTranspose,
                        {"auto_pad", "dilations", "group", "kernel_shape", "output_padding",
                         "output_shape", "pads", "strides"}};
}

}  // namespace onnx
}  // namespace disc_ral
}  // namespace mlir
