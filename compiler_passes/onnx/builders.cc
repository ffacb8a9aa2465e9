// The importer's tensor-level building blocks (builders.h).
#include "compiler_passes/onnx/builders.h"

#include <cstring>
#include <string>
#include <vector>

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

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

OpFoldResult apply(OpBuilder& b, Location loc, AffineExpr e, ArrayRef<OpFoldResult> operands) {
  return affine::makeComposedFoldedAffineApply(b, loc, e, operands);
}

}  // namespace

OpFoldResult addIndex(OpBuilder& b, Location loc, OpFoldResult x, OpFoldResult y) {
  AffineExpr s0, s1;
  bindSymbols(b.getContext(), s0, s1);
  return apply(b, loc, s0 + s1, {x, y});
}

OpFoldResult subIndex(OpBuilder& b, Location loc, OpFoldResult x, OpFoldResult y) {
  AffineExpr s0, s1;
  bindSymbols(b.getContext(), s0, s1);
  return apply(b, loc, s0 - s1, {x, y});
}

OpFoldResult mulIndex(OpBuilder& b, Location loc, OpFoldResult x, OpFoldResult y) {
  auto cx = constantIndex(x), cy = constantIndex(y);
  if (cx && cy) return b.getIndexAttr(*cx * *cy);
  AffineExpr s0, s1;
  bindSymbols(b.getContext(), s0, s1);
  if (cy) return apply(b, loc, s0 * *cy, {x});
  if (cx) return apply(b, loc, s0 * *cx, {y});
  Value v = b.create<arith::MulIOp>(loc, indexValue(b, loc, x), indexValue(b, loc, y));
  return v;
}

OpFoldResult floorDivIndex(OpBuilder& b, Location loc, OpFoldResult x, OpFoldResult y) {
  auto cx = constantIndex(x), cy = constantIndex(y);
  if (cx && cy && *cy != 0) return b.getIndexAttr(llvm::divideFloorSigned(*cx, *cy));
  if (cy && *cy > 0) {
    AffineExpr s0;
    bindSymbols(b.getContext(), s0);
    return apply(b, loc, s0.floorDiv(*cy), {x});
  }
  Value v = b.create<arith::FloorDivSIOp>(loc, indexValue(b, loc, x), indexValue(b, loc, y));
  return v;
}

OpFoldResult ceilDivIndex(OpBuilder& b, Location loc, OpFoldResult x, OpFoldResult y) {
  auto cx = constantIndex(x), cy = constantIndex(y);
  if (cx && cy && *cy != 0) return b.getIndexAttr(llvm::divideCeilSigned(*cx, *cy));
  if (cy && *cy > 0) {
    AffineExpr s0;
    bindSymbols(b.getContext(), s0);
    return apply(b, loc, s0.ceilDiv(*cy), {x});
  }
  Value v = b.create<arith::CeilDivSIOp>(loc, indexValue(b, loc, x), indexValue(b, loc, y));
  return v;
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

void runtimeCheck(OpBuilder& b, Location loc, Value ok, llvm::StringRef message) {
  if (auto c = getConstantIntValue(ok); c && *c != 0) return;
  b.create<cf::AssertOp>(loc, ok, message);
}

Value emptyTensor(OpBuilder& b, Location loc, ArrayRef<OpFoldResult> dims, Type element) {
  return b.create<tensor::EmptyOp>(loc, dims, element);
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

Value elementwise(OpBuilder& b, Location loc, ValueRange inputs, Type result,
                  const ScalarBody& body, std::optional<ArrayRef<OpFoldResult>> given) {
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
  for (int64_t s : sizes) count = static_target ? count * s : count;
  auto flat_type = RankedTensorType::get({static_target ? count : ShapedType::kDynamic}, element);
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
  if (isFloat(from)) return b.create<arith::FPToSIOp>(loc, to, v);
  if (isFloat(to)) {
    if (from.isInteger(1)) return b.create<arith::UIToFPOp>(loc, to, v);
    return b.create<arith::SIToFPOp>(loc, to, v);
  }
  if (from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth()) {
    if (from.isInteger(1)) return b.create<arith::ExtUIOp>(loc, to, v);
    return b.create<arith::ExtSIOp>(loc, to, v);
  }
  return b.create<arith::TruncIOp>(loc, to, v);
}

Value convertTensor(OpBuilder& b, Location loc, Value v, Type to) {
  if (cast<RankedTensorType>(v.getType()).getElementType() == to) return v;
  return elementwise(b, loc, {v}, to, [&](OpBuilder& nb, Location nl, ValueRange args) {
    return convertScalar(nb, nl, args[0], to);
  });
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
  for (int64_t d = 0; d < type.getRank(); ++d)
    shape.push_back(type.isDynamicDim(d) ? ShapedType::kDynamic
                                         : type.getDimSize(d) + low[d] + high[d]);
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
