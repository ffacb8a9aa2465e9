// Shape ONNX operators: Constant, Shape, Size, Reshape, Flatten, Squeeze, Unsqueeze, Transpose,
// Expand, Concat, Tile, DepthToSpace and SpaceToDepth. Integer tensors whose elements are known
// (shape arithmetic) stay index values, so the shapes they compute reach Reshape, Expand and
// ConstantOfShape at import time, dynamic dims included.
#include <cmath>
#include "compiler_passes/onnx/builders.h"
#include "compiler_passes/onnx/checked_int.h"
#include "compiler_passes/onnx/node_context.h"
#include "compiler_passes/onnx/shape_helpers.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir {
namespace disc_ral {
namespace onnx {

FailureOr<std::optional<SmallVector<Value>>> runtimeAxes(NodeContext& n, size_t input,
                                                         int64_t rank) {
  if (!n.hasInput(input) || n.constInts(input)) return std::optional<SmallVector<Value>>();
  RankedTensorType type = n.type(input);
  if (type.getRank() != 1 || type.isDynamicDim(0) || !type.getElementType().isInteger(64))
    return n.unsupported("axes that are neither constant nor an int64 vector of static length");
  if (type.getDimSize(0) > NodeContext::kMaxShapeElements)
    return n.unsupported("run-time axes of " + std::to_string(type.getDimSize(0)) + " elements");
  OpBuilder& b = n.b();
  Location loc = n.loc();
  Value v = n.value(input);
  Value r = b.create<arith::ConstantIndexOp>(loc, rank);
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  SmallVector<Value> axes;
  for (int64_t i = 0; i < type.getDimSize(0); ++i) {
    Value a = b.create<arith::IndexCastOp>(
        loc, b.getIndexType(),
        b.create<tensor::ExtractOp>(loc, v, ValueRange{b.create<arith::ConstantIndexOp>(loc, i)}));
    Value neg = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, a, zero);
    a = b.create<arith::SelectOp>(loc, neg, b.create<arith::AddIOp>(loc, a, r), a);
    Value ok = b.create<arith::AndIOp>(
        loc, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, a, zero),
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, a, r));
    runtimeCheck(b, loc, ok, "an axis is out of range");
    for (Value prev : axes)
      runtimeCheck(b, loc, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, a, prev),
                   "repeated axis");
    axes.push_back(a);
  }
  return std::optional<SmallVector<Value>>(axes);
}

// The target shape of Reshape, Expand, ConstantOfShape, ... from input `i`.
FailureOr<SmallVector<OpFoldResult>> shapeInput(NodeContext& n, size_t i) {
  // Reshape-1 took its shape as an attribute; its one-input form has none to read.
  if (!n.hasInput(i))
    return n.unsupported("a " + n.node().op_type() + " without its shape input (opset " +
                         std::to_string(n.opset()) + "'s form)");
  if (n.rank(i) != 1) return n.error("the shape input must be 1-D");
  auto e = n.shapeElems(i);
  if (!e)
    return n.unsupported(
        "shape input of " +
        (n.type(i).hasStaticShape() ? std::to_string(n.type(i).getNumElements())
                                    : std::string("unknown")) +
        " elements (a shape known only at run time must be a static integer vector of at most " +
        std::to_string(NodeContext::kMaxShapeElements) + " elements)");
  return *e;
}

