// disc-ral-to-llvm (the third RAL compiler pass): the module to the LLVM dialect, with every RAL op
// lowered to a call through the module ABI of ral/abi.h.
//
// A call of RAL function `name` with arguments a1..an and results r1..rm becomes
//   %s    = alloca {ptr ctx, A1, ..., An, R1, ..., Rm}      argument struct
//   %argv = alloca [1+n+m x ptr]                            args[k] = &%s.k
//   %fn   = load ral_imports[i].fn ; call %fn(%ctx, %argv)  (or ral_api_call(%ctx, "name", %argv))
//   if (((ral_exec_header*)%ctx)->error != 0) return;
//   r_j   = load %s.(1+n+j)
// where `name` is encoded from the op's types with the runtime's encoder. The module gets
// `ral_imports` (names, null function pointers for the loader to fill), `ral_import_count`, and
// the exported `void ral_entry(void* ctx)`; everything else is internal.
#include "compiler_passes/dialect/dialect.h"
#include "compiler_passes/transforms/limits.h"
#include "compiler_passes/passes.h"
#include "compiler_passes/dialect/type_codes.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/MemRefBuilder.h"
#include "mlir/Conversion/LLVMCommon/Pattern.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "mlir/Transforms/DialectConversion.h"
#include "ral/name_encoding.h"
#include "ral/status.h"

namespace mlir {
namespace disc_ral {

#define GEN_PASS_DEF_DISCRALTOLLVMPASS
#include "compiler_passes/Passes.h.inc"

namespace {

constexpr char kImportsSymbol[] = "ral_imports";
constexpr char kImportCountSymbol[] = "ral_import_count";
constexpr char kApiCallSymbol[] = "ral_api_call";
// Marks on generated ops, consumed (and removed) after the conversion.
constexpr char kCheckErrorAttr[] = "disc_ral.check_error";
constexpr char kHoistAttr[] = "disc_ral.hoist";

Type ptrType(MLIRContext* ctx) { return LLVM::LLVMPointerType::get(ctx); }

// void ral_signal_error(ctx, int32_t code, const char* message): LLVM's opaque pointers cannot
// say `const char*` (pi8), so this one name is spelled out.
std::string signalErrorName() {
  return ral::encodeApiName("ral_signal_error", "cpu", {"pvoid", "i32", "pi8"}, {});
}

// A disc_ral.alloc with dynamic sizes fails the execution with this message when its sizes are
// out of range (AllocLowering); not the file's path: the message is compiled into the module.
std::string allocSizeMessage(AllocOp alloc) {
  std::string message;
  llvm::raw_string_ostream os(message);
  os << "memref.alloc of " << alloc.getType();
  // An imported model's ops carry their node's label ("node 'x' (Tile)") and no line.
  if (auto name = alloc.getLoc()->findInstanceOf<NameLoc>())
    os << " for " << name.getName().getValue();
  if (auto file = alloc.getLoc()->findInstanceOf<FileLineColLoc>(); file && file.getLine() > 0)
    os << " at line " << file.getLine() << ", column " << file.getColumn();
  os << ": a size is negative, or the buffer would have more than 2^48 elements or 2^56 bytes";
  return os.str();
}

// The encoded name of the RAL function a disc_ral op calls; empty for other ops. The host glue
// (inputs, outputs, host memory, errors) is the host context's, named for "cpu" whatever the
// device; kernel launches and constants are the device's (`device`).
std::string calleeName(Operation* op, StringRef device) {
  MLIRContext* ctx = op->getContext();
  const StringRef host = "cpu";
  Type i64 = IntegerType::get(ctx, 64);
  if (auto recv = dyn_cast<RecvInputOp>(op))
    return encodeCallName("ral_recv_input", host, {i64}, {recv.getType()});
  if (auto send = dyn_cast<SendOutputOp>(op))
    return encodeCallName("ral_send_output", host, {i64, send.getValue().getType()}, {});
  if (auto dispatch = dyn_cast<DispatchOp>(op))
    return encodeCallName(dispatch.getCallTargetName(), dispatch.getDevice(),
                          dispatch.getArgs().getTypes(), dispatch.getResultTypes());
  if (isa<AllocOp>(op)) return encodeCallName("ral_alloc", host, {i64}, {ptrType(ctx)});
  if (isa<DeallocOp>(op)) return encodeCallName("ral_dealloc", host, {ptrType(ctx)}, {});
  if (isa<SignalErrorOp>(op)) return signalErrorName();
  if (auto constant = dyn_cast<ConstantOp>(op))
    return encodeCallName("ral_constant", device, {i64}, {constant.getType()});
  // void ral_kernel_launch(ctx, i64 executable, i64 entry, i64 grid[3], i64 block[3],
  //                        i64 shared_bytes, void** args, int64_t* arg_sizes, i64 count)
  // (kernels/module_code/module_code.h): the pointer types are spelled out for the same reason.
  if (isa<LaunchOp>(op))
    return ral::encodeApiName("ral_kernel_launch", std::string_view(device.data(), device.size()),
                              {"pvoid", "i64", "i64", "i64", "i64", "i64", "i64", "i64", "i64",
                               "i64", "ppvoid", "pi64", "i64"},
                              {});
  return "";
}

// A stack slot of `type`, moved to the function's entry block after the conversion (so a call in a
// loop reuses it).
Value hoistedStackSlot(OpBuilder& b, Location loc, Type type) {
  Value one = b.create<LLVM::ConstantOp>(loc, b.getI64Type(), b.getI64IntegerAttr(1));
  auto slot = b.create<LLVM::AllocaOp>(loc, ptrType(b.getContext()), type, one, 0);
  slot->setAttr(kHoistAttr, b.getUnitAttr());
  return slot.getResult();
}

// Arguments passed as `void** args`: one stack record with a field per slot type, `values` stored
// in the first fields (i1 as a zero-extended byte, a C++ bool), and an array of field pointers.
struct PackedArgs {
  LLVM::LLVMStructType record;
  Value storage;
  Value argv;
  Value field(OpBuilder& b, Location loc, int32_t k) const {
    return b.create<LLVM::GEPOp>(loc, ptrType(b.getContext()), record, storage,
                                 ArrayRef<LLVM::GEPArg>{0, k});
  }
};
PackedArgs packArgs(OpBuilder& b, Location loc, ArrayRef<Type> slots, ValueRange values) {
  MLIRContext* mctx = b.getContext();
  Type ptr = ptrType(mctx);
  const auto count = static_cast<int32_t>(slots.size());
  auto array = LLVM::LLVMArrayType::get(ptr, count);
  PackedArgs packed{LLVM::LLVMStructType::getLiteral(mctx, slots), Value(), Value()};
  packed.storage = hoistedStackSlot(b, loc, packed.record);
  packed.argv = hoistedStackSlot(b, loc, array);
  for (int32_t k = 0; k < count; ++k) {
    Value field = packed.field(b, loc, k);
    if (k < static_cast<int32_t>(values.size())) {
      Value v = values[k];
      if (v.getType().isInteger(1)) v = b.create<LLVM::ZExtOp>(loc, b.getI8Type(), v);
      b.create<LLVM::StoreOp>(loc, v, field);
    }
    Value slot = b.create<LLVM::GEPOp>(loc, ptr, array, packed.argv, ArrayRef<LLVM::GEPArg>{0, k});
    b.create<LLVM::StoreOp>(loc, field, slot);
  }
  return packed;
}

// The names a module calls, in order of first use; index i is slot i of ral_imports.
struct ImportTable {
  std::vector<std::string> names;
  llvm::StringMap<unsigned> index;
  unsigned intern(const std::string& name) {
    auto [it, inserted] = index.try_emplace(name, static_cast<unsigned>(names.size()));
    if (inserted) names.push_back(name);
    return it->second;
  }
  static std::string stringSymbol(unsigned i) { return "__ral_name_" + std::to_string(i); }
};

// Emits the argument struct, the void** array and the call of one RAL function.
class CallEmitter {
 public:
  CallEmitter(const ImportTable& table, bool by_name) : table_(table), by_name_(by_name) {}

