// The importer's tensor-level building blocks (builders.h).
#include "compiler_passes/onnx/builders.h"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "compiler_passes/onnx/checked_int.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Diagnostics.h"

namespace mlir {
namespace disc_ral {
namespace onnx {

SmallVector<OpFoldResult> dimsOf(OpBuilder& b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  SmallVector<OpFoldResult> dims;
  for (int64_t d = 0; d < type.getRank(); ++d) dims.push_back(dimOf(b, loc, tensor, d));
  return dims;
}

OpFoldResult dimOf(OpBuilder& b, Location loc, Value tensor, int64_t d) {
  auto type = cast<RankedTensorType>(tensor.getType());
  if (!type.isDynamicDim(d)) return b.getIndexAttr(type.getDimSize(d));
  return b.create<tensor::DimOp>(loc, tensor, d).getResult();
}

SmallVector<int64_t> staticSizes(ArrayRef<OpFoldResult> dims) {
  SmallVector<int64_t> sizes;
  for (OpFoldResult d : dims) sizes.push_back(constantIndex(d).value_or(ShapedType::kDynamic));
  return sizes;
}

std::optional<int64_t> constantIndex(OpFoldResult v) { return getConstantIntValue(v); }

bool sameDim(OpFoldResult x, OpFoldResult y) {
  auto cx = constantIndex(x), cy = constantIndex(y);
  if (cx || cy) return cx == cy;
  Value vx = cast<Value>(x), vy = cast<Value>(y);
  if (vx == vy) return true;
  auto dx = vx.getDefiningOp<tensor::DimOp>(), dy = vy.getDefiningOp<tensor::DimOp>();
  return dx && dy && dx.getSource() == dy.getSource() && dx.getConstantIndex() &&
         dx.getConstantIndex() == dy.getConstantIndex();
}

namespace {

// A placeholder for a size whose import-time arithmetic failed: the node fails (its error is
// emitted), so the value is never used, but building may go on without dividing by it.
OpFoldResult failedSize(OpBuilder& b, Location loc, const llvm::Twine& what) {
  emitError(loc) << what;
  return b.getIndexAttr(0);
}

Value cmp(OpBuilder& b, Location loc, arith::CmpIPredicate p, Value x, Value y) {
  return b.create<arith::CmpIOp>(loc, p, x, y);
}

std::string text(OpFoldResult v) {
  if (auto c = constantIndex(v)) return std::to_string(*c);
  return "?";
}

constexpr llvm::StringLiteral kOverflow =
    "a size computed from the model or its inputs overflows int64";

}  // namespace

// The run-time forms: the wrapped result, and a check that it did not wrap (two's complement:
// a sum wrapped when both operands' signs differ from the result's, a difference when x's sign
// differs from y's and from the result's, a product when the high half of the 128-bit product is
// not the low half's sign).
namespace {

OpFoldResult addOrSubtract(OpBuilder& b, Location loc, OpFoldResult x, OpFoldResult y,
                           bool subtract) {
  auto cx = constantIndex(x), cy = constantIndex(y);
  if (cy == 0) return x;
  if (cx == 0 && !subtract) return y;
  if (cx && cy) {
    CheckedInt r = subtract ? CheckedInt(*cx) - *cy : CheckedInt(*cx) + *cy;
    if (!r.valid())
      return failedSize(
          b, loc, llvm::Twine(kOverflow) + ": " + text(x) + (subtract ? " - " : " + ") + text(y));
    return b.getIndexAttr(r.value());
  }
  Value xv = indexValue(b, loc, x), yv = indexValue(b, loc, y);
  Value r = subtract ? b.create<arith::SubIOp>(loc, xv, yv).getResult()
                     : b.create<arith::AddIOp>(loc, xv, yv).getResult();
  Value signs = b.create<arith::AndIOp>(loc, b.create<arith::XOrIOp>(loc, xv, subtract ? yv : r),
                                        b.create<arith::XOrIOp>(loc, subtract ? xv : yv, r));
  runtimeCheck(
      b, loc,
      cmp(b, loc, arith::CmpIPredicate::sge, signs, b.create<arith::ConstantIndexOp>(loc, 0)),
      kOverflow);
  return r;
}

}  // namespace

OpFoldResult addIndex(OpBuilder& b, Location loc, OpFoldResult x, OpFoldResult y) {
  return addOrSubtract(b, loc, x, y, false);
}

OpFoldResult subIndex(OpBuilder& b, Location loc, OpFoldResult x, OpFoldResult y) {
  return addOrSubtract(b, loc, x, y, true);
}

OpFoldResult mulIndex(OpBuilder& b, Location loc, OpFoldResult x, OpFoldResult y) {
  auto cx = constantIndex(x), cy = constantIndex(y);
  if (cx == 1) return y;
  if (cy == 1) return x;
  if (cx == 0 || cy == 0) return b.getIndexAttr(0);
  if (cx && cy) {
    CheckedInt r = CheckedInt(*cx) * *cy;
    if (!r.valid())
      return failedSize(b, loc, llvm::Twine(kOverflow) + ": " + text(x) + " * " + text(y));
    return b.getIndexAttr(r.value());
  }
  Type i64 = b.getI64Type();
  Value xv = b.create<arith::IndexCastOp>(loc, i64, indexValue(b, loc, x));
  Value yv = b.create<arith::IndexCastOp>(loc, i64, indexValue(b, loc, y));
  auto wide = b.create<arith::MulSIExtendedOp>(loc, xv, yv);
  Value sign =
      b.create<arith::ShRSIOp>(loc, wide.getLow(), b.create<arith::ConstantIntOp>(loc, 63, 64));
  runtimeCheck(b, loc, cmp(b, loc, arith::CmpIPredicate::eq, wide.getHigh(), sign), kOverflow);
  return b.create<arith::IndexCastOp>(loc, b.getIndexType(), wide.getLow()).getResult();
}

namespace {

// x / y rounded down (floor) or up; the divisor checked at run time: not 0, and not -1 with
// INT64_MIN (both trap).
OpFoldResult divIndex(OpBuilder& b, Location loc, OpFoldResult x, OpFoldResult y, bool ceil) {
  auto cx = constantIndex(x), cy = constantIndex(y);
  if (cy == 1) return x;
  if (cx && cy) {
    CheckedInt r = ceil ? CheckedInt::ceilDiv(*cx, *cy) : CheckedInt::floorDiv(*cx, *cy);
    if (!r.valid())
      return failedSize(b, loc,
                        "a size computed from the model divides " + text(x) + " by " + text(y));
    return b.getIndexAttr(r.value());
  }
  Value xv = indexValue(b, loc, x), yv = indexValue(b, loc, y);
  if (!cy || *cy <= 0) {
    Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
    Value minus1 = b.create<arith::ConstantIndexOp>(loc, -1);
    Value min = b.create<arith::ConstantIndexOp>(loc, INT64_MIN);
    Value bad = b.create<arith::OrIOp>(
        loc, cmp(b, loc, arith::CmpIPredicate::eq, yv, zero),
        b.create<arith::AndIOp>(loc, cmp(b, loc, arith::CmpIPredicate::eq, yv, minus1),
                                cmp(b, loc, arith::CmpIPredicate::eq, xv, min)));
    runtimeCheck(b, loc,
                 b.create<arith::XOrIOp>(loc, bad, b.create<arith::ConstantIntOp>(loc, 1, 1)),
                 "a size computed from the model's inputs divides by 0 or overflows int64");
    // Never a trapping division, even on the path the check leaves.
    yv = b.create<arith::SelectOp>(loc, bad, b.create<arith::ConstantIndexOp>(loc, 1), yv);
  }
  if (ceil) return b.create<arith::CeilDivSIOp>(loc, xv, yv).getResult();
  return b.create<arith::FloorDivSIOp>(loc, xv, yv).getResult();
}

}  // namespace

OpFoldResult floorDivIndex(OpBuilder& b, Location loc, OpFoldResult x, OpFoldResult y) {
  return divIndex(b, loc, x, y, false);
}

OpFoldResult ceilDivIndex(OpBuilder& b, Location loc, OpFoldResult x, OpFoldResult y) {
  return divIndex(b, loc, x, y, true);
}

OpFoldResult product(OpBuilder& b, Location loc, ArrayRef<OpFoldResult> xs) {
  OpFoldResult p = b.getIndexAttr(1);
  for (OpFoldResult x : xs) p = mulIndex(b, loc, p, x);
  return p;
}

Value indexValue(OpBuilder& b, Location loc, OpFoldResult v) {
  if (auto c = constantIndex(v)) return b.create<arith::ConstantIndexOp>(loc, *c);
  return cast<Value>(v);
}

OpFoldResult wrapToType(OpBuilder& b, Location loc, OpFoldResult v, Type t) {
  const unsigned width = t.getIntOrFloatBitWidth();
  if (width >= 64) return v;
  if (auto c = constantIndex(v))
    return b.getIndexAttr(APInt(64, static_cast<uint64_t>(*c), true).trunc(width).getSExtValue());
  Value narrow = b.create<arith::IndexCastOp>(loc, t, cast<Value>(v));
  return b.create<arith::IndexCastOp>(loc, b.getIndexType(), narrow).getResult();
}

bool isDimOfTensor(OpFoldResult v) {
  auto value = dyn_cast<Value>(v);
  return value && value.getDefiningOp<tensor::DimOp>();
}

LogicalResult checkSize(OpBuilder& b, Location loc, OpFoldResult v, const llvm::Twine& what) {
  if (auto c = constantIndex(v)) {
    if (*c >= 0 && *c <= kMaxSize) return success();
    emitError(loc) << what << " is " << *c
                   << (*c < 0 ? " (negative)" : " (beyond the limit of 2^48 elements)");
    return failure();
  }
  if (isDimOfTensor(v)) return success();  // a dim of a tensor that exists is one
  Value x = cast<Value>(v);
  Value ok = b.create<arith::AndIOp>(
      loc, cmp(b, loc, arith::CmpIPredicate::sge, x, b.create<arith::ConstantIndexOp>(loc, 0)),
      cmp(b, loc, arith::CmpIPredicate::sle, x, b.create<arith::ConstantIndexOp>(loc, kMaxSize)));
  runtimeCheck(b, loc, ok, (what + " is negative or beyond the limit of 2^48 elements").str());
  return success();
}

LogicalResult checkDims(OpBuilder& b, Location loc, ArrayRef<OpFoldResult> dims,
                        const llvm::Twine& what, bool count) {
  bool ok = true;
  for (size_t d = 0; d < dims.size(); ++d)
    ok &= succeeded(checkSize(b, loc, dims[d], what + " dim " + llvm::Twine(d)));
  // The element count of a static shape costs nothing to check; a run-time one is checked
  // when asked (a view allocates nothing that would check it later).
  const bool all_static = llvm::all_of(dims, [](OpFoldResult d) { return constantIndex(d); });
  if (ok && (count || all_static) && dims.size() > 1)
    ok = succeeded(checkSize(b, loc, product(b, loc, dims), what + " element count"));
  return success(ok);
}

void runtimeCheck(OpBuilder& b, Location loc, Value ok, llvm::StringRef message) {
  if (auto c = getConstantIntValue(ok); c && *c != 0) return;
  b.create<cf::AssertOp>(loc, ok, nodeMessage(loc, message));
}

std::string nodeMessage(Location loc, llvm::StringRef message) {
  auto name = dyn_cast<NameLoc>(loc);
  if (!name || !name.getName().getValue().starts_with("node '")) return message.str();
  llvm::StringRef label = name.getName().getValue();
  // "node 'x' (Reshape)": a message's own "Reshape: " prefix would say it twice.
  llvm::StringRef op = label.rsplit(" (").second.drop_back();
  llvm::StringRef rest = message;
  if (!op.empty() && rest.starts_with(op) && rest.drop_front(op.size()).starts_with(": "))
    rest = rest.drop_front(op.size() + 2);
  return (label + ": " + rest).str();
}

Value emptyTensor(OpBuilder& b, Location loc, ArrayRef<OpFoldResult> dims, Type element) {
  if (failed(checkDims(b, loc, dims, "a result", false))) {
    // The node fails; a valid placeholder keeps the rest of its conversion well-formed.
    SmallVector<OpFoldResult> zeros(dims.size(), b.getIndexAttr(0));
    return b.create<tensor::EmptyOp>(loc, zeros, element);
  }
  return b.create<tensor::EmptyOp>(loc, dims, element);
}

Value intConstant(OpBuilder& b, Location loc, Type type, int64_t v) {
  if (type.isIndex()) return b.create<arith::ConstantIndexOp>(loc, v);
  // Wrapped to the type's width, as a cast of the int64 value would.
  return b.create<arith::ConstantOp>(
      loc,
      b.getIntegerAttr(
          type, APInt(64, static_cast<uint64_t>(v), true).trunc(type.getIntOrFloatBitWidth())));
}

TypedAttr scalarAttr(OpBuilder& b, Type type, double v) {
  if (auto f = dyn_cast<FloatType>(type)) return b.getFloatAttr(f, v);
  if (type.isInteger(1)) return b.getIntegerAttr(type, v != 0 ? 1 : 0);
  if (type.isIndex()) return b.getIndexAttr(static_cast<int64_t>(v));
  return b.getIntegerAttr(type, static_cast<int64_t>(v));
}

Value scalarConstant(OpBuilder& b, Location loc, Type type, double v) {
  return b.create<arith::ConstantOp>(loc, scalarAttr(b, type, v));
}

Value filled(OpBuilder& b, Location loc, ArrayRef<OpFoldResult> dims, Value scalar) {
  Value empty = emptyTensor(b, loc, dims, scalar.getType());
  return b.create<linalg::FillOp>(loc, ValueRange{scalar}, ValueRange{empty}).getResult(0);
}

SmallVector<OpFoldResult> broadcastDims(OpBuilder& b, Location loc, ValueRange inputs) {
  int64_t rank = 0;
  for (Value v : inputs) rank = std::max(rank, cast<RankedTensorType>(v.getType()).getRank());
  SmallVector<OpFoldResult> dims;
  for (int64_t d = 0; d < rank; ++d) {
    std::optional<OpFoldResult> chosen;
    std::optional<OpFoldResult> dynamic;
    for (Value v : inputs) {
      auto type = cast<RankedTensorType>(v.getType());
      const int64_t j = d - (rank - type.getRank());
      if (j < 0) continue;
      if (!type.isDynamicDim(j)) {
        if (type.getDimSize(j) != 1 && !chosen) chosen = b.getIndexAttr(type.getDimSize(j));
      } else if (!dynamic) {
        dynamic = dimOf(b, loc, v, j);
      }
    }
    dims.push_back(chosen ? *chosen : dynamic ? *dynamic : OpFoldResult(b.getIndexAttr(1)));
  }
  return dims;
}

std::optional<std::string> broadcastError(ValueRange inputs) {
  int64_t rank = 0;
  for (Value v : inputs) rank = std::max(rank, cast<RankedTensorType>(v.getType()).getRank());
  for (int64_t d = 0; d < rank; ++d) {
    int64_t seen = 1;
    for (Value v : inputs) {
      auto type = cast<RankedTensorType>(v.getType());
      const int64_t j = d - (rank - type.getRank());
      if (j < 0 || type.isDynamicDim(j) || type.getDimSize(j) == 1) continue;
      if (seen != 1 && seen != type.getDimSize(j))
        return "shapes do not broadcast: " + std::to_string(seen) + " vs " +
               std::to_string(type.getDimSize(j)) + " in dim " + std::to_string(d) +
               " of the broadcast shape";
      seen = type.getDimSize(j);
    }
  }
  return std::nullopt;
}

// Why `inputs` do not broadcast to `dims` (numpy's rule, one way: no input may grow the result),
// or nullopt when they may; dims known only at run time are checked then.
std::optional<std::string> broadcastToError(ValueRange inputs, ArrayRef<OpFoldResult> dims) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  for (Value v : inputs) {
    auto type = cast<RankedTensorType>(v.getType());
    if (type.getRank() > rank)
      return "an operand of rank " + std::to_string(type.getRank()) +
             " does not broadcast to a result of rank " + std::to_string(rank);
    for (int64_t j = 0; j < type.getRank(); ++j) {
      const int64_t d = j + rank - type.getRank();
      std::optional<int64_t> out = constantIndex(dims[d]);
      if (type.isDynamicDim(j) || type.getDimSize(j) == 1 || !out) continue;
      if (type.getDimSize(j) != *out)
        return "shapes do not broadcast: " + std::to_string(type.getDimSize(j)) +
               " vs the result's " + std::to_string(*out) + " in dim " + std::to_string(d);
    }
  }
  return std::nullopt;
}

Value elementwise(OpBuilder& b, Location loc, ValueRange inputs, Type result,
                  const ScalarBody& body, std::optional<ArrayRef<OpFoldResult>> given) {
  // Shapes that cannot broadcast fail the node here, whatever its converter checked: the
  // generic below would not verify.
  std::optional<std::string> why =
      given ? broadcastToError(inputs, *given) : broadcastError(inputs);
  if (why) {
    emitError(loc) << *why;
    size_t rank = given ? given->size() : 0;
    for (Value v : inputs)
      rank = std::max(rank, static_cast<size_t>(cast<RankedTensorType>(v.getType()).getRank()));
    return emptyTensor(b, loc, SmallVector<OpFoldResult>(rank, b.getIndexAttr(0)), result);
  }
  SmallVector<OpFoldResult> dims =
      given ? SmallVector<OpFoldResult>(*given) : broadcastDims(b, loc, inputs);
  const int64_t rank = static_cast<int64_t>(dims.size());
  SmallVector<AffineMap> maps;
  for (Value v : inputs) {
    auto type = cast<RankedTensorType>(v.getType());
    SmallVector<AffineExpr> exprs;
    for (int64_t j = 0; j < type.getRank(); ++j) {
      const int64_t d = j + rank - type.getRank();
      std::optional<int64_t> out = constantIndex(dims[d]);
      if (!type.isDynamicDim(j) && type.getDimSize(j) == 1 && out != 1) {
        exprs.push_back(b.getAffineConstantExpr(0));  // broadcast
        continue;
      }
      exprs.push_back(b.getAffineDimExpr(d));
      // A dynamic dim of size 1 against a larger one would need a broadcast decided at run
      // time; it fails the execution instead of reading out of bounds.
      if (type.isDynamicDim(j) || !out) {
        OpFoldResult in = dimOf(b, loc, v, j);
        if (!sameDim(in, dims[d])) {
          Value eq = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, indexValue(b, loc, in),
                                             indexValue(b, loc, dims[d]));
          runtimeCheck(b, loc, eq,
                       "shapes do not broadcast (a dynamic dim of size 1 broadcast at run time "
                       "is not supported)");
        }
      }
    }
    maps.push_back(AffineMap::get(rank, 0, exprs, b.getContext()));
  }
  return generate(b, loc, emptyTensor(b, loc, dims, result), inputs, maps, body);
}

Value generate(OpBuilder& b, Location loc, Value init, ValueRange inputs,
               ArrayRef<AffineMap> input_maps, const ScalarBody& body) {
  const int64_t rank = cast<RankedTensorType>(init.getType()).getRank();
  SmallVector<AffineMap> maps(input_maps);
  maps.push_back(b.getMultiDimIdentityMap(rank));
  return b
      .create<linalg::GenericOp>(
          loc, TypeRange{init.getType()}, inputs, ValueRange{init}, maps,
          SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
          [&](OpBuilder& nb, Location nl, ValueRange args) {
            nb.create<linalg::YieldOp>(nl, body(nb, nl, args.drop_back()));
          })
      .getResult(0);
}

Value reduce(OpBuilder& b, Location loc, Value input, ArrayRef<int64_t> axes, TypedAttr init,
             const std::function<Value(OpBuilder&, Location, Value, Value)>& combine,
             bool keepdims) {
  auto type = cast<RankedTensorType>(input.getType());
  const int64_t rank = type.getRank();
  SmallVector<OpFoldResult> in_dims = dimsOf(b, loc, input);
  SmallVector<OpFoldResult> out_dims, kept_dims;
  SmallVector<AffineExpr> out_exprs;
  SmallVector<utils::IteratorType> iterators;
  for (int64_t d = 0; d < rank; ++d) {
    const bool reduced = llvm::is_contained(axes, d);
    iterators.push_back(reduced ? utils::IteratorType::reduction : utils::IteratorType::parallel);
    if (reduced) {
      kept_dims.push_back(b.getIndexAttr(1));
      continue;
    }
    out_dims.push_back(in_dims[d]);
    kept_dims.push_back(in_dims[d]);
    out_exprs.push_back(b.getAffineDimExpr(d));
  }
  Value init_value = b.create<arith::ConstantOp>(loc, init);
  Value acc = filled(b, loc, out_dims, init_value);
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(rank),
                                 AffineMap::get(rank, 0, out_exprs, b.getContext())};
  auto generic = b.create<linalg::GenericOp>(
      loc, TypeRange{acc.getType()}, ValueRange{input}, ValueRange{acc}, maps, iterators,
      [&](OpBuilder& nb, Location nl, ValueRange args) {
        nb.create<linalg::YieldOp>(nl, combine(nb, nl, args[1], args[0]));
      });
  Value out = generic.getResult(0);
  return keepdims ? reshape(b, loc, out, kept_dims) : out;
}

