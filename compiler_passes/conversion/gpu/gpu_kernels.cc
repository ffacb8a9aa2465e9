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
  KernelInterface iface;
  if (failed(captureBuffers(loop, used, "GPU", isBufferElement, fail, iface))) return failure();

  // ---- Scalar parameters: the trip count, the thread count, captured scalars, dynamic layout
  // values. The grid: enough blocks for one iteration per thread, at most kGpuMaxGroups; the
  // kernel gets its thread count as the grid-stride (a device library would be needed to read
  // the grid size on AMD GPUs).
  OpBuilder b(loop);
  Value trips = tripCount(b, loop);
  Value block_x = b.create<arith::ConstantIndexOp>(loc, kGpuBlockSize);
  Value wanted = b.create<arith::CeilDivSIOp>(loc, trips, block_x);
  Value grid =
      b.create<arith::MinSIOp>(loc, wanted, b.create<arith::ConstantIndexOp>(loc, kGpuMaxGroups));
  Value threads = b.create<arith::MulIOp>(loc, grid, block_x);
  iface.param(trips);
  iface.param(threads);
  addScalarParams(b, loop, used, iface);

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
  SmallVector<Type> arg_types(iface.buffers.size(), global_ptr);
  for (Value p : iface.params) arg_types.push_back(hostScalarType(p.getType()));
  auto func = mb.create<gpu::GPUFuncOp>(loc, name, mb.getFunctionType(arg_types, {}));
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), mb.getUnitAttr());
  Block* entry = &func.getBody().front();
  OpBuilder kb = OpBuilder::atBlockBegin(entry);

  // The kernel's value of a host value: a scalar parameter after the buffers' pointers.
  KernelValues values(
      kb, loc, iface,
      [&](unsigned k) { return entry->getArgument(iface.buffers.size() + k); },
      /*index_by_cast=*/true);
  auto kernelValue = [&](Value host) { return values.get(host); };
  auto layoutValue = [&](int64_t fixed, Value host) { return values.layout(fixed, host); };

  // Buffers: a placeholder of the captured type that the body is cloned against; its loads,
  // stores and dims are then rewritten to address the pointer parameter.
  IRMapping mapping;
  SmallVector<Value> placeholders;
  for (auto [k, buffer] : llvm::enumerate(iface.buffers)) {
    Value placeholder =
        kb.create<UnrealizedConversionCastOp>(loc, buffer.getType(), entry->getArgument(k))
            .getResult(0);
    placeholders.push_back(placeholder);
    mapping.map(buffer, placeholder);
  }
  for (Value v : used)
    if (!isa<MemRefType>(v.getType())) mapping.map(v, kernelValue(v));

  // Grid-stride loop over the iterations; what it needs from the entry block goes before it.
  Value size = kb.create<arith::ConstantIndexOp>(loc, kGpuBlockSize);
  Value group = kb.create<gpu::BlockIdOp>(loc, gpu::Dimension::x);
  Value lane = kb.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x);
  Value first = kb.create<arith::AddIOp>(loc, kb.create<arith::MulIOp>(loc, group, size), lane);
  auto grid_loop =
      cloneAsGridStrideLoop(kb, loop, mapping, first, kernelValue(trips), kernelValue(threads));
  kb.create<gpu::ReturnOp>(loc);
  kb.setInsertionPoint(grid_loop);

  // Loads, stores and dims through the pointers; layout values computed once per thread.
  Type i64 = kb.getI64Type();
  for (auto [k, placeholder] : llvm::enumerate(placeholders)) {
    auto type = cast<MemRefType>(iface.buffers[k].getType());
    Value base = entry->getArgument(k);
    auto address = [&](OpBuilder& ob, Value at) -> Value {
      Value element = ob.create<arith::IndexCastOp>(loc, i64, at);
      return ob.create<LLVM::GEPOp>(loc, global_ptr, type.getElementType(), base,
                                    ValueRange{element});
    };
    rewriteBufferAccesses(
        placeholder, type, iface.layouts[k], layoutValue,
        [&](OpBuilder& ob, Value at) -> Value {
          return ob.create<LLVM::LoadOp>(loc, type.getElementType(), address(ob, at));
        },
        [&](OpBuilder& ob, Value value, Value at) {
          ob.create<LLVM::StoreOp>(loc, value, address(ob, at));
        });
  }
  if (failed(sequentializeInnerLoops(func, "GPU"))) return failure();

  // ---- The launch: pointers, then scalars.
  SmallVector<Value> args = launchOperands(b, loc, iface);
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  b.create<LaunchOp>(loc, ctx, FlatSymbolRefAttr::get(mctx, name), grid, one, one, block_x, one,
                     one, args);
  loop.erase();
  return success();
}

}  // namespace disc_ral
}  // namespace mlir