namespace {

LogicalResult convertConstant(NodeContext& n) {
  OpBuilder& b = n.b();
  if (const auto* a = n.attr("value")) {
    bool is_unsigned = false;
    FailureOr<DenseElementsAttr> data = n.constant(a->t(), &is_unsigned);
    if (failed(data)) return failure();
    n.setOutput(0, unsignedAware(tensorOfData(*data), is_unsigned));
    return success();
  }
  if (n.has("value_float")) {
    n.setOutput(0, tensorOfData(DenseElementsAttr::get(RankedTensorType::get({}, b.getF32Type()),
                                                       n.f("value_float", 0))));
    return success();
  }
  if (const auto* a = n.attr("value_floats")) {
    SmallVector<float> v(a->floats().begin(), a->floats().end());
    n.setOutput(0, tensorOfData(DenseElementsAttr::get(
                       RankedTensorType::get({static_cast<int64_t>(v.size())}, b.getF32Type()),
                       ArrayRef<float>(v))));
    return success();
  }
  if (n.has("value_int")) {
    n.setOutput(0, tensorOfData(DenseElementsAttr::get(RankedTensorType::get({}, b.getI64Type()),
                                                       n.i("value_int", 0))));
    return success();
  }
  if (n.has("value_ints")) {
    SmallVector<int64_t> v = n.ints("value_ints");
    n.setOutput(0,
                tensorOfData(DenseElementsAttr::get(i64Vector(b, v.size()), ArrayRef<int64_t>(v))));
    return success();
  }
  return n.unsupported(
      "Constant without a value, value_float(s) or value_int(s) attribute "
      "(sparse and string constants)");
}

LogicalResult convertShape(NodeContext& n) {
  OpBuilder& b = n.b();
  const int64_t rank = n.rank(0);
  int64_t start = n.i("start", 0), end = n.i("end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, 0, rank);
  SmallVector<OpFoldResult> dims;
  // Static dims need no tensor value.
  const RankedTensorType t = n.type(0);
  for (int64_t d = start; d < end; ++d)
    dims.push_back(t.isDynamicDim(d) ? dimOf(b, n.loc(), n.value(0), d)
                                     : OpFoldResult(b.getIndexAttr(t.getDimSize(d))));
  n.setOutput(0, elemsTensor(dims, b.getI64Type(), false));
  return success();
}

LogicalResult convertSize(NodeContext& n) {
  OpBuilder& b = n.b();
  SmallVector<OpFoldResult> dims;
  const RankedTensorType t = n.type(0);
  for (int64_t d = 0; d < t.getRank(); ++d)
    dims.push_back(t.isDynamicDim(d) ? dimOf(b, n.loc(), n.value(0), d)
                                     : OpFoldResult(b.getIndexAttr(t.getDimSize(d))));
  n.setOutput(0, elemsTensor({product(b, n.loc(), dims)}, b.getI64Type(), true));
  return success();
}

LogicalResult convertReshape(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  FailureOr<SmallVector<OpFoldResult>> target = shapeInput(n, 1);
  if (failed(target)) return failure();
  const bool allowzero = n.i("allowzero", 0) != 0;
  Value x = n.value(0);
  SmallVector<OpFoldResult> in = dimsOf(b, loc, x), out;
  int64_t infer = -1;
  // Elements known at import: ONNX's 0 and -1 resolved now. Elements known only at run time
  // (computed from dims, or read from a shape tensor): resolved by index arithmetic, with the
  // errors ONNX's semantics imply checked at run time.
  SmallVector<Value> minus_one;  // per element, whether it is -1 (run-time elements only)
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  for (size_t d = 0; d < target->size(); ++d) {
    OpFoldResult e = (*target)[d];
    auto c = constantIndex(e);
    if (c && *c == -1) {
      if (infer >= 0) return n.error("more than one -1 in the shape");
      infer = static_cast<int64_t>(d);
      out.push_back(b.getIndexAttr(1));
      minus_one.push_back(Value());
      continue;
    }
    if (c && *c == 0 && !allowzero) {
      if (d >= in.size()) return n.error("0 in the shape past the input's rank");
      out.push_back(in[d]);
      minus_one.push_back(Value());
      continue;
    }
    if (c && *c < -1) return n.error("negative dim in the shape");
    if (c) {
      out.push_back(e);
      minus_one.push_back(Value());
      continue;
    }
    Value v = idx(b, loc, e);
    Value ok = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, v,
                                       b.create<arith::ConstantIndexOp>(loc, -1));
    runtimeCheck(b, loc, ok, "Reshape: a shape element is below -1");
    if (!allowzero && d < in.size()) {
      Value is_zero = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, v, zero);
      v = b.create<arith::SelectOp>(loc, is_zero, idx(b, loc, in[d]), v);
    }
    Value neg = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, v,
                                        b.create<arith::ConstantIndexOp>(loc, -1));
    minus_one.push_back(neg);
    // Counted as 1 until the inferred size replaces it.
    out.push_back(fold(b.create<arith::SelectOp>(loc, neg, one, v)));
  }
  OpFoldResult total = product(b, loc, in);
  const bool runtime_infer = llvm::any_of(minus_one, [](Value v) { return static_cast<bool>(v); });
  if (infer >= 0 || runtime_infer) {
    OpFoldResult rest = product(b, loc, out);
    if (auto r = constantIndex(rest); r && *r == 0)
      return n.error("cannot infer -1 with a zero-sized dim in the shape");
    if (!constantIndex(rest)) {
      // As numpy: -1 is undefined when the other dims multiply to 0; never a division by 0.
      Value r = idx(b, loc, rest);
      Value any_infer = infer >= 0 ? Value(b.create<arith::ConstantIntOp>(loc, 1, 1)) : Value();
      for (Value m : minus_one)
        if (m) any_infer = any_infer ? b.create<arith::OrIOp>(loc, any_infer, m).getResult() : m;
      Value nonzero = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, r, zero);
      Value fine = b.create<arith::OrIOp>(
          loc, nonzero,
          b.create<arith::XOrIOp>(loc, any_infer, b.create<arith::ConstantIntOp>(loc, 1, 1)));
      runtimeCheck(b, loc, fine, "Reshape: cannot infer -1 when the other dims multiply to 0");
      rest = fold(b.create<arith::MaxSIOp>(loc, r, one));
    }
    OpFoldResult inferred = floorDivIndex(b, loc, total, rest);
    if (infer >= 0) out[infer] = inferred;
    Value count = b.create<arith::ConstantIndexOp>(loc, 0);
    for (size_t d = 0; d < minus_one.size(); ++d) {
      if (!minus_one[d]) continue;
      count = b.create<arith::AddIOp>(
          loc, count,
          b.create<arith::IndexCastOp>(
              loc, b.getIndexType(), b.create<arith::ExtUIOp>(loc, b.getI64Type(), minus_one[d])));
      out[d] = fold(
          b.create<arith::SelectOp>(loc, minus_one[d], idx(b, loc, inferred), idx(b, loc, out[d])));
    }
    if (runtime_infer) {
      Value allowed = b.create<arith::ConstantIndexOp>(loc, infer >= 0 ? 0 : 1);
      Value ok = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sle, count, allowed);
      runtimeCheck(b, loc, ok, "Reshape: more than one -1 in the shape");
    }
  }
  OpFoldResult count = product(b, loc, out);
  auto ct = constantIndex(total), cc = constantIndex(count);
  if (ct && cc && *ct != *cc)
    return n.error("cannot reshape " + std::to_string(*ct) + " elements to " + std::to_string(*cc));
  if (!ct || !cc) {
    Value eq = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, idx(b, loc, total),
                                       idx(b, loc, count));
    runtimeCheck(b, loc, eq, "Reshape: the element count changes");
  }
  n.setOutput(0, reshape(b, loc, x, out));
  return success();
}

