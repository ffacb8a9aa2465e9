// Linear algebra and windowed ONNX operators: MatMul and Gemm (linalg.matmul / batch_matmul,
// which ral-compile turns into RAL's GEMM kernels), Conv (1d/2d/3d, groups, pads, strides,
// dilations), MaxPool, AveragePool, the global pools, and BatchNormalization at inference.
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <vector>

#include "compiler_passes/dialect/dialect.h"
#include "compiler_passes/onnx/builders.h"
#include "compiler_passes/onnx/checked_int.h"
#include "compiler_passes/onnx/conv_fusion.h"
#include "compiler_passes/onnx/node_context.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir {
namespace disc_ral {
namespace onnx {

// Fails the execution when two contraction dims differ; an import error when both are static.
LogicalResult checkSameDim(NodeContext& n, OpFoldResult x, OpFoldResult y, llvm::StringRef what) {
  auto cx = constantIndex(x), cy = constantIndex(y);
  if (cx && cy) {
    if (*cx != *cy)
      return n.error(what + " differ: " + std::to_string(*cx) + " vs " + std::to_string(*cy));
    return success();
  }
  Value eq =
      n.b().create<arith::CmpIOp>(n.loc(), arith::CmpIPredicate::eq, indexValue(n.b(), n.loc(), x),
                                  indexValue(n.b(), n.loc(), y));
  runtimeCheck(n.b(), n.loc(), eq, (n.node().op_type() + ": " + what + " differ").str());
  return success();
}

namespace {

Value zeroFilled(OpBuilder& b, Location loc, ArrayRef<OpFoldResult> dims, Type element) {
  return filled(b, loc, dims, scalarConstant(b, loc, element, 0));
}

// a [M, K] · b [K, N] as linalg.matmul on a zero-filled result.
Value matmul2d(OpBuilder& b, Location loc, Value a, Value c) {
  OpFoldResult m = dimOf(b, loc, a, 0), n = dimOf(b, loc, c, 1);
  Type element = cast<RankedTensorType>(a.getType()).getElementType();
  Value init = zeroFilled(b, loc, {m, n}, element);
  return b.create<linalg::MatmulOp>(loc, ValueRange{a, c}, ValueRange{init}).getResult(0);
}

// numpy matmul: 1-D operands promoted, batch dims broadcast; a 2-D right operand folds the left
// operand's batch dims into M, so the product is one GEMM.
FailureOr<Value> numpyMatmul(NodeContext& n, Value a, Value c) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  auto ta = cast<RankedTensorType>(a.getType()), tc = cast<RankedTensorType>(c.getType());
  if (ta.getElementType() != tc.getElementType())
    return n.error("operands have different element types");
  if (ta.getElementType().isInteger(1)) return n.unsupported("bool matmul");
  if (ta.getRank() == 0 || tc.getRank() == 0) return n.error("matmul of a scalar");
  const bool a_vec = ta.getRank() == 1, c_vec = tc.getRank() == 1;
  SmallVector<OpFoldResult> da = dimsOf(b, loc, a), dc = dimsOf(b, loc, c);
  if (a_vec) {
    a = reshape(b, loc, a, {b.getIndexAttr(1), da[0]});
    da = dimsOf(b, loc, a);
  }
  if (c_vec) {
    c = reshape(b, loc, c, {dc[0], b.getIndexAttr(1)});
    dc = dimsOf(b, loc, c);
  }
  const int64_t ra = da.size(), rc = dc.size();
  if (failed(checkSameDim(n, da[ra - 1], dc[rc - 2], "contraction dims"))) return failure();
  OpFoldResult m = da[ra - 2], k = da[ra - 1], nn = dc[rc - 1];
  SmallVector<OpFoldResult> batch;
  Value out;
  if (rc == 2) {
    SmallVector<OpFoldResult> lead(da.begin(), da.end() - 2);
    OpFoldResult rows = mulIndex(b, loc, product(b, loc, lead), m);
    Value a2 = reshape(b, loc, a, {rows, k});
    out = matmul2d(b, loc, a2, c);
    batch = lead;
  } else {
    // Broadcast the batch dims, then one batch_matmul over their product.
    SmallVector<OpFoldResult> ba(da.begin(), da.end() - 2), bc(dc.begin(), dc.end() - 2);
    const size_t r = std::max(ba.size(), bc.size());
    for (size_t i = 0; i < r; ++i) {
      auto pick = [&](ArrayRef<OpFoldResult> d) -> std::optional<OpFoldResult> {
        const int64_t j = static_cast<int64_t>(i) - static_cast<int64_t>(r - d.size());
        if (j < 0) return std::nullopt;
        return d[j];
      };
      auto x = pick(ba), y = pick(bc);
      if (!x)
        batch.push_back(*y);
      else if (!y)
        batch.push_back(*x);
      else if (constantIndex(*x) == 1)
        batch.push_back(*y);
      else if (constantIndex(*y) == 1)
        batch.push_back(*x);
      else {
        if (failed(checkSameDim(n, *x, *y, "batch dims"))) return failure();
        batch.push_back(constantIndex(*x) ? *x : *y);
      }
    }
    SmallVector<OpFoldResult> full_a(batch), full_c(batch);
    full_a.append({m, k});
    full_c.append({k, nn});
    Value a3 = broadcastTo(b, loc, a, full_a);
    Value c3 = broadcastTo(b, loc, c, full_c);
    OpFoldResult count = product(b, loc, batch);
    a3 = reshape(b, loc, a3, {count, m, k});
    c3 = reshape(b, loc, c3, {count, k, nn});
    Value init = zeroFilled(b, loc, {count, m, nn}, ta.getElementType());
    out = b.create<linalg::BatchMatmulOp>(loc, ValueRange{a3, c3}, ValueRange{init}).getResult(0);
  }
  SmallVector<OpFoldResult> dims(batch);
  if (!a_vec) dims.push_back(m);
  if (!c_vec) dims.push_back(nn);
  return reshape(b, loc, out, dims);
}

FailureOr<bool> libraryLinear(NodeContext& n, Value a, DenseElementsAttr w, bool nk,
                              DenseElementsAttr bias);
FailureOr<bool> quantizedLinear(NodeContext& n, ConvEpilogue& e);

LogicalResult convertMatMul(NodeContext& n) {
  if (ConvEpilogue* e = n.epilogue()) {
    FailureOr<bool> done = quantizedLinear(n, *e);
    if (failed(done)) return failure();
    if (*done) return success();
  }
  if (n.libraryLinear()) {
    FailureOr<bool> done = libraryLinear(n, n.value(0), n.input(1).data, false, {});
    if (failed(done)) return failure();
    if (*done) return success();
  }
  FailureOr<Value> y = numpyMatmul(n, n.value(0), n.value(1));
  if (failed(y)) return failure();
  n.setOutput(0, *y);
  return success();
}

// A 2-D operand, transposed when asked; a constant is transposed at import time.
Value gemmOperand(NodeContext& n, size_t i, bool trans) {
  if (!trans) return n.value(i);
  if (DenseElementsAttr data = n.input(i).data)
    if (DenseElementsAttr t = transposeConstant(data, {1, 0}))
      return n.b().create<arith::ConstantOp>(n.loc(), t);
  return transpose(n.b(), n.loc(), n.value(i), {1, 0});
}

LogicalResult convertGemm(NodeContext& n) {
  if (n.rank(0) != 2 || n.rank(1) != 2) return n.error("A and B must be 2-D");
  // Before opset 7, C broadcasts only with broadcast = 1; otherwise it is [M, N] already.
  if (n.has("broadcast") && n.opset() >= 7) return n.unsupported("attribute 'broadcast'");
  if (n.opset() < 7 && n.hasInput(2) && n.i("broadcast", 0) == 0 && n.rank(2) != 2)
    return n.error("C must be [M, N] (broadcast = 0)");
  Type t = n.elementType(0);
  if (!isFloat(t)) return n.unsupported("Gemm of non-float element type");
  const double alpha = n.f("alpha", 1.0f), beta = n.f("beta", 1.0f);
  const bool bias = n.hasInput(2) && beta != 0;
  // A weight matrix and a bias of one value per column (or none): a linear layer.
  if (n.libraryLinear() && n.i("transA", 0) == 0 && alpha == 1.0 && (!bias || beta == 1.0) &&
      (!bias || n.input(2).data)) {
    if (ConvEpilogue* e = n.epilogue()) {
      FailureOr<bool> done = quantizedLinear(n, *e);
      if (failed(done)) return failure();
      if (*done) return success();
    }
    FailureOr<bool> done = libraryLinear(n, n.value(0), n.input(1).data, n.i("transB", 0) != 0,
                                         bias ? n.input(2).data : DenseElementsAttr());
    if (failed(done)) return failure();
    if (*done) return success();
  }
  Value a = gemmOperand(n, 0, n.i("transA", 0) != 0);
  Value c = gemmOperand(n, 1, n.i("transB", 0) != 0);
  FailureOr<Value> y = numpyMatmul(n, a, c);
  if (failed(y)) return failure();
  Value out = *y;
  if (alpha != 1.0 || bias) {
    SmallVector<Value> inputs = {out};
    if (bias) inputs.push_back(n.value(2));
    if (auto why = broadcastError(inputs)) return n.error("C: " + *why);
    SmallVector<OpFoldResult> dims = dimsOf(n.b(), n.loc(), out);
    out = elementwise(
        n.b(), n.loc(), inputs, t,
        [&](OpBuilder& b, Location loc, ValueRange x) -> Value {
          Value v = x[0];
          if (alpha != 1.0) v = b.create<arith::MulFOp>(loc, v, scalarConstant(b, loc, t, alpha));
          if (x.size() > 1) {
            Value c2 = x[1];
            if (beta != 1.0) c2 = b.create<arith::MulFOp>(loc, c2, scalarConstant(b, loc, t, beta));
            v = b.create<arith::AddFOp>(loc, v, c2);
          }
          return v;
        },
        ArrayRef<OpFoldResult>(dims));
  }
  n.setOutput(0, out);
  return success();
}

// A two-input float Einsum as one GEMM (batched over the labels both inputs share with the
// output): each input transposed to [batch, free, contracted] and reshaped to 3-D, the product
// reshaped and transposed to the output's order. Null when the equation needs more than that
// (a diagonal, a label summed within one input, an ellipsis dim broadcast from 1): the caller's
// contraction loop computes those. `in` holds each input's loop dims (AffineDimExprs or, for a
// broadcast dim, a constant), `out` the output's, `size` every loop dim's size.
FailureOr<std::optional<Value>> einsumAsGemm(NodeContext& n, ArrayRef<Value> inputs,
                                             ArrayRef<SmallVector<AffineExpr>> in_exprs,
                                             ArrayRef<int64_t> out, ArrayRef<OpFoldResult> size) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  SmallVector<SmallVector<int64_t>> in(2);
  for (int i = 0; i < 2; ++i)
    for (AffineExpr e : in_exprs[i]) {
      auto d = dyn_cast<AffineDimExpr>(e);
      if (!d || llvm::is_contained(in[i], d.getPosition())) return std::optional<Value>();
      in[i].push_back(d.getPosition());
    }
  SmallVector<int64_t> batch, m, cols, k;
  for (int64_t l : out) {
    const bool a = llvm::is_contained(in[0], l), c = llvm::is_contained(in[1], l);
    (a && c ? batch : a ? m : cols).push_back(l);
  }
  for (int64_t l : in[0])
    if (!llvm::is_contained(out, l)) {
      if (!llvm::is_contained(in[1], l)) return std::optional<Value>();
      k.push_back(l);
    }
  for (int64_t l : in[1])
    if (!llvm::is_contained(out, l) && !llvm::is_contained(in[0], l))
      return std::optional<Value>();
  auto sizesOf = [&](ArrayRef<int64_t> ls) {
    SmallVector<OpFoldResult> v;
    for (int64_t l : ls) v.push_back(size[l]);
    return v;
  };
  // One operand in the order of `groups`, flattened to one dim per group.
  auto operand = [&](int i, std::initializer_list<ArrayRef<int64_t>> groups) {
    SmallVector<int64_t> perm;
    SmallVector<OpFoldResult> dims;
    for (ArrayRef<int64_t> g : groups) {
      for (int64_t l : g) perm.push_back(llvm::find(in[i], l) - in[i].begin());
      dims.push_back(product(b, loc, sizesOf(g)));
    }
    return reshape(b, loc, transpose(b, loc, inputs[i], perm), dims);
  };
  Value a = batch.empty() ? operand(0, {m, k}) : operand(0, {batch, m, k});
  Value c = batch.empty() ? operand(1, {k, cols}) : operand(1, {batch, k, cols});
  FailureOr<Value> product_ = numpyMatmul(n, a, c);
  if (failed(product_)) return failure();
  SmallVector<int64_t> order(batch);
  order.append(m.begin(), m.end());
  order.append(cols.begin(), cols.end());
  Value r = reshape(b, loc, *product_, sizesOf(order));
  SmallVector<int64_t> perm;
  for (int64_t l : out) perm.push_back(llvm::find(order, l) - order.begin());
  return std::optional<Value>(transpose(b, loc, r, perm));
}

// Einsum: a (batched) matrix product of two float inputs runs as GEMMs (einsumAsGemm); any
// other equation is one linalg.generic over every label of the equation (and the dims an
// ellipsis stands for), the output's labels parallel and the rest reduced, the body the product
// of the inputs' elements added to the sum. A label repeated in one input takes its diagonal; an
// ellipsis broadcasts numpy's way (a dim of static size 1 against a larger one). Without "->" the
// output is the ellipsis dims, then the labels used once, in alphabetical order.
LogicalResult convertEinsum(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  std::string eq;
  for (char c : n.s("equation", "")) {
    if (c != ' ') eq += c;
  }
  const size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow), out_term;
  const bool explicit_out = arrow != std::string::npos;
  if (explicit_out) out_term = eq.substr(arrow + 2);
  SmallVector<std::string> terms;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma == std::string::npos ? comma : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  const size_t count = n.numInputs();
  if (terms.size() != count)
    return n.error("the equation has " + std::to_string(terms.size()) + " operand terms for " +
                   std::to_string(count) + " inputs");
  Type t = n.elementType(0);
  if (t.isInteger(1)) return n.unsupported("Einsum of bool");
  for (size_t i = 1; i < count; ++i)
    if (n.elementType(i) != t) return n.error("inputs have different element types");
  auto isLabel = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  // A term's labels, with '.' standing for the ellipsis; false when malformed.
  auto parse = [&](const std::string& term, std::string& labels, bool& ellipsis) {
    ellipsis = false;
    labels.clear();
    for (size_t i = 0; i < term.size(); ++i) {
      if (term.compare(i, 3, "...") == 0) {
        if (ellipsis) return false;
        ellipsis = true;
        labels += '.';
        i += 2;
      } else if (isLabel(term[i])) {
        labels += term[i];
      } else {
        return false;
      }
    }
    return true;
  };
  SmallVector<std::string> labels(count);
  SmallVector<int64_t> ell_rank(count, 0);
  int64_t ell = 0;  // the ellipsis' rank: the most any input gives it
  std::map<char, int> uses;
  for (size_t i = 0; i < count; ++i) {
    bool has_ellipsis;
    if (!parse(terms[i], labels[i], has_ellipsis))
      return n.error("malformed term '" + terms[i] + "' in equation '" + eq + "'");
    const int64_t named = static_cast<int64_t>(labels[i].size()) - (has_ellipsis ? 1 : 0);
    const int64_t rank = n.rank(i);
    if (has_ellipsis ? rank < named : rank != named)
      return n.error("term '" + terms[i] + "' does not fit input " + std::to_string(i) +
                     " of rank " + std::to_string(rank));
    if (has_ellipsis) ell_rank[i] = rank - named;
    ell = std::max(ell, ell_rank[i]);
    for (char c : labels[i])
      if (c != '.') ++uses[c];
  }
  std::string out_labels;
  bool out_ellipsis = false;
  if (explicit_out) {
    if (!parse(out_term, out_labels, out_ellipsis))
      return n.error("malformed output term '" + out_term + "'");
    for (char c : out_labels)
      if (c != '.' && (!uses.count(c) || llvm::count(out_labels, c) != 1))
        return n.error(std::string("output label '") + c + "' is repeated or in no input");
    // numpy (ONNX's reference) refuses to drop an ellipsis' dims silently.
    if (!out_ellipsis && ell > 0)
      return n.error("the output term has no '...' for the " + std::to_string(ell) +
                     " dims the inputs' ellipsis stands for");
  } else {
    out_ellipsis = ell > 0;
    if (out_ellipsis) out_labels += '.';
    for (auto [c, k] : uses)
      if (k == 1) out_labels += c;
  }
  // Loop dims: the ellipsis' (0..ell), then each label in first-seen order, output's first.
  std::map<char, int64_t> dim_of;
  int64_t loops = ell;
  SmallVector<utils::IteratorType> iters(ell, out_ellipsis ? utils::IteratorType::parallel
                                                           : utils::IteratorType::reduction);
  auto addLabel = [&](char c, utils::IteratorType it) {
    if (c == '.' || dim_of.count(c)) return;
    dim_of[c] = loops++;
    iters.push_back(it);
  };
  for (char c : out_labels) addLabel(c, utils::IteratorType::parallel);
  for (const std::string& l : labels)
    for (char c : l) addLabel(c, utils::IteratorType::reduction);
  // Each loop dim's size, from the first input that has it (a broadcast 1 gives way to more).
  SmallVector<OpFoldResult> size(loops);
  SmallVector<Value> inputs;
  SmallVector<SmallVector<AffineExpr>> exprs(count);
  for (size_t i = 0; i < count; ++i) {
    Value v = n.value(i);
    inputs.push_back(v);
    SmallVector<OpFoldResult> dims = dimsOf(b, loc, v);
    int64_t d = 0;
    for (char c : labels[i]) {
      if (c == '.') {
        for (int64_t e = 0; e < ell_rank[i]; ++e, ++d) {
          const int64_t loop = ell - ell_rank[i] + e;
          exprs[i].push_back(b.getAffineDimExpr(loop));
          if (!size[loop] || constantIndex(size[loop]) == 1) size[loop] = dims[d];
        }
        continue;
      }
      const int64_t loop = dim_of[c];
      exprs[i].push_back(b.getAffineDimExpr(loop));
      if (!size[loop]) size[loop] = dims[d];
      ++d;
    }
  }
  // Every other occurrence of a loop dim must match its size; an ellipsis dim of static size 1
  // broadcasts (read at 0).
  for (size_t i = 0; i < count; ++i) {
    SmallVector<OpFoldResult> dims = dimsOf(b, loc, inputs[i]);
    for (size_t d = 0; d < exprs[i].size(); ++d) {
      const int64_t loop = cast<AffineDimExpr>(exprs[i][d]).getPosition();
      if (loop < ell && constantIndex(dims[d]) == 1 && constantIndex(size[loop]) != 1) {
        exprs[i][d] = b.getAffineConstantExpr(0);
        continue;
      }
      if (failed(checkSameDim(n, dims[d], size[loop], "sizes of one label")))
        return failure();
    }
  }
  // Two float inputs: the GEMM kernels, when the equation is a (batched) matrix product.
  if (count == 2 && isFloat(t)) {
    SmallVector<int64_t> out_loops;
    for (char c : out_labels) {
      if (c != '.') out_loops.push_back(dim_of[c]);
      for (int64_t e = 0; c == '.' && e < ell; ++e) out_loops.push_back(e);
    }
    FailureOr<std::optional<Value>> gemm = einsumAsGemm(n, inputs, exprs, out_loops, size);
    if (failed(gemm)) return failure();
    if (*gemm) {
      n.setOutput(0, **gemm);
      return success();
    }
  }
  SmallVector<AffineMap> maps;
  for (size_t i = 0; i < count; ++i)
    maps.push_back(AffineMap::get(loops, 0, exprs[i], b.getContext()));
  SmallVector<AffineExpr> out_exprs;
  SmallVector<OpFoldResult> out_dims;
  for (char c : out_labels) {
    if (c == '.') {
      for (int64_t e = 0; e < ell; ++e) {
        out_exprs.push_back(b.getAffineDimExpr(e));
        out_dims.push_back(size[e]);
      }
      continue;
    }
    out_exprs.push_back(b.getAffineDimExpr(dim_of[c]));
    out_dims.push_back(size[dim_of[c]]);
  }
  maps.push_back(AffineMap::get(loops, 0, out_exprs, b.getContext()));
  Value init = filled(b, loc, out_dims, scalarConstant(b, loc, t, 0));
  const bool f = isFloat(t);
  auto generic = b.create<linalg::GenericOp>(
      loc, TypeRange{init.getType()}, inputs, ValueRange{init}, maps, iters,
      [&](OpBuilder& nb, Location nl, ValueRange a) {
        Value p = a[0];
        for (size_t i = 1; i < count; ++i)
          p = f ? nb.create<arith::MulFOp>(nl, p, a[i]).getResult()
                : nb.create<arith::MulIOp>(nl, p, a[i]).getResult();
        Value sum = f ? nb.create<arith::AddFOp>(nl, a[count], p).getResult()
                      : nb.create<arith::AddIOp>(nl, a[count], p).getResult();
        nb.create<linalg::YieldOp>(nl, sum);
      });
  n.setOutput(0, generic.getResult(0));
  return success();
}

