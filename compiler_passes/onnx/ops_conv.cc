// Convolutions: Conv and ConvTranspose (1d/2d/3d, groups, pads, strides, dilations) as library
// convolutions with their fused epilogues (conv_fusion.h) or im2col and GEMM, their QDQ form as
// one quantized convolution, and linear layers by constant weights as 1x1 convolutions.
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <vector>
#include "compiler_passes/dialect/dialect.h"
#include "compiler_passes/onnx/builders.h"
#include "compiler_passes/onnx/checked_int.h"
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
    if (auto o = constantIndex(out); o && *o < 0)
      return n.error("the window is larger than the padded input");
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

namespace {

// The convolution of `xp` (padded already) with w3 [G, Fg, Cg*K...] over the windows of `w`,
// plus `bias` [F] when given: im2col, then GEMM (RAL's library GEMM). cols [G, Cg, K..., N, O...]
// gathers each window, w3 times cols [G, Cg*K, N*O] is y [G, Fg, N*O], which one more pass lays
// out as [N, F, O...] with the bias added.
Value im2colConvolution(OpBuilder& b, Location loc, Value xp, Value w3, Value bias,
                        const Window& window_geometry, ArrayRef<int64_t> kernel, int64_t group,
                        int64_t filters, int64_t cg) {
  const Window* w = &window_geometry;
  const int64_t spatial = static_cast<int64_t>(kernel.size());
  Type t = cast<RankedTensorType>(xp.getType()).getElementType();
  SmallVector<OpFoldResult> xd = dimsOf(b, loc, xp);
  const int64_t fg = filters / group;
  int64_t window = 1;
  for (int64_t k : kernel) window *= k;
  SmallVector<OpFoldResult> col_dims = {b.getIndexAttr(group), b.getIndexAttr(cg)};
  for (int64_t k : kernel) col_dims.push_back(b.getIndexAttr(k));
  col_dims.push_back(xd[0]);
  col_dims.append(w->out.begin(), w->out.end());
  // Loops: g, c, k_1..k_s, n, o_1..o_s (all parallel: a copy).
  const unsigned nd = 3 + 2 * spatial;
  const unsigned k0 = 2, n_dim = 2 + spatial, o0 = 3 + spatial;
  SmallVector<AffineExpr> xe = {b.getAffineDimExpr(n_dim),
                                b.getAffineDimExpr(0) * cg + b.getAffineDimExpr(1)};
  for (int64_t i = 0; i < spatial; ++i) xe.push_back(windowExpr(b, *w, i, o0 + i, k0 + i));
  Value col_init = emptyTensor(b, loc, col_dims, t);
  Value cols =
      generate(b, loc, col_init, ValueRange{xp}, {AffineMap::get(nd, 0, xe, b.getContext())},
               [](OpBuilder&, Location, ValueRange a) { return a[0]; });
  OpFoldResult columns = mulIndex(b, loc, xd[0], product(b, loc, w->out));
  const int64_t depth = cg * window;
  Value products;
  if (group == 1) {
    Value w2 = reshape(b, loc, w3, {b.getIndexAttr(fg), b.getIndexAttr(depth)});
    Value c2 = reshape(b, loc, cols, {b.getIndexAttr(depth), columns});
    products = matmul2d(b, loc, w2, c2);
  } else {
    Value c3 = reshape(b, loc, cols, {b.getIndexAttr(group), b.getIndexAttr(depth), columns});
    Value init = zeroFilled(b, loc, {b.getIndexAttr(group), b.getIndexAttr(fg), columns}, t);
    products =
        b.create<linalg::BatchMatmulOp>(loc, ValueRange{w3, c3}, ValueRange{init}).getResult(0);
  }
  // [F, N, O...] -> [N, F, O...], plus the bias.
  SmallVector<OpFoldResult> fno = {b.getIndexAttr(filters), xd[0]};
  fno.append(w->out.begin(), w->out.end());
  Value y = reshape(b, loc, products, fno);
  SmallVector<OpFoldResult> out = {xd[0], b.getIndexAttr(filters)};
  out.append(w->out.begin(), w->out.end());
  const unsigned od = 2 + spatial;
  SmallVector<AffineExpr> ye = {b.getAffineDimExpr(1), b.getAffineDimExpr(0)};
  for (int64_t i = 0; i < spatial; ++i) ye.push_back(b.getAffineDimExpr(2 + i));
  SmallVector<Value> inputs = {y};
  SmallVector<AffineMap> maps = {AffineMap::get(od, 0, ye, b.getContext())};
  if (bias) {
    inputs.push_back(bias);
    maps.push_back(AffineMap::get(od, 0, {b.getAffineDimExpr(1)}, b.getContext()));
  }
  return generate(b, loc, emptyTensor(b, loc, out, t), inputs, maps,
                  [](OpBuilder& nb, Location nl, ValueRange a) -> Value {
                    if (a.size() == 2) return nb.create<arith::AddFOp>(nl, a[0], a[1]);
                    return a[0];
                  });
}

// disc_ral.conv of x and the filter into `init` (ral_conv, a library kernel: no padding or
// im2col here). A missing bias is an empty one.
Value libraryConvolution(OpBuilder& b, Location loc, Value x, Value filter, Value bias, Value init,
                         const Window& w, int64_t group, bool transposed) {
  Type t = cast<RankedTensorType>(x.getType()).getElementType();
  if (!bias)
    bias = b.create<arith::ConstantOp>(
        loc, DenseElementsAttr::get(RankedTensorType::get({0}, t), ArrayRef<Attribute>{}));
  SmallVector<NamedAttribute> attrs = {
      b.getNamedAttr("strides", b.getDenseI64ArrayAttr(w.strides)),
      b.getNamedAttr("dilations", b.getDenseI64ArrayAttr(w.dilations)),
      b.getNamedAttr("pad_begin", b.getDenseI64ArrayAttr(w.pad_begin)),
      b.getNamedAttr("pad_end", b.getDenseI64ArrayAttr(w.pad_end)),
      b.getNamedAttr("groups", b.getI64IntegerAttr(group))};
  if (transposed) attrs.push_back(b.getNamedAttr("transposed", b.getUnitAttr()));
  return b
      .create<ConvOp>(loc, TypeRange{init.getType()}, ValueRange{x, filter, bias, init}, attrs)
      .getResult()[0];
}

// q's scales, zero points, unsigned flags and activation set on `conv`.
void setQuantization(ConvOp conv, const QuantizedConv& q) {
  Builder b(conv.getContext());
  conv.setScalesAttr(b.getDenseF32ArrayAttr(q.scales));
  conv.setInputZeroPointAttr(b.getI64IntegerAttr(q.x_zero_point));
  conv.setOutputZeroPointAttr(b.getI64IntegerAttr(q.y_zero_point));
  conv.setInputUnsigned(q.x_unsigned);
  conv.setOutputUnsigned(q.y_unsigned);
  conv.setActivation(q.activation);
  conv.setAlpha(APFloat(q.alpha));
  conv.setBeta(APFloat(q.beta));
}

struct EpilogueValues {
  Value residual;  // null without a residual Add
  float alpha = 0, beta = 0;
  DenseElementsAttr filter, bias;  // with a BatchNormalization folded in
};

// W' = W * s and b' = (b - mean) * s + B per output channel f, s = scale / sqrt(var + epsilon),
// computed in double; failure unless W, b and the four parameters are f32 constants of F values.
LogicalResult foldBatchNorm(NodeContext& n, const ConvEpilogue& e, EpilogueValues& v) {
  DenseElementsAttr w = n.input(1).data;
  if (!w || !w.getElementType().isF32() || e.batch_norm.size() != 4) return failure();
  const int64_t filters = w.getType().getDimSize(0);
  const int64_t per_filter = filters ? w.getNumElements() / filters : 0;
  std::vector<double> p[4];
  for (int i = 0; i < 4; ++i) {
    Tensor* t = n.named(e.batch_norm[i]);
    if (!t || !t->data || !t->data.getElementType().isF32() ||
        t->data.getNumElements() != filters)
      return failure();
    for (float f : t->data.getValues<float>()) p[i].push_back(f);
  }
  std::vector<double> b(filters, 0.0);
  if (n.hasInput(2)) {
    DenseElementsAttr bd = n.input(2).data;
    if (!bd || !bd.getElementType().isF32() || bd.getNumElements() != filters) return failure();
    int64_t f = 0;
    for (float x : bd.getValues<float>()) b[f++] = x;
  }
  if (failed(n.chargeConstant((w.getNumElements() + filters) * 4, "the folded BatchNormalization")))
    return failure();
  std::vector<float> wf;
  wf.reserve(w.getNumElements());
  std::vector<float> bf(filters);
  int64_t i = 0;
  for (float x : w.getValues<float>()) {
    const int64_t f = i++ / per_filter;
    const double s = p[0][f] / std::sqrt(p[3][f] + e.epsilon);
    wf.push_back(static_cast<float>(x * s));
  }
  for (int64_t f = 0; f < filters; ++f) {
    const double s = p[0][f] / std::sqrt(p[3][f] + e.epsilon);
    bf[f] = static_cast<float>((b[f] - p[2][f]) * s + p[1][f]);
  }
  v.filter = DenseElementsAttr::get(w.getType(), ArrayRef<float>(wf));
  v.bias = DenseElementsAttr::get(RankedTensorType::get({filters}, w.getElementType()),
                                  ArrayRef<float>(bf));
  return success();
}

// What a Conv's planned epilogue needs, or failure when the fused form would not be exactly the
// nodes' result: a residual of another type than the convolution's output (a broadcast), or Clip
// bounds that are not constant f32 scalars. The nodes then convert one by one.
FailureOr<EpilogueValues> epilogueValues(NodeContext& n, const ConvEpilogue& e, Value init) {
  auto out = cast<RankedTensorType>(init.getType());
  EpilogueValues v;
  if (!e.batch_norm.empty() && failed(foldBatchNorm(n, e, v))) return failure();
  if (!e.residual.empty()) {
    Tensor* r = n.named(e.residual);
    if (!r || r->type.getElementType() != out.getElementType() ||
        r->type.getRank() != out.getRank())
      return failure();
    // Static dims must match exactly; dynamic ones (the batch) are checked at run time, and a
    // size-1 residual dim against a dynamic one is a broadcast the kernel does not do.
    for (int64_t d = 0; d < out.getRank(); ++d) {
      const bool rs = !r->type.isDynamicDim(d), os = !out.isDynamicDim(d);
      if (rs != os || (rs && r->type.getDimSize(d) != out.getDimSize(d))) return failure();
    }
    v.residual = n.materialize(*r);
  }
  if (e.activation == "clip") {
    v.alpha = e.attr_min;
    v.beta = e.attr_max;
    for (auto [name, bound] : {std::make_pair(&e.clip_min, &v.alpha),
                               std::make_pair(&e.clip_max, &v.beta)}) {
      if (name->empty()) {
        continue;  // unbounded on that side
      }
      Tensor* t = n.named(*name);
      if (!t || !t->data || t->data.getNumElements() != 1 || !t->type.getElementType().isF32())
        return failure();
      *bound = t->data.getValues<float>()[0];
    }
    if (std::isnan(v.alpha) || std::isnan(v.beta)) return failure();
  }
  if (v.residual) {
    OpBuilder& b = n.b();
    Location loc = n.loc();
    for (int64_t d = 0; d < out.getRank(); ++d)
      if (out.isDynamicDim(d) &&
          failed(checkSameDim(n, dimOf(b, loc, v.residual, d), dimOf(b, loc, init, d),
                              "the residual Add's operands (dim " + std::to_string(d) + ")")))
        return failure();
  }
  return v;
}

// The epilogue's activation and residual set on `conv`, whose result (or a reshape of it) is
// `result`: it now defines the epilogue's output.
void applyEpilogue(NodeContext& n, ConvEpilogue& e, const EpilogueValues& ev, ConvOp conv,
                   Value result) {
  conv.setActivation(e.activation);
  conv.setAlpha(APFloat(ev.alpha));
  conv.setBeta(APFloat(ev.beta));
  if (ev.residual) conv.setResidual(true);
  n.defineNamed(e.output, result);
  e.fused = true;
}

// A bias of `columns` values for a [..., columns] result of rank `rank`: [columns] or that with
// leading 1s, no higher rank (a broadcast that adds dims is not a bias); as [columns], or null.
DenseElementsAttr linearBias(DenseElementsAttr data, int64_t columns, int64_t rank) {
  if (!data || !data.getElementType().isF32()) return {};
  ArrayRef<int64_t> shape = data.getType().getShape();
  if (shape.empty() || static_cast<int64_t>(shape.size()) > rank || shape.back() != columns ||
      llvm::any_of(shape.drop_back(), [](int64_t d) { return d != 1; }))
    return {};
  return data.reshape(RankedTensorType::get({columns}, data.getElementType()));
}

}  // namespace

