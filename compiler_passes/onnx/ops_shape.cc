// Shape and data-movement ONNX operators: Constant, ConstantOfShape, Shape, Size, Range, Reshape,
// Flatten, Squeeze, Unsqueeze, Transpose, Expand, Concat, Slice, Split and Gather. Integer tensors
// whose elements are known (shape arithmetic) stay index values, so the shapes they compute reach
// Reshape, Expand and ConstantOfShape at import time, dynamic dims included.
#include <cmath>

#include "compiler_passes/onnx/builders.h"
#include "compiler_passes/onnx/checked_int.h"
#include "compiler_passes/onnx/node_context.h"
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

namespace {

RankedTensorType i64Vector(OpBuilder& b, int64_t n) {
  return RankedTensorType::get({n}, b.getI64Type());
}

// Index arithmetic on values that may be dynamic.
Value idx(OpBuilder& b, Location loc, OpFoldResult v) { return indexValue(b, loc, v); }
OpFoldResult fold(Value v) { return getAsOpFoldResult(v); }
OpFoldResult minIdx(OpBuilder& b, Location loc, OpFoldResult x, OpFoldResult y) {
  auto cx = constantIndex(x), cy = constantIndex(y);
  if (cx && cy) return b.getIndexAttr(std::min(*cx, *cy));
  return fold(b.create<arith::MinSIOp>(loc, idx(b, loc, x), idx(b, loc, y)));
}
OpFoldResult maxIdx(OpBuilder& b, Location loc, OpFoldResult x, OpFoldResult y) {
  auto cx = constantIndex(x), cy = constantIndex(y);
  if (cx && cy) return b.getIndexAttr(std::max(*cx, *cy));
  return fold(b.create<arith::MaxSIOp>(loc, idx(b, loc, x), idx(b, loc, y)));
}
// v < 0 ? v + size : v, for a size in [0, kMaxSize]: the sum never overflows where it is taken
// (the unchecked add below is only selected for a negative v).
OpFoldResult wrap(OpBuilder& b, Location loc, OpFoldResult v, OpFoldResult size) {
  if (auto c = constantIndex(v)) {
    if (*c >= 0) return v;
    return addIndex(b, loc, v, size);
  }
  Value neg = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, idx(b, loc, v),
                                      b.create<arith::ConstantIndexOp>(loc, 0));
  Value wrapped = b.create<arith::AddIOp>(loc, idx(b, loc, v), idx(b, loc, size));
  return fold(b.create<arith::SelectOp>(loc, neg, wrapped, idx(b, loc, v)));
}

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

LogicalResult convertConstantOfShape(NodeContext& n) {
  OpBuilder& b = n.b();
  FailureOr<SmallVector<OpFoldResult>> shape = shapeInput(n, 0);
  if (failed(shape)) return failure();
  DenseElementsAttr value =
      DenseElementsAttr::get(RankedTensorType::get({1}, b.getF32Type()), 0.0f);
  if (const auto* a = n.attr("value")) {
    FailureOr<DenseElementsAttr> data = n.constant(a->t());
    if (failed(data)) return failure();
    if (data->getNumElements() != 1) return n.error("value must have one element");
    value = *data;
  }
  Type element = value.getElementType();
  for (size_t d = 0; d < shape->size(); ++d)
    if (failed(checkSize(b, n.loc(), (*shape)[d], "shape element " + std::to_string(d))))
      return failure();
  if (failed(checkDims(b, n.loc(), *shape, "the shape's", true))) return failure();
  SmallVector<int64_t> sizes = staticSizes(*shape);
  auto type = RankedTensorType::get(sizes, element);
  // A small constant shape: a splat (folded into whatever reads it; integer vectors stay known).
  // A large one is filled when the module runs, not stored: LLVM would materialize a splat.
  if (type.hasStaticShape()) {
    CheckedInt bytes = checkedProduct(sizes) * ((element.getIntOrFloatBitWidth() + 7) / 8);
    if (!bytes.isSize()) return n.error("the shape holds more than 2^48 elements");
    if (bytes.value() <= 65536) {
      Attribute scalar = *value.getValues<Attribute>().begin();
      n.setOutput(0, tensorOfData(DenseElementsAttr::get(type, scalar)));
      return success();
    }
  }
  Value scalar =
      b.create<arith::ConstantOp>(n.loc(), cast<TypedAttr>(*value.getValues<Attribute>().begin()));
  n.setOutput(0, filled(b, n.loc(), *shape, scalar));
  return success();
}

// max(ceil((limit - start) / delta), 0) for int64 values read when the module runs, exact for
// every input: limit - start may not fit int64 (INT64_MIN to INT64_MAX), but in the direction
// delta walks it is a non-negative distance below 2^64, which unsigned division takes. A count
// of 2^63 or more reads as negative, which the size check after this refuses. A zero delta fails
// the execution.
Value rangeCount(OpBuilder& b, Location loc, Value start, Value limit, Value delta) {
  auto c = [&](int64_t v) { return b.create<arith::ConstantIndexOp>(loc, v).getResult(); };
  auto cmp = [&](arith::CmpIPredicate p, Value x, Value y) {
    return b.create<arith::CmpIOp>(loc, p, x, y).getResult();
  };
  Value nonzero = cmp(arith::CmpIPredicate::ne, delta, c(0));
  runtimeCheck(b, loc, nonzero, "Range: delta is 0");
  Value up = cmp(arith::CmpIPredicate::sgt, delta, c(0));
  Value forward = b.create<arith::SelectOp>(loc, up, cmp(arith::CmpIPredicate::sgt, limit, start),
                                            cmp(arith::CmpIPredicate::sgt, start, limit));
  // Wrapping subtractions: exact as unsigned values where they are used.
  Value span = b.create<arith::SelectOp>(loc, up, b.create<arith::SubIOp>(loc, limit, start),
                                         b.create<arith::SubIOp>(loc, start, limit));
  Value step = b.create<arith::SelectOp>(loc, up, delta, b.create<arith::SubIOp>(loc, c(0), delta));
  step = b.create<arith::SelectOp>(loc, nonzero, step, c(1));
  Value q = b.create<arith::DivUIOp>(loc, span, step);
  Value r = b.create<arith::RemUIOp>(loc, span, step);
  Value steps = b.create<arith::SelectOp>(loc, cmp(arith::CmpIPredicate::ne, r, c(0)),
                                          b.create<arith::AddIOp>(loc, q, c(1)), q);
  return b.create<arith::SelectOp>(loc, forward, steps, c(0));
}

// Range: max(ceil((limit - start) / delta), 0) elements start + i * delta. Known inputs give a
// known count (an error beyond kMaxSize, or for a NaN or infinite one); small ranges fold to
// constants, larger ones are computed when the module runs rather than stored.
// HannWindow, HammingWindow, BlackmanWindow: w[k] = a0 - a1 cos(2πk/N) + a2 cos(4πk/N) for k in
// [0, size), N = size (periodic, the default) or size - 1 (symmetric); computed in f64.
LogicalResult convertWindow(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  const std::string op = n.node().op_type();
  if (!hasOneElement(n.type(0))) return n.error("size must be a scalar");
  std::optional<SmallVector<OpFoldResult>> size = n.shapeElems(0);
  if (!size || size->size() != 1) return n.unsupported("a window size that is not readable");
  if (failed(checkSize(b, loc, (*size)[0], "the window size"))) return failure();
  bool is_unsigned = false;
  const int64_t dtype = n.i("output_datatype", 1);
  Type t = storageTypeOf(b.getContext(), static_cast<int32_t>(dtype), &is_unsigned);
  if (!t || is_unsigned)
    return n.unsupported("output_datatype " + dtypeName(static_cast<int32_t>(dtype)));
  const bool periodic = n.i("periodic", 1) != 0;
  const double a0 = op == "HannWindow" ? 0.5 : op == "HammingWindow" ? 25.0 / 46 : 0.42;
  const double a1 = op == "HannWindow" ? 0.5 : op == "HammingWindow" ? 21.0 / 46 : 0.5;
  const double a2 = op == "BlackmanWindow" ? 0.08 : 0.0;
  Type f64 = b.getF64Type();
  Value count = b.create<arith::SIToFPOp>(
      loc, f64, b.create<arith::IndexCastOp>(loc, b.getI64Type(), indexValue(b, loc, (*size)[0])));
  Value denom =
      periodic ? count
               : b.create<arith::SubFOp>(loc, count, scalarConstant(b, loc, f64, 1)).getResult();
  Value y = generate(
      b, loc, emptyTensor(b, loc, {(*size)[0]}, t), {}, {},
      [&](OpBuilder& nb, Location nl, ValueRange) -> Value {
        auto c = [&](double v) { return scalarConstant(nb, nl, f64, v); };
        Value k = nb.create<arith::SIToFPOp>(
            nl, f64,
            nb.create<arith::IndexCastOp>(nl, nb.getI64Type(), nb.create<linalg::IndexOp>(nl, 0)));
        Value angle =
            nb.create<arith::DivFOp>(nl, nb.create<arith::MulFOp>(nl, k, c(2 * M_PI)), denom);
        Value w = nb.create<arith::SubFOp>(
            nl, c(a0), nb.create<arith::MulFOp>(nl, c(a1), nb.create<math::CosOp>(nl, angle)));
        if (a2 != 0)
          w = nb.create<arith::AddFOp>(
              nl, w,
              nb.create<arith::MulFOp>(
                  nl, c(a2),
                  nb.create<math::CosOp>(nl, nb.create<arith::MulFOp>(nl, angle, c(2)))));
        return convertScalar(nb, nl, w, t);
      });
  n.setOutput(0, y);
  return success();
}

