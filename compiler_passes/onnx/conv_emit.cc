// The convolution's building blocks the converters share: im2col + GEMM, the library
// convolution (disc_ral.conv, ral_conv at run time), a quantized convolution's parameters, the
// fused epilogue's values (BatchNormalization folded into the filter and bias) and linear layers
// by constant weights as 1x1 library convolutions.
#include "compiler_passes/onnx/conv_emit.h"

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
  return b.create<ConvOp>(loc, TypeRange{init.getType()}, ValueRange{x, filter, bias, init}, attrs)
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

namespace {

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
    if (!t || !t->data || !t->data.getElementType().isF32() || t->data.getNumElements() != filters)
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

}  // namespace

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
    for (auto [name, bound] :
         {std::make_pair(&e.clip_min, &v.alpha), std::make_pair(&e.clip_max, &v.beta)}) {
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

FailureOr<LinearRows> linearRows(NodeContext& n, Value a, int64_t k, int64_t cols) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  const int64_t rank = cast<RankedTensorType>(a.getType()).getRank();
  if (failed(checkSameDim(n, dimOf(b, loc, a, rank - 1), b.getIndexAttr(k), "contraction dims")))
    return failure();
  LinearRows r;
  SmallVector<OpFoldResult> lead = dimsOf(b, loc, a);
  lead.pop_back();
  r.out_dims = lead;
  r.out_dims.push_back(b.getIndexAttr(cols));
  r.rows = product(b, loc, lead);
  return r;
}

ConvOp rowsConvolution(OpBuilder& b, Location loc, Value a, OpFoldResult rows, int64_t k,
                       DenseElementsAttr filter, Value bias, Value init) {
  Window window;
  window.strides = {1};
  window.dilations = {1};
  window.pad_begin = {0};
  window.pad_end = {0};
  Value x = reshape(b, loc, a, {b.getIndexAttr(1), rows, b.getIndexAttr(k)});
  Value y = libraryConvolution(b, loc, x, b.create<arith::ConstantOp>(loc, filter), bias, init,
                               window, 1, /*transposed=*/false);
  auto conv = y.getDefiningOp<ConvOp>();
  conv.setChannelsLast(true);
  return conv;
}

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
  FailureOr<LinearRows> shape = linearRows(n, a, k, cols);
  if (failed(shape)) return failure();
  SmallVector<OpFoldResult> out_dims = shape->out_dims;
  OpFoldResult rows = shape->rows;
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
  Value bias_value = fused_bias ? b.create<arith::ConstantOp>(loc, fused_bias) : Value();
  ConvOp conv = rowsConvolution(b, loc, a, rows, k, filter, bias_value, init);
  Value result = reshape(b, loc, conv.getResult()[0], out_dims);
  if (!ev) {
    n.setOutput(0, result);
    return true;
  }
  applyEpilogue(n, *e, *ev, conv, result);
  return true;
}

}  // namespace onnx
}  // namespace disc_ral
}  // namespace mlir
