#include "compiler_passes/conversion/kernel_common.h"

#include <iterator>

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir {
namespace disc_ral {

llvm::SetVector<Value> kernelUses(scf::ParallelOp loop) {
  llvm::SetVector<Value> used;
  used.insert(loop.getLowerBound()[0]);
  used.insert(loop.getStep()[0]);
  getUsedValuesDefinedAbove(loop.getRegion(), used);
  return used;
}

LogicalResult checkKernelBody(scf::ParallelOp loop, llvm::StringRef kernel_kind) {
  WalkResult walk = loop.getBody()->walk([&](Operation* op) {
    if (isa<CallOpInterface>(op) || op->getDialect()->getNamespace() == "disc_ral") {
      op->emitError("cannot run in a ") << kernel_kind << " kernel";
      return WalkResult::interrupt();
    }
    for (Value r : op->getResults())
      if (isa<MemRefType>(r.getType())) {
        op->emitError("creates a buffer or view inside a loop, which a ")
            << kernel_kind << " kernel cannot";
        return WalkResult::interrupt();
      }
    if (isa<memref::LoadOp, memref::StoreOp, memref::DimOp>(op)) {
      if (auto d = dyn_cast<memref::DimOp>(op); d && !d.getConstantIndex()) {
        op->emitError("a ") << kernel_kind << " kernel needs constant dimension indices";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    }
    for (Value o : op->getOperands())
      if (isa<MemRefType>(o.getType())) {
        op->emitError("uses a buffer in a way a ")
            << kernel_kind << " kernel cannot (only load, store, dim)";
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

Value tripCount(OpBuilder& b, scf::ParallelOp loop, unsigned d, IRMapping* map) {
  Location loc = loop.getLoc();
  auto get = [&](Value v) { return map ? map->lookupOrDefault(v) : v; };
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value span = b.createOrFold<arith::SubIOp>(loc, get(loop.getUpperBound()[d]),
                                             get(loop.getLowerBound()[d]));
  Value trips = b.createOrFold<arith::CeilDivSIOp>(loc, span, get(loop.getStep()[d]));
  return b.createOrFold<arith::MaxSIOp>(loc, trips, zero);
}

bool isConstantValue(Value v) {
  Operation* def = v.getDefiningOp();
  return def && def->hasTrait<OpTrait::ConstantLike>();
}

std::string typeString(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  t.print(os);
  return s;
}

Type hostScalarType(Type t) {
  MLIRContext* ctx = t.getContext();
  if (isa<IndexType>(t)) return IntegerType::get(ctx, 64);
  if (auto i = dyn_cast<IntegerType>(t)) return i.getWidth() < 32 ? IntegerType::get(ctx, 32) : t;
  if (isa<Float16Type, BFloat16Type>(t)) return Float32Type::get(ctx);
  return t;
}

LogicalResult sequentializeInnerLoops(Operation* root, llvm::StringRef kernel_kind) {
  llvm::SmallVector<scf::ParallelOp> loops;
  root->walk([&](scf::ParallelOp p) { loops.push_back(p); });  // post-order: inner loops first
  for (scf::ParallelOp p : loops) {
    if (p.getNumResults() != 0)
      return p.emitError("a parallel reduction inside a loop cannot run in a ")
             << kernel_kind << " kernel yet";
    OpBuilder b(p);
    Block* body = p.getBody();
    for (unsigned d = 0; d < p.getNumLoops(); ++d) {
      auto f = b.create<scf::ForOp>(p.getLoc(), p.getLowerBound()[d], p.getUpperBound()[d],
                                    p.getStep()[d]);
      p.getInductionVars()[d].replaceAllUsesWith(f.getInductionVar());
      b.setInsertionPointToStart(f.getBody());
    }
    Block* inner = b.getInsertionBlock();
    inner->getOperations().splice(b.getInsertionPoint(), body->getOperations(), body->begin(),
                                  std::prev(body->end()));
    p.erase();
  }
  return success();
}

unsigned KernelInterface::param(Value v) {
  auto [it, inserted] = param_index.try_emplace(v, static_cast<unsigned>(params.size()));
  if (inserted) params.push_back(v);
  return it->second;
}

LogicalResult captureBuffers(scf::ParallelOp loop, const llvm::SetVector<Value>& used,
                             llvm::StringRef kernel_kind, llvm::function_ref<bool(Type)> storable,
                             llvm::function_ref<LogicalResult(const llvm::Twine&)> fail,
                             KernelInterface& iface) {
  for (Value v : used) {
    if (isConstantValue(v)) continue;  // cloned into the kernel
    Type t = v.getType();
    if (auto m = dyn_cast<MemRefType>(t)) {
      if (!storable(m.getElementType()))
        return fail(kernel_kind + " kernels cannot read or write " +
                    typeString(m.getElementType()) + " buffers");
      KernelInterface::Layout layout;
      if (failed(getStridesAndOffset(m, layout.strides, layout.offset)))
        return fail("a captured buffer has no strided layout");
      iface.buffers.push_back(v);
      iface.layouts.push_back(std::move(layout));
    } else if (!isa<IndexType, IntegerType, FloatType>(t)) {
      return fail("it uses a host value of type " + typeString(t));
    }
  }
  if (failed(checkKernelBody(loop, kernel_kind))) return fail("see the error above");
  return success();
}

void addScalarParams(OpBuilder& b, scf::ParallelOp loop, const llvm::SetVector<Value>& used,
                     KernelInterface& iface) {
  for (Value v : used)
    if (!isa<MemRefType>(v.getType()) && !isConstantValue(v)) iface.param(v);
  for (auto [k, buffer] : llvm::enumerate(iface.buffers)) {
    KernelInterface::Layout& layout = iface.layouts[k];
    auto type = cast<MemRefType>(buffer.getType());
    llvm::SmallVector<int64_t> read;  // the dims the body's memref.dim ops read (constants)
    for (Operation* user : buffer.getUsers())
      if (auto d = dyn_cast<memref::DimOp>(user); d && loop->isAncestor(d))
        read.push_back(*d.getConstantIndex());
    const bool dynamic = ShapedType::isDynamic(layout.offset) ||
                         llvm::any_of(layout.strides, ShapedType::isDynamic) ||
                         llvm::any_of(read, [&](int64_t d) { return type.isDynamicDim(d); });
    if (!dynamic) continue;
    auto meta = b.create<memref::ExtractStridedMetadataOp>(loop.getLoc(), buffer);
    layout.metadata = meta;
    if (ShapedType::isDynamic(layout.offset)) iface.param(meta.getOffset());
    for (auto [d, stride] : llvm::enumerate(layout.strides))
      if (ShapedType::isDynamic(stride)) iface.param(meta.getStrides()[d]);
    for (int64_t d : read)
      if (type.isDynamicDim(d)) iface.param(meta.getSizes()[d]);
  }
}

Value narrowParameter(OpBuilder& b, Location loc, Value raw, Type want, bool index_by_cast) {
  if (isa<IndexType>(want)) {
    if (index_by_cast) return b.create<arith::IndexCastOp>(loc, want, raw);
    return b.create<UnrealizedConversionCastOp>(loc, want, raw).getResult(0);
  }
  if (auto i = dyn_cast<IntegerType>(want); i && i.getWidth() < 32)
    return b.create<arith::TruncIOp>(loc, want, raw);
  if (isa<Float16Type, BFloat16Type>(want)) return b.create<arith::TruncFOp>(loc, want, raw);
  return raw;
}

Value KernelValues::get(Value host) {
  if (Value v = made_.lookup(host)) return v;
  Value v = isConstantValue(host)
                ? kb_.clone(*host.getDefiningOp())->getResult(0)
                : narrowParameter(kb_, loc_, load_(iface_.param_index.lookup(host)),
                                  host.getType(), index_by_cast_);
  made_[host] = v;
  return v;
}

Value KernelValues::layout(int64_t fixed, Value host) {
  if (!ShapedType::isDynamic(fixed)) return kb_.create<arith::ConstantIndexOp>(loc_, fixed);
  return get(host);
}

llvm::SmallVector<Value> launchOperands(OpBuilder& b, Location loc, const KernelInterface& iface) {
  llvm::SmallVector<Value> args;
  for (Value buffer : iface.buffers)
    args.push_back(b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, buffer));
  for (Value p : iface.params) {
    Type t = p.getType();
    Value v = p;
    if (auto i = dyn_cast<IntegerType>(t); i && i.getWidth() < 32)
      v = b.create<arith::ExtSIOp>(loc, hostScalarType(t), p);
    else if (isa<Float16Type, BFloat16Type>(t))
      v = b.create<arith::ExtFOp>(loc, hostScalarType(t), p);
    args.push_back(v);
  }
  return args;
}

scf::ForOp cloneAsGridStrideLoop(OpBuilder& kb, scf::ParallelOp loop, IRMapping& mapping,
                                 Value first, Value trips, Value stride) {
  Location loc = loop.getLoc();
  auto grid_loop = kb.create<scf::ForOp>(loc, first, trips, stride);
  OpBuilder lb = OpBuilder::atBlockBegin(grid_loop.getBody());
  Value iv = lb.create<arith::AddIOp>(loc, mapping.lookup(loop.getLowerBound()[0]),
                                      lb.create<arith::MulIOp>(loc, grid_loop.getInductionVar(),
                                                               mapping.lookup(loop.getStep()[0])));
  mapping.map(loop.getInductionVars()[0], iv);
  for (Operation& op : loop.getBody()->without_terminator()) lb.clone(op, mapping);
  return grid_loop;
}

void rewriteBufferAccesses(Value placeholder, MemRefType type,
                           const KernelInterface::Layout& layout,
                           llvm::function_ref<Value(int64_t, Value)> layoutValue,
                           llvm::function_ref<Value(OpBuilder&, Value)> load,
                           llvm::function_ref<void(OpBuilder&, Value, Value)> store) {
  Location loc = placeholder.getLoc();
  auto meta = layout.metadata;
  Value offset = layoutValue(layout.offset, meta ? meta.getOffset() : Value());
  llvm::SmallVector<Value> strides;
  for (auto [d, s] : llvm::enumerate(layout.strides))
    strides.push_back(layoutValue(s, meta ? meta.getStrides()[d] : Value()));
  auto linear = [&](OpBuilder& ob, ValueRange indices) {
    Value at = offset;
    for (auto [d, i] : llvm::enumerate(indices))
      at = ob.create<arith::AddIOp>(loc, at, ob.create<arith::MulIOp>(loc, i, strides[d]));
    return at;
  };
  for (Operation* user : llvm::to_vector(placeholder.getUsers())) {
    OpBuilder ub(user);
    if (auto l = dyn_cast<memref::LoadOp>(user)) {
      l.replaceAllUsesWith(load(ub, linear(ub, l.getIndices())));
      l.erase();
    } else if (auto s = dyn_cast<memref::StoreOp>(user)) {
      store(ub, s.getValue(), linear(ub, s.getIndices()));
      s.erase();
    } else {
      auto dim = cast<memref::DimOp>(user);  // the only other use checkKernelBody allows
      const int64_t d = *dim.getConstantIndex();
      dim.replaceAllUsesWith(layoutValue(type.getDimSize(d), meta ? meta.getSizes()[d] : Value()));
      dim.erase();
    }
  }
  placeholder.getDefiningOp()->erase();
}

}  // namespace disc_ral
}  // namespace mlir