LogicalResult convertRange(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  for (size_t i = 0; i < 3; ++i)
    if (n.rank(i) != 0) return n.error("start, limit and delta must be scalars");
  Type t = n.elementType(0);
  if (n.elementType(1) != t || n.elementType(2) != t) return n.error("inputs differ in type");
  if (!isFloat(t) && !isa<IntegerType>(t)) return n.unsupported("Range of this element type");
  if (t.isInteger(1)) return n.unsupported("Range of bool");
  const bool f = isFloat(t);
  constexpr int64_t kFoldedElements = 1024;
  // The count, when start, limit and delta are known.
  std::optional<int64_t> known_count;
  std::optional<double> fs, fl, fd;
  std::optional<SmallVector<int64_t>> is, il, id;
  if (f) {
    fs = n.constScalar(0), fl = n.constScalar(1), fd = n.constScalar(2);
    if (fs && fl && fd) {
      if (*fd == 0) return n.error("delta is 0");
      // numpy refuses a NaN or infinite length even where the count would be 0.
      const double raw = std::ceil((*fl - *fs) / *fd);
      const double steps = std::max(raw, 0.0);
      if (!std::isfinite(raw) || steps > static_cast<double>(kMaxSize))
        return n.error("start " + std::to_string(*fs) + ", limit " + std::to_string(*fl) +
                       " and delta " + std::to_string(*fd) +
                       (std::isfinite(raw) ? " give more than 2^48 elements"
                                           : " give a NaN or infinite element count"));
      known_count = static_cast<int64_t>(steps);
    }
  } else {
    is = n.constInts(0), il = n.constInts(1), id = n.constInts(2);
    if (is && il && id) {
      const int64_t s0 = (*is)[0], l0 = (*il)[0], d0 = (*id)[0];
      if (d0 == 0) return n.error("delta is 0");
      // Exact in 128 bits: limit - start of two int64s does not fit in one.
      const __int128 span = static_cast<__int128>(l0) - s0;
      __int128 steps = span / d0;
      if (span % d0 != 0 && ((span < 0) == (d0 < 0))) ++steps;
      if (steps < 0) steps = 0;
      if (steps > kMaxSize)
        return n.error("start " + std::to_string(s0) + ", limit " + std::to_string(l0) +
                       " and delta " + std::to_string(d0) + " give more than 2^48 elements");
      known_count = static_cast<int64_t>(steps);
    }
  }
  if (known_count && *known_count <= kFoldedElements) {
    const int64_t count = *known_count;
    auto type = RankedTensorType::get({count}, t);
    if (failed(n.chargeConstant(count * ((t.getIntOrFloatBitWidth() + 7) / 8), "the range")))
      return failure();
    if (f) {
      SmallVector<double> v;
      for (int64_t i = 0; i < count; ++i) v.push_back(*fs + static_cast<double>(i) * *fd);
      n.setOutput(0, tensorOfData(floatConstant(type, v)));
    } else {
      // Every element lies between start and limit: no step overflows.
      SmallVector<APInt> v;
      for (int64_t i = 0; i < count; ++i)
        v.push_back(APInt(64, static_cast<uint64_t>((*is)[0] + i * (*id)[0]), true)
                        .trunc(t.getIntOrFloatBitWidth()));
      n.setOutput(0, tensorOfData(DenseElementsAttr::get(type, v)));
    }
    return success();
  }
  // Computed when the module runs: the count too when an input is known only then (arange of a
  // dynamic seq_len), checked there.
  Value start, delta;
  OpFoldResult count;
  Type f64 = b.getF64Type();
  if (f) {
    Value s0 = b.create<tensor::ExtractOp>(loc, n.value(0), ValueRange{});
    Value l0 = b.create<tensor::ExtractOp>(loc, n.value(1), ValueRange{});
    Value d0 = b.create<tensor::ExtractOp>(loc, n.value(2), ValueRange{});
    start = s0;
    delta = d0;
    if (known_count) {
      count = b.getIndexAttr(*known_count);
    } else {
      Value zero = scalarConstant(b, loc, t, 0);
      runtimeCheck(b, loc, b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::ONE, d0, zero),
                   "Range: delta is 0");
      // In f64, as ONNX's reference computes the count.
      Value s = convertScalar(b, loc, s0, f64), l = convertScalar(b, loc, l0, f64),
            d = convertScalar(b, loc, d0, f64);
      Value steps = b.create<math::CeilOp>(
          loc, b.create<arith::DivFOp>(loc, b.create<arith::SubFOp>(loc, l, s), d));
      // Ordered comparisons: false for NaN. An infinite length is refused even where the count
      // would be 0 (numpy refuses it too), a finite one beyond the limit too.
      Value fits = b.create<arith::AndIOp>(
          loc,
          b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLE, steps,
                                  scalarConstant(b, loc, f64, static_cast<double>(kMaxSize))),
          b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT, steps,
                                  scalarConstant(b, loc, f64, -HUGE_VAL)));
      steps = b.create<arith::MaximumFOp>(loc, steps, scalarConstant(b, loc, f64, 0));
      runtimeCheck(b, loc, fits,
                   "Range: start, limit and delta give a NaN, infinite or larger than 2^48 "
                   "element count");
      steps = b.create<arith::SelectOp>(loc, fits, steps, scalarConstant(b, loc, f64, 0));
      Value i64 = b.create<arith::FPToSIOp>(loc, b.getI64Type(), steps);
      count = fold(b.create<arith::IndexCastOp>(loc, b.getIndexType(), i64));
    }
  } else {
    auto es = n.shapeElems(0), el = n.shapeElems(1), ed = n.shapeElems(2);
    if (!es || !el || !ed) return n.unsupported("Range of this element type");
    Value s0 = idx(b, loc, (*es)[0]), d0 = idx(b, loc, (*ed)[0]);
    start = s0;
    delta = d0;
    if (known_count) {
      count = b.getIndexAttr(*known_count);
    } else {
      count = fold(rangeCount(b, loc, s0, idx(b, loc, (*el)[0]), d0));
    }
  }
  if (failed(checkSize(b, loc, count, "Range's element count"))) return failure();
  Value empty = emptyTensor(b, loc, {count}, t);
  Value out = generate(
      b, loc, empty, ValueRange{}, {}, [&](OpBuilder& nb, Location nl, ValueRange) -> Value {
        Value i = nb.create<linalg::IndexOp>(nl, 0);
        if (f) {
          Value fi = nb.create<arith::SIToFPOp>(
              nl, t, nb.create<arith::IndexCastOp>(nl, nb.getI64Type(), i));
          return nb.create<arith::AddFOp>(nl, start, nb.create<arith::MulFOp>(nl, fi, delta));
        }
        // Between start and limit: in range of the element type, no overflow.
        return nb.create<arith::IndexCastOp>(
            nl, t, nb.create<arith::AddIOp>(nl, start, nb.create<arith::MulIOp>(nl, i, delta)));
      });
  n.setOutput(0, out);
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

// Slices with positive strides are tensor.extract_slice; negative strides read element by element.
Value sliceTensor(OpBuilder& b, Location loc, Value x, ArrayRef<OpFoldResult> starts,
                  ArrayRef<OpFoldResult> sizes, ArrayRef<int64_t> steps) {
  const int64_t rank = static_cast<int64_t>(starts.size());
  if (llvm::all_of(steps, [](int64_t s) { return s > 0; })) {
    SmallVector<OpFoldResult> strides;
    for (int64_t s : steps) strides.push_back(b.getIndexAttr(s));
    auto type = cast<RankedTensorType>(x.getType());
    auto result = RankedTensorType::get(staticSizes(sizes), type.getElementType());
    return b.create<tensor::ExtractSliceOp>(loc, result, x, starts, sizes, strides);
  }
  Type element = cast<RankedTensorType>(x.getType()).getElementType();
  Value empty = emptyTensor(b, loc, sizes, element);
  SmallVector<Value> start_values;
  for (OpFoldResult s : starts) start_values.push_back(indexValue(b, loc, s));
  return generate(
      b, loc, empty, ValueRange{}, {}, [&](OpBuilder& nb, Location nl, ValueRange) -> Value {
        SmallVector<Value> at;
        for (int64_t d = 0; d < rank; ++d) {
          Value i = nb.create<linalg::IndexOp>(nl, d);
          Value step = nb.create<arith::ConstantIndexOp>(nl, steps[d]);
          at.push_back(
              nb.create<arith::AddIOp>(nl, start_values[d], nb.create<arith::MulIOp>(nl, i, step)));
        }
        return nb.create<tensor::ExtractOp>(nl, x, at);
      });
}

// Slice with axes or steps known only when the module runs: per dim of x its start, end and
// step selected from the entries whose axis it is (the whole dim otherwise), clamped as ONNX
// says for either sign of the step, then one gather loop over the output.
LogicalResult sliceAtRunTime(NodeContext& n, ArrayRef<OpFoldResult> starts_in,
                             ArrayRef<OpFoldResult> ends_in) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  const int64_t rank = n.rank(0), k = static_cast<int64_t>(starts_in.size());
  SmallVector<Value> axes;
  if (n.hasInput(3)) {
    if (n.type(3).getRank() != 1 || n.type(3).getDimSize(0) != k)
      return n.error("axes differ in length from starts");
    if (auto c = n.constInts(3)) {
      for (int64_t a : *c) {
        FailureOr<int64_t> d = n.axis(a, rank);
        if (failed(d)) return failure();
        axes.push_back(b.create<arith::ConstantIndexOp>(loc, *d));
      }
    } else {
      auto runtime = runtimeAxes(n, 3, rank);
      if (failed(runtime)) return failure();
      axes = **runtime;
    }
  } else {
    for (int64_t i = 0; i < k; ++i) axes.push_back(b.create<arith::ConstantIndexOp>(loc, i));
  }
  SmallVector<Value> steps;
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0),
        one = b.create<arith::ConstantIndexOp>(loc, 1);
  if (n.hasInput(4)) {
    auto st = n.shapeElems(4);
    if (!st || static_cast<int64_t>(st->size()) != k)
      return n.error("steps differ in length from starts");
    Value max_step = b.create<arith::ConstantIndexOp>(loc, kMaxSize);
    for (OpFoldResult v : *st) {
      Value s = indexValue(b, loc, v);
      runtimeCheck(b, loc, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, s, zero),
                   "Slice: step is 0");
      // A dim is at most kMaxSize: a larger step takes one element, as it would.
      s = b.create<arith::MaxSIOp>(loc, b.create<arith::MinSIOp>(loc, s, max_step),
                                   b.create<arith::SubIOp>(loc, zero, max_step));
      steps.push_back(s);
    }
  } else {
    steps.assign(k, one);
  }
  Value x = n.value(0);
  SmallVector<OpFoldResult> dims = dimsOf(b, loc, x), sizes;
  SmallVector<Value> starts, strides;
  Value bound = b.create<arith::ConstantIndexOp>(loc, kMaxSize + 1);
  for (int64_t d = 0; d < rank; ++d) {
    Value size = indexValue(b, loc, dims[d]);
    Value start = zero, end = size, step = one;
    Value dv = b.create<arith::ConstantIndexOp>(loc, d);
    for (int64_t i = 0; i < k; ++i) {
      Value hit = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, axes[i], dv);
      // INT64 extremes mean "to the end": clamped just past any dim first.
      auto clamped = [&](OpFoldResult v) -> Value {
        Value iv = indexValue(b, loc, v);
        return b.create<arith::MaxSIOp>(loc, b.create<arith::MinSIOp>(loc, iv, bound),
                                        b.create<arith::SubIOp>(loc, zero, bound));
      };
      start = b.create<arith::SelectOp>(loc, hit, clamped(starts_in[i]), start);
      end = b.create<arith::SelectOp>(loc, hit, clamped(ends_in[i]), end);
      step = b.create<arith::SelectOp>(loc, hit, steps[i], step);
    }
    auto wrapV = [&](Value v) -> Value {
      Value neg = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, v, zero);
      return b.create<arith::SelectOp>(loc, neg, b.create<arith::AddIOp>(loc, v, size), v);
    };
    auto clampTo = [&](Value v, Value lo, Value hi) -> Value {
      return b.create<arith::MinSIOp>(loc, b.create<arith::MaxSIOp>(loc, v, lo), hi);
    };
    start = wrapV(start);
    end = wrapV(end);
    Value positive = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sgt, step, zero);
    Value last = b.create<arith::SubIOp>(loc, size, one);
    Value minus_one = b.create<arith::ConstantIndexOp>(loc, -1);
    // step > 0: [start, end) within [0, size]; step < 0: (end, start] within [-1, size - 1].
    Value s_pos = clampTo(start, zero, size), e_pos = clampTo(end, zero, size);
    Value s_neg = clampTo(start, zero, last), e_neg = clampTo(end, minus_one, last);
    Value count_pos =
        b.create<arith::CeilDivSIOp>(loc, b.create<arith::SubIOp>(loc, e_pos, s_pos), step);
    Value count_neg = b.create<arith::CeilDivSIOp>(loc, b.create<arith::SubIOp>(loc, s_neg, e_neg),
                                                   b.create<arith::SubIOp>(loc, zero, step));
    Value count = b.create<arith::SelectOp>(loc, positive, count_pos, count_neg);
    starts.push_back(b.create<arith::SelectOp>(loc, positive, s_pos, s_neg));
    sizes.push_back(fold(b.create<arith::MaxSIOp>(loc, count, zero)));
    strides.push_back(step);
  }
  Type element = n.elementType(0);
  Value y = generate(
      b, loc, emptyTensor(b, loc, sizes, element), ValueRange{}, {},
      [&](OpBuilder& nb, Location nl, ValueRange) -> Value {
        SmallVector<Value> at;
        for (int64_t d = 0; d < rank; ++d)
          at.push_back(nb.create<arith::AddIOp>(
              nl, starts[d],
              nb.create<arith::MulIOp>(nl, nb.create<linalg::IndexOp>(nl, d), strides[d])));
        return nb.create<tensor::ExtractOp>(nl, x, at);
      });
  n.setOutput(0, y);
  return success();
}

