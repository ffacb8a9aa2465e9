// SPIR-V kernels for device "vulkan": the outlining (spirv_kernels.h has the contract) and
// disc-ral-serialize-kernels (Passes.td).
#include "compiler_passes/conversion/spirv/spirv_kernels.h"

#include <string>

#include "compiler_passes/dialect/dialect.h"
#include "compiler_passes/conversion/kernel_common.h"
#include "compiler_passes/passes.h"
#include "mlir/Conversion/ArithToSPIRV/ArithToSPIRV.h"
#include "mlir/Conversion/FuncToSPIRV/FuncToSPIRV.h"
#include "mlir/Conversion/GPUToSPIRV/GPUToSPIRV.h"
#include "mlir/Conversion/MathToSPIRV/MathToSPIRV.h"
#include "mlir/Conversion/MemRefToSPIRV/MemRefToSPIRV.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToSPIRV/SCFToSPIRV.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVAttributes.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVDialect.h"
#include "mlir/Dialect/SPIRV/IR/SPIRVOps.h"
#include "mlir/Dialect/SPIRV/IR/TargetAndABI.h"
#include "mlir/Dialect/SPIRV/Transforms/Passes.h"
#include "mlir/Dialect/SPIRV/Transforms/SPIRVConversion.h"
#include "mlir/Dialect/SPIRV/Utils/LayoutUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/SPIRV/Serialization.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir {
namespace disc_ral {

#define GEN_PASS_DEF_SERIALIZEKERNELSPASS
#include "compiler_passes/Passes.h.inc"

namespace {

// What the kernels may use; UpdateVCE keeps only what a kernel needs. Every capability here is
// one the Vulkan driver enables when the device has it (drivers/vulkan/vulkan_device.cc).
spirv::TargetEnvAttr targetEnv(MLIRContext* ctx) {
  using spirv::Capability;
  using spirv::Extension;
  auto vce = spirv::VerCapExtAttr::get(
      spirv::Version::V_1_3,
      {Capability::Shader, Capability::Int64, Capability::Int16, Capability::Int8,
       Capability::Float64, Capability::Float16, Capability::StorageBuffer16BitAccess,
       Capability::StorageBuffer8BitAccess},
      {Extension::SPV_KHR_storage_buffer_storage_class, Extension::SPV_KHR_8bit_storage,
       Extension::SPV_KHR_16bit_storage},
      ctx);
  return spirv::TargetEnvAttr::get(
      vce, spirv::getDefaultResourceLimits(ctx), spirv::ClientAPI::Vulkan, spirv::Vendor::Unknown,
      spirv::DeviceType::Unknown, spirv::TargetEnvAttr::kUnknownDeviceID);
}

// Index math in 64 bits (buffers may exceed 2^31 elements); narrow types used natively, with the
// capabilities above, rather than emulated in 32-bit words.
SPIRVConversionOptions conversionOptions() {
  SPIRVConversionOptions options;
  options.use64bitIndex = true;
  options.emulateLT32BitScalarTypes = false;
  return options;
}

spirv::ModuleOp kernelModule(Operation* op) {
  auto m = dyn_cast_or_null<spirv::ModuleOp>(op);
  return m && m->hasAttr(kKernelAttr) ? m : nullptr;
}

bool isBufferElement(Type t) {
  if (auto i = dyn_cast<IntegerType>(t))
    return llvm::is_contained({1u, 8u, 16u, 32u, 64u}, i.getWidth());
  return isa<Float16Type, Float32Type, Float64Type>(t);
}

// SCF-to-SPIR-V keeps a loop's results in variables written at each iteration's end; a loop that
// runs zero times would leave them unset. Loops with results get an explicit zero-trip branch.
void guardZeroTripLoops(Operation* root) {
  SmallVector<scf::ForOp> with_results;
  root->walk([&](scf::ForOp f) {
    if (f.getNumResults() > 0) with_results.push_back(f);
  });
  for (scf::ForOp f : with_results) {
    OpBuilder b(f);
    Location loc = f.getLoc();
    Value runs = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, f.getLowerBound(),
                                         f.getUpperBound());
    auto guard = b.create<scf::IfOp>(loc, f.getResultTypes(), runs, /*withElseRegion=*/true);
    f.replaceAllUsesWith(guard.getResults());
    OpBuilder::atBlockEnd(guard.elseBlock()).create<scf::YieldOp>(loc, f.getInitArgs());
    f->moveBefore(guard.thenBlock(), guard.thenBlock()->end());
    OpBuilder::atBlockEnd(guard.thenBlock()).create<scf::YieldOp>(loc, f.getResults());
  }
}

// Converts the kernel's body (arith, math, memref, scf, gpu ids in a func.func) to SPIR-V, then
// lowers its entry-point ABI and sets the module's version, capabilities and extensions.
LogicalResult convertToSpirv(spirv::ModuleOp module) {
  MLIRContext* ctx = module.getContext();
  spirv::TargetEnvAttr env = targetEnv(ctx);
  SPIRVTypeConverter converter(env, conversionOptions());
  ScfToSPIRVContext scf_context;
  RewritePatternSet patterns(ctx);
  populateBuiltinFuncToSPIRVPatterns(converter, patterns);
  populateFuncToSPIRVPatterns(converter, patterns);
  arith::populateArithToSPIRVPatterns(converter, patterns);
  populateMathToSPIRVPatterns(converter, patterns);
  populateMemRefToSPIRVPatterns(converter, patterns);
  populateSCFToSPIRVPatterns(converter, scf_context, patterns);
  populateGPUToSPIRVPatterns(converter, patterns);
  std::unique_ptr<ConversionTarget> target = SPIRVConversionTarget::get(env);
  target->addLegalOp<UnrealizedConversionCastOp>();
  if (failed(applyFullConversion(module, *target, std::move(patterns)))) return failure();

  // SPIR-V wants every function variable at the top of the entry block; scf.for results get
  // theirs right before the loop. They have no initializer, so hoisting them changes nothing.
  module.walk([](spirv::FuncOp f) {
    Block& entry = f.getBody().front();
    SmallVector<spirv::VariableOp> vars;
    f.walk([&](spirv::VariableOp v) {
      if (v->getBlock() != &entry) vars.push_back(v);
    });
    for (spirv::VariableOp v : vars) v->moveBefore(&entry, entry.begin());
  });

  // Float arithmetic is exact as written: drivers may otherwise reassociate or contract it
  // (Mesa does), which breaks the rounding tricks of the inlined math (x + 1.5*2^23 - 1.5*2^23)
  // and would make results depend on the driver.
  module.walk([](Operation* op) {
    if (isa<spirv::FAddOp, spirv::FSubOp, spirv::FMulOp, spirv::FDivOp, spirv::FRemOp,
            spirv::FModOp, spirv::FNegateOp>(op))
      op->setAttr("no_contraction", UnitAttr::get(op->getContext()));
  });

  PassManager pm(ctx, spirv::ModuleOp::getOperationName());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(spirv::createSPIRVLowerABIAttributesPass());
  pm.addPass(spirv::createSPIRVUpdateVCEPass());
  return pm.run(module);
}

}  // namespace

