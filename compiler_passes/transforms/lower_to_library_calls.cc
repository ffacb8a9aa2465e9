// disc-ral-lower-to-library-calls (the second RAL pass; docs/architecture.md lists the pipeline).
//
// Ops that have a RAL kernel become disc_ral.dispatch:
//   linalg.matmul       (f16/bf16/f32/f64 memrefs) -> "ral_gemm"(a, b, c, false, false)
//   linalg.batch_matmul                            -> "ral_batch_gemm"(a, b, c, false, false)
//   (device vulkan: f32 only; the others stay linalg and become kernels)
//   call @f where @f has {disc_ral.custom_call = "target"} -> "target"(args...)
//   disc_ral.conv       (memrefs, device cpu)      -> "ral_conv"(x, w, bias, y, config, alpha,
//                                                     beta), config a constant global laid out
//                                                     as kernels/conv/conv.h says
//   disc_ral.topk       (memrefs, every device)    -> "ral_topk"(x, values, indices, k, largest)
//   a depthwise-separable chain of disc_ral.conv (conv_block_chains.h; device cpu, unless
//   fuse-conv-blocks=false) -> "ral_conv_block"(x, w1, b1, w2, b2, w3, b3, y, config,
//                                                bounds), the intermediate buffers dropped
//   linalg.transpose feeding products (or written by one), device cpu: a strided view instead
//   (transpose_views.h)
//   disc_ral.conv of a broadcast multiply's product (conv_input_scales.h; device cpu, unless
//   fuse-conv-scales=false) -> "ral_conv_scaled"(x, scale, w, bias, y, config, alpha, beta),
//                               the multiply and its product dropped
// and memref.alloc / memref.dealloc become disc_ral.alloc / disc_ral.dealloc, so buffers come
// from the host context (an output buffer is handed to the host without a copy). memref.copy
// between strided buffers becomes linalg.copy: MLIR lowers it to a call of `memrefCopy` from its
// runtime library, which a RAL module does not link. cf.assert becomes
//   scf.if (!cond) { disc_ral.signal_error %ctx, "message" }
// so a failed assertion fails the execution with its message, instead of aborting the host.
//
// The kernels compute c = a·b while linalg accumulates (c += a·b). When c was just zero-filled the
// fill is dropped; otherwise the product goes to a temporary that is added to c.
#include "compiler_passes/dialect/dialect.h"
#include "compiler_passes/dialect/type_codes.h"
#include "compiler_passes/passes.h"
#include "compiler_passes/transforms/conv_block_chains.h"
#include "compiler_passes/transforms/conv_input_scales.h"
#include "compiler_passes/transforms/loop_analysis.h"
#include "compiler_passes/transforms/transpose_views.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir {
namespace disc_ral {

#define GEN_PASS_DEF_LOWERTOLIBRARYCALLSPASS
#include "compiler_passes/Passes.h.inc"

namespace {

using func::CallOp;
using func::FuncOp;

// The execution context of the function around `op`, or null.
Value contextOf(Operation* op) {
  auto f = op->getParentOfType<FuncOp>();
  if (f && f.getNumArguments() > 0 && isa<ContextType>(f.getArgument(0).getType()))
    return f.getArgument(0);
  return Value();
}

LogicalResult missingContext(Operation* op) {
  auto f = op->getParentOfType<FuncOp>();
  return op->emitError() << "'" << op->getName() << "' needs the RAL execution context, but @"
                         << (f ? f.getName() : StringRef("?"))
                         << " has none (run disc-ral-inject-execution-context first; functions "
                            "not reachable from the entry get no context)";
}

// memref.copy of such buffers lowers to one llvm.memcpy.
bool isContiguous(Value v) {
  auto type = dyn_cast<MemRefType>(v.getType());
  return type && type.getLayout().isIdentity();
}

bool isKernelElement(Type t) { return t.isF16() || t.isBF16() || t.isF32() || t.isF64(); }

// A `linalg.fill` of zero into exactly `out`, earlier in the same block, with nothing in between
// that could read or write the buffer. Only for buffers allocated here, which nothing else
// aliases.
linalg::FillOp findZeroFill(Operation* op, Value out) {
  Value root = viewRoot(out);
  Operation* def = root.getDefiningOp();
  if (!def || !isa<memref::AllocOp, AllocOp>(def)) return nullptr;
  for (Operation* prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (auto fill = dyn_cast<linalg::FillOp>(prev)) {
      if (fill.getOutputs().size() == 1 && fill.getOutputs()[0] == out &&
          (matchPattern(fill.getInputs()[0], m_AnyZeroFloat()) ||
           matchPattern(fill.getInputs()[0], m_Zero())))
        return fill;
    }
    for (Value operand : prev->getOperands())
      if (isa<MemRefType>(operand.getType()) && viewRoot(operand) == root) return nullptr;
    // Regions of non-linalg ops could touch the buffer through captured values.
    if (prev->getNumRegions() > 0 && !isa<linalg::LinalgOp>(prev)) return nullptr;
  }
  return nullptr;
}

class LowerToLibraryCallsPass : public impl::LowerToLibraryCallsPassBase<LowerToLibraryCallsPass> {
 public:
  using LowerToLibraryCallsPassBase::LowerToLibraryCallsPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);