LogicalResult convertSlice(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  const int64_t rank = n.rank(0);
  SmallVector<OpFoldResult> starts_in, ends_in;
  SmallVector<int64_t> axes, steps;
  if (n.opset() < 10) {
    for (int64_t s : n.ints("starts")) starts_in.push_back(b.getIndexAttr(s));
    for (int64_t e : n.ints("ends")) ends_in.push_back(b.getIndexAttr(e));
    axes = n.ints("axes");
  } else {
    auto s = n.shapeElems(1), e = n.shapeElems(2);
    if (!s || !e) return n.unsupported("starts or ends that are not small integer vectors");
    starts_in = *s;
    ends_in = *e;
    if ((n.hasInput(3) && !n.constInts(3)) || (n.hasInput(4) && !n.constInts(4))) {
      if (starts_in.size() != ends_in.size()) return n.error("starts and ends differ in length");
      return sliceAtRunTime(n, starts_in, ends_in);
    }
    if (n.hasInput(3)) axes = *n.constInts(3);
    if (n.hasInput(4)) steps = *n.constInts(4);
  }
  if (starts_in.size() != ends_in.size()) return n.error("starts and ends differ in length");
  if (axes.empty())
    for (size_t i = 0; i < starts_in.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts_in.size(), 1);
  if (axes.size() != starts_in.size() || steps.size() != starts_in.size())
    return n.error("axes or steps differ in length from starts");

  // Sliced 1-D elements with constant bounds stay known.
  const bool known = rank == 1 && n.elems(0).has_value();
  Value x = known ? Value() : n.value(0);
  SmallVector<OpFoldResult> dims;
  if (known)
    dims.push_back(b.getIndexAttr(static_cast<int64_t>(n.elems(0)->size())));
  else
    dims = dimsOf(b, loc, x);
  SmallVector<OpFoldResult> starts(rank, b.getIndexAttr(0)), sizes(dims);
  SmallVector<int64_t> strides(rank, 1);
  SmallVector<bool> seen(rank, false);
  for (size_t i = 0; i < axes.size(); ++i) {
    FailureOr<int64_t> a = n.axis(axes[i], rank);
    if (failed(a)) return failure();
    if (seen[*a]) return n.error("repeated axis");
    seen[*a] = true;
    if (steps[i] == 0) return n.error("step is 0");
    // A dim is at most kMaxSize, so a larger step takes one element, as it would (numpy too
    // takes one for INT64_MIN, whose negation would overflow).
    int64_t step = std::clamp<int64_t>(steps[i], -kMaxSize, kMaxSize);
    OpFoldResult size = dims[*a];
    // No larger than a static dim either: the buffer's strides (step times the dims inside)
    // then stay far from overflowing.
    if (auto cs = constantIndex(size); cs && *cs > 0 && std::abs(step) > *cs)
      step = step > 0 ? *cs : -*cs;
    // INT64 extremes mean "to the end": bounds beyond any dim are clamped to just past it.
    auto clampConst = [&](OpFoldResult v) -> OpFoldResult {
      if (auto c = constantIndex(v))
        return b.getIndexAttr(std::clamp<int64_t>(*c, -kMaxSize - 1, kMaxSize + 1));
      return v;
    };
    OpFoldResult start = wrap(b, loc, clampConst(starts_in[i]), size);
    OpFoldResult end = wrap(b, loc, clampConst(ends_in[i]), size);
    OpFoldResult count;
    if (step > 0) {
      start = minIdx(b, loc, maxIdx(b, loc, start, b.getIndexAttr(0)), size);
      end = minIdx(b, loc, maxIdx(b, loc, end, b.getIndexAttr(0)), size);
      count = ceilDivIndex(b, loc, subIndex(b, loc, end, start), b.getIndexAttr(step));
    } else {
      OpFoldResult last = subIndex(b, loc, size, b.getIndexAttr(1));
      start = minIdx(b, loc, maxIdx(b, loc, start, b.getIndexAttr(0)), last);
      end = minIdx(b, loc, maxIdx(b, loc, end, b.getIndexAttr(-1)), last);
      count = ceilDivIndex(b, loc, subIndex(b, loc, start, end), b.getIndexAttr(-step));
    }
    count = maxIdx(b, loc, count, b.getIndexAttr(0));
    starts[*a] = start;
    sizes[*a] = count;
    strides[*a] = step;
  }
  if (known) {
    auto s0 = constantIndex(starts[0]), c0 = constantIndex(sizes[0]);
    if (s0 && c0) {
      SmallVector<OpFoldResult> out;
      for (int64_t i = 0; i < *c0; ++i) out.push_back((*n.elems(0))[*s0 + i * strides[0]]);
      n.setOutput(0, elemsTensor(out, n.elementType(0), false));
      return success();
    }
    x = n.value(0);
  }
  n.setOutput(0, sliceTensor(b, loc, x, starts, sizes, strides));
  return success();
}

LogicalResult convertSplit(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  const int64_t rank = n.rank(0);
  FailureOr<int64_t> axis = n.axis(n.i("axis", 0), rank);
  if (failed(axis)) return failure();
  Value x = n.value(0);
  SmallVector<OpFoldResult> dims = dimsOf(b, loc, x);
  SmallVector<OpFoldResult> parts;
  const size_t outputs = n.numOutputs();
  if (n.has("split")) {
    for (int64_t s : n.ints("split")) parts.push_back(b.getIndexAttr(s));
  } else if (n.hasInput(1)) {
    auto e = n.shapeElems(1);
    if (!e) return n.unsupported("split sizes that are not a small integer vector");
    parts = *e;
  } else {
    OpFoldResult each = floorDivIndex(b, loc, dims[*axis], b.getIndexAttr(outputs));
    auto c = constantIndex(dims[*axis]);
    if (c && *c % static_cast<int64_t>(outputs) != 0)
      return n.error("dim " + std::to_string(*c) + " does not split evenly into " +
                     std::to_string(outputs));
    parts.assign(outputs, each);
  }
  if (parts.size() != outputs) return n.error("split has not one size per output");
  for (OpFoldResult p : parts) {
    if (auto cp = constantIndex(p)) {
      if (*cp < 0) return n.error("negative split size");
      continue;
    }
    Value ok = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, idx(b, loc, p),
                                       b.create<arith::ConstantIndexOp>(loc, 0));
    runtimeCheck(b, loc, ok, "Split: a size is negative");
  }
  OpFoldResult total = b.getIndexAttr(0);
  for (OpFoldResult p : parts) total = addIndex(b, loc, total, p);
  auto ct = constantIndex(total), cd = constantIndex(dims[*axis]);
  if (ct && cd && *ct != *cd) return n.error("split sizes do not add up to the dim");
  if (!ct || !cd) {
    Value eq = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, idx(b, loc, total),
                                       idx(b, loc, dims[*axis]));
    runtimeCheck(b, loc, eq, "Split: the sizes do not add up to the dim");
  }
  OpFoldResult offset = b.getIndexAttr(0);
  for (size_t o = 0; o < outputs; ++o) {
    SmallVector<OpFoldResult> starts(rank, b.getIndexAttr(0)), sizes(dims);
    starts[*axis] = offset;
    sizes[*axis] = parts[o];
    if (n.wantsOutput(o))
      n.setOutput(o, sliceTensor(b, loc, x, starts, sizes, SmallVector<int64_t>(rank, 1)));
    offset = addIndex(b, loc, offset, parts[o]);
  }
  return success();
}