LogicalResult convertFlatten(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  const int64_t rank = n.rank(0);
  int64_t axis = n.i("axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) return n.error("axis out of range");
  Value x = n.value(0);
  SmallVector<OpFoldResult> in = dimsOf(b, loc, x);
  OpFoldResult outer = product(b, loc, ArrayRef<OpFoldResult>(in).take_front(axis));
  OpFoldResult inner = product(b, loc, ArrayRef<OpFoldResult>(in).drop_front(axis));
  n.setOutput(0, reshape(b, loc, x, {outer, inner}));
  return success();
}

// Whether dim `d` is one of `axes` (an i1).
Value isAxis(OpBuilder& b, Location loc, ArrayRef<Value> axes, int64_t d) {
  Value hit = b.create<arith::ConstantIntOp>(loc, 0, 1);
  Value dv = b.create<arith::ConstantIndexOp>(loc, d);
  for (Value a : axes)
    hit = b.create<arith::OrIOp>(loc, hit,
                                 b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, a, dv));
  return hit;
}

// `dims[i]` for an index i known when the module runs (a select per dim).
Value selectDim(OpBuilder& b, Location loc, ArrayRef<OpFoldResult> dims, Value i) {
  Value out = b.create<arith::ConstantIndexOp>(loc, 1);
  for (size_t d = 0; d < dims.size(); ++d) {
    Value here = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, i,
                                         b.create<arith::ConstantIndexOp>(loc, d));
    out = b.create<arith::SelectOp>(loc, here, indexValue(b, loc, dims[d]), out);
  }
  return out;
}