    // Convolution chains first: their stages must not become separate calls.
    if (device == "cpu" && fuseConvBlocks)
      for (ConvBlockChain& chain : findConvBlockChains(module))
        if (failed(lowerConvBlock(chain, symbols))) return signalPassFailure();

    // Then convolutions of scaled inputs (the multiply goes with them).
    if (device == "cpu" && fuseConvScales)
      for (ScaledConvInput& scaled : findScaledConvInputs(module))
        if (failed(lowerConv(scaled.conv, symbols, &scaled))) return signalPassFailure();

    // Transposes next to products become views the CPU's GEMMs read and write in place.
    if (device == "cpu") foldTransposesIntoViews(module);

    // Library calls first: the matmul fallback allocates a temporary the second walk converts.
    SmallVector<Operation*> calls;
    module.walk([&](Operation* op) {
      if (isa<linalg::MatmulOp, linalg::BatchMatmulOp, CallOp, ConvOp, TopKOp>(op))
        calls.push_back(op);
    });
    for (Operation* op : calls) {
      LogicalResult result = success();
      if (auto call = dyn_cast<CallOp>(op)) {
        auto callee = symbols.lookup<FuncOp>(call.getCallee());
        if (callee && callee->hasAttr(kCustomCallAttr)) result = lowerCustomCall(call, callee);
      } else if (auto conv = dyn_cast<ConvOp>(op)) {
        result = lowerConv(conv, symbols);
      } else if (auto topk = dyn_cast<TopKOp>(op)) {
        result = lowerTopK(topk);
      } else {
        result = lowerMatmul(cast<linalg::LinalgOp>(op),
                             isa<linalg::MatmulOp>(op) ? "ral_gemm" : "ral_batch_gemm");
      }
      if (failed(result)) return signalPassFailure();
    }
    // Custom-call declarations without calls left are dropped: nothing links against them.
    for (FuncOp f : llvm::make_early_inc_range(module.getOps<FuncOp>()))
      if (f->hasAttr(kCustomCallAttr) && SymbolTable::symbolKnownUseEmpty(f, module)) f.erase();

    // Assertions fail the execution; MLIR's own lowering would abort the process.
    SmallVector<cf::AssertOp> asserts;
    module.walk([&](cf::AssertOp op) { asserts.push_back(op); });
    for (cf::AssertOp op : asserts)
      if (failed(lowerAssert(op))) return signalPassFailure();

    // Copies MLIR would lower to a call of its runtime library become loops; on a device every
    // copy does (a kernel then moves the bytes on the device).
    module.walk([&](memref::CopyOp copy) {
      if (device == "cpu" && isContiguous(copy.getSource()) && isContiguous(copy.getTarget()))
        return;
      OpBuilder builder(copy);
      builder.create<linalg::CopyOp>(copy.getLoc(), copy.getSource(), copy.getTarget());
      copy.erase();
    });