  SmallVector<Value> emit(OpBuilder& b, Location loc, Value ctx, StringRef name, ValueRange args,
                          TypeRange results) const {
    MLIRContext* mctx = b.getContext();
    Type ptr = ptrType(mctx);
    // A C++ bool is one byte holding 0 or 1: i1 values travel as zero-extended i8.
    Type i8 = IntegerType::get(mctx, 8);
    auto slot_type = [&](Type t) { return t.isInteger(1) ? i8 : t; };
    SmallVector<Type> slots{ptr};
    for (Value a : args) slots.push_back(slot_type(a.getType()));
    for (Type r : results) slots.push_back(slot_type(r));
    SmallVector<Value> values{ctx};
    values.append(args.begin(), args.end());
    const PackedArgs packed = packArgs(b, loc, slots, values);
    Value argv = packed.argv;

    auto slot = table_.index.find(name);
    // Every name was interned before the conversion; a miss is a bug in this pass.
    if (slot == table_.index.end())
      llvm::report_fatal_error(llvm::Twine("disc-ral-to-llvm: no import slot for ") + name);
    const unsigned index = slot->second;
    auto fn_type = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(mctx), {ptr, ptr});
    LLVM::CallOp call;
    if (by_name_) {
      Value name_ptr = b.create<LLVM::AddressOfOp>(loc, ptr, ImportTable::stringSymbol(index));
      call =
          b.create<LLVM::CallOp>(loc, TypeRange{}, kApiCallSymbol, ValueRange{ctx, name_ptr, argv});
    } else {
      auto entry = LLVM::LLVMStructType::getLiteral(mctx, {ptr, ptr});
      auto table_type = LLVM::LLVMArrayType::get(entry, static_cast<unsigned>(table_.names.size()));
      Value imports = b.create<LLVM::AddressOfOp>(loc, ptr, kImportsSymbol);
      Value fn_slot = b.create<LLVM::GEPOp>(
          loc, ptr, table_type, imports, ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(index), 1});
      Value fn = b.create<LLVM::LoadOp>(loc, ptr, fn_slot);
      call = b.create<LLVM::CallOp>(loc, fn_type, ValueRange{fn, ctx, argv});
    }
    call->setAttr(kCheckErrorAttr, b.getUnitAttr());