// Squeeze and Unsqueeze with run-time axes: the output rank is known (the axes' count), which
// dims go or come is decided when the module runs; the data is only reshaped.
LogicalResult squeezeAtRunTime(NodeContext& n, ArrayRef<Value> axes, bool squeeze) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  const int64_t in_rank = n.rank(0), k = static_cast<int64_t>(axes.size());
  const int64_t out_rank = squeeze ? in_rank - k : in_rank + k;
  if (out_rank < 0) return n.error("more axes than dims");
  Value x = n.value(0);
  SmallVector<OpFoldResult> in = dimsOf(b, loc, x), out;
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  if (squeeze) {
    // Output dim p is the p-th dim that stays; a squeezed dim must be 1.
    SmallVector<Value> kept_before(in_rank);
    Value kept = zero;
    SmallVector<Value> dropped(in_rank);
    for (int64_t d = 0; d < in_rank; ++d) {
      dropped[d] = isAxis(b, loc, axes, d);
      Value is_one =
          b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, indexValue(b, loc, in[d]), one);
      runtimeCheck(
          b, loc,
          b.create<arith::OrIOp>(
              loc,
              b.create<arith::XOrIOp>(loc, dropped[d], b.create<arith::ConstantIntOp>(loc, 1, 1)),
              is_one),
          "Squeeze: a squeezed dim is not 1");
      kept_before[d] = kept;
      kept =
          b.create<arith::AddIOp>(loc, kept, b.create<arith::SelectOp>(loc, dropped[d], zero, one));
    }
    for (int64_t p = 0; p < out_rank; ++p) {
      Value dim = one;
      for (int64_t d = 0; d < in_rank; ++d) {
        Value here = b.create<arith::AndIOp>(
            loc,
            b.create<arith::XOrIOp>(loc, dropped[d], b.create<arith::ConstantIntOp>(loc, 1, 1)),
            b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, kept_before[d],
                                    b.create<arith::ConstantIndexOp>(loc, p)));
        dim = b.create<arith::SelectOp>(loc, here, indexValue(b, loc, in[d]), dim);
      }
      out.push_back(dim);
    }
  } else {
    // Output dim j is 1 when j is an axis, else input dim j - (axes before j).
    Value added = zero;
    for (int64_t j = 0; j < out_rank; ++j) {
      Value is_new = isAxis(b, loc, axes, j);
      Value from = b.create<arith::SubIOp>(loc, b.create<arith::ConstantIndexOp>(loc, j), added);
      out.push_back(
          b.create<arith::SelectOp>(loc, is_new, one, selectDim(b, loc, in, from)).getResult());
      added =
          b.create<arith::AddIOp>(loc, added, b.create<arith::SelectOp>(loc, is_new, one, zero));
    }
  }
  n.setOutput(0, reshape(b, loc, x, out));
  return success();
}