    // A stack allocation of a size the input decides could overflow the host thread's stack
    // and kill the process; a heap one fails cleanly when too large (disc-ral-to-llvm).
    WalkResult allocas = module.walk([&](memref::AllocaOp op) {
      if (op.getDynamicSizes().empty()) return WalkResult::advance();
      op.emitOpError() << "with dynamic sizes is not supported (" << op.getType()
                       << "): a stack allocation of a size set at run time could overflow the "
                          "stack; use memref.alloc";
      return WalkResult::interrupt();
    });
    if (allocas.wasInterrupted()) return signalPassFailure();

    SmallVector<Operation*> memory;
    module.walk([&](Operation* op) {
      if (isa<memref::AllocOp, memref::DeallocOp>(op)) memory.push_back(op);
    });
    for (Operation* op : memory) {
      if (failed(lowerMemory(op))) return signalPassFailure();
    }
  }

 private:
  LogicalResult lowerAssert(cf::AssertOp op) {
    Value ctx = contextOf(op);
    if (!ctx) return missingContext(op);
    OpBuilder builder(op);
    Location loc = op.getLoc();
    Value yes = builder.create<arith::ConstantOp>(loc, builder.getBoolAttr(true));
    Value failed = builder.create<arith::XOrIOp>(loc, op.getArg(), yes);
    auto branch = builder.create<scf::IfOp>(loc, failed);
    builder.setInsertionPointToStart(branch.thenBlock());
    builder.create<SignalErrorOp>(loc, ctx, op.getMsg());
    op.erase();
    return success();
  }

  LogicalResult lowerCustomCall(CallOp call, FuncOp callee) {
    Value ctx = contextOf(call);
    if (!ctx) return missingContext(call);
    auto target = callee->getAttrOfType<StringAttr>(kCustomCallAttr);
    if (!target || target.getValue().empty())
      return callee.emitError() << "'" << kCustomCallAttr << "' must be a non-empty string";
    StringRef call_device = device;
    if (auto d = callee->getAttrOfType<StringAttr>(kCustomCallDeviceAttr))
      call_device = d.getValue();
    Type bad;
    if (encodeCallName(target.getValue(), call_device, call.getOperandTypes(),
                       call.getResultTypes(), &bad)
            .empty())
      return call.emitError() << "custom call @" << callee.getName() << " (\"" << target.getValue()
                              << "\") has an operand or result of type " << bad
                              << ", which has no RAL encoding";
    OpBuilder builder(call);
    auto dispatch = builder.create<DispatchOp>(call.getLoc(), call.getResultTypes(), ctx,
                                               target.getValue(), call_device, call.getOperands());
    call.replaceAllUsesWith(dispatch.getResults());
    call.erase();
    return success();
  }

  LogicalResult lowerMatmul(linalg::LinalgOp op, StringRef target) {
    if (!op.hasPureBufferSemantics()) return success();  // tensors: not ours to lower
    Value a = op.getDpsInputOperand(0)->get();
    Value b = op.getDpsInputOperand(1)->get();
    Value c = op.getDpsInitOperand(0)->get();
    Type element = cast<MemRefType>(c.getType()).getElementType();
    // Integer products and mixed types have no kernel: they stay for linalg -> loops.
    if (!isKernelElement(element) || cast<MemRefType>(a.getType()).getElementType() != element ||
        cast<MemRefType>(b.getType()).getElementType() != element)
      return success();
    // Vulkan's GEMM is f32 only; other types become generated kernels there.
    if (device == "vulkan" && !element.isF32()) return success();
    // The kernels assume the output does not alias an input.
    Value root = viewRoot(c);
    if (viewRoot(a) == root || viewRoot(b) == root) return success();
    Value ctx = contextOf(op);
    if (!ctx) return missingContext(op);

    Location loc = op.getLoc();
    OpBuilder builder(op);
    Value no = builder.create<arith::ConstantOp>(loc, builder.getBoolAttr(false));
    if (linalg::FillOp fill = findZeroFill(op, c)) {
      builder.create<DispatchOp>(loc, TypeRange{}, ctx, target, device,
                                 ValueRange{a, b, c, no, no});
      fill.erase();
      op->erase();
      return success();
    }
    // c += a·b as tmp = a·b; c += tmp.
    auto c_type = cast<MemRefType>(c.getType());
    SmallVector<Value> sizes;
    for (int64_t d = 0; d < c_type.getRank(); ++d)
      if (c_type.isDynamicDim(d)) sizes.push_back(builder.create<memref::DimOp>(loc, c, d));
    auto tmp_type = MemRefType::get(c_type.getShape(), element);
    Value tmp = builder.create<memref::AllocOp>(loc, tmp_type, sizes);
    builder.create<DispatchOp>(loc, TypeRange{}, ctx, target, device,
                               ValueRange{a, b, tmp, no, no});
    const unsigned rank = static_cast<unsigned>(c_type.getRank());
    AffineMap identity = builder.getMultiDimIdentityMap(rank);
    SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
    builder.create<linalg::GenericOp>(loc, TypeRange{}, ValueRange{tmp}, ValueRange{c},
                                      ArrayRef<AffineMap>{identity, identity}, iterators,
                                      [](OpBuilder& b, Location l, ValueRange args) {
                                        Value sum = b.create<arith::AddFOp>(l, args[1], args[0]);
                                        b.create<linalg::YieldOp>(l, sum);
                                      });
    builder.create<memref::DeallocOp>(loc, tmp);
    op->erase();
    return success();
  }