    SmallVector<Value> out;
    for (size_t j = 0; j < results.size(); ++j) {
      const auto k = static_cast<int32_t>(values.size() + j);
      Value v = b.create<LLVM::LoadOp>(loc, slots[k], packed.field(b, loc, k));
      if (results[j].isInteger(1)) v = b.create<LLVM::TruncOp>(loc, results[j], v);
      out.push_back(v);
    }
    return out;
  }

 private:
  const ImportTable& table_;
  bool by_name_;
};

// Base of the patterns: one disc_ral op, lowered with a CallEmitter.
class RalOpLowering : public ConvertToLLVMPattern {
 public:
  RalOpLowering(StringRef op_name, LLVMTypeConverter& converter, const CallEmitter& emitter,
                StringRef device)
      : ConvertToLLVMPattern(op_name, &converter.getContext(), converter),
        emitter_(emitter),
        device_(device.str()) {}

 protected:
  SmallVector<Value> call(OpBuilder& b, Operation* op, Value ctx, ValueRange args,
                          TypeRange results) const {
    return emitter_.emit(b, op->getLoc(), ctx, calleeName(op, device_), args, results);
  }
  Value i64Constant(OpBuilder& b, Location loc, int64_t v) const {
    return b.create<LLVM::ConstantOp>(loc, b.getI64Type(), b.getI64IntegerAttr(v));
  }

  const CallEmitter& emitter_;
  std::string device_;
};

class RecvInputLowering : public RalOpLowering {
 public:
  template <typename... A>
  explicit RecvInputLowering(A&&... a)
      : RalOpLowering(RecvInputOp::getOperationName(), std::forward<A>(a)...) {}
  LogicalResult matchAndRewrite(Operation* op, ArrayRef<Value> operands,
                                ConversionPatternRewriter& rewriter) const override {
    auto recv = cast<RecvInputOp>(op);
    Location loc = op->getLoc();
    auto type = cast<MemRefType>(recv.getType());
    Type descriptor = getTypeConverter()->convertType(type);
    Value index = i64Constant(rewriter, loc, recv.getIndex());
    Value received = call(rewriter, op, operands[0], {index}, {descriptor})[0];
    // Hosts describe a view as (pointer, offset) in their own ways (a storage offset, a byte
    // offset); element 0 is what matters. The offset moves into the aligned pointer, so code
    // compiled for offset 0 reads the view where it starts.
    MemRefDescriptor view(received);
    Value offset = view.offset(rewriter, loc);
    Type element = getTypeConverter()->convertType(type.getElementType());
    Value start = rewriter.create<LLVM::GEPOp>(loc, getVoidPtrType(), element,
                                               view.alignedPtr(rewriter, loc), offset);
    view.setAlignedPtr(rewriter, loc, start);
    view.setConstantOffset(rewriter, loc, 0);
    rewriter.replaceOp(op, {view});
    return success();
  }
};

class SendOutputLowering : public RalOpLowering {
 public:
  template <typename... A>
  explicit SendOutputLowering(A&&... a)
      : RalOpLowering(SendOutputOp::getOperationName(), std::forward<A>(a)...) {}
  LogicalResult matchAndRewrite(Operation* op, ArrayRef<Value> operands,
                                ConversionPatternRewriter& rewriter) const override {
    Value index = i64Constant(rewriter, op->getLoc(), cast<SendOutputOp>(op).getIndex());
    call(rewriter, op, operands[0], {index, operands[1]}, {});
    rewriter.eraseOp(op);
    return success();
  }
};

class DispatchLowering : public RalOpLowering {
 public:
  template <typename... A>
  explicit DispatchLowering(A&&... a)
      : RalOpLowering(DispatchOp::getOperationName(), std::forward<A>(a)...) {}
  LogicalResult matchAndRewrite(Operation* op, ArrayRef<Value> operands,
                                ConversionPatternRewriter& rewriter) const override {
    SmallVector<Type> results;
    for (Type t : op->getResultTypes()) {
      Type converted = getTypeConverter()->convertType(t);
      if (!converted) return rewriter.notifyMatchFailure(op, "result type has no LLVM lowering");
      results.push_back(converted);
    }
    rewriter.replaceOp(op, call(rewriter, op, operands[0], operands.drop_front(), results));
    return success();
  }
};

// disc_ral.alloc -> ral_alloc(ctx, bytes), then a descriptor over the returned buffer. Dynamic
// sizes are checked first: each in [0, max] and their product with the static ones at most max
// elements, where max = min(2^48, 2^56 / element bytes) (limits.h; static shapes were checked
// at compile time by disc-ral-check-limits). Otherwise ral_signal_error fails the execution with
// a message naming the allocation, where the unchecked byte size would have wrapped and
// ral_alloc would have returned a buffer smaller than the code uses.
class AllocLowering : public RalOpLowering {
 public:
  AllocLowering(LLVMTypeConverter& converter, const CallEmitter& emitter, StringRef device,
                const llvm::StringMap<std::string>& messages)
      : RalOpLowering(AllocOp::getOperationName(), converter, emitter, device),
        messages_(messages) {}
  LogicalResult matchAndRewrite(Operation* op, ArrayRef<Value> operands,
                                ConversionPatternRewriter& rewriter) const override {
    auto alloc = cast<AllocOp>(op);
    MemRefType type = alloc.getType();
    Location loc = op->getLoc();
    if (!alloc.getDynamicSizes().empty())
      checkSizes(rewriter, alloc, operands[0], operands.drop_front());
    SmallVector<Value, 4> sizes, strides;
    Value bytes;
    getMemRefDescriptorSizes(loc, type, operands.drop_front(), rewriter, sizes, strides, bytes);
    // ral_alloc gives 64-byte alignment; a larger one over-allocates and rounds the data
    // pointer up (the allocated pointer stays what ral_dealloc and the host expect).
    const int64_t alignment = alloc.getAlignment().value_or(64);
    Type i64 = rewriter.getI64Type();
    if (alignment > 64)
      bytes = rewriter.create<LLVM::AddOp>(loc, bytes, i64Constant(rewriter, loc, alignment - 64));
    Value allocated = call(rewriter, op, operands[0], {bytes}, {getVoidPtrType()})[0];
    Value data = allocated;
    if (alignment > 64) {
      Value address = rewriter.create<LLVM::PtrToIntOp>(loc, i64, allocated);
      Value bumped =
          rewriter.create<LLVM::AddOp>(loc, address, i64Constant(rewriter, loc, alignment - 1));
      Value aligned =
          rewriter.create<LLVM::AndOp>(loc, bumped, i64Constant(rewriter, loc, -alignment));
      data = rewriter.create<LLVM::IntToPtrOp>(loc, getVoidPtrType(), aligned);
    }
    rewriter.replaceOp(
        op, {createMemRefDescriptor(loc, type, allocated, data, sizes, strides, rewriter)});
    return success();
  }