// Fails the execution when an index of `indices` lies outside [-size, size) (ONNX's negative
// indices count from the end): two reductions over the indices, then one comparison.
void checkIndexRange(OpBuilder& b, Location loc, Value indices, OpFoldResult size,
                     llvm::StringRef message) {
  auto itype = cast<RankedTensorType>(indices.getType());
  Type it = itype.getElementType();
  const int64_t irank = itype.getRank();
  SmallVector<OpFoldResult> id = dimsOf(b, loc, indices);
  SmallVector<int64_t> all;
  for (int64_t d = 0; d < irank; ++d) all.push_back(d);
  auto lo = b.getIntegerAttr(it, APInt::getSignedMaxValue(it.getIntOrFloatBitWidth()));
  auto hi = b.getIntegerAttr(it, APInt::getSignedMinValue(it.getIntOrFloatBitWidth()));
  Value mn = reduce(
      b, loc, indices, all, lo,
      [](OpBuilder& nb, Location nl, Value a, Value v) -> Value {
        return nb.create<arith::MinSIOp>(nl, a, v);
      },
      false);
  Value mx = reduce(
      b, loc, indices, all, hi,
      [](OpBuilder& nb, Location nl, Value a, Value v) -> Value {
        return nb.create<arith::MaxSIOp>(nl, a, v);
      },
      false);
  // Compared as index values: a dim need not fit the indices' type (int32 indices of a dim
  // beyond 2^31), and a size is at most kMaxSize, so its negation cannot overflow.
  Value lo_v = b.create<arith::IndexCastOp>(loc, b.getIndexType(),
                                            b.create<tensor::ExtractOp>(loc, mn, ValueRange{}));
  Value hi_v = b.create<arith::IndexCastOp>(loc, b.getIndexType(),
                                            b.create<tensor::ExtractOp>(loc, mx, ValueRange{}));
  Value s = idx(b, loc, size);
  Value neg_s = b.create<arith::SubIOp>(loc, b.create<arith::ConstantIndexOp>(loc, 0), s);
  Value ok = b.create<arith::AndIOp>(
      loc, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, lo_v, neg_s),
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, hi_v, s));
  // Empty indices reduce to (max, min): the check holds vacuously only when there are some.
  OpFoldResult count = product(b, loc, id);
  Value none = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, idx(b, loc, count),
                                       b.create<arith::ConstantIndexOp>(loc, 0));
  runtimeCheck(b, loc, b.create<arith::OrIOp>(loc, ok, none), message);
}

LogicalResult convertGather(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  const int64_t rank = n.rank(0);
  if (rank == 0) return n.error("data must have rank >= 1");
  FailureOr<int64_t> axis = n.axis(n.i("axis", 0), rank);
  if (failed(axis)) return failure();
  Type it = n.elementType(1);
  if (!it.isInteger(32) && !it.isInteger(64)) return n.error("indices must be int32 or int64");
  const int64_t irank = n.rank(1);
  // Known elements gathered by constant indices stay known.
  std::optional<SmallVector<int64_t>> constant_indices = n.constInts(1);
  if (rank == 1 && irank <= 1 && n.elems(0) && constant_indices) {
    SmallVector<OpFoldResult> src = *n.elems(0), out;
    const int64_t size = static_cast<int64_t>(src.size());
    for (int64_t i : *constant_indices) {
      if (i < -size || i >= size) return n.error("index " + std::to_string(i) + " out of range");
      out.push_back(src[i < 0 ? i + size : i]);
    }
    n.setOutput(0, elemsTensor(out, n.elementType(0), irank == 0));
    return success();
  }
  Value data = n.value(0), indices = n.value(1);
  SmallVector<OpFoldResult> dd = dimsOf(b, loc, data), id = dimsOf(b, loc, indices);
  OpFoldResult size = dd[*axis];
  // Out-of-range indices fail: at import when constant, at run time otherwise.
  if (constant_indices && constantIndex(size)) {
    const int64_t s = *constantIndex(size);
    for (int64_t i : *constant_indices)
      if (i < -s || i >= s) return n.error("index " + std::to_string(i) + " out of range");
  } else if (DenseElementsAttr constant = n.input(1).data; constant && constantIndex(size)) {
    const int64_t s = *constantIndex(size);
    for (const APInt& v : constant.getValues<APInt>())
      if (v.getSExtValue() < -s || v.getSExtValue() >= s)
        return n.error("index " + std::to_string(v.getSExtValue()) + " out of range");
  } else {
    checkIndexRange(b, loc, indices, size, "Gather: an index is out of range");
  }
  SmallVector<OpFoldResult> out(dd.begin(), dd.begin() + *axis);
  out.append(id.begin(), id.end());
  out.append(dd.begin() + *axis + 1, dd.end());
  const int64_t orank = static_cast<int64_t>(out.size());
  SmallVector<AffineExpr> ie;
  for (int64_t d = 0; d < irank; ++d) ie.push_back(b.getAffineDimExpr(*axis + d));
  Value empty = emptyTensor(b, loc, out, n.elementType(0));
  Value axis_size = idx(b, loc, size);
  const int64_t ax = *axis;
  Value y = generate(
      b, loc, empty, ValueRange{indices}, {AffineMap::get(orank, 0, ie, b.getContext())},
      [&](OpBuilder& nb, Location nl, ValueRange a) -> Value {
        Value i = nb.create<arith::IndexCastOp>(nl, nb.getIndexType(), a[0]);
        Value neg = nb.create<arith::CmpIOp>(nl, arith::CmpIPredicate::slt, i,
                                             nb.create<arith::ConstantIndexOp>(nl, 0));
        i = nb.create<arith::SelectOp>(nl, neg, nb.create<arith::AddIOp>(nl, i, axis_size), i);
        SmallVector<Value> at;
        for (int64_t d = 0; d < ax; ++d) at.push_back(nb.create<linalg::IndexOp>(nl, d));
        at.push_back(i);
        for (int64_t d = ax + 1; d < rank; ++d)
          at.push_back(nb.create<linalg::IndexOp>(nl, d - 1 + irank));
        return nb.create<tensor::ExtractOp>(nl, data, at);
      });
  n.setOutput(0, y);
  return success();
}

// x[i] with ONNX's negative index counting from the end of a dim of `size` (an index Value).
Value normalizedIndex(OpBuilder& b, Location loc, Value i, Value size) {
  Value idx_i = b.create<arith::IndexCastOp>(loc, b.getIndexType(), i);
  Value neg = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, idx_i,
                                      b.create<arith::ConstantIndexOp>(loc, 0));
  return b.create<arith::SelectOp>(loc, neg, b.create<arith::AddIOp>(loc, idx_i, size), idx_i);
}

LogicalResult convertGatherElements(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  const int64_t rank = n.rank(0);
  if (n.rank(1) != rank || rank == 0) return n.error("data and indices must have one rank >= 1");
  FailureOr<int64_t> axis = n.axis(n.i("axis", 0), rank);
  if (failed(axis)) return failure();
  Type it = n.elementType(1);
  if (!it.isInteger(32) && !it.isInteger(64)) return n.error("indices must be int32 or int64");
  Value data = n.value(0), indices = n.value(1);
  OpFoldResult size = dimOf(b, loc, data, *axis);
  checkIndexRange(b, loc, indices, size, "GatherElements: an index is out of range");
  // Every other dim of indices must fit data's.
  SmallVector<OpFoldResult> dd = dimsOf(b, loc, data), id = dimsOf(b, loc, indices);
  for (int64_t d = 0; d < rank; ++d) {
    if (d == *axis) continue;
    Value ok = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sle, idx(b, loc, id[d]),
                                       idx(b, loc, dd[d]));
    runtimeCheck(b, loc, ok, "GatherElements: indices is larger than data");
  }
  Value empty = emptyTensor(b, loc, id, n.elementType(0));
  Value axis_size = idx(b, loc, size);
  const int64_t ax = *axis;
  Value y = generate(b, loc, empty, ValueRange{indices}, {b.getMultiDimIdentityMap(rank)},
                     [&](OpBuilder& nb, Location nl, ValueRange a) -> Value {
                       SmallVector<Value> at;
                       for (int64_t d = 0; d < rank; ++d)
                         at.push_back(d == ax ? normalizedIndex(nb, nl, a[0], axis_size)
                                              : nb.create<linalg::IndexOp>(nl, d).getResult());
                       return nb.create<tensor::ExtractOp>(nl, data, at);
                     });
  n.setOutput(0, y);
  return success();
}

// GatherND: y[i..., j...] = data[i[:b]..., indices[i...], j...] for indices [..., m] (m static):
// the first `batch_dims` dims of indices and data are shared, each index vector's m components
// address data's next m dims (negative from the end), the rest of data's dims are copied.
LogicalResult convertGatherND(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  const int64_t rank = n.rank(0), irank = n.rank(1);
  Type it = n.elementType(1);
  if (it != b.getI64Type()) return n.error("indices must be int64");
  const int64_t batch = n.i("batch_dims", 0);
  if (rank < 1 || irank < 1) return n.error("data and indices must have rank >= 1");
  if (batch < 0 || batch >= std::min(rank, irank))
    return n.error("batch_dims must be in [0, min(rank of data, rank of indices))");
  const int64_t m = n.type(1).getDimSize(irank - 1);
  if (ShapedType::isDynamic(m)) return n.unsupported("indices with a dynamic last dim");
  if (batch + m > rank)
    return n.error("indices' last dim (" + std::to_string(m) +
                   ") plus batch_dims exceeds data's rank");
  Value data = n.value(0), indices = n.value(1);
  SmallVector<OpFoldResult> dd = dimsOf(b, loc, data), id = dimsOf(b, loc, indices);
  for (int64_t d = 0; d < batch; ++d)
    if (failed(checkSameDim(n, dd[d], id[d], "batch dims of data and indices")))
      return failure();
  // Every index in range for the dim it addresses (checked over all of indices at
  // once); with m = 0 there is none.
  SmallVector<Value> sizes;
  for (int64_t k = 0; k < m; ++k) sizes.push_back(idx(b, loc, dd[batch + k]));
  if (m > 0) {
    Value in_range = generate(
        b, loc, emptyTensor(b, loc, id, b.getI1Type()), ValueRange{indices},
        {b.getMultiDimIdentityMap(irank)},
        [&](OpBuilder& nb, Location nl, ValueRange a) -> Value {
          Value k = nb.create<linalg::IndexOp>(nl, irank - 1);
          Value size = sizes[0];
          for (int64_t c = 1; c < m; ++c)
            size = nb.create<arith::SelectOp>(
                nl,
                nb.create<arith::CmpIOp>(nl, arith::CmpIPredicate::eq, k,
                                         nb.create<arith::ConstantIndexOp>(nl, c)),
                sizes[c], size);
          Value i = nb.create<arith::IndexCastOp>(nl, nb.getIndexType(), a[0]);
          Value neg =
              nb.create<arith::SubIOp>(nl, nb.create<arith::ConstantIndexOp>(nl, 0), size);
          return nb.create<arith::AndIOp>(
              nl, nb.create<arith::CmpIOp>(nl, arith::CmpIPredicate::sge, i, neg),
              nb.create<arith::CmpIOp>(nl, arith::CmpIPredicate::slt, i, size));
        });
    SmallVector<int64_t> all;
    for (int64_t d = 0; d < irank; ++d) all.push_back(d);
    Value all_in_range = reduce(
        b, loc, in_range, all, b.getBoolAttr(true),
        [](OpBuilder& nb, Location nl, Value acc, Value v) -> Value {
          return nb.create<arith::AndIOp>(nl, acc, v);
        },
        false);
    runtimeCheck(b, loc, b.create<tensor::ExtractOp>(loc, all_in_range, ValueRange{}),
                 "GatherND: an index is out of range");
  }

  SmallVector<OpFoldResult> out(id.begin(), id.end() - 1);
  out.append(dd.begin() + batch + m, dd.end());
  const int64_t lead = irank - 1;  // y's dims from indices
  Value y = generate(
      b, loc, emptyTensor(b, loc, out, n.elementType(0)), ValueRange{}, {},
      [&](OpBuilder& nb, Location nl, ValueRange) -> Value {
        SmallVector<Value> at, where;
        for (int64_t d = 0; d < lead; ++d) where.push_back(nb.create<linalg::IndexOp>(nl, d));
        for (int64_t d = 0; d < batch; ++d) at.push_back(where[d]);
        for (int64_t k = 0; k < m; ++k) {
          SmallVector<Value> ik(where);
          ik.push_back(nb.create<arith::ConstantIndexOp>(nl, k));
          Value i = nb.create<tensor::ExtractOp>(nl, indices, ik);
          at.push_back(normalizedIndex(nb, nl, i, sizes[k]));
        }
        for (int64_t d = batch + m; d < rank; ++d)
          at.push_back(nb.create<linalg::IndexOp>(nl, lead + d - batch - m));
        return nb.create<tensor::ExtractOp>(nl, data, at);
      });
  n.setOutput(0, y);
  return success();
}