  // disc_ral.conv -> ral_conv (ral_conv_scaled of `scaled`'s operands when given). Its
  // attributes travel as one i64 vector, a constant global.
  LogicalResult lowerConv(ConvOp op, SymbolTable& symbols, ScaledConvInput* scaled = nullptr) {
    if (device != "cpu" && device != "cuda")
      return op.emitOpError() << "has no kernel on device '" << device.getValue()
                              << "' (ral_conv runs on the cpu and cuda; import convolutions for "
                                 "other devices as im2col and GEMM)";
    if (!isa<MemRefType>(op.getInput().getType()))
      return op.emitOpError("is still on tensors: run disc-ral-bufferize first");
    const bool quantized = op.isQuantized();
    if (quantized && device != "cpu")
      return op.emitOpError() << "is quantized: ral_qconv runs on the cpu only, not on '"
                              << device.getValue() << "'";
    if (!quantized && !cast<MemRefType>(op.getInput().getType()).getElementType().isF32())
      return op.emitOpError("ral_conv takes f32 only");
    Value ctx = contextOf(op);
    if (!ctx) return missingContext(op);
    const bool constant_filter = isConstantFilter(op.getFilter(), symbols);
    const int64_t flags = (op.getResidual() ? 1 : 0) | (constant_filter ? 2 : 0) |
                          (op.getChannelsLast() ? 4 : 0) | (op.getTransposed() ? 8 : 0);
    SmallVector<int64_t> config = {static_cast<int64_t>(op.getStrides().size()),
                                   static_cast<int64_t>(op.getGroups()),
                                   ConvOp::activationCode(op.getActivation()), flags};
    for (ArrayRef<int64_t> part :
         {op.getStrides(), op.getDilations(), op.getPadBegin(), op.getPadEnd()})
      config.append(part.begin(), part.end());

    Location loc = op.getLoc();
    OpBuilder builder(op);
    Value alpha = builder.create<arith::ConstantOp>(loc, op.getAlphaAttr());
    Value beta = builder.create<arith::ConstantOp>(loc, op.getBetaAttr());
    if (quantized) {
      // kernels/conv/qconv.h: ral_conv's config, then the zero points and the unsigned flags.
      config.push_back(op.getInputZeroPoint());
      config.push_back(op.getOutputZeroPoint());
      config.push_back((op.getInputUnsigned() ? 1 : 0) | (op.getOutputUnsigned() ? 2 : 0));
      ArrayRef<float> scales = *op.getScales();
      Value scales_buffer = hostConstant(
          builder, symbols, loc, "ral_qconv_scales",
          DenseElementsAttr::get(
              RankedTensorType::get({static_cast<int64_t>(scales.size())}, builder.getF32Type()),
              scales));
      builder.create<DispatchOp>(
          loc, TypeRange{}, ctx, "ral_qconv", device,
          ValueRange{op.getInput(), op.getFilter(), op.getBias(), op.getInit(),
                     configBuffer(builder, symbols, loc, "ral_qconv_config", config),
                     scales_buffer, alpha, beta});
      op->erase();
      return success();
    }
    Value config_buffer = configBuffer(builder, symbols, loc, "ral_conv_config", config);
    if (scaled) {
      builder.create<DispatchOp>(
          loc, TypeRange{}, ctx, "ral_conv_scaled", device,
          ValueRange{scaled->data, scaled->scale, op.getFilter(), op.getBias(), op.getInit(),
                     config_buffer, alpha, beta});
      op->erase();
      scaled->multiply->erase();
      // Deallocations first: they use the allocation.
      for (Operation* dead : scaled->intermediates)
        if (isa<memref::DeallocOp, DeallocOp>(dead)) dead->erase();
      for (Operation* dead : scaled->intermediates)
        if (!isa<memref::DeallocOp, DeallocOp>(dead)) dead->erase();
      return success();
    }
    builder.create<DispatchOp>(loc, TypeRange{}, ctx, "ral_conv", device,
                               ValueRange{op.getInput(), op.getFilter(), op.getBias(), op.getInit(),
                                          config_buffer, alpha, beta});
    op->erase();
    return success();
  }