// Axes of Squeeze/Unsqueeze: an attribute before opset 13, an input from 13.
FailureOr<std::optional<SmallVector<int64_t>>> axesOf(NodeContext& n) {
  if (n.has("axes")) return std::optional<SmallVector<int64_t>>(n.ints("axes"));
  if (n.hasInput(1)) {
    auto c = n.constInts(1);
    if (!c) return n.unsupported("axes that are not constant");
    return std::optional<SmallVector<int64_t>>(*c);
  }
  return std::optional<SmallVector<int64_t>>();
}

LogicalResult convertSqueeze(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  const int64_t rank = n.rank(0);
  if (!n.has("axes")) {
    auto runtime = runtimeAxes(n, 1, rank);
    if (failed(runtime)) return failure();
    if (*runtime) return squeezeAtRunTime(n, **runtime, true);
  }
  auto axes = axesOf(n);
  if (failed(axes)) return failure();
  const RankedTensorType t = n.type(0);
  SmallVector<int64_t> drop;
  if (!*axes) {
    for (int64_t d = 0; d < rank; ++d) {
      if (t.isDynamicDim(d))
        return n.unsupported("Squeeze without axes of a tensor with dynamic dims");
      if (t.getDimSize(d) == 1) drop.push_back(d);
    }
  } else {
    for (int64_t a : **axes) {
      FailureOr<int64_t> d = n.axis(a, rank);
      if (failed(d)) return failure();
      if (!t.isDynamicDim(*d) && t.getDimSize(*d) != 1)
        return n.error("cannot squeeze dim " + std::to_string(*d) + " of size " +
                       std::to_string(t.getDimSize(*d)));
      drop.push_back(*d);
    }
  }
  // Known elements stay known (a 1-element vector to a scalar).
  if (rank == 1 && drop.size() == 1 && n.elems(0)) {
    n.setOutput(0, elemsTensor(*n.elems(0), t.getElementType(), true));
    return success();
  }
  Value x = n.value(0);
  SmallVector<OpFoldResult> in = dimsOf(b, loc, x), out;
  for (int64_t d = 0; d < rank; ++d) {
    if (!llvm::is_contained(drop, d)) {
      out.push_back(in[d]);
      continue;
    }
    if (t.isDynamicDim(d)) {
      Value one = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, idx(b, loc, in[d]),
                                          b.create<arith::ConstantIndexOp>(loc, 1));
      runtimeCheck(b, loc, one, "Squeeze: a squeezed dim is not 1");
    }
  }
  n.setOutput(0, reshape(b, loc, x, out));
  return success();
}

LogicalResult convertUnsqueeze(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  if (!n.has("axes") && n.hasInput(1) && n.type(1).getRank() == 1 && !n.type(1).isDynamicDim(0)) {
    auto runtime = runtimeAxes(
        n, 1, n.rank(0) + std::min(n.type(1).getDimSize(0), NodeContext::kMaxShapeElements));
    if (failed(runtime)) return failure();
    if (*runtime) return squeezeAtRunTime(n, **runtime, false);
  }
  auto axes = axesOf(n);
  if (failed(axes)) return failure();
  if (!*axes) return n.error("Unsqueeze needs axes");
  const int64_t rank = n.rank(0) + static_cast<int64_t>((*axes)->size());
  SmallVector<int64_t> add;
  for (int64_t a : **axes) {
    FailureOr<int64_t> d = n.axis(a, rank);
    if (failed(d)) return failure();
    if (llvm::is_contained(add, *d)) return n.error("repeated axis");
    add.push_back(*d);
  }
  if (n.rank(0) == 0 && rank == 1 && n.elems(0)) {
    n.setOutput(0, elemsTensor(*n.elems(0), n.elementType(0), false));
    return success();
  }
  Value x = n.value(0);
  SmallVector<OpFoldResult> in = dimsOf(b, loc, x), out;
  size_t next = 0;
  for (int64_t d = 0; d < rank; ++d)
    out.push_back(llvm::is_contained(add, d) ? OpFoldResult(b.getIndexAttr(1)) : in[next++]);
  n.setOutput(0, reshape(b, loc, x, out));
  return success();
}