// a [..., K] times a constant w ([K, N], or [N, K] when `nk`) plus an optional bias [N], as a 1x1
// channels-last disc_ral.conv over a's rows: ral_conv keeps such weights packed for the
// Context's life and applies the node's planned epilogue (bias Add, residual Add, activation)
// before each store. False (nothing built) when it does not apply: then the GEMM path converts
// the node.
FailureOr<bool> libraryLinear(NodeContext& n, Value a, DenseElementsAttr w, bool nk,
                              DenseElementsAttr bias) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  auto ta = cast<RankedTensorType>(a.getType());
  if (!ta.getElementType().isF32() || ta.getRank() < 2 || !w || !w.getElementType().isF32() ||
      w.getType().getRank() != 2)
    return false;
  const int64_t k = w.getType().getDimSize(nk ? 1 : 0), cols = w.getType().getDimSize(nk ? 0 : 1);
  // Without a contraction or a column the GEMM path's zeros (plus bias) are all there is.
  if (k == 0 || cols == 0) return false;
  const int64_t rank = ta.getRank();
  if (bias && !(bias = linearBias(bias, cols, rank))) return false;
  // The filter, [N, K, 1]: w transposed at import time unless it already is [N, K].
  Type f32 = ta.getElementType();
  auto filter_type = RankedTensorType::get({cols, k, 1}, f32);
  DenseElementsAttr filter;
  if (w.isSplat()) {
    filter = DenseElementsAttr::get(filter_type, w.getSplatValue<Attribute>());
  } else if (nk) {
    filter = w.reshape(filter_type);
  } else {
    // A second copy of the weights: past the constant budget, the GEMM reads them as they are.
    const int64_t bytes = w.getNumElements() * 4;
    if (!n.constantFits(bytes) || failed(n.chargeConstant(bytes, "the transposed weights")))
      return false;
    filter = transposeConstant(w, {1, 0}).reshape(filter_type);
  }
  if (failed(checkSameDim(n, dimOf(b, loc, a, rank - 1), b.getIndexAttr(k), "contraction dims")))
    return failure();
  SmallVector<OpFoldResult> lead = dimsOf(b, loc, a);
  lead.pop_back();
  SmallVector<OpFoldResult> out_dims(lead);
  out_dims.push_back(b.getIndexAttr(cols));
  OpFoldResult rows = product(b, loc, lead);
  SmallVector<OpFoldResult> conv_dims = {b.getIndexAttr(1), rows, b.getIndexAttr(cols)};

  // The planned epilogue, when its values allow (a bias Add of one value per column, after a
  // Gemm without its own).
  ConvEpilogue* e = n.epilogue();
  std::optional<EpilogueValues> ev;
  DenseElementsAttr fused_bias = bias;
  if (e && e->linear) {
    bool ok = true;
    if (!e->bias.empty()) {
      Tensor* t = n.named(e->bias);
      fused_bias = t && !bias ? linearBias(t->data, cols, rank) : DenseElementsAttr();
      ok = static_cast<bool>(fused_bias);
    }
    if (ok) {
      FailureOr<EpilogueValues> values = epilogueValues(n, *e, emptyTensor(b, loc, out_dims, f32));
      if (succeeded(values)) ev = *values;
    }
    if (!ev) fused_bias = bias;
  }
  Value init = ev && ev->residual ? reshape(b, loc, ev->residual, conv_dims)
                                             : emptyTensor(b, loc, conv_dims, f32);
  Window window;
  window.strides = {1};
  window.dilations = {1};
  window.pad_begin = {0};
  window.pad_end = {0};
  Value x = reshape(b, loc, a, {b.getIndexAttr(1), rows, b.getIndexAttr(k)});
  Value bias_value = fused_bias ? b.create<arith::ConstantOp>(loc, fused_bias) : Value();
  Value y = libraryConvolution(b, loc, x, b.create<arith::ConstantOp>(loc, filter), bias_value,
                               init, window, 1, /*transposed=*/false);
  auto conv = y.getDefiningOp<ConvOp>();
  conv.setChannelsLast(true);
  Value result = reshape(b, loc, y, out_dims);
  if (!ev) {
    n.setOutput(0, result);
    return true;
  }
  applyEpilogue(n, *e, *ev, conv, result);
  return true;
}

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
  if (failed(checkSameDim(n, dimOf(b, loc, a, rank - 1), b.getIndexAttr(k), "contraction dims")))
    return failure();
  SmallVector<OpFoldResult> lead = dimsOf(b, loc, a);
  lead.pop_back();
  SmallVector<OpFoldResult> out_dims(lead);
  out_dims.push_back(b.getIndexAttr(cols));
  OpFoldResult rows = product(b, loc, lead);
  Type f32 = b.getF32Type();
  Value init = emptyTensor(b, loc, {b.getIndexAttr(1), rows, b.getIndexAttr(cols)},
                           q->int8_result ? b.getIntegerType(8) : f32);
  Value bias_value = b.create<arith::ConstantOp>(
      loc, DenseElementsAttr::get(RankedTensorType::get({static_cast<int64_t>(q->bias.size())}, f32),
                                  ArrayRef<float>(q->bias)));
  Window window;
  window.strides = {1};
  window.dilations = {1};
  window.pad_begin = {0};
  window.pad_end = {0};
  Value x = reshape(b, loc, a, {b.getIndexAttr(1), rows, b.getIndexAttr(k)});
  Value y = libraryConvolution(b, loc, x, b.create<arith::ConstantOp>(loc, filter), bias_value,
                               init, window, 1, /*transposed=*/false);
  auto conv = y.getDefiningOp<ConvOp>();
  conv.setChannelsLast(true);
  setQuantization(conv, *q);
  defineQuantized(n, e, *q, reshape(b, loc, y, out_dims), plain);
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