  // A filter read from a constant global (a module constant later) never changes while the
  // module is loaded: the kernel may keep its prepared copy.
  static bool isConstantFilter(Value filter, SymbolTable& symbols) {
    if (auto get = viewRoot(filter).getDefiningOp<memref::GetGlobalOp>()) {
      auto global = symbols.lookup<memref::GlobalOp>(get.getName());
      return global && global.getConstant();
    }
    return false;
  }

  // A chain -> ral_conv_block (kernels/conv/conv_block.h), where its last stage was; an absent
  // stage's filter and bias are empty constants.
  LogicalResult lowerConvBlock(ConvBlockChain& chain, SymbolTable& symbols) {
    ConvOp dw = chain.depthwise, first = chain.first(), last = chain.last();
    Value ctx = contextOf(last);
    if (!ctx) return missingContext(last);
    Location loc = last.getLoc();
    OpBuilder builder(last);
    auto f32 = builder.getF32Type();
    const int64_t channels = cast<MemRefType>(first.getInput().getType()).getDimSize(3);
    auto empty = [&](ArrayRef<int64_t> shape) {
      return hostConstant(
          builder, symbols, loc, "ral_conv_block_none",
          DenseElementsAttr::get(RankedTensorType::get(shape, f32), ArrayRef<float>{}));
    };
    int64_t flags = last.getResidual() ? 1 : 0;
    SmallVector<int64_t> config = {0};
    SmallVector<float> bounds;
    SmallVector<Value> operands = {first.getInput()};
    int stage = 0;
    for (ConvOp op : {chain.expand, dw, chain.project}) {
      ++stage;
      if (op) {
        operands.push_back(op.getFilter());
        operands.push_back(op.getBias());
        if (isConstantFilter(op.getFilter(), symbols)) flags |= int64_t{1} << stage;
      } else {
        // [0, C, 1, 1]: no expansion of x's C channels; [0, E, 1, 1]: no projection of E.
        const int64_t in =
            stage == 1 ? channels : cast<MemRefType>(dw.getFilter().getType()).getDimSize(0);
        operands.push_back(empty({0, in, 1, 1}));
        operands.push_back(empty({0}));
      }
      config.push_back(op ? ConvOp::activationCode(op.getActivation()) : 0);
      bounds.push_back(op ? op.getAlpha().convertToFloat() : 0.0f);
      bounds.push_back(op ? op.getBeta().convertToFloat() : 0.0f);
    }
    config[0] = flags;
    for (ArrayRef<int64_t> part : {dw.getStrides(), dw.getPadBegin(), dw.getPadEnd()})
      config.append(part.begin(), part.end());
    operands.push_back(last.getInit());
    operands.push_back(configBuffer(builder, symbols, loc, "ral_conv_block_config", config));
    operands.push_back(hostConstant(
        builder, symbols, loc, "ral_conv_block_bounds",
        DenseElementsAttr::get(RankedTensorType::get({6}, f32), ArrayRef<float>(bounds))));
    builder.create<DispatchOp>(loc, TypeRange{}, ctx, "ral_conv_block", device, operands);
    for (ConvOp op : {chain.expand, dw, chain.project})
      if (op) op->erase();
    // Deallocations first: they use the allocations.
    for (Operation* op : chain.intermediates)
      if (isa<memref::DeallocOp, DeallocOp>(op)) op->erase();
    for (Operation* op : chain.intermediates)
      if (!isa<memref::DeallocOp, DeallocOp>(op)) op->erase();
    return success();
  }