Value reshape(OpBuilder& b, Location loc, Value input, ArrayRef<OpFoldResult> dims) {
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> sizes = staticSizes(dims);
  if (static_cast<int64_t>(dims.size()) == type.getRank()) {
    SmallVector<OpFoldResult> own = dimsOf(b, loc, input);
    bool same = true;
    for (size_t d = 0; d < dims.size(); ++d) same &= sameDim(own[d], dims[d]);
    if (same) return input;
  }
  Type element = type.getElementType();
  if (failed(checkDims(b, loc, dims, "a reshaped", true)))
    return emptyTensor(b, loc, SmallVector<OpFoldResult>(dims.size(), b.getIndexAttr(0)), element);
  // Two or more dynamic dims in the result: tensor.reshape with the shape as a tensor (MLIR 19's
  // expand_shape cannot be bufferized with more than one dynamic dim in a group). The shape is
  // then a host buffer, which GPU devices refuse with an error naming it.
  if (llvm::count_if(sizes, [](int64_t s) { return ShapedType::isDynamic(s); }) > 1) {
    SmallVector<Value> values;
    for (OpFoldResult d : dims) values.push_back(indexValue(b, loc, d));
    Value shape = b.create<tensor::FromElementsOp>(
        loc, RankedTensorType::get({static_cast<int64_t>(values.size())}, b.getIndexType()),
        values);
    return b.create<tensor::ReshapeOp>(loc, RankedTensorType::get(sizes, element), input, shape);
  }
  // Through one dimension: collapse_shape to [numel], expand_shape to `dims`. Both are views
  // (no shape buffer), so device programs have nothing on the host.
  Value flat = input;
  if (type.getRank() == 0) {
    flat = b.create<tensor::ExpandShapeOp>(loc, RankedTensorType::get({1}, element), input,
                                           ArrayRef<ReassociationIndices>{},
                                           ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
  } else if (type.getRank() > 1) {
    ReassociationIndices all;
    for (int64_t d = 0; d < type.getRank(); ++d) all.push_back(d);
    flat = b.create<tensor::CollapseShapeOp>(loc, input, ArrayRef<ReassociationIndices>{all});
  }
  // The flat size static exactly when every target dim is (expand_shape's rule).
  const bool static_target =
      llvm::none_of(sizes, [](int64_t s) { return ShapedType::isDynamic(s); });
  int64_t count = 1;
  for (int64_t s : sizes)
    if (static_target && __builtin_mul_overflow(count, s, &count)) {
      // Only after an overflow was already reported where the sizes were computed.
      emitError(loc) << "a reshape's element count overflows int64";
      return emptyTensor(b, loc, dims, element);
    }
  auto flat_type = RankedTensorType::get({static_target ? count : ShapedType::kDynamic}, element);
  // Static counts that differ: the run-time check a caller emitted would fail every execution
  // (a Squeeze of a constant [4] by axes read at run time); an error now, never a wrong cast.
  const int64_t have = cast<RankedTensorType>(flat.getType()).getDimSize(0);
  if (static_target && !ShapedType::isDynamic(have) && have != count) {
    emitError(loc) << "cannot reshape " << have << " elements to a shape of " << count;
    return emptyTensor(b, loc, dims, element);
  }
  if (flat.getType() != flat_type) flat = b.create<tensor::CastOp>(loc, flat_type, flat);
  if (dims.empty())
    return b.create<tensor::CollapseShapeOp>(loc, RankedTensorType::get({}, element), flat,
                                             ArrayRef<ReassociationIndices>{});
  if (dims.size() == 1) return flat;
  ReassociationIndices group;
  SmallVector<OpFoldResult> output_shape;  // constants as attributes, as the result type has them
  for (size_t d = 0; d < dims.size(); ++d) {
    group.push_back(static_cast<int64_t>(d));
    output_shape.push_back(
        ShapedType::isDynamic(sizes[d]) ? dims[d] : OpFoldResult(b.getIndexAttr(sizes[d])));
  }
  return b.create<tensor::ExpandShapeOp>(loc, RankedTensorType::get(sizes, element), flat,
                                         ArrayRef<ReassociationIndices>{group}, output_shape);
}

Value transpose(OpBuilder& b, Location loc, Value input, ArrayRef<int64_t> perm) {
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity &= perm[i] == static_cast<int64_t>(i);
  if (identity) return input;
  SmallVector<OpFoldResult> in_dims = dimsOf(b, loc, input), out_dims;
  for (int64_t p : perm) out_dims.push_back(in_dims[p]);
  Value init =
      emptyTensor(b, loc, out_dims, cast<RankedTensorType>(input.getType()).getElementType());
  return b.create<linalg::TransposeOp>(loc, input, init, perm).getResult()[0];
}

Value convertScalar(OpBuilder& b, Location loc, Value v, Type to) {
  return convertScalar(b, loc, v, to, false, false);
}

Value convertScalar(OpBuilder& b, Location loc, Value v, Type to, bool from_unsigned,
                    bool to_unsigned) {
  Type from = v.getType();
  if (from == to) return v;
  if (to.isInteger(1)) {
    if (isFloat(from))
      return b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNE, v,
                                     scalarConstant(b, loc, from, 0));
    return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, v,
                                   scalarConstant(b, loc, from, 0));
  }
  if (isFloat(from) && isFloat(to)) {
    if (from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth())
      return b.create<arith::ExtFOp>(loc, to, v);
    if (from.getIntOrFloatBitWidth() > to.getIntOrFloatBitWidth())
      return b.create<arith::TruncFOp>(loc, to, v);
    // f16 <-> bf16: through f32.
    Value wide = b.create<arith::ExtFOp>(loc, b.getF32Type(), v);
    return b.create<arith::TruncFOp>(loc, to, wide);
  }
  if (isFloat(from)) {
    // numpy's astype on x86: truncated; NaN and values outside int32 (int64 for int64) become
    // its minimum, and narrower types take the low bits of the int32. LLVM's fptosi would give
    // an undefined value there instead.
    const unsigned width = to.getIntOrFloatBitWidth();
    Type via = width > 32 || to_unsigned ? b.getI64Type() : b.getI32Type();
    const unsigned via_width = via.getIntOrFloatBitWidth();
    Value wide =
        from.getIntOrFloatBitWidth() < 64 ? b.create<arith::ExtFOp>(loc, b.getF64Type(), v) : v;
    Type f64 = wide.getType();
    // [-2^(w-1), 2^(w-1)) holds exactly the doubles that truncate into the type.
    const double limit = std::ldexp(1.0, static_cast<int>(via_width) - 1);
    Value in_range = b.create<arith::AndIOp>(
        loc,
        b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGE, wide,
                                b.create<arith::ConstantOp>(loc, b.getFloatAttr(f64, -limit))),
        b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLT, wide,
                                b.create<arith::ConstantOp>(loc, b.getFloatAttr(f64, limit))));
    Value safe = b.create<arith::SelectOp>(
        loc, in_range, wide, b.create<arith::ConstantOp>(loc, b.getFloatAttr(f64, -limit)));
    Value r = b.create<arith::FPToSIOp>(loc, via, safe);
    return via == to ? r : b.create<arith::TruncIOp>(loc, to, r).getResult();
  }
  if (isFloat(to)) {
    if (from.isInteger(1) || from_unsigned) return b.create<arith::UIToFPOp>(loc, to, v);
    return b.create<arith::SIToFPOp>(loc, to, v);
  }
  if (from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth()) {
    if (from.isInteger(1) || from_unsigned) return b.create<arith::ExtUIOp>(loc, to, v);
    return b.create<arith::ExtSIOp>(loc, to, v);
  }
  return b.create<arith::TruncIOp>(loc, to, v);
}

