// Matrix products: MatMul and Gemm (linalg.matmul / batch_matmul, which ral-compile turns into
// RAL's GEMM kernels, or on the CPU a 1x1 convolution by constant weights, ops_conv.cc) and
// Einsum.
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

namespace {

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

}  // namespace

FailureOr<Value> matmulOf(NodeContext& n, Value a, Value c) { return numpyMatmul(n, a, c); }

void addLinearOps(Registry& r) {
  r["MatMul"] = {convertMatMul, {}};
  r["Gemm"] = {convertGemm, {"alpha", "beta", "transA", "transB", "broadcast"}};
  r["Einsum"] = {convertEinsum, {"equation"}};
}

}  // namespace onnx
}  // namespace disc_ral
}  // namespace mlir