// Runs `body` at every position of `dims` (an scf.for nest, in row-major order), threading the
// tensor `carried` through it: body(ivs, carried) returns the tensor after that position.
Value forEachPosition(OpBuilder& b, Location loc, ArrayRef<OpFoldResult> dims, Value carried,
                      function_ref<Value(OpBuilder&, Location, ValueRange, Value)> body) {
  SmallVector<Value> lbs, ubs, steps;
  for (OpFoldResult d : dims) {
    lbs.push_back(b.create<arith::ConstantIndexOp>(loc, 0));
    ubs.push_back(idx(b, loc, d));
    steps.push_back(b.create<arith::ConstantIndexOp>(loc, 1));
  }
  scf::LoopNest nest = scf::buildLoopNest(
      b, loc, lbs, ubs, steps, ValueRange{carried},
      [&](OpBuilder& nb, Location nl, ValueRange ivs, ValueRange iters) -> scf::ValueVector {
        return {body(nb, nl, ivs, iters[0])};
      });
  return nest.results[0];
}

// The scatter reductions: none (the update replaces), add, mul, min, max.
FailureOr<std::function<Value(OpBuilder&, Location, Value, Value)>> scatterCombine(NodeContext& n,
                                                                                   Type t) {
  const std::string r = n.s("reduction", "none");
  const bool f = isFloat(t);
  if (t.isInteger(1) && r != "none") return n.unsupported("reduction '" + r + "' of bool");
  if (r == "none") return {[](OpBuilder&, Location, Value, Value u) { return u; }};
  if (r == "add")
    return {[f](OpBuilder& b, Location l, Value o, Value u) -> Value {
      return f ? b.create<arith::AddFOp>(l, o, u).getResult()
               : b.create<arith::AddIOp>(l, o, u).getResult();
    }};
  if (r == "mul")
    return {[f](OpBuilder& b, Location l, Value o, Value u) -> Value {
      return f ? b.create<arith::MulFOp>(l, o, u).getResult()
               : b.create<arith::MulIOp>(l, o, u).getResult();
    }};
  if (r == "min")
    return {[f](OpBuilder& b, Location l, Value o, Value u) -> Value {
      return f ? b.create<arith::MinimumFOp>(l, o, u).getResult()
               : b.create<arith::MinSIOp>(l, o, u).getResult();
    }};
  if (r == "max")
    return {[f](OpBuilder& b, Location l, Value o, Value u) -> Value {
      return f ? b.create<arith::MaximumFOp>(l, o, u).getResult()
               : b.create<arith::MaxSIOp>(l, o, u).getResult();
    }};
  return n.error("unknown reduction '" + r + "'");
}

// `i` (an integer of indices' type) as an index into a dim of `size`, negative from its end; fails
// the execution when outside [-size, size).
Value checkedIndex(OpBuilder& b, Location loc, Value i, Value size, llvm::StringRef message) {
  Value v = b.create<arith::IndexCastOp>(loc, b.getIndexType(), i);
  Value neg = b.create<arith::SubIOp>(loc, b.create<arith::ConstantIndexOp>(loc, 0), size);
  runtimeCheck(b, loc,
               b.create<arith::AndIOp>(
                   loc, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, v, neg),
                   b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, v, size)),
               message);
  return normalizedIndex(b, loc, i, size);
}

// y = data, then at every position p of updates, in row-major order:
// y[target(p)] = combine(y[target(p)], updates[p]).
Value scatterUpdates(OpBuilder& b, Location loc, Value data, Value updates,
                     const std::function<Value(OpBuilder&, Location, Value, Value)>& combine,
                     function_ref<SmallVector<Value>(OpBuilder&, Location, ValueRange)> target) {
  return forEachPosition(
      b, loc, dimsOf(b, loc, updates), data,
      [&](OpBuilder& nb, Location nl, ValueRange p, Value acc) -> Value {
        SmallVector<Value> at = target(nb, nl, p);
        Value u = nb.create<tensor::ExtractOp>(nl, updates, p);
        Value old = nb.create<tensor::ExtractOp>(nl, acc, at);
        return nb.create<tensor::InsertOp>(nl, combine(nb, nl, old, u), acc, at);
      });
}

// ScatterElements (and opset 9-10's Scatter): y = data, then y[p with p[axis] = indices[p]] =
// combine(y[...], updates[p]) for every position p of updates, in row-major order (so with
// duplicate indices the last update wins, as ONNX's reference does).
LogicalResult convertScatterElements(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  const int64_t rank = n.rank(0);
  if (rank == 0 || n.rank(1) != rank || n.rank(2) != rank)
    return n.error("data, indices and updates must have one rank >= 1");
  if (n.elementType(2) != n.elementType(0)) return n.error("updates' type differs from data's");
  Type it = n.elementType(1);
  if (!it.isInteger(32) && !it.isInteger(64)) return n.error("indices must be int32 or int64");
  FailureOr<int64_t> axis = n.axis(n.i("axis", 0), rank);
  if (failed(axis)) return failure();
  auto combine = scatterCombine(n, n.elementType(0));
  if (failed(combine)) return failure();
  Value data = n.value(0), indices = n.value(1), updates = n.value(2);
  SmallVector<OpFoldResult> dd = dimsOf(b, loc, data), id = dimsOf(b, loc, indices),
                            ud = dimsOf(b, loc, updates);
  for (int64_t d = 0; d < rank; ++d) {
    if (failed(checkSameDim(n, id[d], ud[d], "indices' and updates' dims"))) return failure();
    if (d == *axis) continue;
    runtimeCheck(b, loc,
                 b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sle, idx(b, loc, ud[d]),
                                         idx(b, loc, dd[d])),
                 n.node().op_type() + ": updates is larger than data");
  }
  Value size = idx(b, loc, dd[*axis]);
  const int64_t ax = *axis;
  const std::string message = n.node().op_type() + ": an index is out of range";
  Value y = scatterUpdates(b, loc, data, updates, *combine,
                           [&](OpBuilder& nb, Location nl, ValueRange p) {
                             SmallVector<Value> at(p.begin(), p.end());
                             Value i = nb.create<tensor::ExtractOp>(nl, indices, p);
                             at[ax] = checkedIndex(nb, nl, i, size, message);
                             return at;
                           });
  n.setOutput(0, y);
  return success();
}

// ScatterND: y = data, then y[indices[q]..., j...] = combine(y[...], updates[q..., j...]) for
// every index vector q of indices [..., m] (m static) and every j over data's dims after the
// first m, in row-major order.
LogicalResult convertScatterND(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  const int64_t rank = n.rank(0), irank = n.rank(1);
  if (rank < 1 || irank < 1) return n.error("data and indices must have rank >= 1");
  if (n.elementType(1) != b.getI64Type()) return n.error("indices must be int64");
  if (n.elementType(2) != n.elementType(0)) return n.error("updates' type differs from data's");
  const int64_t m = n.type(1).getDimSize(irank - 1);
  if (ShapedType::isDynamic(m)) return n.unsupported("indices with a dynamic last dim");
  if (m > rank) return n.error("indices' last dim exceeds data's rank");
  const int64_t urank = irank - 1 + rank - m;
  if (n.rank(2) != urank)
    return n.error("updates must have rank " + std::to_string(urank) +
                   " (indices' rank - 1 + data's rank - indices' last dim)");
  auto combine = scatterCombine(n, n.elementType(0));
  if (failed(combine)) return failure();
  Value data = n.value(0), indices = n.value(1), updates = n.value(2);
  SmallVector<OpFoldResult> dd = dimsOf(b, loc, data), id = dimsOf(b, loc, indices),
                            ud = dimsOf(b, loc, updates);
  for (int64_t d = 0; d < urank; ++d) {
    OpFoldResult want = d < irank - 1 ? id[d] : dd[m + d - (irank - 1)];
    if (failed(checkSameDim(n, ud[d], want, "updates' dims (indices' and data's)")))
      return failure();
  }
  SmallVector<Value> sizes;
  for (int64_t k = 0; k < m; ++k) sizes.push_back(idx(b, loc, dd[k]));
  Value y = scatterUpdates(
      b, loc, data, updates, *combine, [&](OpBuilder& nb, Location nl, ValueRange p) {
        SmallVector<Value> at;
        for (int64_t k = 0; k < m; ++k) {
          SmallVector<Value> ik(p.begin(), p.begin() + (irank - 1));
          ik.push_back(nb.create<arith::ConstantIndexOp>(nl, k));
          Value i = nb.create<tensor::ExtractOp>(nl, indices, ik);
          at.push_back(checkedIndex(nb, nl, i, sizes[k], "ScatterND: an index is out of range"));
        }
        at.append(p.begin() + (irank - 1), p.end());
        return at;
      });
  n.setOutput(0, y);
  return success();
}

