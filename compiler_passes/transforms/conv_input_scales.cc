// Finding the convolutions ral_conv_scaled runs (conv_input_scales.h).
#include "compiler_passes/transforms/conv_input_scales.h"

#include "compiler_passes/transforms/loop_analysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir {
namespace disc_ral {
namespace {

// An f32 2-D convolution on buffers that ral_conv computes (not the quantized one).
bool takesScaledInput(ConvOp op) {
  auto input = dyn_cast<MemRefType>(op.getInput().getType());
  return input && input.getRank() == 4 && input.getElementType().isF32() && !op.isQuantized();
}

// `generic` computes out = a * b (either order) over parallel loops, out indexed by the loops.
bool isProduct(linalg::GenericOp generic) {
  if (!generic.hasPureBufferSemantics() || generic.getNumDpsInputs() != 2 ||
      generic.getNumDpsInits() != 1 || generic.getNumParallelLoops() != generic.getNumLoops())
    return false;
  Block& body = generic.getRegion().front();
  if (body.getOperations().size() != 2) return false;
  auto mul = dyn_cast<arith::MulFOp>(body.front());
  auto yield = dyn_cast<linalg::YieldOp>(body.back());
  if (!mul || !yield || yield.getNumOperands() != 1 || yield.getOperand(0) != mul.getResult())
    return false;
  Value a = body.getArgument(0), b = body.getArgument(1);
  return (mul.getLhs() == a && mul.getRhs() == b) || (mul.getLhs() == b && mul.getRhs() == a);
}

// The map that reads one value per image and channel: (n, d1, d2, d3) -> (n, 0, 0, d3) on
// channels-last buffers, (n, d1, 0, 0) on channels-first ones.
bool isScaleMap(AffineMap map, bool channels_last) {
  MLIRContext* ctx = map.getContext();
  auto zero = getAffineConstantExpr(0, ctx);
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineExpr> want = channels_last ? SmallVector<AffineExpr>{d(0), zero, zero, d(3)}
                                               : SmallVector<AffineExpr>{d(0), d(1), zero, zero};
  return map == AffineMap::get(4, 0, want, ctx);
}

std::optional<ScaledConvInput> match(ConvOp conv) {
  if (!takesScaledInput(conv)) return std::nullopt;
  Value product = conv.getInput();
  Operation* alloc = product.getDefiningOp();
  if (!alloc || !isa<memref::AllocOp, AllocOp>(alloc) || conv.getInit() == product ||
      conv.getFilter() == product || conv.getBias() == product)
    return std::nullopt;
  ScaledConvInput found;
  found.conv = conv;
  for (Operation* user : product.getUsers()) {
    if (user == conv.getOperation()) continue;
    if (isa<memref::DeallocOp, DeallocOp>(user)) {
      found.intermediates.push_back(user);
      continue;
    }
    auto generic = dyn_cast<linalg::GenericOp>(user);
    if (!generic || found.multiply || generic.getDpsInitOperand(0)->get() != product)
      return std::nullopt;
    found.multiply = generic;
  }
  linalg::GenericOp mul = found.multiply;
  if (!mul || !isProduct(mul) || mul->getBlock() != conv->getBlock() || !mul->isBeforeInBlock(conv))
    return std::nullopt;
  const bool channels_last = conv.getChannelsLast();
  SmallVector<AffineMap> maps = mul.getIndexingMapsArray();
  if (!maps[2].isIdentity()) return std::nullopt;
  auto product_type = cast<MemRefType>(product.getType());
  for (int data = 0; data < 2; ++data) {
    Value d = mul.getDpsInputOperand(data)->get(), s = mul.getDpsInputOperand(1 - data)->get();
    auto d_type = dyn_cast<MemRefType>(d.getType());
    auto s_type = dyn_cast<MemRefType>(s.getType());
    if (!d_type || !s_type || !maps[data].isIdentity() ||
        !isScaleMap(maps[1 - data], channels_last) ||
        d_type.getShape() != product_type.getShape() || !d_type.getElementType().isF32() ||
        !s_type.getElementType().isF32() || s_type.getRank() != 4)
      continue;
    // The scale's unit dims must be unit in its type: the kernel checks [N, 1, 1, C] exactly.
    const int unit[2] = {channels_last ? 1 : 2, channels_last ? 2 : 3};
    if (s_type.getDimSize(unit[0]) != 1 || s_type.getDimSize(unit[1]) != 1) continue;
    found.data = d;
    found.scale = s;
    break;
  }
  if (!found.data) return std::nullopt;
  llvm::SmallPtrSet<Operation*, 4> own = {mul.getOperation()};
  llvm::SmallPtrSet<Value, 4> read = {viewRoot(found.data), viewRoot(found.scale)};
  if (!nothingWritesBetween(mul, conv, read, own)) return std::nullopt;
  found.intermediates.push_back(alloc);
  return found;
}

}  // namespace

SmallVector<ScaledConvInput> findScaledConvInputs(ModuleOp module) {
  SmallVector<ScaledConvInput> found;
  module.walk([&](ConvOp conv) {
    if (std::optional<ScaledConvInput> m = match(conv)) found.push_back(std::move(*m));
  });
  return found;
}

}  // namespace disc_ral
}  // namespace mlir
