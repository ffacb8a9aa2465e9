// Reshapes whose shape the program writes element by element (what tensor.reshape with a
// tensor.from_elements shape bufferizes to) become memref.reinterpret_cast views with those
// sizes: no shape buffer, so nothing on the host touches memory on a device, and no allocation
// per execution on the CPU.
#include "compiler_passes/transforms/reshape_views.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir {
namespace disc_ral {
namespace {

// The sizes `shape` holds when `reshape` reads it: the values stored at each constant index
// before it in its block, when nothing else writes or escapes the buffer. Loads from the buffer
// are recorded to be replaced by the stored values.
bool knownShape(memref::ReshapeOp reshape, SmallVector<Value>* sizes,
                SmallVector<Operation*>* erase, SmallVector<memref::LoadOp>* loads) {
  Value shape = reshape.getShape();
  auto alloc = shape.getDefiningOp<memref::AllocOp>();
  auto type = cast<MemRefType>(shape.getType());
  if (!alloc || !type.hasStaticShape() || !type.getElementType().isIndex()) return false;
  const int64_t rank = type.getNumElements();
  if (rank != reshape.getType().getRank()) return false;
  sizes->assign(rank, Value());
  for (Operation* user : shape.getUsers()) {
    if (user == reshape) continue;
    if (auto store = dyn_cast<memref::StoreOp>(user)) {
      if (store.getMemRef() != shape || store->getBlock() != reshape->getBlock() ||
          !store->isBeforeInBlock(reshape))
        return false;
      std::optional<int64_t> at = getConstantIntValue(store.getIndices()[0]);
      if (!at || *at < 0 || *at >= rank || (*sizes)[*at]) return false;
      (*sizes)[*at] = store.getValueToStore();
      erase->push_back(store);
      continue;
    }
    if (auto load = dyn_cast<memref::LoadOp>(user)) {
      if (!getConstantIntValue(load.getIndices()[0])) return false;
      loads->push_back(load);
      continue;
    }
    if (isa<memref::DeallocOp>(user)) {
      erase->push_back(user);
      continue;
    }
    return false;
  }
  if (llvm::any_of(*sizes, [](Value v) { return !v; })) return false;
  for (memref::LoadOp load : *loads)
    if (load->getBlock() != reshape->getBlock() || load->isBeforeInBlock(reshape)) return false;
  erase->push_back(alloc);
  return true;
}

}  // namespace

void reshapesToViews(ModuleOp module) {
  SmallVector<memref::ReshapeOp> reshapes;
  module.walk([&](memref::ReshapeOp r) { reshapes.push_back(r); });
  for (memref::ReshapeOp reshape : reshapes) {
    auto result = reshape.getType();
    auto source = cast<MemRefType>(reshape.getSource().getType());
    if (!source.getLayout().isIdentity() || !result.getLayout().isIdentity()) continue;
    SmallVector<Value> sizes;
    SmallVector<Operation*> erase;
    SmallVector<memref::LoadOp> loads;
    if (!knownShape(reshape, &sizes, &erase, &loads)) continue;
    OpBuilder b(reshape);
    Location loc = reshape.getLoc();
    const int64_t rank = result.getRank();
    // Row-major strides of the result, innermost 1; static sizes and strides as attributes.
    SmallVector<OpFoldResult> size_ofr(rank), stride_ofr(rank);
    Value stride = b.create<arith::ConstantIndexOp>(loc, 1);
    int64_t static_stride = 1;
    for (int64_t d = rank - 1; d >= 0; --d) {
      size_ofr[d] = result.isDynamicDim(d) ? OpFoldResult(sizes[d])
                                           : OpFoldResult(b.getIndexAttr(result.getDimSize(d)));
      stride_ofr[d] =
          static_stride > 0 ? OpFoldResult(b.getIndexAttr(static_stride)) : OpFoldResult(stride);
      Value size = result.isDynamicDim(d)
                       ? sizes[d]
                       : b.create<arith::ConstantIndexOp>(loc, result.getDimSize(d)).getResult();
      stride = b.create<arith::MulIOp>(loc, stride, size);
      if (static_stride > 0 && !result.isDynamicDim(d))
        static_stride *= result.getDimSize(d);
      else
        static_stride = -1;  // from here outwards, strides are values
    }
    // The identity layout the result type has: offset 0, strides as computed.
    SmallVector<int64_t> strides_static;
    for (OpFoldResult s : stride_ofr)
      strides_static.push_back(getConstantIntValue(s).value_or(ShapedType::kDynamic));
    auto strided = MemRefType::get(result.getShape(), result.getElementType(),
                                   StridedLayoutAttr::get(b.getContext(), 0, strides_static),
                                   result.getMemorySpace());
    Value view = b.create<memref::ReinterpretCastOp>(loc, strided, reshape.getSource(),
                                                     b.getIndexAttr(0), size_ofr, stride_ofr);
    // Back to the identity type every user expects (a cast between equivalent layouts).
    Value same = b.create<memref::CastOp>(loc, result, view);
    // A copy of the view (a result the function returns is copied into its own buffer) becomes
    // linalg.copy: canonicalization would fold the cast into a memref.copy, which between
    // strided buffers needs MLIR's runtime library.
    for (Operation* user : llvm::to_vector(reshape->getUsers())) {
      auto copy = dyn_cast<memref::CopyOp>(user);
      if (!copy || copy.getSource() != reshape.getResult()) continue;
      OpBuilder cb(copy);
      cb.create<linalg::CopyOp>(copy.getLoc(), same, copy.getTarget());
      copy.erase();
    }
    reshape.replaceAllUsesWith(same);
    for (memref::LoadOp load : loads) {
      load.replaceAllUsesWith(sizes[*getConstantIntValue(load.getIndices()[0])]);
      load.erase();
    }
    reshape.erase();
    for (Operation* op : erase) op->erase();
  }
}

}  // namespace disc_ral
}  // namespace mlir