LogicalResult convertPad(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  const int64_t rank = n.rank(0);
  const std::string mode = n.s("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge")
    return n.unsupported("mode '" + mode + "'");
  SmallVector<OpFoldResult> pads;
  if (n.opset() < 11) {
    for (int64_t p : n.ints("pads")) pads.push_back(b.getIndexAttr(p));
  } else {
    if (n.hasInput(3)) return n.unsupported("axes input");
    auto e = n.shapeElems(1);
    if (!e) return n.unsupported("pads that are not a small integer vector");
    pads = *e;
  }
  if (static_cast<int64_t>(pads.size()) != 2 * rank)
    return n.error("pads must have 2 * rank entries");
  for (OpFoldResult p : pads) {
    if (auto c = constantIndex(p)) {
      if (*c < 0) return n.unsupported("negative pads (cropping)");
      continue;
    }
    Value ok = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, idx(b, loc, p),
                                       b.create<arith::ConstantIndexOp>(loc, 0));
    runtimeCheck(b, loc, ok, "Pad: negative pads (cropping) are not supported");
  }
  Type t = n.elementType(0);
  Value x = n.value(0);
  SmallVector<OpFoldResult> low(pads.begin(), pads.begin() + rank),
      high(pads.begin() + rank, pads.end()), in = dimsOf(b, loc, x), out;
  for (int64_t d = 0; d < rank; ++d)
    out.push_back(addIndex(b, loc, addIndex(b, loc, in[d], low[d]), high[d]));
  // tensor.pad's result is allocated from these: checked like any other result.
  if (failed(checkDims(b, loc, out, "the padded result", false))) return failure();
  if (mode == "constant") {
    Value value;
    if (n.opset() < 11) {
      value = scalarConstant(b, loc, t, n.f("value", 0));
    } else if (n.hasInput(2)) {
      Value v = n.value(2);
      SmallVector<Value> at(cast<RankedTensorType>(v.getType()).getRank(),
                            b.create<arith::ConstantIndexOp>(loc, 0));
      value = b.create<tensor::ExtractOp>(loc, v, at);
    } else {
      value = scalarConstant(b, loc, t, 0);
    }
    auto result = RankedTensorType::get(staticSizes(out), t);
    n.setOutput(0, b.create<tensor::PadOp>(loc, result, x, low, high, value));
    return success();
  }
  // reflect / edge: each output element reads the input at a mirrored or clamped index.
  SmallVector<Value> lo_v, size_v;
  for (int64_t d = 0; d < rank; ++d) {
    lo_v.push_back(idx(b, loc, low[d]));
    size_v.push_back(idx(b, loc, in[d]));
    if (mode == "reflect") {
      // One reflection: pads must be smaller than the dim.
      Value ok = b.create<arith::AndIOp>(
          loc, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, lo_v[d], size_v[d]),
          b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, idx(b, loc, high[d]), size_v[d]));
      runtimeCheck(b, loc, ok, "Pad: reflect pads must be smaller than the dim");
    }
    Value nonempty = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sgt, size_v[d],
                                             b.create<arith::ConstantIndexOp>(loc, 0));
    Value nopad =
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, idx(b, loc, out[d]), size_v[d]);
    runtimeCheck(b, loc, b.create<arith::OrIOp>(loc, nonempty, nopad),
                 "Pad: reflect and edge cannot pad an empty dim");
  }
  Value empty = emptyTensor(b, loc, out, t);
  const bool reflect = mode == "reflect";
  Value y = generate(
      b, loc, empty, ValueRange{}, {}, [&](OpBuilder& nb, Location nl, ValueRange) -> Value {
        SmallVector<Value> at;
        Value zero = nb.create<arith::ConstantIndexOp>(nl, 0);
        Value one = nb.create<arith::ConstantIndexOp>(nl, 1);
        for (int64_t d = 0; d < rank; ++d) {
          Value i = nb.create<arith::SubIOp>(nl, nb.create<linalg::IndexOp>(nl, d), lo_v[d]);
          Value last = nb.create<arith::SubIOp>(nl, size_v[d], one);
          if (reflect) {
            Value neg = nb.create<arith::CmpIOp>(nl, arith::CmpIPredicate::slt, i, zero);
            i = nb.create<arith::SelectOp>(nl, neg, nb.create<arith::SubIOp>(nl, zero, i), i);
            Value over = nb.create<arith::CmpIOp>(nl, arith::CmpIPredicate::sgt, i, last);
            Value mirrored =
                nb.create<arith::SubIOp>(nl, nb.create<arith::AddIOp>(nl, last, last), i);
            i = nb.create<arith::SelectOp>(nl, over, mirrored, i);
          } else {
            i = nb.create<arith::MaxSIOp>(nl, nb.create<arith::MinSIOp>(nl, i, last), zero);
          }
          at.push_back(i);
        }
        return nb.create<tensor::ExtractOp>(nl, x, at);
      });
  n.setOutput(0, y);
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

// EyeLike: a matrix of the input's shape with ones on diagonal k (j - i = k), zeros elsewhere,
// of type `dtype` (the input's by default).
LogicalResult convertEyeLike(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  if (n.rank(0) != 2) return n.error("EyeLike takes a 2-D input");
  Type t = n.elementType(0);
  if (n.has("dtype")) {
    const int64_t dtype = n.i("dtype", 0);
    t = elementTypeOf(b.getContext(), static_cast<int32_t>(dtype));
    if (!t) return n.unsupported("dtype " + dtypeName(static_cast<int32_t>(dtype)));
  }
  const int64_t k = n.i("k", 0);
  Value y = generate(b, loc, emptyTensor(b, loc, dimsOf(b, loc, n.value(0)), t), {}, {},
                     [&](OpBuilder& nb, Location nl, ValueRange) -> Value {
                       Value i = nb.create<linalg::IndexOp>(nl, 0);
                       Value j = nb.create<linalg::IndexOp>(nl, 1);
                       Value on = nb.create<arith::CmpIOp>(
                           nl, arith::CmpIPredicate::eq, nb.create<arith::SubIOp>(nl, j, i),
                           nb.create<arith::ConstantIndexOp>(nl, k));
                       return nb.create<arith::SelectOp>(nl, on, scalarConstant(nb, nl, t, 1),
                                                         scalarConstant(nb, nl, t, 0));
                     });
  n.setOutput(0, y);
  return success();
}

LogicalResult convertTrilu(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  const int64_t rank = n.rank(0);
  if (rank < 2) return n.error("input must have rank >= 2");
  Value k = b.create<arith::ConstantIndexOp>(loc, 0);
  if (n.hasInput(1)) {
    auto e = n.shapeElems(1);
    if (!e || e->size() != 1) return n.unsupported("k that is not an integer scalar");
    k = idx(b, loc, (*e)[0]);
  }
  const bool upper = n.i("upper", 1) != 0;
  Type t = n.elementType(0);
  Value x = n.value(0);
  Value zero = scalarConstant(b, loc, t, 0);
  Value empty = emptyTensor(b, loc, dimsOf(b, loc, x), t);
  Value y =
      generate(b, loc, empty, ValueRange{x}, {b.getMultiDimIdentityMap(rank)},
               [&](OpBuilder& nb, Location nl, ValueRange a) -> Value {
                 Value i = nb.create<linalg::IndexOp>(nl, rank - 2);
                 Value j = nb.create<linalg::IndexOp>(nl, rank - 1);
                 Value diff = nb.create<arith::SubIOp>(nl, j, i);
                 Value keep = nb.create<arith::CmpIOp>(
                     nl, upper ? arith::CmpIPredicate::sge : arith::CmpIPredicate::sle, diff, k);
                 return nb.create<arith::SelectOp>(nl, keep, a[0], zero);
               });
  n.setOutput(0, y);
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

// floor(size * scale) (f64 operands) as an index, checked when the module runs to be a size: a
// NaN, infinite or too large product would make the conversion undefined.
OpFoldResult scaledSize(OpBuilder& b, Location loc, Value size, Value scale) {
  Type f64 = b.getF64Type();
  Value f = b.create<math::FloorOp>(loc, b.create<arith::MulFOp>(loc, size, scale));
  Value fits = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLE, f,
                                       scalarConstant(b, loc, f64, static_cast<double>(kMaxSize)));
  runtimeCheck(b, loc, fits, "Resize: a scale makes a dim NaN, infinite or larger than 2^48");
  f = b.create<arith::SelectOp>(loc, fits, f, scalarConstant(b, loc, f64, 0));
  return fold(b.create<arith::IndexCastOp>(loc, b.getIndexType(),
                                           b.create<arith::FPToSIOp>(loc, b.getI64Type(), f)));
}