 private:
  // Leaves the rewriter in a new block, reached only when the sizes are in range; the other
  // branch calls ral_signal_error, after which the error check returns.
  void checkSizes(ConversionPatternRewriter& rewriter, AllocOp alloc, Value ctx,
                  ValueRange dynamic_sizes) const {
    MemRefType type = alloc.getType();
    Location loc = alloc.getLoc();
    const int64_t element_bytes = elementBytes(type.getElementType()).value_or(1);
    const int64_t max_elements = std::min(kMaxElements, kMaxBytes / element_bytes);
    // At most 2^48 after disc-ral-check-limits; without it, a count beyond max fails every run.
    int64_t static_elements = 1;
    for (int64_t d : type.getShape())
      if (!ShapedType::isDynamic(d) &&
          (__builtin_mul_overflow(static_elements, d, &static_elements) ||
           static_elements > max_elements)) {
        static_elements = max_elements + 1;
        break;
      }
    Value max = i64Constant(rewriter, loc, max_elements);
    Value one = i64Constant(rewriter, loc, 1);
    Value elements = i64Constant(rewriter, loc, static_elements);
    Value ok =
        rewriter.create<LLVM::ConstantOp>(loc, rewriter.getI1Type(), rewriter.getBoolAttr(true));
    for (Value size : dynamic_sizes) {
      // Unsigned: a negative size is beyond max too.
      Value in_range = rewriter.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::ule, size, max);
      // elements * size <= max  <=>  elements <= max / size (size > 0), without overflowing.
      Value divisor = rewriter.create<LLVM::UMaxOp>(loc, size, one);
      Value bound = rewriter.create<LLVM::UDivOp>(loc, max, divisor);
      Value fits = rewriter.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::ule, elements, bound);
      ok = rewriter.create<LLVM::AndOp>(loc, ok, rewriter.create<LLVM::AndOp>(loc, in_range, fits));
      elements = rewriter.create<LLVM::MulOp>(loc, elements, size);
    }
    Block* before = rewriter.getInsertionBlock();
    Block* after = rewriter.splitBlock(before, rewriter.getInsertionPoint());
    Block* failed = rewriter.createBlock(after);
    rewriter.setInsertionPointToEnd(before);
    // Errors are rare: keep the allocation's path hot.
    rewriter.create<LLVM::CondBrOp>(loc, ok, after, ValueRange{}, failed, ValueRange{},
                                    std::make_pair(1000u, 1u));
    rewriter.setInsertionPointToStart(failed);
    Value code = rewriter.create<LLVM::ConstantOp>(
        loc, rewriter.getI32Type(),
        rewriter.getI32IntegerAttr(static_cast<int32_t>(ral::StatusCode::kInvalidArgument)));
    Value message = rewriter.create<LLVM::AddressOfOp>(loc, ptrType(alloc.getContext()),
                                                       messages_.lookup(allocSizeMessage(alloc)));
    emitter_.emit(rewriter, loc, ctx, signalErrorName(), {code, message}, {});
    // Not taken at run time: the error check after the call returns first.
    rewriter.create<LLVM::BrOp>(loc, ValueRange{}, after);
    rewriter.setInsertionPointToStart(after);
  }

  const llvm::StringMap<std::string>& messages_;
};