LogicalResult convertTranspose(NodeContext& n) {
  const int64_t rank = n.rank(0);
  SmallVector<int64_t> perm = n.ints("perm");
  if (perm.empty())
    for (int64_t d = rank - 1; d >= 0; --d) perm.push_back(d);
  if (static_cast<int64_t>(perm.size()) != rank) return n.error("perm does not match the rank");
  SmallVector<bool> seen(rank, false);
  for (int64_t& p : perm) {
    if (p < 0) p += rank;
    if (p < 0 || p >= rank || seen[p]) return n.error("perm is not a permutation");
    seen[p] = true;
  }
  if (DenseElementsAttr data = n.input(0).data)
    if (DenseElementsAttr t = transposeConstant(data, perm)) {
      n.setOutput(0, tensorOfData(t));
      return success();
    }
  n.setOutput(0, transpose(n.b(), n.loc(), n.value(0), perm));
  return success();
}

LogicalResult convertExpand(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  FailureOr<SmallVector<OpFoldResult>> shape = shapeInput(n, 1);
  if (failed(shape)) return failure();
  for (size_t d = 0; d < shape->size(); ++d)
    if (failed(checkSize(b, loc, (*shape)[d], "shape element " + std::to_string(d))))
      return failure();
  Value x = n.value(0);
  SmallVector<OpFoldResult> in = dimsOf(b, loc, x);
  const size_t rank = std::max(in.size(), shape->size());
  SmallVector<OpFoldResult> out;
  for (size_t d = 0; d < rank; ++d) {
    const int64_t i = static_cast<int64_t>(d) - static_cast<int64_t>(rank - in.size());
    const int64_t s = static_cast<int64_t>(d) - static_cast<int64_t>(rank - shape->size());
    if (i < 0) {
      out.push_back((*shape)[s]);
      continue;
    }
    if (s < 0) {
      out.push_back(in[i]);
      continue;
    }
    auto ci = constantIndex(in[i]), cs = constantIndex((*shape)[s]);
    if (cs == 1) {
      out.push_back(in[i]);
    } else if (ci == 1) {
      out.push_back((*shape)[s]);
    } else if (ci && cs) {
      if (*ci != *cs)
        return n.error("cannot expand dim of size " + std::to_string(*ci) + " to " +
                       std::to_string(*cs));
      out.push_back(in[i]);
    } else {
      // Known at run time only: 1 in the shape keeps the input's dim; otherwise they must match
      // (an input dim of 1 at run time is refused by the broadcast).
      Value iv = idx(b, loc, in[i]), sv = idx(b, loc, (*shape)[s]);
      Value one = b.create<arith::ConstantIndexOp>(loc, 1);
      Value keep = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, sv, one);
      Value same = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, sv, iv);
      runtimeCheck(b, loc, b.create<arith::OrIOp>(loc, keep, same),
                   "Expand: a dim does not broadcast to the shape");
      out.push_back(in[i]);
    }
  }
  // The shape comes from the model or its inputs: its element count is checked here, where the
  // error can name it.
  if (failed(checkDims(b, loc, out, "the expanded shape's", true))) return failure();
  n.setOutput(0, broadcastTo(b, loc, x, out));
  return success();
}