Value convertTensor(OpBuilder& b, Location loc, Value v, Type to) {
  return convertTensor(b, loc, v, to, false, false);
}

Value convertTensor(OpBuilder& b, Location loc, Value v, Type to, bool from_unsigned,
                    bool to_unsigned) {
  if (cast<RankedTensorType>(v.getType()).getElementType() == to) return v;
  return elementwise(b, loc, {v}, to, [&](OpBuilder& nb, Location nl, ValueRange args) {
    return convertScalar(nb, nl, args[0], to, from_unsigned, to_unsigned);
  });
}

Value floatActivation(OpBuilder& b, Location loc, llvm::StringRef op, Value x, double alpha,
                      double beta) {
  Type t = x.getType();
  auto c = [&](double v) { return scalarConstant(b, loc, t, v); };
  if (op == "Relu") return b.create<arith::MaximumFOp>(loc, x, c(0));
  if (op == "Sigmoid") {
    Value e = b.create<math::ExpOp>(loc, b.create<arith::NegFOp>(loc, x));
    return b.create<arith::DivFOp>(loc, c(1), b.create<arith::AddFOp>(loc, c(1), e));
  }
  if (op == "Tanh") return b.create<math::TanhOp>(loc, x);
  if (op == "Softsign") {
    Value d = b.create<arith::AddFOp>(loc, c(1), b.create<math::AbsFOp>(loc, x));
    return b.create<arith::DivFOp>(loc, x, d);
  }
  if (op == "Softplus") {
    // log(1 + exp(x)) = max(x, 0) + log1p(exp(-|x|)): no overflow for large x.
    Value m = b.create<arith::MaximumFOp>(loc, x, c(0));
    Value e =
        b.create<math::ExpOp>(loc, b.create<arith::NegFOp>(loc, b.create<math::AbsFOp>(loc, x)));
    return b.create<arith::AddFOp>(loc, m, b.create<math::Log1pOp>(loc, e));
  }
  if (op == "ThresholdedRelu") {
    Value above = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT, x, c(alpha));
    return b.create<arith::SelectOp>(loc, above, x, c(0));
  }
  if (op == "LeakyRelu") {
    Value neg = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLT, x, c(0));
    return b.create<arith::SelectOp>(loc, neg, b.create<arith::MulFOp>(loc, x, c(alpha)), x);
  }
  if (op == "Elu") {
    Value neg = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLE, x, c(0));
    Value em1 = b.create<math::ExpM1Op>(loc, x);
    return b.create<arith::SelectOp>(loc, neg, b.create<arith::MulFOp>(loc, em1, c(alpha)), x);
  }
  if (op == "HardSigmoid") {
    Value v = b.create<arith::AddFOp>(loc, b.create<arith::MulFOp>(loc, x, c(alpha)), c(beta));
    return b.create<arith::MinimumFOp>(loc, b.create<arith::MaximumFOp>(loc, v, c(0)), c(1));
  }
  if (op == "Affine")
    return b.create<arith::AddFOp>(loc, b.create<arith::MulFOp>(loc, x, c(alpha)), c(beta));
  if (op == "ScaledTanh") {
    Value v = b.create<math::TanhOp>(loc, b.create<arith::MulFOp>(loc, x, c(beta)));
    return b.create<arith::MulFOp>(loc, v, c(alpha));
  }
  return nullptr;
}

