// disc-ral-outline-kernels: outermost parallel loops become host kernels launched through
// ral_kernel_launch (Passes.td has the contract).
//
//   scf.parallel (%i) = (%lb) to (%ub) step (%s) { body(%i, captures) }
// becomes, in the host function,
//   %trips = ceildiv(%ub - %lb, %s); %work = <estimated work of one iteration>
//   %rows  = max(1, ceildiv(grain, %work)); %groups = ceildiv(%trips, %rows)
//   %parts = 1, or min(ceildiv(%work, grain), largest inner trips) when rows split (below)
//   disc_ral.launch %ctx, @ral_kernel_N grid(%groups, %parts, 1) block(%rows, 1, 1)
//       args(%lb, %ub, %s, captures...)
// and the kernel, a ral_host_kernel(const ral_host_workgroup* wg, void* const* args):
//   %g = wg->group_id[0]; %rows = wg->block[0]; captures = *args[k]
//   %lo = %lb + %g * %rows * %s;  %hi = min(%ub, %lo + %rows * %s)
//   scf.parallel (%i) = (%lo) to (%hi) step (%s) { body }
// A row whose body is parallel loops (and loads and arithmetic) is split further: workgroup
// (g, p) runs part p of %parts of each inner loop's first dimension (splittableInnerLoops says
// when that is safe). Without that, a model exported with a dynamic batch ran each of its loops
// as one workgroup at batch 1, whatever the thread count.
#include "compiler_passes/conversion/gpu/gpu_kernels.h"
#include "compiler_passes/conversion/grid_parallelism.h"
#include "compiler_passes/conversion/host_split_reduction.h"
#include "compiler_passes/conversion/kernel_common.h"
#include "compiler_passes/conversion/spirv/spirv_kernels.h"
#include "compiler_passes/dialect/dialect.h"
#include "compiler_passes/dialect/type_codes.h"
#include "compiler_passes/passes.h"
#include "compiler_passes/transforms/loop_analysis.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVDialect.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir {
namespace disc_ral {

#define GEN_PASS_DEF_OUTLINEKERNELSPASS
#include "compiler_passes/Passes.h.inc"

namespace {

// Offsets in ral_host_workgroup (drivers/cpu/host_kernel.h): uint32_t grid[3], block[3],
// group_id[3], ...
constexpr int32_t kGridYOffset = 4;
constexpr int32_t kBlockXOffset = 12;
constexpr int32_t kGroupXOffset = 24;
constexpr int32_t kGroupYOffset = 28;
// Parts a row is split into at most (grid y is 32 bits; more parts than threads gain nothing).
constexpr int64_t kMaxRowParts = 4096;

bool isKernelArgType(Type t) {
  if (auto m = dyn_cast<MemRefType>(t)) return isStrided(m) && !m.getMemorySpace();
  return isa<IndexType, IntegerType, FloatType>(t);
}

// A loop that can run as workgroups on any thread: it only loads, stores and computes (no RAL
// op, no call; collectAccesses rejects anything else that touches memory).
bool canOutline(scf::ParallelOp loop) {
  if (loop.getNumReductions() != 0 || loop.getNumLoops() != 1) return false;
  if (!collectAccesses(loop)) return false;
  WalkResult walk = loop.getBody()->walk([&](Operation* op) {
    if (isa<CallOpInterface>(op)) return WalkResult::interrupt();
    if (op->getDialect() && op->getDialect()->getNamespace() == "disc_ral")
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return !walk.wasInterrupted();
}

Value ceilDiv(OpBuilder& b, Location loc, Value x, Value y) {
  return b.create<arith::CeilDivSIOp>(loc, x, y);
}

// The buffer `memref` is a reshape (or cast) of with the same contiguous row-major layout, so
// that an index list's element offset is the same linear combination in either; null through
// any other view.
Value contiguousRoot(Value memref) {
  while (true) {
    auto type = dyn_cast<MemRefType>(memref.getType());
    if (!type || !type.getLayout().isIdentity()) return nullptr;
    Operation* def = memref.getDefiningOp();
    if (auto e = dyn_cast_or_null<memref::ExpandShapeOp>(def)) {
      memref = e.getSrc();
    } else if (auto c = dyn_cast_or_null<memref::CollapseShapeOp>(def)) {
      memref = c.getSrc();
    } else if (auto c = dyn_cast_or_null<memref::CastOp>(def)) {
      memref = c.getSource();
    } else {
      return memref;
    }
  }
}

// Whether `v` is computed from `iv` (within a few ops; deeper chains count as dependent).
bool dependsOn(Value v, Value iv, int depth = 0) {
  if (v == iv) return true;
  Operation* def = v.getDefiningOp();
  if (!def) return false;  // another loop's induction variable or a function argument
  if (depth > 8 || def->getNumRegions() != 0) return true;
  return llvm::any_of(def->getOperands(), [&](Value o) { return dependsOn(o, iv, depth + 1); });
}

// How an access selects elements by the induction variable `iv` of its loop, when it does so
// element-wise: `iv` itself is index k, nothing else depends on it, and dims k and after are
// static: element offset = (...) * extent * stride + iv * stride + (below stride). Two accesses
// of one contiguous buffer with equal (stride, extent) then touch different elements for
// different values of their `iv`s.
std::optional<std::pair<int64_t, int64_t>> elementwiseSlice(const MemoryAccess& a, Value iv) {
  auto type = cast<MemRefType>(a.memref.getType());
  ValueRange indices = isa<memref::LoadOp>(a.op) ? cast<memref::LoadOp>(a.op).getIndices()
                                                 : cast<memref::StoreOp>(a.op).getIndices();
  int position = -1;
  for (auto [k, index] : llvm::enumerate(indices)) {
    if (index == iv) {
      if (position >= 0) return std::nullopt;
      position = static_cast<int>(k);
    } else if (dependsOn(index, iv)) {
      return std::nullopt;
    }
  }
  if (position < 0) return std::nullopt;
  ArrayRef<int64_t> shape = type.getShape();
  int64_t stride = 1;
  for (size_t d = position; d < shape.size(); ++d) {
    if (ShapedType::isDynamic(shape[d])) return std::nullopt;
    if (d > static_cast<size_t>(position)) stride *= shape[d];
  }
  return std::make_pair(stride, shape[position]);
}

bool sameValue(Value a, Value b) {
  if (a == b) return true;
  std::optional<int64_t> ca = getConstantIntValue(a), cb = getConstantIntValue(b);
  return ca && cb && *ca == *cb;
}

// The inner loops one row of `loop` can be split across: its body's top-level scf.parallel ops,
// when their first dimension's bounds are computed outside `loop` and the rest of the body only
// loads and computes, reading nothing they write. Part p of a row runs slice p of each one's
// first dimension. Two inner loops may share a buffer where either writes only when both slice
// it alike: the same bounds, and every such access element-wise in the loop's first induction
// variable (elementwiseSlice) with the same stride and extent on one contiguous buffer (a
// LayerNorm's row loops share their mean and variance by row: BERT-base's two LayerNorms at
// batch 1 on 2 threads, 96 -> 57 and 65 -> 43 us). Rows holding scf.for nests are not split:
// a channels-last spatial mean (for h { for w { parallel c } }) sliced by channel had every
// part walk the whole window for a line or two of each pixel, and ran 2-4x slower.
// Empty when the row cannot be split.
SmallVector<scf::ParallelOp> splittableInnerLoops(scf::ParallelOp loop) {
  SmallVector<scf::ParallelOp> inner;
  SmallVector<SmallVector<MemoryAccess>> accesses;
  SmallVector<Value> loads;
  auto outside = [&](Value v) { return !loop->isAncestor(v.getParentRegion()->getParentOp()); };
  for (Operation& op : loop.getBody()->without_terminator()) {
    if (auto p = dyn_cast<scf::ParallelOp>(&op)) {
      if (p.getNumReductions() != 0 || !outside(p.getLowerBound()[0]) ||
          !outside(p.getUpperBound()[0]) || !outside(p.getStep()[0]))
        return {};
      std::optional<SmallVector<MemoryAccess>> a = collectAccesses(p);
      if (!a) return {};
      inner.push_back(p);
      accesses.push_back(std::move(*a));
      continue;
    }
    if (op.getNumRegions() != 0) return {};
    if (auto load = dyn_cast<memref::LoadOp>(&op)) {
      loads.push_back(load.getMemRef());
      continue;
    }
    if (!isMemoryEffectFree(&op)) return {};
  }
  // Whether access x of inner loop i and access y of inner loop j are sliced alike.
  auto alike = [&](size_t i, const MemoryAccess& x, size_t j, const MemoryAccess& y) {
    scf::ParallelOp a = inner[i], b = inner[j];
    if (!sameValue(a.getLowerBound()[0], b.getLowerBound()[0]) ||
        !sameValue(a.getUpperBound()[0], b.getUpperBound()[0]) ||
        !sameValue(a.getStep()[0], b.getStep()[0]))
      return false;
    Value root = contiguousRoot(x.memref);
    if (!root || root != contiguousRoot(y.memref)) return false;
    auto sx = elementwiseSlice(x, a.getInductionVars()[0]);
    auto sy = elementwiseSlice(y, b.getInductionVars()[0]);
    return sx && sy && *sx == *sy;
  };
  for (size_t i = 0; i < accesses.size(); ++i) {
    for (const MemoryAccess& x : accesses[i]) {
      if (x.write && llvm::any_of(loads, [&](Value m) { return mayAlias(m, x.memref); }))
        return {};
      for (size_t j = i + 1; j < accesses.size(); ++j)
        for (const MemoryAccess& y : accesses[j])
          if ((x.write || y.write) && mayAlias(x.memref, y.memref) && !alike(i, x, j, y)) return {};
    }
  }
  return inner;
}

// Host-side estimate of the innermost iterations one iteration of `block` runs: the sum over
// its loops of trips * work of their bodies; loops whose bounds depend on the iteration count 1.
Value estimateWork(OpBuilder& b, Location loc, Block& block, Operation* outer) {
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  Value total;
  auto invariant = [&](ValueRange values) {
    return llvm::all_of(
        values, [&](Value v) { return !outer->isAncestor(v.getParentRegion()->getParentOp()); });
  };
  auto add = [&](Value w) { total = total ? b.create<arith::AddIOp>(loc, total, w) : w; };
  for (Operation& op : block) {
    if (auto f = dyn_cast<scf::ForOp>(&op)) {
      Value inner = estimateWork(b, loc, *f.getBody(), outer);
      if (!invariant({f.getLowerBound(), f.getUpperBound(), f.getStep()})) {
        add(inner);
        continue;
      }
      Value span = b.create<arith::SubIOp>(loc, f.getUpperBound(), f.getLowerBound());
      Value trips = b.create<arith::MaxSIOp>(loc, ceilDiv(b, loc, span, f.getStep()), one);
      add(b.create<arith::MulIOp>(loc, trips, inner));
    } else if (auto p = dyn_cast<scf::ParallelOp>(&op)) {
      Value inner = estimateWork(b, loc, *p.getBody(), outer);
      for (unsigned d = 0; d < p.getNumLoops(); ++d) {
        if (!invariant({p.getLowerBound()[d], p.getUpperBound()[d], p.getStep()[d]})) continue;
        Value span = b.create<arith::SubIOp>(loc, p.getUpperBound()[d], p.getLowerBound()[d]);
        Value trips = b.create<arith::MaxSIOp>(loc, ceilDiv(b, loc, span, p.getStep()[d]), one);
        inner = b.create<arith::MulIOp>(loc, trips, inner);
      }
      add(inner);
    }
  }
  return total ? b.create<arith::MaxSIOp>(loc, total, one).getResult() : one;
}

class OutlineKernelsPass : public impl::OutlineKernelsPassBase<OutlineKernelsPass> {
 public:
  using OutlineKernelsPassBase::OutlineKernelsPassBase;

  // The GPU target attributes' dialects, only when GPU kernels are made: cpu and vulkan compiles
  // do not load them.
  void getDependentDialects(DialectRegistry& registry) const override {
    OutlineKernelsPassBase::getDependentDialects(registry);
    if (device == "cuda" || device == "hsa")
      registry.insert<NVVM::NVVMDialect, ROCDL::ROCDLDialect>();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    LLVMTypeConverter converter(&getContext());
    if (device != "cpu" && device != "vulkan" && device != "cuda" && device != "hsa") {
      module.emitError() << "disc-ral-outline-kernels: no kernels for device '" << device
                         << "' (cpu, vulkan, cuda or hsa)";
      return signalPassFailure();
    }
    if (device == "cuda" || device == "hsa") {
      gpu_targets_ = gpuTargets(module.getLoc(), device, gpuArchs);
      if (!gpu_targets_) return signalPassFailure();
    }
    for (func::FuncOp f : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (f.isExternal() || f->hasAttr(kKernelAttr)) continue;
      if (f.getNumArguments() == 0 || !isa<ContextType>(f.getArgument(0).getType())) continue;
      LogicalResult done =
          device == "cpu" ? outlineHost(f, symbols, converter) : outlineDevice(f, symbols);
      if (failed(done)) return signalPassFailure();
    }
  }

 private:
  // The outermost loops of `f` that only compute become host kernels; the others stay.
  LogicalResult outlineHost(func::FuncOp f, SymbolTable& symbols,
                            const LLVMTypeConverter& converter) {
    // Reduction chains outside any parallel loop first: split, they become kernels below.
    SmallVector<scf::ForOp> nests;
    f.walk([&](scf::ForOp n) {
      if (!n->getParentOfType<scf::ParallelOp>() && !isa<scf::ForOp>(n->getParentOp()))
        nests.push_back(n);
    });
    for (scf::ForOp n : nests) splitHostReductionNest(n, f.getArgument(0));
    SmallVector<scf::ParallelOp> loops;
    f.walk([&](scf::ParallelOp p) {
      if (!p->getParentOfType<scf::ParallelOp>() && canOutline(p)) loops.push_back(p);
    });
    for (scf::ParallelOp loop : loops)
      for (scf::ParallelOp part : splitHostReduction(loop, f.getArgument(0)))
        if (canOutline(part) && failed(outlineHostLoop(part, f.getArgument(0), symbols, converter)))
          return failure();
    return success();
  }

  // Every outermost loop of `f` becomes a SPIR-V or GPU kernel; host code must not touch memory
  // after that (it would race with the queued kernels, and device memory need not be mapped),
  // except for single elements through the runtime (hostElementAccesses).
  LogicalResult outlineDevice(func::FuncOp f, SymbolTable& symbols) {
    SmallVector<scf::ParallelOp> outermost;
    f.walk([&](scf::ParallelOp p) {
      if (!p->getParentOfType<scf::ParallelOp>()) outermost.push_back(p);
    });
    SmallVector<scf::ParallelOp> loops;
    for (scf::ParallelOp loop : outermost)
      loops.append(exposeGridParallelism(loop, f.getArgument(0)));
    for (scf::ParallelOp loop : loops) {
      const std::string name = "ral_kernel_" + std::to_string(next_++);
      LogicalResult done =
          device == "vulkan"
              ? outlineSpirvKernel(loop, f.getArgument(0), name, symbols)
              : outlineGpuKernel(loop, f.getArgument(0), name, symbols, device, gpu_targets_);
      if (failed(done)) return failure();
    }
    hostElementAccesses(f);
    WalkResult host = f.walk([&](Operation* op) {
      if (!isa<memref::LoadOp, memref::StoreOp, memref::CopyOp, linalg::LinalgOp>(op))
        return WalkResult::advance();
      op->emitError() << "would run on the host over device memory: with device '" << device
                      << "' every access of a buffer runs in a kernel, and this "
                      << op->getName() << " is not in an outlined loop";
      return WalkResult::interrupt();
    });
    return failure(host.wasInterrupted());
  }

  // Single elements the host code reads or writes in device memory (a K, a trip count, a loop's
  // condition or counter) go through the runtime: ral_read_element waits for the work queued
  // before it, ral_write_element is queued like a kernel.
  //   %v = memref.load %m[%i, %j]        memref.store %v, %m[%i, %j]
  // become
  //   %base, %off, %sizes:2, %strides:2 = memref.extract_strided_metadata %m
  //   %e = memref.reinterpret_cast %base to offset: [%off + %i * %strides#0 + %j * %strides#1]
  //   %v = disc_ral.dispatch %ctx, "ral_read_element", "<device>" (%e) : (memref<T, ...>) -> T
  //   disc_ral.dispatch %ctx, "ral_write_element", "<device>" (%e, %v) : (memref<T, ...>, T) -> ()
  // Elements RAL cannot bind (index) are left, and refused below.
  void hostElementAccesses(func::FuncOp f) {
    SmallVector<Operation*> accesses;
    f.walk([&](Operation* op) {
      if (isa<memref::LoadOp, memref::StoreOp>(op)) accesses.push_back(op);
    });
    Value ctx = f.getArgument(0);
    for (Operation* op : accesses) {
      auto load = dyn_cast<memref::LoadOp>(op);
      auto store = dyn_cast<memref::StoreOp>(op);
      Value memref = load ? load.getMemref() : store.getMemref();
      ValueRange indices = load ? load.getIndices() : store.getIndices();
      auto type = cast<MemRefType>(memref.getType());
      auto element_type =
          MemRefType::get({}, type.getElementType(),
                          StridedLayoutAttr::get(&getContext(), ShapedType::kDynamic, {}));
      if (!isBindableMemRef(element_type) || !isStrided(type)) continue;
      OpBuilder b(op);
      Location loc = op->getLoc();
      auto meta = b.create<memref::ExtractStridedMetadataOp>(loc, memref);
      Value offset = meta.getOffset();
      for (auto [index, stride] : llvm::zip(indices, meta.getStrides()))
        offset = b.create<arith::AddIOp>(loc, offset, b.create<arith::MulIOp>(loc, index, stride));
      Value view = b.create<memref::ReinterpretCastOp>(loc, element_type, meta.getBaseBuffer(),
                                                       offset, ValueRange{}, ValueRange{});
      if (load) {
        auto read = b.create<DispatchOp>(loc, TypeRange{type.getElementType()}, ctx,
                                         "ral_read_element", device, ValueRange{view});
        load.replaceAllUsesWith(read.getResult(0));
      } else {
        b.create<DispatchOp>(loc, TypeRange{}, ctx, "ral_write_element", device,
                             ValueRange{view, store.getValueToStore()});
      }
      op->erase();
    }
  }

  LogicalResult outlineHostLoop(scf::ParallelOp loop, Value ctx, SymbolTable& symbols,
                                const LLVMTypeConverter& converter) {
    MLIRContext* mctx = &getContext();
    Location loc = loop.getLoc();
    // Values the kernel needs: bounds, then what the body uses from outside. Constants are
    // cloned into the kernel instead.
    SetVector<Value> used;
    used.insert(loop.getLowerBound()[0]);
    used.insert(loop.getUpperBound()[0]);
    used.insert(loop.getStep()[0]);
    getUsedValuesDefinedAbove(loop.getRegion(), used);
    SmallVector<Value> captures;
    SmallVector<Operation*> cloned_constants;
    for (Value v : used) {
      if (Operation* def = v.getDefiningOp(); def && def->hasTrait<OpTrait::ConstantLike>()) {
        cloned_constants.push_back(def);
        continue;
      }
      if (!isKernelArgType(v.getType())) return success();  // stays host code
      captures.push_back(v);
    }

    // The kernel: void(const ral_host_workgroup*, void* const*).
    OpBuilder b(mctx);
    b.setInsertionPointToEnd(getOperation().getBody());
    Type ptr = LLVM::LLVMPointerType::get(mctx);
    auto kernel = b.create<func::FuncOp>(loc, "ral_kernel_" + std::to_string(next_++),
                                         b.getFunctionType({ptr, ptr}, {}));
    symbols.insert(kernel);
    kernel->setAttr(kKernelAttr, b.getUnitAttr());
    Block* entry = kernel.addEntryBlock();
    b.setInsertionPointToStart(entry);
    Value wg = entry->getArgument(0), argv = entry->getArgument(1);
    Type i8 = b.getI8Type(), i32 = b.getI32Type(), i64 = b.getI64Type();
    auto field = [&](int32_t offset) {
      Value p = b.create<LLVM::GEPOp>(loc, ptr, i8, wg, ArrayRef<LLVM::GEPArg>{offset});
      Value v = b.create<LLVM::LoadOp>(loc, i32, p);
      return b.create<arith::IndexCastUIOp>(loc, b.getIndexType(), v).getResult();
    };
    Value group = field(kGroupXOffset);
    Value rows = field(kBlockXOffset);
    SmallVector<scf::ParallelOp> split = splittableInnerLoops(loop);
    Value row_part, parts;
    if (!split.empty()) {
      row_part = field(kGroupYOffset);
      parts = field(kGridYOffset);
    }
    IRMapping mapping;
    SmallVector<Value> inside;
    for (auto [k, v] : llvm::enumerate(captures)) {
      Value slot = b.create<LLVM::GEPOp>(loc, ptr, ptr, argv,
                                         ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(k)});
      Value p = b.create<LLVM::LoadOp>(loc, ptr, slot);
      Type t = v.getType();
      Value value;
      if (isa<IndexType>(t)) {
        value = b.create<arith::IndexCastOp>(loc, t, b.create<LLVM::LoadOp>(loc, i64, p));
      } else if (isa<MemRefType>(t)) {
        Value d = b.create<LLVM::LoadOp>(loc, converter.convertType(t), p);
        value = b.create<UnrealizedConversionCastOp>(loc, t, d).getResult(0);
      } else {
        value = b.create<LLVM::LoadOp>(loc, t, p);
      }
      inside.push_back(value);
    }
    for (Operation* c : cloned_constants) mapping.map(c->getResult(0), b.clone(*c)->getResult(0));
    for (auto [k, v] : llvm::enumerate(captures)) mapping.map(v, inside[k]);
    Value lb = mapping.lookup(loop.getLowerBound()[0]);
    Value ub = mapping.lookup(loop.getUpperBound()[0]);
    Value step = mapping.lookup(loop.getStep()[0]);
    Value chunk = b.create<arith::MulIOp>(loc, rows, step);
    Value lo = b.create<arith::AddIOp>(loc, lb, b.create<arith::MulIOp>(loc, group, chunk));
    Value hi = b.create<arith::MinSIOp>(loc, ub, b.create<arith::AddIOp>(loc, lo, chunk));
    auto part = b.create<scf::ParallelOp>(loc, ValueRange{lo}, ValueRange{hi}, ValueRange{step});
    mapping.map(loop.getInductionVars()[0], part.getInductionVars()[0]);
    b.setInsertionPointToStart(part.getBody());
    for (Operation& op : loop.getBody()->without_terminator()) {
      auto inner = dyn_cast<scf::ParallelOp>(&op);
      if (!inner || split.empty()) {
        b.clone(op, mapping);
        continue;
      }
      // This part's slice of the inner loop's first dimension.
      Value slice = ceilDiv(b, loc, tripCount(b, inner, 0, &mapping), parts);
      Value inner_step = mapping.lookupOrDefault(inner.getStep()[0]);
      Value width = b.create<arith::MulIOp>(loc, slice, inner_step);
      Value from = b.create<arith::AddIOp>(loc, mapping.lookupOrDefault(inner.getLowerBound()[0]),
                                           b.create<arith::MulIOp>(loc, row_part, width));
      Value to = b.create<arith::MinSIOp>(loc, mapping.lookupOrDefault(inner.getUpperBound()[0]),
                                          b.create<arith::AddIOp>(loc, from, width));
      auto cloned = cast<scf::ParallelOp>(b.clone(op, mapping));
      cloned->setOperand(0, from);
      cloned->setOperand(cloned.getNumLoops(), to);
    }
    b.setInsertionPointAfter(part);
    b.create<func::ReturnOp>(loc);

    // The launch.
    b.setInsertionPoint(loop);
    Value one = b.create<arith::ConstantIndexOp>(loc, 1);
    Value trips = tripCount(b, loop);
    Value work = estimateWork(b, loc, *loop.getBody(), loop);
    Value grain_v = b.create<arith::ConstantIndexOp>(loc, grain);
    Value per_group = b.create<arith::MaxSIOp>(loc, ceilDiv(b, loc, grain_v, work), one);
    // Never more rows per workgroup than there are rows (a block must fit the driver's limits).
    per_group = b.create<arith::MinSIOp>(loc, per_group, b.create<arith::MaxSIOp>(loc, trips, one));
    Value groups = ceilDiv(b, loc, trips, per_group);
    // Rows of more than `grain` work are split in parts of about `grain`, at most one per
    // iteration of the longest inner loop.
    Value row_parts = one;
    if (!split.empty()) {
      Value longest = one;
      for (scf::ParallelOp inner : split)
        longest = b.create<arith::MaxSIOp>(loc, longest, tripCount(b, inner));
      longest = b.create<arith::MinSIOp>(loc, longest,
                                         b.create<arith::ConstantIndexOp>(loc, kMaxRowParts));
      row_parts = b.create<arith::MinSIOp>(loc, ceilDiv(b, loc, work, grain_v), longest);
    }
    b.create<LaunchOp>(loc, ctx, FlatSymbolRefAttr::get(kernel), groups, row_parts, one,
                       per_group, one, one, captures);
    loop.erase();
    return success();
  }

  int next_ = 0;
  ArrayAttr gpu_targets_;  // cuda, hsa: one target attribute per --gpu-arch architecture
};

}  // namespace
}  // namespace disc_ral
}  // namespace mlir