class DeallocLowering : public RalOpLowering {
 public:
  template <typename... A>
  explicit DeallocLowering(A&&... a)
      : RalOpLowering(DeallocOp::getOperationName(), std::forward<A>(a)...) {}
  LogicalResult matchAndRewrite(Operation* op, ArrayRef<Value> operands,
                                ConversionPatternRewriter& rewriter) const override {
    Location loc = op->getLoc();
    Value allocated = MemRefDescriptor(operands[1]).allocatedPtr(rewriter, loc);
    call(rewriter, op, operands[0], {allocated}, {});
    rewriter.eraseOp(op);
    return success();
  }
};

// disc_ral.constant -> ral_constant(ctx, index): a descriptor of the constant's data.
class ConstantLowering : public RalOpLowering {
 public:
  template <typename... A>
  explicit ConstantLowering(A&&... a)
      : RalOpLowering(ConstantOp::getOperationName(), std::forward<A>(a)...) {}
  LogicalResult matchAndRewrite(Operation* op, ArrayRef<Value> operands,
                                ConversionPatternRewriter& rewriter) const override {
    auto constant = cast<ConstantOp>(op);
    Type descriptor = getTypeConverter()->convertType(constant.getType());
    Value index = i64Constant(rewriter, op->getLoc(), constant.getIndex());
    rewriter.replaceOp(op, call(rewriter, op, operands[0], {index}, {descriptor}));
    return success();
  }
};

// Where a kernel lives in the module file.
struct KernelRef {
  unsigned executable = 0;
  unsigned entry = 0;
};

// disc_ral.launch -> ral_kernel_launch(ctx, executable, entry, grid, block, 0, args, sizes, count):
// the kernel arguments are stored in one stack record, with a pointer and a byte size per argument.
class LaunchLowering : public RalOpLowering {
 public:
  LaunchLowering(LLVMTypeConverter& converter, const CallEmitter& emitter, StringRef device,
                 const llvm::StringMap<KernelRef>& entries)
      : RalOpLowering(LaunchOp::getOperationName(), converter, emitter, device),
        entries_(entries) {}
  LogicalResult matchAndRewrite(Operation* op, ArrayRef<Value> operands,
                                ConversionPatternRewriter& rewriter) const override {
    auto launch = cast<LaunchOp>(op);
    Location loc = op->getLoc();
    MLIRContext* mctx = op->getContext();
    Type ptr = ptrType(mctx);
    Type i64 = rewriter.getI64Type();
    ValueRange args = ValueRange(operands).drop_front(7);
    SmallVector<Type> types;
    for (Value a : args) types.push_back(a.getType());
    const auto count = static_cast<int32_t>(args.size());
    Value argv, sizes;
    if (count == 0) {
      argv = sizes = rewriter.create<LLVM::ZeroOp>(loc, ptr);
    } else {
      argv = packArgs(rewriter, loc, types, args).argv;
      auto size_array = LLVM::LLVMArrayType::get(i64, count);
      sizes = hoistedStackSlot(rewriter, loc, size_array);
      DataLayout layout = DataLayout::closest(op);
      for (int32_t k = 0; k < count; ++k) {
        Value slot =
            rewriter.create<LLVM::GEPOp>(loc, ptr, size_array, sizes, ArrayRef<LLVM::GEPArg>{0, k});
        const auto bytes = static_cast<int64_t>(layout.getTypeSize(types[k]));
        rewriter.create<LLVM::StoreOp>(loc, i64Constant(rewriter, loc, bytes), slot);
      }
    }
    auto entry = entries_.find(launch.getKernel());
    if (entry == entries_.end())
      return rewriter.notifyMatchFailure(op, "kernel without an entry index");
    SmallVector<Value> values{i64Constant(rewriter, loc, entry->second.executable),
                              i64Constant(rewriter, loc, entry->second.entry)};
    for (Value dim : ValueRange(operands).slice(1, 6)) values.push_back(dim);
    values.push_back(i64Constant(rewriter, loc, 0));
    values.push_back(argv);
    values.push_back(sizes);
    values.push_back(i64Constant(rewriter, loc, count));
    call(rewriter, op, operands[0], values, {});
    rewriter.eraseOp(op);
    return success();
  }

 private:
  const llvm::StringMap<KernelRef>& entries_;
};