// The geometry of a windowed op over the spatial dims (2..rank-1).
struct Window {
  SmallVector<int64_t> kernel, strides, dilations, pad_begin, pad_end;
  SmallVector<OpFoldResult> out;  // output spatial sizes
};

}  // namespace

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

namespace {

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

// MaxPool and AveragePool: one linalg.generic over (n, c, o..., k...) with a kernel-shaped
// operand that gives the k loops their bounds.
// MaxPool's Indices: per output, the flat index (row-major over the whole [N, C, D...] input, or
// with column_major its spatial dims first-fastest) of its window's first largest element;
// padding never wins. A loop over each window that carries
// the best value and its index (NaN wins as MaximumF lets it).
Value maxPoolIndices(OpBuilder& b, Location loc, Value x, const Window& w, ArrayRef<int64_t> kernel,
                     bool is_unsigned, bool column_major) {
  const int64_t spatial = static_cast<int64_t>(kernel.size()), rank = spatial + 2;
  Type t = cast<RankedTensorType>(x.getType()).getElementType();
  SmallVector<OpFoldResult> xd = dimsOf(b, loc, x), yd = {xd[0], xd[1]};
  yd.append(w.out.begin(), w.out.end());
  SmallVector<Value> sizes;
  for (OpFoldResult d : xd) sizes.push_back(indexValue(b, loc, d));
  return generate(
      b, loc, emptyTensor(b, loc, yd, b.getI64Type()), {}, {},
      [&](OpBuilder& nb, Location nl, ValueRange) -> Value {
        SmallVector<Value> o;
        for (int64_t d = 0; d < rank; ++d) o.push_back(nb.create<linalg::IndexOp>(nl, d));
        Value zero = nb.create<arith::ConstantIndexOp>(nl, 0),
              one = nb.create<arith::ConstantIndexOp>(nl, 1);
        // Iterate the window's positions as one flat count.
        int64_t window = 1;
        for (int64_t k : kernel) window *= k;
        Value none = nb.create<arith::ConstantIntOp>(nl, 0, 1);
        auto loop = nb.create<scf::ForOp>(
            nl, zero, nb.create<arith::ConstantIndexOp>(nl, window), one,
            ValueRange{scalarConstant(nb, nl, t, 0), nb.create<arith::ConstantIntOp>(nl, 0, 64),
                       none},
            [&](OpBuilder& lb, Location ll, Value kf, ValueRange c) {
              Value rest = kf, inside = lb.create<arith::ConstantIntOp>(ll, 1, 1);
              SmallVector<Value> at = {o[0], o[1]};
              SmallVector<Value> pos(spatial);
              for (int64_t i = spatial - 1; i >= 0; --i) {
                Value k = lb.create<arith::RemUIOp>(
                    ll, rest, lb.create<arith::ConstantIndexOp>(ll, kernel[i]));
                rest = lb.create<arith::DivUIOp>(ll, rest,
                                                 lb.create<arith::ConstantIndexOp>(ll, kernel[i]));
                Value p = lb.create<arith::SubIOp>(
                    ll,
                    lb.create<arith::AddIOp>(
                        ll,
                        lb.create<arith::MulIOp>(
                            ll, o[2 + i], lb.create<arith::ConstantIndexOp>(ll, w.strides[i])),
                        lb.create<arith::MulIOp>(
                            ll, k, lb.create<arith::ConstantIndexOp>(ll, w.dilations[i]))),
                    lb.create<arith::ConstantIndexOp>(ll, w.pad_begin[i]));
                inside = lb.create<arith::AndIOp>(
                    ll, inside,
                    lb.create<arith::AndIOp>(
                        ll, lb.create<arith::CmpIOp>(ll, arith::CmpIPredicate::sge, p, zero),
                        lb.create<arith::CmpIOp>(ll, arith::CmpIPredicate::slt, p, sizes[2 + i])));
                pos[i] = p;
              }
              for (int64_t i = 0; i < spatial; ++i)
                at.push_back(lb.create<arith::SelectOp>(ll, inside, pos[i], zero));
              auto body = lb.create<scf::IfOp>(
                  ll, inside,
                  [&](OpBuilder& ib, Location il) {
                    Value v = ib.create<tensor::ExtractOp>(il, x, at);
                    Value better =
                        isFloat(t)
                            ? ib.create<arith::CmpFOp>(il, arith::CmpFPredicate::UGT, v, c[0])
                                  .getResult()
                            : ib.create<arith::CmpIOp>(il,
                                                       is_unsigned ? arith::CmpIPredicate::ugt
                                                                   : arith::CmpIPredicate::sgt,
                                                       v, c[0])
                                  .getResult();
                    // NaN never wins over NaN already taken.
                    if (isFloat(t))
                      better = ib.create<arith::AndIOp>(
                          il, better,
                          ib.create<arith::CmpFOp>(il, arith::CmpFPredicate::ORD, c[0], c[0]));
                    better = ib.create<arith::OrIOp>(
                        il, better,
                        ib.create<arith::XOrIOp>(il, c[2],
                                                 ib.create<arith::ConstantIntOp>(il, 1, 1)));
                    // (n, c) first, then the spatial dims, last-dim-fastest or (column-major)
                    // first-dim-fastest.
                    Value flat = ib.create<arith::AddIOp>(
                        il, ib.create<arith::MulIOp>(il, at[0], sizes[1]), at[1]);
                    for (int64_t j = 0; j < spatial; ++j) {
                      const int64_t d = column_major ? rank - 1 - j : 2 + j;
                      flat = ib.create<arith::AddIOp>(
                          il, ib.create<arith::MulIOp>(il, flat, sizes[d]), at[d]);
                    }
                    Value fi = ib.create<arith::IndexCastOp>(il, ib.getI64Type(), flat);
                    ib.create<scf::YieldOp>(
                        il, ValueRange{ib.create<arith::SelectOp>(il, better, v, c[0]),
                                       ib.create<arith::SelectOp>(il, better, fi, c[1]),
                                       ib.create<arith::ConstantIntOp>(il, 1, 1)});
                  },
                  [&](OpBuilder& ib, Location il) { ib.create<scf::YieldOp>(il, c); });
              lb.create<scf::YieldOp>(ll, body.getResults());
            });
        return loop.getResult(1);
      });
}

LogicalResult convertPool(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  const bool max = n.node().op_type() == "MaxPool";
  Value x = n.value(0);
  auto tx = cast<RankedTensorType>(x.getType());
  const int64_t rank = tx.getRank();
  if (rank < 3) return n.error("input must have rank >= 3");
  Type t = tx.getElementType();
  if (!isFloat(t) && !(max && isa<IntegerType>(t) && !t.isInteger(1)))
    return n.unsupported("element type of the pooled tensor");
  // Unsigned integers pool from 0 with an unsigned max (importer.cc lets MaxPool take them).
  const bool u = n.isUnsigned(0);
  // storage_order orders the Indices output's spatial dims (1: column-major); Y is the same.
  const bool column_major = n.i("storage_order", 0) != 0;
  const int64_t spatial = rank - 2;
  SmallVector<int64_t> kernel = n.ints("kernel_shape");
  if (static_cast<int64_t>(kernel.size()) != spatial)
    return n.error("kernel_shape must have one entry per spatial dim");
  if (!checkedProduct(kernel).isSize())
    return n.error("kernel_shape holds more than 2^48 elements");
  if (!max && n.has("dilations") &&
      llvm::any_of(n.ints("dilations"), [](int64_t d) { return d != 1; }))
    return n.unsupported("AveragePool dilations other than 1");
  FailureOr<Window> w = windowOf(n, x, kernel, n.i("ceil_mode", 0) != 0);
  if (failed(w)) return failure();

  SmallVector<int64_t> low(2, 0), high(2, 0);
  low.append(w->pad_begin);
  high.append(w->pad_end);
  Value pad_value;
  if (max) {
    pad_value =
        isFloat(t)
            ? b.create<arith::ConstantOp>(
                   loc, b.getFloatAttr(t, APFloat::getInf(cast<FloatType>(t).getFloatSemantics(),
                                                          /*Negative=*/true)))
                  .getResult()
            : b.create<arith::ConstantOp>(
                   loc,
                   b.getIntegerAttr(t, u ? APInt(t.getIntOrFloatBitWidth(), 0)
                                         : APInt::getSignedMinValue(t.getIntOrFloatBitWidth())))
                  .getResult();
  } else {
    pad_value = scalarConstant(b, loc, t, 0);
  }
  Value xp = pad(b, loc, x, low, high, pad_value);
  SmallVector<OpFoldResult> xd = dimsOf(b, loc, x);
  SmallVector<OpFoldResult> yd = {xd[0], xd[1]};
  yd.append(w->out.begin(), w->out.end());
  SmallVector<OpFoldResult> kd;
  for (int64_t k : kernel) kd.push_back(b.getIndexAttr(k));
  Value window = emptyTensor(b, loc, kd, t);

  auto pool = [&](Value input, Value init_value, bool take_max) {
    const unsigned nd = 2 + 2 * spatial;
    SmallVector<AffineExpr> xe = {b.getAffineDimExpr(0), b.getAffineDimExpr(1)}, ke,
                            ye = {b.getAffineDimExpr(0), b.getAffineDimExpr(1)};
    for (int64_t i = 0; i < spatial; ++i) {
      xe.push_back(windowExpr(b, *w, i, 2 + i, 2 + spatial + i));
      ke.push_back(b.getAffineDimExpr(2 + spatial + i));
      ye.push_back(b.getAffineDimExpr(2 + i));
    }
    SmallVector<AffineMap> maps = {AffineMap::get(nd, 0, xe, b.getContext()),
                                   AffineMap::get(nd, 0, ke, b.getContext()),
                                   AffineMap::get(nd, 0, ye, b.getContext())};
    SmallVector<utils::IteratorType> iters(2 + spatial, utils::IteratorType::parallel);
    iters.append(spatial, utils::IteratorType::reduction);
    Value init = filled(b, loc, yd, init_value);
    const bool f = isFloat(t);
    return b
        .create<linalg::GenericOp>(loc, TypeRange{init.getType()}, ValueRange{input, window},
                                   ValueRange{init}, maps, iters,
                                   [&](OpBuilder& nb, Location nl, ValueRange a) {
                                     Value r;
                                     if (!take_max)
                                       r = nb.create<arith::AddFOp>(nl, a[2], a[0]);
                                     else if (f)
                                       r = nb.create<arith::MaximumFOp>(nl, a[2], a[0]);
                                     else if (u)
                                       r = nb.create<arith::MaxUIOp>(nl, a[2], a[0]);
                                     else
                                       r = nb.create<arith::MaxSIOp>(nl, a[2], a[0]);
                                     nb.create<linalg::YieldOp>(nl, r);
                                   })
        .getResult(0);
  };

  if (max) {
    n.setOutput(0, pool(xp, pad_value, true));
    if (n.wantsOutput(1)) n.setOutput(1, maxPoolIndices(b, loc, x, *w, kernel, u, column_major));
    return success();
  }
  Value sum = pool(xp, scalarConstant(b, loc, t, 0), false);
  // The divisor: how many elements of each window are input (or explicit padding, with
  // count_include_pad), from the same pooling over a [1, 1, S...] tensor of ones.
  const bool include_pad = n.i("count_include_pad", 0) != 0;
  bool uniform = include_pad;
  for (int64_t i = 0; i < spatial; ++i) {
    if (!include_pad && (w->pad_begin[i] != 0 || w->pad_end[i] != 0)) uniform = false;
  }
  // ceil_mode's extra end padding is never counted.
  const bool ceil_extra = n.i("ceil_mode", 0) != 0;
  Value out;
  if (uniform && !ceil_extra) {
    const CheckedInt checked_size = checkedProduct(kernel);
    if (!checked_size.isSize()) return n.error("kernel_shape holds more than 2^48 elements");
    const int64_t size = checked_size.value();
    out = elementwise(b, loc, {sum}, t, [&](OpBuilder& nb, Location nl, ValueRange a) -> Value {
      return nb.create<arith::DivFOp>(nl, a[0], scalarConstant(nb, nl, t, double(size)));
    });
  } else {
    SmallVector<OpFoldResult> od = {b.getIndexAttr(1), b.getIndexAttr(1)};
    for (int64_t i = 0; i < spatial; ++i) od.push_back(xd[2 + i]);
    Value ones = filled(b, loc, od, scalarConstant(b, loc, t, 1));
    // Explicit pads count with count_include_pad; the ceil_mode extra never does.
    SmallVector<int64_t> lo2(2, 0), hi2(2, 0), hi_extra(2, 0);
    SmallVector<int64_t> pads = n.ints("pads");
    for (int64_t i = 0; i < spatial; ++i) {
      lo2.push_back(include_pad ? w->pad_begin[i] : 0);
      const int64_t explicit_end = pads.empty() ? w->pad_end[i] : pads[spatial + i];
      hi2.push_back(include_pad ? std::min(explicit_end, w->pad_end[i]) : 0);
    }
    Value counted = pad(b, loc, ones, lo2, hi2, scalarConstant(b, loc, t, 1));
    SmallVector<int64_t> lo3(2, 0), hi3(2, 0);
    for (int64_t i = 0; i < spatial; ++i) {
      lo3.push_back(w->pad_begin[i] - lo2[2 + i]);
      hi3.push_back(w->pad_end[i] - hi2[2 + i]);
    }
    counted = pad(b, loc, counted, lo3, hi3, scalarConstant(b, loc, t, 0));
    SmallVector<OpFoldResult> save = yd;
    yd[0] = b.getIndexAttr(1);
    yd[1] = b.getIndexAttr(1);
    Value count = pool(counted, scalarConstant(b, loc, t, 0), false);
    yd = save;
    out =
        elementwise(b, loc, {sum, count}, t, [](OpBuilder& nb, Location nl, ValueRange a) -> Value {
          return nb.create<arith::DivFOp>(nl, a[0], a[1]);
        });
  }
  n.setOutput(0, out);
  return success();
}

LogicalResult convertGlobalPool(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  Value x = n.value(0);
  const int64_t rank = n.rank(0);
  Type t = n.elementType(0);
  if (!isFloat(t)) return n.unsupported("element type of the pooled tensor");
  if (rank < 3) return n.error("input must have rank >= 3");
  SmallVector<int64_t> axes;
  for (int64_t d = 2; d < rank; ++d) axes.push_back(d);
  const bool max = n.node().op_type() == "GlobalMaxPool";
  TypedAttr init = max ? TypedAttr(b.getFloatAttr(
                             t, APFloat::getInf(cast<FloatType>(t).getFloatSemantics(), true)))
                       : scalarAttr(b, t, 0);
  Value r = reduce(
      b, loc, x, axes, init,
      [max](OpBuilder& nb, Location nl, Value acc, Value v) -> Value {
        if (max) return nb.create<arith::MaximumFOp>(nl, acc, v);
        return nb.create<arith::AddFOp>(nl, acc, v);
      },
      true);
  if (!max) {
    SmallVector<OpFoldResult> xd = dimsOf(b, loc, x);
    OpFoldResult count = product(b, loc, ArrayRef<OpFoldResult>(xd).drop_front(2));
    Value c = b.create<arith::IndexCastOp>(loc, b.getI64Type(), indexValue(b, loc, count));
    Value cf = b.create<arith::SIToFPOp>(loc, t, c);
    r = elementwise(b, loc, {r}, t, [&](OpBuilder& nb, Location nl, ValueRange a) -> Value {
      return nb.create<arith::DivFOp>(nl, a[0], cf);
    });
  }
  n.setOutput(0, r);
  return success();
}

// y = x * a + c per channel (dim 1), a = scale / sqrt(var + eps), c = bias - mean * a; folded
// to two constants when the parameters are constants.
LogicalResult convertBatchNorm(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  if (n.i("training_mode", 0) != 0) return convertBatchNormTraining(n);
  // Before opset 7, is_test=0 (the default) meant training; before 9, spatial=0 per-element
  // statistics.
  if (n.opset() < 7 && n.i("is_test", 0) == 0) return n.unsupported("is_test=0 (training)");
  if (n.i("spatial", 1) == 0) return n.unsupported("spatial=0");
  for (size_t o = 1; o < n.numOutputs(); ++o)
    if (n.wantsOutput(o)) return n.unsupported("BatchNormalization's training outputs");
  Type t = n.elementType(0);
  if (!isFloat(t)) return n.unsupported("non-float BatchNormalization");
  const int64_t rank = n.rank(0);
  if (rank < 2) return n.error("input must have rank >= 2");
  for (size_t i = 1; i <= 4; ++i)
    if (!n.hasInput(i) || n.rank(i) != 1) return n.error("scale, B, mean and var must be 1-D");
  const double eps = n.f("epsilon", 1e-5f);
  Value x = n.value(0);
  OpFoldResult channels = dimOf(b, loc, n.value(1), 0);
  // One value per channel of X (dim 1), each of the four: the same size as each other too.
  for (size_t i = 1; i <= 4; ++i)
    if (failed(checkSameDim(n, dimOf(b, loc, n.value(i), 0), dimOf(b, loc, x, 1),
                            "a parameter's size and X's channels")) ||
        failed(checkSameDim(n, dimOf(b, loc, n.value(i), 0), channels, "the parameters' sizes")))
      return failure();
  SmallVector<OpFoldResult> cd = {channels};
  for (int64_t d = 2; d < rank; ++d) cd.push_back(b.getIndexAttr(1));
  Value a, c;
  DenseElementsAttr s = n.input(1).data, bias = n.input(2).data, mean = n.input(3).data,
                    var = n.input(4).data;
  if (s && bias && mean && var) {
    SmallVector<double> sv = floatValues(s), bv = floatValues(bias), mv = floatValues(mean),
                        vv = floatValues(var);
    const size_t count = sv.size();
    if (bv.size() != count || mv.size() != count || vv.size() != count)
      return n.error("scale, B, mean and var differ in size");
    SmallVector<double> av(count), cv(count);
    for (size_t i = 0; i < count; ++i) {
      av[i] = sv[i] / std::sqrt(vv[i] + eps);
      cv[i] = bv[i] - mv[i] * av[i];
    }
    SmallVector<int64_t> shape = staticSizes(cd);
    auto type = RankedTensorType::get(shape, t);
    a = b.create<arith::ConstantOp>(loc, floatConstant(type, av));
    c = b.create<arith::ConstantOp>(loc, floatConstant(type, cv));
  } else {
    // scale and B (T1), mean and var (T2) may be float types other than X's (opset 15).
    auto param = [&](size_t i) {
      return reshape(b, loc, convertTensor(b, loc, n.value(i), t), cd);
    };
    for (size_t i = 1; i <= 4; ++i)
      if (!isFloat(n.elementType(i)))
        return n.unsupported("non-float BatchNormalization parameters");
    Value sv = param(1), bv = param(2), mv = param(3), vv = param(4);
    a = elementwise(b, loc, {sv, vv}, t, [&](OpBuilder& nb, Location nl, ValueRange v) -> Value {
      Value d = nb.create<math::SqrtOp>(
          nl, nb.create<arith::AddFOp>(nl, v[1], scalarConstant(nb, nl, t, eps)));
      return nb.create<arith::DivFOp>(nl, v[0], d);
    });
    c = elementwise(b, loc, {bv, mv, a}, t, [](OpBuilder& nb, Location nl, ValueRange v) -> Value {
      return nb.create<arith::SubFOp>(nl, v[0], nb.create<arith::MulFOp>(nl, v[1], v[2]));
    });
  }
  Value y =
      elementwise(b, loc, {x, a, c}, t, [](OpBuilder& nb, Location nl, ValueRange v) -> Value {
        return nb.create<arith::AddFOp>(nl, nb.create<arith::MulFOp>(nl, v[0], v[1]), v[2]);
      });
  n.setOutput(0, y);
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

FailureOr<Value> matmulOf(NodeContext& n, Value a, Value c) { return numpyMatmul(n, a, c); }

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

void addLinearOps(Registry& r) {
  r["MatMul"] = {convertMatMul, {}};
  r["Gemm"] = {convertGemm, {"alpha", "beta", "transA", "transB", "broadcast"}};
  r["Einsum"] = {convertEinsum, {"equation"}};
  r["Conv"] = {convertConv, {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"}};
  r["ConvTranspose"] = {convertConvTranspose,
                        {"auto_pad", "dilations", "group", "kernel_shape", "output_padding",
                         "output_shape", "pads", "strides"}};
  r["MaxPool"] = {
      convertPool,
      {"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "storage_order", "strides"}};
  r["AveragePool"] = {convertPool,
                      {"auto_pad", "ceil_mode", "count_include_pad", "dilations", "kernel_shape",
                       "pads", "strides"}};
  r["GlobalAveragePool"] = {convertGlobalPool, {}};
  r["GlobalMaxPool"] = {convertGlobalPool, {}};
  r["BatchNormalization"] = {convertBatchNorm,
                             {"epsilon", "momentum", "training_mode", "spatial", "is_test"}};
}

}  // namespace onnx
}  // namespace disc_ral
}  // namespace mlir