// Resize (opset 10+) and Upsample: nearest, (n-)linear and cubic interpolation, every coordinate
// transformation but tf_crop_and_resize. One linalg.generic over the output: per resized dim the
// source coordinate (in f64), then one read (nearest), 2^dims reads blended (linear) or 4^dims
// (cubic: Keys' kernel with cubic_coeff_a, taps beyond the edges reading the edge, or with
// exclude_outside weighted 0 and the rest renormalized, as ONNX's reference does).
LogicalResult convertResize(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  const bool upsample = n.node().op_type() == "Upsample";
  const int64_t rank = n.rank(0);
  Type t = n.elementType(0);
  const std::string mode = n.s("mode", "nearest");
  if (mode != "nearest" && mode != "linear" && mode != "cubic")
    return n.unsupported("mode '" + mode + "'");
  if (mode != "nearest" && !isFloat(t)) return n.unsupported(mode + " resize of integers");
  const std::string coord = n.s("coordinate_transformation_mode",
                                upsample || n.opset() < 11 ? "asymmetric" : "half_pixel");
  if (coord != "half_pixel" && coord != "pytorch_half_pixel" && coord != "align_corners" &&
      coord != "asymmetric" && coord != "tf_half_pixel_for_nn")
    return n.unsupported("coordinate_transformation_mode '" + coord + "'");
  const std::string nearest = n.s("nearest_mode", n.opset() < 11 ? "floor" : "round_prefer_floor");
  if (nearest != "round_prefer_floor" && nearest != "round_prefer_ceil" && nearest != "floor" &&
      nearest != "ceil")
    return n.unsupported("nearest_mode '" + nearest + "'");
  const bool cubic = mode == "cubic", exclude_outside = n.i("exclude_outside", 0) != 0;
  if (exclude_outside && !cubic) return n.unsupported("exclude_outside=1 with mode '" + mode + "'");
  const double coeff_a = n.f("cubic_coeff_a", -0.75f);
  // Scales (floats, constants) or sizes (integers, may be known only at run time).
  SmallVector<double> scales;
  Value runtime_scales;  // scales known only when the module runs
  std::optional<SmallVector<OpFoldResult>> sizes;
  if (upsample && n.has("scales")) {
    const auto* a = n.attr("scales");
    for (float s : a->floats()) scales.push_back(s);
  } else {
    const size_t scales_input = upsample || n.opset() < 11 ? 1 : 2;
    // An empty scales input means "use sizes"; one of unknown size is not empty.
    if (n.hasInput(scales_input) &&
        (!n.type(scales_input).hasStaticShape() || n.type(scales_input).getNumElements() != 0)) {
      DenseElementsAttr data = n.input(scales_input).data;
      if (data) {
        scales = floatValues(data);
      } else {
        if (!isFloat(n.elementType(scales_input)) || n.rank(scales_input) != 1 ||
            n.type(scales_input).isDynamicDim(0))
          return n.unsupported("scales that are not a static float vector");
        if (n.type(scales_input).getDimSize(0) != rank)
          return n.error("scales or sizes must have one entry per dim");
        runtime_scales = n.value(scales_input);
        scales.assign(n.type(scales_input).getDimSize(0), 0.0);
      }
    } else if (!upsample && n.opset() >= 11 && n.hasInput(3)) {
      sizes = n.shapeElems(3);
      if (!sizes) return n.unsupported("sizes that are not a small integer vector");
    } else {
      return n.error("needs scales or sizes");
    }
  }
  if (sizes ? static_cast<int64_t>(sizes->size()) != rank
            : static_cast<int64_t>(scales.size()) != rank)
    return n.error("scales or sizes must have one entry per dim");
  Value x = n.value(0);
  SmallVector<OpFoldResult> in = dimsOf(b, loc, x), out;
  SmallVector<Value> in_f, out_f, scale_f;
  SmallVector<bool> resized;
  Type f64 = b.getF64Type();
  auto toF64 = [&](OpFoldResult v) -> Value {
    Value i = b.create<arith::IndexCastOp>(loc, b.getI64Type(), idx(b, loc, v));
    return b.create<arith::SIToFPOp>(loc, f64, i);
  };
  for (int64_t d = 0; d < rank; ++d) {
    OpFoldResult o;
    Value s;
    if (sizes) {
      o = (*sizes)[d];
      if (auto c = constantIndex(o); c && *c < 0) return n.error("negative size");
      s = b.create<arith::DivFOp>(loc, toF64(o), toF64(in[d]));
    } else if (runtime_scales) {
      Value at = b.create<arith::ConstantIndexOp>(loc, d);
      s = convertScalar(b, loc, b.create<tensor::ExtractOp>(loc, runtime_scales, ValueRange{at}),
                        f64);
      Value positive = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT, s,
                                               scalarConstant(b, loc, f64, 0));
      runtimeCheck(b, loc, positive, "Resize: scales must be positive");
      o = scaledSize(b, loc, toF64(in[d]), s);
    } else {
      // NaN fails the first test.
      if (!(scales[d] > 0) || std::isinf(scales[d]))
        return n.error("scale " + std::to_string(scales[d]) + " of dim " + std::to_string(d) +
                       " must be positive and finite");
      if (auto c = constantIndex(in[d])) {
        const CheckedInt size =
            CheckedInt::fromDouble(std::floor(static_cast<double>(*c) * scales[d]));
        if (!size.isSize())
          return n.error("scale " + std::to_string(scales[d]) + " makes dim " + std::to_string(d) +
                         " larger than 2^48");
        o = b.getIndexAttr(size.value());
      } else {
        o = scaledSize(b, loc, toF64(in[d]), scalarConstant(b, loc, f64, scales[d]));
      }
      s = scalarConstant(b, loc, f64, scales[d]);
    }
    const bool same = sizes ? sameDim(o, in[d]) : !runtime_scales && scales[d] == 1.0;
    resized.push_back(!same);
    out.push_back(same ? in[d] : o);
    in_f.push_back(toF64(in[d]));
    // ONNX's length_resized: the requested size, or with scales length * scale (not floored).
    out_f.push_back(sizes ? toF64(out.back())
                          : b.create<arith::MulFOp>(loc, in_f.back(), s).getResult());
    scale_f.push_back(s);
  }
  SmallVector<Value> in_last;
  for (int64_t d = 0; d < rank; ++d)
    in_last.push_back(
        b.create<arith::SubIOp>(loc, idx(b, loc, in[d]), b.create<arith::ConstantIndexOp>(loc, 1)));
  // Reading an empty input for a non-empty output would be out of bounds.
  Value count_in = idx(b, loc, product(b, loc, in)), count_out = idx(b, loc, product(b, loc, out));
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value ok = b.create<arith::OrIOp>(
      loc, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, count_in, zero),
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, count_out, zero));
  runtimeCheck(b, loc, ok, "Resize: an empty input cannot be resized to a non-empty output");
  Value empty = emptyTensor(b, loc, out, t);
  const bool linear = mode == "linear";
  if (cubic) {
    int64_t count = 0;
    for (int64_t d = 0; d < rank; ++d) count += resized[d] ? 1 : 0;
    if (count > 4) return n.unsupported("cubic resize of more than 4 dims (4^dims reads each)");
  }
  Value y = generate(
      b, loc, empty, ValueRange{}, {}, [&](OpBuilder& nb, Location nl, ValueRange) -> Value {
        auto c = [&](double v) { return scalarConstant(nb, nl, f64, v); };
        Value zero_i = nb.create<arith::ConstantIndexOp>(nl, 0);
        // Per dim: the low index, the high index and the high one's weight.
        SmallVector<Value> lo(rank), hi(rank), frac(rank);
        // Cubic: per dim the four taps and their weights.
        SmallVector<SmallVector<Value, 4>> taps(rank), weights(rank);
        for (int64_t d = 0; d < rank; ++d) {
          Value o = nb.create<linalg::IndexOp>(nl, d);
          if (!resized[d]) {
            lo[d] = hi[d] = o;
            continue;
          }
          Value of = nb.create<arith::SIToFPOp>(
              nl, f64, nb.create<arith::IndexCastOp>(nl, nb.getI64Type(), o));
          Value half = c(0.5);
          Value xo;
          if (coord == "asymmetric") {
            xo = nb.create<arith::DivFOp>(nl, of, scale_f[d]);
          } else if (coord == "tf_half_pixel_for_nn") {
            xo = nb.create<arith::DivFOp>(nl, nb.create<arith::AddFOp>(nl, of, half), scale_f[d]);
          } else if (coord == "align_corners") {
            Value den = nb.create<arith::SubFOp>(nl, out_f[d], c(1));
            Value num =
                nb.create<arith::MulFOp>(nl, of, nb.create<arith::SubFOp>(nl, in_f[d], c(1)));
            Value one_out = nb.create<arith::CmpFOp>(nl, arith::CmpFPredicate::OLE, out_f[d], c(1));
            xo = nb.create<arith::SelectOp>(nl, one_out, c(0),
                                            nb.create<arith::DivFOp>(nl, num, den));
          } else {
            xo = nb.create<arith::SubFOp>(
                nl,
                nb.create<arith::DivFOp>(nl, nb.create<arith::AddFOp>(nl, of, half), scale_f[d]),
                half);
            if (coord == "pytorch_half_pixel") {
              Value one_out =
                  nb.create<arith::CmpFOp>(nl, arith::CmpFPredicate::OLE, out_f[d], c(1));
              xo = nb.create<arith::SelectOp>(nl, one_out, c(0), xo);
            }
          }
          auto clampIndex = [&](Value fv) {
            // Clamped as a float first (maxnumf takes 0 for a NaN): the conversion is then
            // defined, and the index is inside the input whatever the coordinate was.
            fv = nb.create<arith::MinNumFOp>(nl, nb.create<arith::MaxNumFOp>(nl, fv, c(0)),
                                             nb.create<arith::SubFOp>(nl, in_f[d], c(1)));
            Value i = nb.create<arith::IndexCastOp>(
                nl, nb.getIndexType(), nb.create<arith::FPToSIOp>(nl, nb.getI64Type(), fv));
            return nb.create<arith::MaxSIOp>(nl, nb.create<arith::MinSIOp>(nl, i, in_last[d]),
                                             zero_i);
          };
          if (cubic) {
            // x = f + r with r in (0, 1] (an integral x takes r = 1): taps f-1 .. f+2.
            Value f = nb.create<math::FloorOp>(nl, xo);
            Value r = nb.create<arith::SubFOp>(nl, xo, f);
            Value integral = nb.create<arith::CmpFOp>(nl, arith::CmpFPredicate::OEQ, r, c(0));
            f = nb.create<arith::SelectOp>(nl, integral, nb.create<arith::SubFOp>(nl, f, c(1)), f);
            r = nb.create<arith::SelectOp>(nl, integral, c(1), r);
            SmallVector<Value, 4> w = cubicWeights(nb, nl, r, coeff_a);
            Value sum = c(0);
            for (int64_t k = 0; k < 4; ++k) {
              Value at = nb.create<arith::AddFOp>(nl, f, c(static_cast<double>(k - 1)));
              if (exclude_outside) {
                Value inside = nb.create<arith::AndIOp>(
                    nl, nb.create<arith::CmpFOp>(nl, arith::CmpFPredicate::OGE, at, c(0)),
                    nb.create<arith::CmpFOp>(nl, arith::CmpFPredicate::OLE, at,
                                             nb.create<arith::SubFOp>(nl, in_f[d], c(1))));
                w[k] = nb.create<arith::SelectOp>(nl, inside, w[k], c(0));
                sum = nb.create<arith::AddFOp>(nl, sum, w[k]);
              }
              taps[d].push_back(clampIndex(at));
            }
            if (exclude_outside)
              for (Value& wk : w) wk = nb.create<arith::DivFOp>(nl, wk, sum);
            weights[d] = w;
            continue;
          }
          if (!linear) {
            Value r;
            if (nearest == "floor") {
              r = nb.create<math::FloorOp>(nl, xo);
            } else if (nearest == "ceil") {
              r = nb.create<math::CeilOp>(nl, xo);
            } else {
              // Halfway cases go down (round_prefer_floor) or up (_ceil).
              Value fl = nb.create<math::FloorOp>(nl, xo);
              Value diff = nb.create<arith::SubFOp>(nl, xo, fl);
              Value up = nb.create<arith::CmpFOp>(nl,
                                                  nearest == "round_prefer_floor"
                                                      ? arith::CmpFPredicate::OGT
                                                      : arith::CmpFPredicate::OGE,
                                                  diff, half);
              r = nb.create<arith::SelectOp>(nl, up, nb.create<arith::AddFOp>(nl, fl, c(1)), fl);
            }
            lo[d] = hi[d] = clampIndex(r);
            continue;
          }
          // Linear: the coordinate clamped into the input (edge values outside).
          Value xc = nb.create<arith::MinimumFOp>(nl, nb.create<arith::MaximumFOp>(nl, xo, c(0)),
                                                  nb.create<arith::SubFOp>(nl, in_f[d], c(1)));
          Value fl = nb.create<math::FloorOp>(nl, xc);
          lo[d] = clampIndex(fl);
          hi[d] = nb.create<arith::MinSIOp>(
              nl, nb.create<arith::AddIOp>(nl, lo[d], nb.create<arith::ConstantIndexOp>(nl, 1)),
              in_last[d]);
          frac[d] = nb.create<arith::SubFOp>(nl, xc, fl);
        }
        Value result;
        if (cubic) {
          // Sum over the 4^R taps of the resized dims, weights in f64.
          SmallVector<int64_t> dims;
          for (int64_t d = 0; d < rank; ++d)
            if (resized[d]) dims.push_back(d);
          Value acc = c(0);
          for (int64_t tap = 0; tap < (int64_t(1) << (2 * dims.size())); ++tap) {
            SmallVector<Value> at(lo);
            Value weight = c(1);
            for (size_t k = 0; k < dims.size(); ++k) {
              const int64_t d = dims[k], j = (tap >> (2 * k)) & 3;
              at[d] = taps[d][j];
              weight = nb.create<arith::MulFOp>(nl, weight, weights[d][j]);
            }
            Value v = convertScalar(nb, nl, nb.create<tensor::ExtractOp>(nl, x, at), f64);
            acc = nb.create<arith::AddFOp>(nl, acc, nb.create<arith::MulFOp>(nl, v, weight));
          }
          result = convertScalar(nb, nl, acc, t);
        } else if (!linear) {
          result = nb.create<tensor::ExtractOp>(nl, x, lo);
        } else {
          // Sum over the 2^R corners of the resized dims, weights in f64.
          SmallVector<int64_t> dims;
          for (int64_t d = 0; d < rank; ++d)
            if (resized[d]) dims.push_back(d);
          Value acc = c(0);
          for (int64_t corner = 0; corner < (int64_t(1) << dims.size()); ++corner) {
            SmallVector<Value> at(lo);
            Value weight = c(1);
            for (size_t k = 0; k < dims.size(); ++k) {
              const int64_t d = dims[k];
              const bool high = (corner >> k) & 1;
              at[d] = high ? hi[d] : lo[d];
              Value wgt = high ? frac[d] : nb.create<arith::SubFOp>(nl, c(1), frac[d]).getResult();
              weight = nb.create<arith::MulFOp>(nl, weight, wgt);
            }
            Value v = convertScalar(nb, nl, nb.create<tensor::ExtractOp>(nl, x, at), f64);
            acc = nb.create<arith::AddFOp>(nl, acc, nb.create<arith::MulFOp>(nl, v, weight));
          }
          result = convertScalar(nb, nl, acc, t);
        }
        return result;
      });
  n.setOutput(0, y);
  return success();
}