LogicalResult convertConcat(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  if (n.numInputs() == 0) return n.error("needs inputs");
  const int64_t rank = n.rank(0);
  if (rank == 0) return n.error("scalars (rank 0) cannot be concatenated");
  // Concat's axis was optional (default 1) before opset 4.
  FailureOr<int64_t> axis = n.axis(n.i("axis", n.opset() < 4 ? 1 : 0), rank);
  if (failed(axis)) return failure();
  Type t = n.elementType(0);
  for (size_t i = 1; i < n.numInputs(); ++i)
    if (n.rank(i) != rank || n.elementType(i) != t)
      return n.error("inputs differ in rank or element type");
  // Known 1-D elements: concatenated as elements.
  if (rank == 1) {
    SmallVector<OpFoldResult> all;
    bool known = true;
    for (size_t i = 0; i < n.numInputs() && known; ++i) {
      auto e = n.elems(i);
      known = e.has_value();
      if (known) all.append(*e);
    }
    if (known) {
      n.setOutput(0, elemsTensor(all, t, false));
      return success();
    }
  }
  SmallVector<Value> inputs;
  for (size_t i = 0; i < n.numInputs(); ++i) inputs.push_back(n.value(i));
  SmallVector<OpFoldResult> out = dimsOf(b, loc, inputs[0]);
  OpFoldResult total = b.getIndexAttr(0);
  for (Value v : inputs) {
    SmallVector<OpFoldResult> d = dimsOf(b, loc, v);
    for (int64_t k = 0; k < rank; ++k) {
      if (k == *axis) continue;
      auto c0 = constantIndex(out[k]), c1 = constantIndex(d[k]);
      if (c0 && c1 && *c0 != *c1) return n.error("inputs differ in a dim other than axis");
      if (!c0 && c1) out[k] = d[k];
    }
    total = addIndex(b, loc, total, d[*axis]);
  }
  out[*axis] = total;
  Value result = emptyTensor(b, loc, out, t);
  OpFoldResult offset = b.getIndexAttr(0);
  for (Value v : inputs) {
    SmallVector<OpFoldResult> sizes = dimsOf(b, loc, v);
    SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)), strides(rank, b.getIndexAttr(1));
    offsets[*axis] = offset;
    result = b.create<tensor::InsertSliceOp>(loc, v, result, offsets, sizes, strides);
    offset = addIndex(b, loc, offset, sizes[*axis]);
  }
  n.setOutput(0, result);
  return success();
}

// Tile: x reshaped to [1, d0, 1, d1, ...], broadcast to [r0, d0, r1, d1, ...], flattened back.
LogicalResult convertTile(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  const int64_t rank = n.rank(0);
  if (n.opset() < 6) return n.unsupported("Tile before opset 6 (tiles and axis inputs)");
  auto reps = n.shapeElems(1);
  if (!reps) return n.unsupported("repeats that are not a small integer vector");
  if (static_cast<int64_t>(reps->size()) != rank) return n.error("repeats must have rank entries");
  Value x = n.value(0);
  SmallVector<OpFoldResult> in = dimsOf(b, loc, x), split, wide, out;
  for (int64_t d = 0; d < rank; ++d) {
    OpFoldResult r = (*reps)[d];
    if (auto c = constantIndex(r); c && *c < 0) return n.error("negative repeats");
    if (!constantIndex(r)) {
      Value ok = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, idx(b, loc, r),
                                         b.create<arith::ConstantIndexOp>(loc, 0));
      runtimeCheck(b, loc, ok, "Tile: negative repeats");
    }
    split.append({b.getIndexAttr(1), in[d]});
    wide.append({r, in[d]});
    out.push_back(mulIndex(b, loc, r, in[d]));
  }
  // The repeats come from the model or its inputs: the result's count is checked here, where
  // the error names the node.
  if (failed(checkDims(b, loc, out, "the tiled result's", true))) return failure();
  Value y = broadcastTo(b, loc, reshape(b, loc, x, split), wide);
  n.setOutput(0, reshape(b, loc, y, out));
  return success();
}