// disc_ral.signal_error -> ral_signal_error(ctx, code, message); the message is a string global
// (`messages` maps each message to its symbol).
class SignalErrorLowering : public RalOpLowering {
 public:
  SignalErrorLowering(LLVMTypeConverter& converter, const CallEmitter& emitter, StringRef device,
                      const llvm::StringMap<std::string>& messages)
      : RalOpLowering(SignalErrorOp::getOperationName(), converter, emitter, device),
        messages_(messages) {}
  LogicalResult matchAndRewrite(Operation* op, ArrayRef<Value> operands,
                                ConversionPatternRewriter& rewriter) const override {
    auto signal = cast<SignalErrorOp>(op);
    Location loc = op->getLoc();
    Value code = rewriter.create<LLVM::ConstantOp>(loc, rewriter.getI32Type(),
                                                   rewriter.getI32IntegerAttr(signal.getCode()));
    Value message = rewriter.create<LLVM::AddressOfOp>(loc, ptrType(op->getContext()),
                                                       messages_.lookup(signal.getMessage()));
    call(rewriter, op, operands[0], {code, message}, {});
    rewriter.eraseOp(op);
    return success();
  }

 private:
  const llvm::StringMap<std::string>& messages_;
};

class DiscRalToLLVMPass : public impl::DiscRalToLLVMPassBase<DiscRalToLLVMPass> {
 public:
  using DiscRalToLLVMPassBase::DiscRalToLLVMPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext* ctx = &getContext();

    func::FuncOp entry;
    for (func::FuncOp f : module.getOps<func::FuncOp>())
      if (f->hasAttr(kEntryAttr)) entry = f;
    if (!entry) {
      module.emitError() << "no RAL entry function (run disc-ral-inject-execution-context first)";
      return signalPassFailure();
    }
    const std::string entry_name = entry.getName().str();
    // Functions taking the context: a call of one is followed by an error check too.
    llvm::StringSet<> with_ctx;
    for (func::FuncOp f : module.getOps<func::FuncOp>())
      // Types, not block arguments: a declaration has no body.
      if (f.getNumArguments() > 0 && isa<ContextType>(f.getArgumentTypes()[0]))
        with_ctx.insert(f.getName());

    ImportTable table;
    WalkResult names = module.walk([&](Operation* op) {
      if (op->getDialect() && op->getDialect()->getNamespace() == "disc_ral") {
        std::string name = calleeName(op, device);
        if (name.empty()) {
          op->emitError() << "has a type with no RAL encoding";
          return WalkResult::interrupt();
        }
        table.intern(name);
        // A dynamically sized allocation fails the execution when its sizes are out of range.
        if (auto alloc = dyn_cast<AllocOp>(op); alloc && !alloc.getDynamicSizes().empty())
          table.intern(signalErrorName());
      }
      return WalkResult::advance();
    });
    if (names.wasInterrupted()) return signalPassFailure();
    // Executables: device kernel i (disc_ral.device_kernels) is #i, entry 0; then the host
    // executable, whose entry j is the j-th host kernel launched. Host kernels stay exported.
    llvm::StringMap<KernelRef> kernel_refs;
    unsigned device_kernels = 0;
    if (auto serialized = module->getAttrOfType<ArrayAttr>(kDeviceKernelsAttr))
      for (Attribute a : serialized)
        kernel_refs[cast<DictionaryAttr>(a).getAs<StringAttr>("name").getValue()] =
            KernelRef{device_kernels++, 0};
    SmallVector<Attribute> kernel_names;
    module.walk([&](LaunchOp launch) {
      const KernelRef host{device_kernels, static_cast<unsigned>(kernel_names.size())};
      if (kernel_refs.try_emplace(launch.getKernel(), host).second)
        kernel_names.push_back(StringAttr::get(ctx, launch.getKernel()));
    });
    llvm::StringSet<> kernels;
    for (func::FuncOp f : module.getOps<func::FuncOp>())
      if (f->hasAttr(kKernelAttr)) {
        kernels.insert(f.getName());
        f->removeAttr(kKernelAttr);
      }
    emitGlobals(module, table);
    const llvm::StringMap<std::string> messages = emitMessages(module);

    LowerToLLVMOptions options(ctx);
    LLVMTypeConverter converter(ctx, options);
    converter.addConversion([](ContextType t) { return ptrType(t.getContext()); });
    RewritePatternSet patterns(ctx);
    arith::populateArithToLLVMConversionPatterns(converter, patterns);
    cf::populateControlFlowToLLVMConversionPatterns(converter, patterns);
    index::populateIndexToLLVMConversionPatterns(converter, patterns);
    populateFinalizeMemRefToLLVMConversionPatterns(converter, patterns);
    populateFuncToLLVMConversionPatterns(converter, patterns);
    populateMathToLLVMConversionPatterns(converter, patterns);
    ub::populateUBToLLVMConversionPatterns(converter, patterns);
    CallEmitter emitter(table, byName);
    patterns.add<RecvInputLowering, SendOutputLowering, DispatchLowering, DeallocLowering>(
        converter, emitter, StringRef(device));
    patterns.add<AllocLowering, SignalErrorLowering>(converter, emitter, StringRef(device),
                                                     messages);
    patterns.add<ConstantLowering>(converter, emitter, StringRef(device));
    patterns.add<LaunchLowering>(converter, emitter, StringRef(device), kernel_refs);
    LLVMConversionTarget target(*ctx);
    target.addLegalOp<ModuleOp>();
    if (failed(applyFullConversion(module, target, std::move(patterns))))
      return signalPassFailure();

