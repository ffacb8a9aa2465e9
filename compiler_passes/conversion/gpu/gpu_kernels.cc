// GPU kernels for devices "cuda" and "hsa": the outlining (gpu_kernels.h has the contract).
#include "compiler_passes/conversion/gpu/gpu_kernels.h"

#include <string>
#include <vector>

#include "compiler_passes/dialect/dialect.h"
#include "compiler_passes/conversion/gpu/gpu_targets.h"
#include "compiler_passes/conversion/kernel_common.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir {
namespace disc_ral {

namespace {

bool isBufferElement(Type t) {
  if (auto i = dyn_cast<IntegerType>(t))
    return llvm::is_contained({1u, 8u, 16u, 32u, 64u}, i.getWidth());
  return isa<Float16Type, BFloat16Type, Float32Type, Float64Type>(t);
}

// Host values the kernel receives as scalars, deduplicated, in parameter order.
struct Params {
  SmallVector<Value> values;
  llvm::DenseMap<Value, unsigned> index;
  void add(Value v) {
    if (index.try_emplace(v, static_cast<unsigned>(values.size())).second) values.push_back(v);
  }
};

}  // namespace

ArrayAttr gpuTargets(Location loc, StringRef device, StringRef archs) {
  std::vector<std::string> names;
  std::string error;
  if (!parseGpuArchs(device, archs, &names, &error)) {
    emitError(loc) << error;
    return nullptr;
  }
  MLIRContext* ctx = loc.getContext();
  SmallVector<Attribute> targets;
  for (const std::string& arch : names) {
    if (device == "cuda")
      targets.push_back(
          NVVM::NVVMTargetAttr::get(ctx, 3, "nvptx64-nvidia-cuda", arch, ptxFeature(arch)));
    else
      targets.push_back(ROCDL::ROCDLTargetAttr::get(ctx, 3, "amdgcn-amd-amdhsa", arch));
  }
  return ArrayAttr::get(ctx, targets);
}

LogicalResult outlineGpuKernel(scf::ParallelOp loop, Value ctx, StringRef name,
                               SymbolTable& symbols, StringRef device, ArrayAttr targets) {
  MLIRContext* mctx = loop.getContext();
  Location loc = loop.getLoc();
  auto fail = [&](const Twine& why) -> LogicalResult {
    return loop.emitError("this loop cannot run on device '") << device << "': " << why;
  };
  if (loop.getNumLoops() != 1 || loop.getNumReductions() != 0)
    return fail("a reduction over the outermost loop cannot run in a GPU kernel yet");

  // ---- What the kernel uses from the host (the upper bound only sizes the trip count).
  SetVector<Value> used = kernelUses(loop);
  SmallVector<Value> buffers;
  for (Value v : used) {
    if (isConstantValue(v)) continue;  // cloned into the kernel
    Type t = v.getType();
    if (auto m = dyn_cast<MemRefType>(t)) {
      if (!isBufferElement(m.getElementType()))
        return fail("GPU kernels cannot read or write " + typeString(m.getElementType()) +
                    " buffers");
      if (!isStrided(m)) return fail("a captured buffer has no strided layout");
      buffers.push_back(v);
    } else if (!isa<IndexType, IntegerType, FloatType>(t)) {
      return fail("it uses a host value of type " + typeString(t));
    }
  }
  // Memory is only reached through captured buffers.
  if (failed(checkKernelBody(loop, "GPU", /*constant_dims=*/true)))
    return fail("see the error above");

  // ---- Scalar parameters: the trip count, captured scalars, dynamic layout values.
  // The grid: enough blocks for one iteration per thread, at most kGpuMaxGroups; the kernel
  // gets its thread count as the grid-stride (a device library would be needed to read the grid
  // size on AMD GPUs).
  OpBuilder b(loop);
  Value trips = tripCount(b, loop);
  Value block_x = b.create<arith::ConstantIndexOp>(loc, kGpuBlockSize);
  Value wanted = b.create<arith::CeilDivSIOp>(loc, trips, block_x);
  Value grid =
      b.create<arith::MinSIOp>(loc, wanted, b.create<arith::ConstantIndexOp>(loc, kGpuMaxGroups));
  Value threads = b.create<arith::MulIOp>(loc, grid, block_x);
  Params params;
  params.add(trips);
  params.add(threads);
  for (Value v : used)
    if (!isa<MemRefType>(v.getType()) && !isConstantValue(v)) params.add(v);
  struct Layout {
    int64_t offset;
    SmallVector<int64_t> strides;
    memref::ExtractStridedMetadataOp metadata;  // when some layout value or read size is dynamic
  };
  SmallVector<Layout> layouts;
  for (Value buffer : buffers) {
    auto type = cast<MemRefType>(buffer.getType());
    Layout layout;
    (void)getStridesAndOffset(type, layout.strides, layout.offset);
    SmallVector<int64_t> read;
    for (Operation* user : buffer.getUsers())
      if (auto d = dyn_cast<memref::DimOp>(user); d && loop->isAncestor(d))
        read.push_back(*d.getConstantIndex());
    const bool dynamic = ShapedType::isDynamic(layout.offset) ||
                         llvm::any_of(layout.strides, ShapedType::isDynamic) ||
                         llvm::any_of(read, [&](int64_t d) { return type.isDynamicDim(d); });
    if (dynamic) {
      auto meta = b.create<memref::ExtractStridedMetadataOp>(loc, buffer);
      layout.metadata = meta;
      if (ShapedType::isDynamic(layout.offset)) params.add(meta.getOffset());
      for (auto [d, stride] : llvm::enumerate(layout.strides))
        if (ShapedType::isDynamic(stride)) params.add(meta.getStrides()[d]);
      for (int64_t d : read)
        if (type.isDynamicDim(d)) params.add(meta.getSizes()[d]);
    }
    layouts.push_back(std::move(layout));
  }

  // ---- The kernel module and function.
  ModuleOp parent = loop->getParentOfType<ModuleOp>();
  parent->setAttr(gpu::GPUDialect::getContainerModuleAttrName(), UnitAttr::get(mctx));
  OpBuilder mb(mctx);
  mb.setInsertionPointToEnd(parent.getBody());
  auto kmodule = mb.create<gpu::GPUModuleOp>(loc, name, targets);
  kmodule->setAttr(kKernelAttr, mb.getUnitAttr());
  symbols.insert(kmodule);
  mb.setInsertionPointToStart(kmodule.getBody());
  Type global_ptr = LLVM::LLVMPointerType::get(mctx, 1);
  SmallVector<Type> arg_types(buffers.size(), global_ptr);
  for (Value p : params.values) arg_types.push_back(hostScalarType(p.getType()));
  auto func = mb.create<gpu::GPUFuncOp>(loc, name, mb.getFunctionType(arg_types, {}));
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), mb.getUnitAttr());
  Block* entry = &func.getBody().front();
  OpBuilder kb = OpBuilder::atBlockBegin(entry);

  // The kernel's value of a host value: constants cloned, parameters converted back once.
  llvm::DenseMap<Value, Value> inside;
  auto kernelValue = [&](Value host) -> Value {
    if (Value v = inside.lookup(host)) return v;
    Value v;
    if (isConstantValue(host)) {
      v = kb.clone(*host.getDefiningOp())->getResult(0);
    } else {
      v = entry->getArgument(buffers.size() + params.index.lookup(host));
      Type want = host.getType();
      if (isa<IndexType>(want)) {
        v = kb.create<arith::IndexCastOp>(loc, want, v);
      } else if (auto i = dyn_cast<IntegerType>(want); i && i.getWidth() < 32) {
        v = kb.create<arith::TruncIOp>(loc, want, v);
      } else if (isa<Float16Type, BFloat16Type>(want)) {
        v = kb.create<arith::TruncFOp>(loc, want, v);
      }
    }
    inside[host] = v;
    return v;
  };
  auto indexValue = [&](int64_t fixed, Value host) -> Value {
    if (!ShapedType::isDynamic(fixed)) return kb.create<arith::ConstantIndexOp>(loc, fixed);
    return kernelValue(host);
  };

  // Buffers: a placeholder of the captured type that the body is cloned against; its loads,
  // stores and dims are then rewritten to address the pointer parameter.
  IRMapping mapping;
  SmallVector<Value> placeholders;
  for (auto [k, buffer] : llvm::enumerate(buffers)) {
    Value placeholder =
        kb.create<UnrealizedConversionCastOp>(loc, buffer.getType(), entry->getArgument(k))
            .getResult(0);
    placeholders.push_back(placeholder);
    mapping.map(buffer, placeholder);
  }
  for (Value v : used)
    if (!isa<MemRefType>(v.getType())) mapping.map(v, kernelValue(v));

  // Grid-stride loop over the iterations.
  Value size = kb.create<arith::ConstantIndexOp>(loc, kGpuBlockSize);
  Value group = kb.create<gpu::BlockIdOp>(loc, gpu::Dimension::x);
  Value lane = kb.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x);
  Value first = kb.create<arith::AddIOp>(loc, kb.create<arith::MulIOp>(loc, group, size), lane);
  auto grid_loop = kb.create<scf::ForOp>(loc, first, kernelValue(trips), kernelValue(threads));
  kb.create<gpu::ReturnOp>(loc);
  kb.setInsertionPoint(grid_loop);
  {
    OpBuilder lb = OpBuilder::atBlockBegin(grid_loop.getBody());
    Value iv =
        lb.create<arith::AddIOp>(loc, mapping.lookup(loop.getLowerBound()[0]),
                                 lb.create<arith::MulIOp>(loc, grid_loop.getInductionVar(),
                                                          mapping.lookup(loop.getStep()[0])));
    mapping.map(loop.getInductionVars()[0], iv);
    for (Operation& op : loop.getBody()->without_terminator()) lb.clone(op, mapping);
  }

  // Loads, stores and dims through the pointers; layout values computed once per thread.
  Type i64 = kb.getI64Type();
  for (auto [k, placeholder] : llvm::enumerate(placeholders)) {
    const Layout& layout = layouts[k];
    auto type = cast<MemRefType>(buffers[k].getType());
    auto meta = layout.metadata;
    Value offset = indexValue(layout.offset, meta ? meta.getOffset() : Value());
    SmallVector<Value> strides;
    for (auto [d, s] : llvm::enumerate(layout.strides))
      strides.push_back(indexValue(s, meta ? meta.getStrides()[d] : Value()));
    Value base = entry->getArgument(k);
    auto address = [&](OpBuilder& ob, ValueRange indices) -> Value {
      Value at = offset;
      for (auto [d, i] : llvm::enumerate(indices))
        at = ob.create<arith::AddIOp>(loc, at, ob.create<arith::MulIOp>(loc, i, strides[d]));
      Value element = ob.create<arith::IndexCastOp>(loc, i64, at);
      return ob.create<LLVM::GEPOp>(loc, global_ptr, type.getElementType(), base,
                                    ValueRange{element});
    };
    for (Operation* user : llvm::to_vector(placeholder.getUsers())) {
      OpBuilder ub(user);
      if (auto load = dyn_cast<memref::LoadOp>(user)) {
        Value p = address(ub, load.getIndices());
        load.replaceAllUsesWith(ub.create<LLVM::LoadOp>(loc, type.getElementType(), p).getResult());
        load.erase();
      } else if (auto store = dyn_cast<memref::StoreOp>(user)) {
        Value p = address(ub, store.getIndices());
        ub.create<LLVM::StoreOp>(loc, store.getValue(), p);
        store.erase();
      } else {
        auto dim = cast<memref::DimOp>(user);  // the only other use the checks above allow
        const int64_t d = *dim.getConstantIndex();
        dim.replaceAllUsesWith(indexValue(type.getDimSize(d), meta ? meta.getSizes()[d] : Value()));
        dim.erase();
      }
    }
    placeholder.getDefiningOp()->erase();
  }
  if (failed(sequentializeInnerLoops(func, "GPU"))) return failure();

  // ---- The launch: pointers, then scalars.
  SmallVector<Value> args;
  for (Value buffer : buffers)
    args.push_back(b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, buffer));
  for (Value p : params.values) {
    Type t = p.getType();
    Value v = p;
    if (auto i = dyn_cast<IntegerType>(t); i && i.getWidth() < 32)
      v = b.create<arith::ExtSIOp>(loc, hostScalarType(t), p);
    else if (isa<Float16Type, BFloat16Type>(t))
      v = b.create<arith::ExtFOp>(loc, hostScalarType(t), p);
    // Index parameters stay index: 64-bit in the host's LLVM lowering, as the parameter is.
    args.push_back(v);
  }
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  b.create<LaunchOp>(loc, ctx, FlatSymbolRefAttr::get(mctx, name), grid, one, one, block_x, one,
                     one, args);
  loop.erase();
  return success();
}

}  // namespace disc_ral
}  // namespace mlir