LogicalResult outlineSpirvKernel(scf::ParallelOp loop, Value ctx, StringRef name,
                                 SymbolTable& symbols) {
  MLIRContext* mctx = loop.getContext();
  Location loc = loop.getLoc();
  auto fail = [&](const Twine& why) -> LogicalResult {
    return loop.emitError("this loop cannot run on device 'vulkan': ") << why;
  };
  if (loop.getNumLoops() != 1 || loop.getNumReductions() != 0)
    return fail("a reduction over the outermost loop cannot run in a SPIR-V kernel yet");

  // ---- What the kernel uses from the host.
  // (The upper bound only sizes the host's trip count; the kernel gets that instead.)
  SetVector<Value> used = kernelUses(loop);
  KernelInterface iface;
  if (failed(captureBuffers(loop, used, "SPIR-V", isBufferElement, fail, iface)))
    return failure();

  // ---- Host values the kernel receives (push-constant members, in order): the trip count,
  // every non-constant scalar the body uses (bounds and step included), and each buffer's
  // dynamic offset, strides and the sizes its memref.dim ops read.
  OpBuilder b(loop);
  Value trips = tripCount(b, loop);
  iface.param(trips);
  addScalarParams(b, loop, used, iface);

  SmallVector<Type> members;
  int64_t push_bytes = 0;
  for (Value p : iface.params) {
    members.push_back(hostScalarType(p.getType()));
    const int64_t size = members.back().getIntOrFloatBitWidth() / 8;
    push_bytes = llvm::alignTo(push_bytes, size) + size;  // scalars aligned to their size
  }
  if (push_bytes > kSpirvMaxPushConstantBytes)
    return fail("it needs " + std::to_string(push_bytes) + " bytes of push constants (" +
                std::to_string(members.size()) + " values), more than the " +
                std::to_string(kSpirvMaxPushConstantBytes) + " every Vulkan device accepts");

  // ---- The kernel module: bindings, the push-constant block, the entry function.
  OpBuilder mb(mctx);
  ModuleOp parent = loop->getParentOfType<ModuleOp>();
  mb.setInsertionPointToEnd(parent.getBody());
  auto smodule = mb.create<spirv::ModuleOp>(loc, spirv::AddressingModel::Logical,
                                            spirv::MemoryModel::GLSL450, std::nullopt, name);
  smodule->setAttr(kKernelAttr, mb.getUnitAttr());
  smodule->setAttr(spirv::getTargetEnvAttrName(), targetEnv(mctx));
  symbols.insert(smodule);
  mb.setInsertionPointToStart(smodule.getBody());

  SPIRVTypeConverter converter(targetEnv(mctx), conversionOptions());
  auto storage = spirv::StorageClassAttr::get(mctx, spirv::StorageClass::StorageBuffer);
  SmallVector<spirv::GlobalVariableOp> bindings;
  SmallVector<MemRefType> flat_types;
  for (auto [k, buffer] : llvm::enumerate(iface.buffers)) {
    auto flat =
        MemRefType::get({ShapedType::kDynamic}, cast<MemRefType>(buffer.getType()).getElementType(),
                        MemRefLayoutAttrInterface(), storage);
    Type ptr = converter.convertType(flat);
    if (!ptr) return fail("no SPIR-V type for " + typeString(flat));
    flat_types.push_back(flat);
    bindings.push_back(mb.create<spirv::GlobalVariableOp>(
        loc, ptr, ("ral_buffer_" + std::to_string(k)), 0u, static_cast<unsigned>(k)));
  }
  spirv::GlobalVariableOp push_constants;
  if (!members.empty()) {
    auto block = VulkanLayoutUtils::decorateType(spirv::StructType::get(members));
    push_constants = mb.create<spirv::GlobalVariableOp>(
        loc, TypeAttr::get(spirv::PointerType::get(block, spirv::StorageClass::PushConstant)),
        mb.getStringAttr("ral_push_constants"), nullptr);
  }

  auto func = mb.create<func::FuncOp>(loc, name, mb.getFunctionType({}, {}));
  func->setAttr(
      spirv::getEntryPointABIAttrName(),
      spirv::getEntryPointABIAttr(mctx, {static_cast<int32_t>(kSpirvWorkgroupSize), 1, 1}));
  Block* entry = func.addEntryBlock();
  OpBuilder kb = OpBuilder::atBlockBegin(entry);
  // The kernel's value of a host value: a push-constant member, loaded once in the entry block.
  KernelValues values(
      kb, loc, iface,
      [&](unsigned k) -> Value {
        Value index = kb.create<spirv::ConstantOp>(loc, kb.getI32Type(), kb.getI32IntegerAttr(k));
        Value block = kb.create<spirv::AddressOfOp>(loc, push_constants);
        Value member = kb.create<spirv::AccessChainOp>(loc, block, ValueRange{index});
        return kb.create<spirv::LoadOp>(loc, member);
      },
      /*index_by_cast=*/false);
  auto kernelValue = [&](Value host) { return values.get(host); };
  auto layoutValue = [&](int64_t fixed, Value host) { return values.layout(fixed, host); };

  // Buffers: the flat view of each binding, and a placeholder of the captured type that the
  // body is cloned against and whose loads/stores/dims are then rewritten.
  IRMapping mapping;
  SmallVector<Value> flats, placeholders;
  for (auto [k, buffer] : llvm::enumerate(iface.buffers)) {
    Value addr = kb.create<spirv::AddressOfOp>(loc, bindings[k]);
    Value flat = kb.create<UnrealizedConversionCastOp>(loc, flat_types[k], addr).getResult(0);
    Value placeholder =
        kb.create<UnrealizedConversionCastOp>(loc, buffer.getType(), flat).getResult(0);
    flats.push_back(flat);
    placeholders.push_back(placeholder);
    mapping.map(buffer, placeholder);
  }
  for (Value v : used)
    if (!isa<MemRefType>(v.getType())) mapping.map(v, kernelValue(v));

  // Grid-stride loop over the iterations; what it needs from the entry block goes before it.
  Value size = kb.create<arith::ConstantIndexOp>(loc, kSpirvWorkgroupSize);
  Value group = kb.create<gpu::BlockIdOp>(loc, gpu::Dimension::x);
  Value lane = kb.create<gpu::ThreadIdOp>(loc, gpu::Dimension::x);
  Value groups = kb.create<gpu::GridDimOp>(loc, gpu::Dimension::x);
  Value first = kb.create<arith::AddIOp>(loc, kb.create<arith::MulIOp>(loc, group, size), lane);
  Value stride = kb.create<arith::MulIOp>(loc, groups, size);
  auto grid_loop = cloneAsGridStrideLoop(kb, loop, mapping, first, kernelValue(trips), stride);
  kb.create<func::ReturnOp>(loc);
  kb.setInsertionPoint(grid_loop);

  // Loads, stores and dims of the buffers through their flat views. Layout values come from the
  // entry block (kb), so they are computed once per invocation.
  for (auto [k, placeholder] : llvm::enumerate(placeholders)) {
    Value flat = flats[k];
    rewriteBufferAccesses(
        placeholder, cast<MemRefType>(iface.buffers[k].getType()), iface.layouts[k], layoutValue,
        [&](OpBuilder& ob, Value at) -> Value {
          return ob.create<memref::LoadOp>(loc, flat, ValueRange{at});
        },
        [&](OpBuilder& ob, Value value, Value at) {
          ob.create<memref::StoreOp>(loc, value, flat, ValueRange{at});
        });
  }
  if (failed(sequentializeInnerLoops(func, "SPIR-V"))) return failure();
  guardZeroTripLoops(func);
  if (failed(convertToSpirv(smodule))) {
    return fail("its body has an operation SPIR-V conversion does not handle (see above)");
  }

  // ---- The launch: pointers, then members; a grid of at most kSpirvMaxGroups workgroups.
  SmallVector<Value> args = launchOperands(b, loc, iface);
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  Value block_x = b.create<arith::ConstantIndexOp>(loc, kSpirvWorkgroupSize);
  Value wanted = b.create<arith::CeilDivSIOp>(loc, trips, block_x);
  Value grid =
      b.create<arith::MinSIOp>(loc, wanted, b.create<arith::ConstantIndexOp>(loc, kSpirvMaxGroups));
  b.create<LaunchOp>(loc, ctx, FlatSymbolRefAttr::get(mctx, name), grid, one, one, block_x, one,
                     one, args);
  loop.erase();
  return success();
}