    OpPassManager casts(ModuleOp::getOperationName());
    casts.addPass(createReconcileUnrealizedCastsPass());
    if (failed(runPipeline(casts, module))) return signalPassFailure();

    if (failed(finishFunctions(module, entry_name, with_ctx, kernels))) return signalPassFailure();
    if (!kernel_names.empty()) module->setAttr(kHostKernelsAttr, ArrayAttr::get(ctx, kernel_names));
    SmallVector<Attribute> import_names;
    if (!byName)
      for (const std::string& n : table.names) import_names.push_back(StringAttr::get(ctx, n));
    module->setAttr(kImportsAttr, ArrayAttr::get(ctx, import_names));
  }

 private:
  // One NUL-terminated string global per distinct disc_ral.signal_error message.
  llvm::StringMap<std::string> emitMessages(ModuleOp module) {
    llvm::StringMap<std::string> symbols;
    OpBuilder b(module.getBodyRegion());
    b.setInsertionPointToStart(module.getBody());
    Type i8 = IntegerType::get(&getContext(), 8);
    auto add = [&](Location loc, StringRef message) {
      auto [it, inserted] = symbols.try_emplace(message, "");
      if (!inserted) return;
      it->second = "__ral_message_" + std::to_string(symbols.size() - 1);
      std::string value = message.str();
      value.push_back('\0');
      b.create<LLVM::GlobalOp>(
          loc, LLVM::LLVMArrayType::get(i8, static_cast<unsigned>(value.size())),
          /*isConstant=*/true, LLVM::Linkage::Internal, it->second, b.getStringAttr(value));
    };
    module.walk([&](Operation* op) {
      if (auto signal = dyn_cast<SignalErrorOp>(op)) add(op->getLoc(), signal.getMessage());
      if (auto alloc = dyn_cast<AllocOp>(op); alloc && !alloc.getDynamicSizes().empty())
        add(op->getLoc(), allocSizeMessage(alloc));
    });
    return symbols;
  }

  // Name strings, the import table and its size.
  void emitGlobals(ModuleOp module, const ImportTable& table) {
    MLIRContext* ctx = &getContext();
    OpBuilder b(module.getBodyRegion());
    b.setInsertionPointToStart(module.getBody());
    Location loc = module.getLoc();
    Type i8 = IntegerType::get(ctx, 8);
    Type ptr = ptrType(ctx);
    std::vector<LLVM::GlobalOp> strings;
    for (size_t i = 0; i < table.names.size(); ++i) {
      std::string value = table.names[i];
      value.push_back('\0');
      strings.push_back(b.create<LLVM::GlobalOp>(
          loc, LLVM::LLVMArrayType::get(i8, static_cast<unsigned>(value.size())),
          /*isConstant=*/true, LLVM::Linkage::Internal,
          ImportTable::stringSymbol(static_cast<unsigned>(i)), b.getStringAttr(value)));
    }
    if (byName) {
      b.create<LLVM::LLVMFuncOp>(
          loc, kApiCallSymbol,
          LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {ptr, ptr, ptr}));
    }
    // By name, the table is empty: the loader then has nothing to resolve.
    const unsigned count = byName ? 0 : static_cast<unsigned>(table.names.size());
    // { const char* name; ral_fn fn; }
    auto entry_type = LLVM::LLVMStructType::getLiteral(ctx, {ptr, ptr});
    auto table_type = LLVM::LLVMArrayType::get(entry_type, count);
    auto imports = b.create<LLVM::GlobalOp>(loc, table_type, /*isConstant=*/false,
                                            LLVM::Linkage::External, kImportsSymbol, Attribute());
    {
      OpBuilder::InsertionGuard guard(b);
      b.createBlock(&imports.getInitializerRegion());
      Value init = b.create<LLVM::UndefOp>(loc, table_type);
      Value null_fn = b.create<LLVM::ZeroOp>(loc, ptr);
      for (unsigned i = 0; i < count; ++i) {
        Value str = b.create<LLVM::AddressOfOp>(loc, strings[i]);
        const int64_t row = i;
        init = b.create<LLVM::InsertValueOp>(loc, init, str, ArrayRef<int64_t>{row, 0});
        init = b.create<LLVM::InsertValueOp>(loc, init, null_fn, ArrayRef<int64_t>{row, 1});
      }
      b.create<LLVM::ReturnOp>(loc, init);
    }
    b.create<LLVM::GlobalOp>(loc, IntegerType::get(ctx, 32), /*isConstant=*/true,
                             LLVM::Linkage::External, kImportCountSymbol,
                             b.getI32IntegerAttr(static_cast<int32_t>(count)));
  }

  // Exports the entry, makes other functions internal, hoists the call storage into entry
  // blocks and tests the error flag after every call that can set it.
  LogicalResult finishFunctions(ModuleOp module, const std::string& entry_name,
                                const llvm::StringSet<>& with_ctx,
                                const llvm::StringSet<>& kernels) {
    MLIRContext* ctx = &getContext();
    auto entry = module.lookupSymbol<LLVM::LLVMFuncOp>(entry_name);
    if (!entry) return module.emitError() << "entry function @" << entry_name << " was lost";
    entry->removeAttr(kEntryAttr);
    const bool wrapped = entry_name != entrySymbol.getValue();
    if (wrapped) {
      if (module.lookupSymbol(entrySymbol.getValue()))
        return module.emitError() << "the module already defines @" << entrySymbol.getValue()
                                  << ", the symbol the entry is exported as";
      OpBuilder b(module.getBodyRegion());
      b.setInsertionPointToEnd(module.getBody());
      auto wrapper = b.create<LLVM::LLVMFuncOp>(entry.getLoc(), entrySymbol.getValue(),
                                                entry.getFunctionType());
      Block* body = wrapper.addEntryBlock(b);
      b.setInsertionPointToStart(body);
      b.create<LLVM::CallOp>(entry.getLoc(), TypeRange{}, entry_name, body->getArguments());
      b.create<LLVM::ReturnOp>(entry.getLoc(), ValueRange{});
      entry.setLinkageAttr(LLVM::LinkageAttr::get(ctx, LLVM::Linkage::Internal));
    }

    for (auto f : module.getOps<LLVM::LLVMFuncOp>()) {
      if (f.isExternal()) continue;
      if (f.getName() == entrySymbol.getValue()) {
        // The wrapper returns right after its one call: nothing to check.
        if (wrapped) continue;
      } else if (kernels.contains(f.getName())) {
        // Looked up by name when the module is loaded; it makes no RAL call.
      } else {
        f.setLinkageAttr(LLVM::LinkageAttr::get(ctx, LLVM::Linkage::Internal));
      }
      Block& entry_block = f.getBody().front();
      SmallVector<Operation*> checks;
      Operation* last_hoisted = nullptr;
      f.walk([&](Operation* op) {
        if (op->hasAttr(kHoistAttr)) {
          op->removeAttr(kHoistAttr);
          // The size is a constant defined just before; both move to the top of the entry block
          // (in call order), so a call in a loop reuses one stack slot.
          Operation* size = op->getOperand(0).getDefiningOp();
          if (last_hoisted) {
            size->moveAfter(last_hoisted);
          } else {
            size->moveBefore(&entry_block, entry_block.begin());
          }
          op->moveAfter(size);
          last_hoisted = op;
        }
        if (auto call = dyn_cast<LLVM::CallOp>(op)) {
          auto callee = call->getAttrOfType<FlatSymbolRefAttr>("callee");
          if (call->hasAttr(kCheckErrorAttr) ||
              (callee && with_ctx.contains(callee.getValue()) && call.getNumOperands() > 0)) {
            call->removeAttr(kCheckErrorAttr);
            checks.push_back(call);
          }
        }
      });
      if (!checks.empty()) insertErrorChecks(f, checks);
    }
    return success();
  }

  void insertErrorChecks(LLVM::LLVMFuncOp f, ArrayRef<Operation*> calls) {
    MLIRContext* ctx = &getContext();
    Location loc = f.getLoc();
    Type i32 = IntegerType::get(ctx, 32);
    // One early-return block per function.
    Block* early = new Block();
    f.getBody().push_back(early);
    OpBuilder b(ctx);
    b.setInsertionPointToStart(early);
    Type result = f.getFunctionType().getReturnType();
    if (isa<LLVM::LLVMVoidType>(result)) {
      b.create<LLVM::ReturnOp>(loc, ValueRange{});
    } else {
      b.create<LLVM::ReturnOp>(loc, ValueRange{b.create<LLVM::UndefOp>(loc, result)});
    }
    // Last call first: each split then moves only the ops up to the next call, not the rest of
    // the block (linear, where front to back is quadratic in a block with many calls).
    for (Operation* call : llvm::reverse(calls)) {
      // The context the call was given (an import-table call's operand 0 is the function
      // pointer): a function may pass one that is not its own first argument.
      Value call_ctx = call->getOperand(call->getAttrOfType<FlatSymbolRefAttr>("callee") ? 0 : 1);
      Block* before = call->getBlock();
      Block* after = before->splitBlock(call->getNextNode());
      b.setInsertionPointToEnd(before);
      Location l = call->getLoc();
      // The error flag is the first field of the ral_exec_header the context points to.
      Value flag = b.create<LLVM::LoadOp>(l, i32, call_ctx);
      Value zero = b.create<LLVM::ConstantOp>(l, i32, b.getI32IntegerAttr(0));
      Value failed = b.create<LLVM::ICmpOp>(l, LLVM::ICmpPredicate::ne, flag, zero);
      // Errors are rare: keep the straight-line path hot.
      b.create<LLVM::CondBrOp>(l, failed, early, ValueRange{}, after, ValueRange{},
                               std::make_pair(1u, 1000u));
    }
  }
};

}  // namespace
}  // namespace disc_ral
}  // namespace mlir