SmallVector<Value, 4> cubicWeights(OpBuilder& b, Location loc, Value r, double a) {
  Type t = r.getType();
  auto c = [&](double v) { return scalarConstant(b, loc, t, v); };
  auto near = [&](Value u) -> Value {  // |u| <= 1: ((a + 2)u - (a + 3))u² + 1
    Value p = b.create<arith::SubFOp>(loc, b.create<arith::MulFOp>(loc, c(a + 2), u), c(a + 3));
    return b.create<arith::AddFOp>(
        loc, b.create<arith::MulFOp>(loc, p, b.create<arith::MulFOp>(loc, u, u)), c(1));
  };
  auto far = [&](Value u) -> Value {  // 1 < |u| < 2: ((a u - 5a)u + 8a)u - 4a
    Value p = b.create<arith::SubFOp>(loc, b.create<arith::MulFOp>(loc, c(a), u), c(5 * a));
    p = b.create<arith::AddFOp>(loc, b.create<arith::MulFOp>(loc, p, u), c(8 * a));
    return b.create<arith::SubFOp>(loc, b.create<arith::MulFOp>(loc, p, u), c(4 * a));
  };
  Value one_minus = b.create<arith::SubFOp>(loc, c(1), r);
  return {far(b.create<arith::AddFOp>(loc, r, c(1))), near(r), near(one_minus),
          far(b.create<arith::AddFOp>(loc, one_minus, c(1)))};
}