namespace {

// disc-ral-serialize-kernels: each SPIR-V kernel module becomes bytes in the module attribute
// disc_ral.device_kernels (ral-compile stores them as spirv executables).
class SerializeKernelsPass : public impl::SerializeKernelsPassBase<SerializeKernelsPass> {
 public:
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext* ctx = &getContext();
    SmallVector<Attribute> kernels;
    if (auto existing = module->getAttrOfType<ArrayAttr>(kDeviceKernelsAttr))
      kernels.assign(existing.begin(), existing.end());
    for (spirv::ModuleOp k : llvm::to_vector(module.getOps<spirv::ModuleOp>())) {
      if (!kernelModule(k)) continue;
      SmallVector<uint32_t> words;
      if (failed(spirv::serialize(k, words))) {
        k.emitError("SPIR-V serialization failed");
        return signalPassFailure();
      }
      std::string bytes(reinterpret_cast<const char*>(words.data()), words.size() * 4);
      NamedAttrList entry;
      entry.append("name", StringAttr::get(ctx, *k.getName()));
      entry.append("format", StringAttr::get(ctx, "spirv"));
      entry.append("data", StringAttr::get(ctx, bytes));
      entry.append("workgroup", DenseI64ArrayAttr::get(ctx, {kSpirvWorkgroupSize, 1, 1}));
      kernels.push_back(entry.getDictionary(ctx));
      k.erase();
    }
    if (!kernels.empty()) module->setAttr(kDeviceKernelsAttr, ArrayAttr::get(ctx, kernels));
  }
};

}  // namespace
}  // namespace disc_ral
}  // namespace mlir