// DepthToSpace and SpaceToDepth: a reshape, a transpose and a reshape.
LogicalResult convertDepthSpace(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  if (n.rank(0) != 4) return n.error("input must be 4-D");
  const int64_t bs = n.i("blocksize", 0);
  if (bs < 1) return n.error("blocksize must be positive");
  // Channels hold blocksize^2 elements per output pixel: both must be sizes.
  const CheckedInt square = CheckedInt(bs) * bs;
  if (!square.isSize())
    return n.error("blocksize " + std::to_string(bs) + " is too large (its square exceeds 2^48)");
  Value x = n.value(0);
  SmallVector<OpFoldResult> d = dimsOf(b, loc, x);
  OpFoldResult bb = b.getIndexAttr(bs), sq = b.getIndexAttr(square.value());
  auto check = [&](OpFoldResult v, OpFoldResult by, llvm::StringRef what) -> LogicalResult {
    if (auto c = constantIndex(v)) {
      if (*c % *constantIndex(by) != 0) return n.error(what + " is not divisible by the block");
      return success();
    }
    Value rem = b.create<arith::RemSIOp>(loc, idx(b, loc, v), idx(b, loc, by));
    runtimeCheck(b, loc,
                 b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, rem,
                                         b.create<arith::ConstantIndexOp>(loc, 0)),
                 (n.node().op_type() + ": " + what + " is not divisible by the block").str());
    return success();
  };
  if (n.node().op_type() == "DepthToSpace") {
    const std::string mode = n.s("mode", "DCR");
    if (mode != "DCR" && mode != "CRD") return n.error("mode must be DCR or CRD");
    if (failed(check(d[1], sq, "channels"))) return failure();
    OpFoldResult c = floorDivIndex(b, loc, d[1], sq);
    Value r, t;
    if (mode == "DCR") {
      r = reshape(b, loc, x, {d[0], bb, bb, c, d[2], d[3]});
      t = transpose(b, loc, r, {0, 3, 4, 1, 5, 2});
    } else {
      r = reshape(b, loc, x, {d[0], c, bb, bb, d[2], d[3]});
      t = transpose(b, loc, r, {0, 1, 4, 2, 5, 3});
    }
    n.setOutput(
        0, reshape(b, loc, t, {d[0], c, mulIndex(b, loc, d[2], bb), mulIndex(b, loc, d[3], bb)}));
    return success();
  }
  if (failed(check(d[2], bb, "height")) || failed(check(d[3], bb, "width"))) return failure();
  OpFoldResult h = floorDivIndex(b, loc, d[2], bb), w = floorDivIndex(b, loc, d[3], bb);
  Value r = reshape(b, loc, x, {d[0], d[1], h, bb, w, bb});
  Value t = transpose(b, loc, r, {0, 3, 5, 1, 2, 4});
  n.setOutput(0, reshape(b, loc, t, {d[0], mulIndex(b, loc, d[1], sq), h, w}));
  return success();
}

}  // namespace

void addShapeOps(Registry& r) {
  r["Constant"] = {convertConstant,
                   {"value", "value_float", "value_floats", "value_int", "value_ints"}};
  r["Shape"] = {convertShape, {"start", "end"}};
  r["Size"] = {convertSize, {}};
  r["Reshape"] = {convertReshape, {"allowzero"}};
  r["Flatten"] = {convertFlatten, {"axis"}};
  r["Squeeze"] = {convertSqueeze, {"axes"}};
  r["Unsqueeze"] = {convertUnsqueeze, {"axes"}};
  r["Transpose"] = {convertTranspose, {"perm"}};
  r["Expand"] = {convertExpand, {}};
  r["Concat"] = {convertConcat, {"axis"}};
  r["Tile"] = {convertTile, {}};
  r["DepthToSpace"] = {convertDepthSpace, {"blocksize", "mode"}};
  r["SpaceToDepth"] = {convertDepthSpace, {"blocksize"}};
}

}  // namespace onnx
}  // namespace disc_ral
}  // namespace mlir
