// ONNX operators that cut or pad tensors: Slice, Split and Pad, with starts, ends, steps and pads
// known at import time or only when the module runs.
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

namespace {

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

}  // namespace

void addSliceOps(Registry& r) {
  r["Slice"] = {convertSlice, {"starts", "ends", "axes"}};
  r["Split"] = {convertSplit, {"axis", "split"}};
  r["Pad"] = {convertPad, {"mode", "pads", "value"}};
}

}  // namespace onnx
}  // namespace disc_ral
}  // namespace mlir