  // An i64 config vector as a constant global the kernel reads.
  Value configBuffer(OpBuilder& builder, SymbolTable& symbols, Location loc, StringRef name,
                     ArrayRef<int64_t> config) {
    return hostConstant(
        builder, symbols, loc, name,
        DenseElementsAttr::get(
            RankedTensorType::get({static_cast<int64_t>(config.size())}, builder.getI64Type()),
            config));
  }

  // `data` as a constant global read through memref.get_global at the builder's position.
  Value hostConstant(OpBuilder& builder, SymbolTable& symbols, Location loc, StringRef name,
                     DenseElementsAttr data) {
    auto type = MemRefType::get(data.getType().getShape(), data.getType().getElementType());
    auto module = builder.getInsertionBlock()->getParentOp()->getParentOfType<ModuleOp>();
    OpBuilder module_builder(module.getBodyRegion());
    auto global = module_builder.create<memref::GlobalOp>(
        loc, name, module_builder.getStringAttr("private"), type, data,
        /*constant=*/true, /*alignment=*/nullptr);
    // Read by the kernel's host side (kernels/conv/conv.h), on every device: it must stay in the
    // host code, never become a module constant a GPU device keeps in its own memory.
    global->setAttr(kHostConstantAttr, builder.getUnitAttr());
    symbols.insert(global);  // renames it when the name is taken
    return builder.create<memref::GetGlobalOp>(loc, type, global.getSymName());
  }

  // disc_ral.topk -> ral_topk(x, values, indices, k, largest).
  LogicalResult lowerTopK(TopKOp op) {
    // Every device registers ral_topk (kernels/topk_sort/).
    if (!isa<MemRefType>(op.getInput().getType()))
      return op.emitOpError("is still on tensors: run disc-ral-bufferize first");
    Value ctx = contextOf(op);
    if (!ctx) return missingContext(op);
    OpBuilder builder(op);
    Value largest = builder.create<arith::ConstantIntOp>(op.getLoc(), !op.getSmallest(), 1);
    builder.create<DispatchOp>(
        op.getLoc(), TypeRange{}, ctx, "ral_topk", device,
        ValueRange{op.getInput(), op.getValuesInit(), op.getIndicesInit(), op.getK(), largest});
    op->erase();
    return success();
  }

  LogicalResult lowerMemory(Operation* op) {
    Value ctx = contextOf(op);
    if (!ctx) return missingContext(op);
    OpBuilder builder(op);
    if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
      builder.create<DeallocOp>(op->getLoc(), ctx, dealloc.getMemref());
      op->erase();
      return success();
    }
    auto alloc = cast<memref::AllocOp>(op);
    MemRefType type = alloc.getType();
    if (!type.getLayout().isIdentity())
      return alloc.emitError() << "RAL allocates only memrefs with the identity layout, got "
                               << type;
    if (!alloc.getSymbolOperands().empty())
      return alloc.emitError() << "RAL allocations do not take layout symbol operands";
    // ral_alloc returns 64-byte aligned memory; more is kept on the op for disc-ral-to-llvm.
    IntegerAttr alignment;
    if (auto align = alloc.getAlignment(); align && *align > 64) {
      if (!llvm::isPowerOf2_64(*align))
        return alloc.emitError() << "alignment must be a power of two, got " << *align;
      alignment = builder.getI64IntegerAttr(static_cast<int64_t>(*align));
    }
    auto ral_alloc =
        builder.create<AllocOp>(op->getLoc(), type, ctx, alloc.getDynamicSizes(), alignment);
    alloc.replaceAllUsesWith(ral_alloc.getResult());
    op->erase();
    return success();
  }
};

}  // namespace

}  // namespace disc_ral
}  // namespace mlir