// OneHot: out[..., j, ...] = values[1] where the index (negative ones count from depth) is j,
// values[0] elsewhere; j runs over the new dim at `axis`.
LogicalResult convertOneHot(NodeContext& n) {
  OpBuilder& b = n.b();
  Location loc = n.loc();
  const int64_t rank = n.rank(0) + 1;
  FailureOr<int64_t> axis = n.axis(n.i("axis", -1), rank);
  if (failed(axis)) return failure();
  if (!hasOneElement(n.type(1))) return n.error("depth must have one element");
  if (n.rank(2) != 1 || n.type(2).isDynamicDim(0) || n.type(2).getDimSize(0) != 2)
    return n.error("values must be [off_value, on_value]");
  OpFoldResult depth;
  if (auto e = n.shapeElems(1)) {
    depth = (*e)[0];
  } else if (auto s = n.constScalar(1)) {
    const CheckedInt d = CheckedInt::fromDouble(std::trunc(*s));
    if (!d.within(1, kMaxSize))
      return n.error("depth " + std::to_string(*s) + " must be in [1, 2^48]");
    depth = b.getIndexAttr(d.value());
  } else {
    // A float depth read at run time (truncated, as the reference's int()), in range before it
    // is converted.
    Value v = n.value(1);
    SmallVector<Value> at(n.rank(1), b.create<arith::ConstantIndexOp>(loc, 0));
    Value f = convertScalar(b, loc, b.create<tensor::ExtractOp>(loc, v, at), b.getF64Type());
    Value fits = b.create<arith::AndIOp>(
        loc,
        b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGE, f,
                                scalarConstant(b, loc, b.getF64Type(), 1)),
        b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLT, f,
                                scalarConstant(b, loc, b.getF64Type(), kMaxSize + 1.0)));
    runtimeCheck(b, loc, fits, "OneHot: depth must be in [1, 2^48]");
    f = b.create<arith::SelectOp>(loc, fits, f, scalarConstant(b, loc, b.getF64Type(), 1));
    depth = fold(b.create<arith::IndexCastOp>(loc, b.getIndexType(),
                                              b.create<arith::FPToSIOp>(loc, b.getI64Type(), f)));
  }
  if (auto c = constantIndex(depth); c && (*c < 1 || *c > kMaxSize))
    return n.error("depth " + std::to_string(*c) + " must be in [1, 2^48]");
  if (!constantIndex(depth)) {
    Value ok = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, idx(b, loc, depth),
                                       b.create<arith::ConstantIndexOp>(loc, 1));
    runtimeCheck(b, loc, ok, "OneHot: depth must be positive");
  }
  Type it = n.elementType(0), t = n.elementType(2);
  Value indices = n.value(0), values = n.value(2);
  SmallVector<OpFoldResult> in = dimsOf(b, loc, indices), out(in);
  out.insert(out.begin() + *axis, depth);
  SmallVector<AffineExpr> ie;
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis) ie.push_back(b.getAffineDimExpr(d));
  Value c0 = b.create<arith::ConstantIndexOp>(loc, 0),
        c1 = b.create<arith::ConstantIndexOp>(loc, 1);
  Value off = b.create<tensor::ExtractOp>(loc, values, ValueRange{c0});
  Value on = b.create<tensor::ExtractOp>(loc, values, ValueRange{c1});
  Value depth_v = idx(b, loc, depth);
  Value empty = emptyTensor(b, loc, out, t);
  const int64_t ax = *axis;
  Value y = generate(
      b, loc, empty, ValueRange{indices}, {AffineMap::get(rank, 0, ie, b.getContext())},
      [&](OpBuilder& nb, Location nl, ValueRange a) -> Value {
        Value i = a[0];
        // Float indices are truncated, as the reference's astype(int64) (NaN and values beyond
        // int64 become INT64_MIN, as there).
        if (isFloat(it)) i = convertScalar(nb, nl, i, nb.getI64Type());
        i = nb.create<arith::IndexCastOp>(nl, nb.getIndexType(), i);
        Value neg = nb.create<arith::CmpIOp>(nl, arith::CmpIPredicate::slt, i,
                                             nb.create<arith::ConstantIndexOp>(nl, 0));
        i = nb.create<arith::SelectOp>(nl, neg, nb.create<arith::AddIOp>(nl, i, depth_v), i);
        Value j = nb.create<linalg::IndexOp>(nl, ax);
        Value hit = nb.create<arith::CmpIOp>(nl, arith::CmpIPredicate::eq, i, j);
        return nb.create<arith::SelectOp>(nl, hit, on, off);
      });
  n.setOutput(0, y);
  return success();
}

}  // namespace

void addShapeOps(Registry& r) {
  r["Constant"] = {convertConstant,
                   {"value", "value_float", "value_floats", "value_int", "value_ints"}};
  r["ConstantOfShape"] = {convertConstantOfShape, {"value"}};
  r["Shape"] = {convertShape, {"start", "end"}};
  r["Size"] = {convertSize, {}};
  r["Range"] = {convertRange, {}};
  for (const char* op : {"HannWindow", "HammingWindow", "BlackmanWindow"})
    r[op] = {convertWindow, {"output_datatype", "periodic"}};
  r["Reshape"] = {convertReshape, {"allowzero"}};
  r["Flatten"] = {convertFlatten, {"axis"}};
  r["Squeeze"] = {convertSqueeze, {"axes"}};
  r["Unsqueeze"] = {convertUnsqueeze, {"axes"}};
  r["Transpose"] = {convertTranspose, {"perm"}};
  r["Expand"] = {convertExpand, {}};
  r["Concat"] = {convertConcat, {"axis"}};
  r["Slice"] = {convertSlice, {"starts", "ends", "axes"}};
  r["Split"] = {convertSplit, {"axis", "split"}};
  r["Gather"] = {convertGather, {"axis"}};
  r["GatherElements"] = {convertGatherElements, {"axis"}};
  r["GatherND"] = {convertGatherND, {"batch_dims"}};
  r["Scatter"] = {convertScatterElements, {"axis"}};
  r["ScatterElements"] = {convertScatterElements, {"axis", "reduction"}};
  r["ScatterND"] = {convertScatterND, {"reduction"}};
  r["Pad"] = {convertPad, {"mode", "pads", "value"}};
  r["Tile"] = {convertTile, {}};
  r["OneHot"] = {convertOneHot, {"axis"}};
  r["Resize"] = {convertResize,
                 {"mode", "coordinate_transformation_mode", "nearest_mode", "exclude_outside",
                  "cubic_coeff_a", "extrapolation_value"}};
  r["Upsample"] = {convertResize, {"mode", "scales"}};
  r["Trilu"] = {convertTrilu, {"upper"}};
  r["EyeLike"] = {convertEyeLike, {"dtype", "k"}};
  r["DepthToSpace"] = {convertDepthSpace, {"blocksize", "mode"}};
  r["SpaceToDepth"] = {convertDepthSpace, {"blocksize"}};
}

}  // namespace onnx
}  // namespace disc_ral
}  // namespace mlir