Value broadcastTo(OpBuilder& b, Location loc, Value input, ArrayRef<OpFoldResult> dims) {
  auto type = cast<RankedTensorType>(input.getType());
  if (static_cast<int64_t>(dims.size()) == type.getRank()) {
    SmallVector<OpFoldResult> own = dimsOf(b, loc, input);
    bool same = true;
    for (size_t d = 0; d < dims.size(); ++d) same &= sameDim(own[d], dims[d]);
    if (same) return input;
  }
  return elementwise(
      b, loc, {input}, type.getElementType(),
      [](OpBuilder&, Location, ValueRange args) { return args[0]; }, dims);
}

}  // namespace onnx
}  // namespace disc_ral
}  // namespace mlir

namespace mlir {
namespace disc_ral {
namespace onnx {

DenseElementsAttr transposeConstant(DenseElementsAttr data, ArrayRef<int64_t> perm) {
  auto type = cast<RankedTensorType>(data.getType());
  if (data.isSplat() || type.getElementType().isInteger(1)) return {};
  const size_t width = type.getElementTypeBitWidth() / 8;
  ArrayRef<char> raw = data.getRawData();
  const int64_t rank = type.getRank();
  SmallVector<int64_t> out_shape, in_strides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    in_strides[d] = in_strides[d + 1] * type.getDimSize(d + 1);
  for (int64_t p : perm) out_shape.push_back(type.getDimSize(p));
  std::vector<char> out(raw.size());
  const int64_t count = type.getNumElements();
  SmallVector<int64_t> index(rank, 0);  // the output element's index
  for (int64_t i = 0; i < count; ++i) {
    int64_t src = 0;
    for (int64_t d = 0; d < rank; ++d) src += index[d] * in_strides[perm[d]];
    std::memcpy(out.data() + i * width, raw.data() + src * width, width);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < out_shape[d]) break;
      index[d] = 0;
    }
  }
  return DenseElementsAttr::getFromRawBuffer(
      RankedTensorType::get(out_shape, type.getElementType()), out);
}

DenseElementsAttr floatConstant(RankedTensorType type, ArrayRef<double> values) {
  auto element = cast<FloatType>(type.getElementType());
  SmallVector<APFloat> floats;
  for (double v : values) {
    APFloat f(v);
    bool lost;
    f.convert(element.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
    floats.push_back(f);
  }
  return DenseElementsAttr::get(type, floats);
}

SmallVector<double> floatValues(DenseElementsAttr data) {
  SmallVector<double> values;
  for (APFloat f : data.getValues<APFloat>()) {
    bool lost;
    f.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
    values.push_back(f.convertToDouble());
  }
  return values;
}

Value pad(OpBuilder& b, Location loc, Value input, ArrayRef<int64_t> low, ArrayRef<int64_t> high,
          Value value) {
  if (llvm::all_of(low, [](int64_t v) { return v == 0; }) &&
      llvm::all_of(high, [](int64_t v) { return v == 0; }))
    return input;
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (type.isDynamicDim(d)) {
      // Checked when the module runs, as any result dim computed then.
      OpFoldResult size =
          addIndex(b, loc, addIndex(b, loc, dimOf(b, loc, input, d), b.getIndexAttr(low[d])),
                   b.getIndexAttr(high[d]));
      (void)checkSize(b, loc, size, "a padded dim");
      shape.push_back(ShapedType::kDynamic);
      continue;
    }
    const CheckedInt size = CheckedInt(type.getDimSize(d)) + low[d] + high[d];
    if (!size.isSize()) {
      emitError(loc) << "padding dim " << d << " of size " << type.getDimSize(d) << " by " << low[d]
                     << " and " << high[d] << " gives a size beyond 2^48";
      return input;
    }
    shape.push_back(size.value());
  }
  auto result = RankedTensorType::get(shape, type.getElementType());
  SmallVector<OpFoldResult> lo, hi;
  for (size_t d = 0; d < low.size(); ++d) {
    lo.push_back(b.getIndexAttr(low[d]));
    hi.push_back(b.getIndexAttr(high[d]));
  }
  return b.create<tensor::PadOp>(loc, result, input, lo, hi, value);
}

}  // namespace onnx
}  // namespace disc_ral
}  // namespace mlir
