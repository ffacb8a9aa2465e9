// disc-ral-inject-execution-context (the first RAL pass; docs/architecture.md lists the pipeline).
//
// The entry `func @main(args) -> results` becomes `func @main(%ctx: !disc_ral.context)`: each
// argument is received with disc_ral.recv_input, each returned value is sent with
// disc_ral.send_output, and every function reachable from the entry takes the context as its
// first argument, so later passes always find one in the enclosing function.
#include "compiler_passes/dialect/dialect.h"
#include "compiler_passes/passes.h"
#include "compiler_passes/dialect/type_codes.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/SetVector.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "ral/status.h"

namespace mlir {
namespace disc_ral {

#define GEN_PASS_DEF_INJECTEXECUTIONCONTEXTPASS
#include "compiler_passes/Passes.h.inc"

namespace {

using func::CallOp;
using func::FuncOp;
using func::ReturnOp;

constexpr char kBindableTypes[] =
    "inputs and outputs must be ranked memrefs (strided layout, rank <= 8) of i1, i8..i64, "
    "ui8..ui64, f16, bf16, f32 or f64";

bool isCustomCall(FuncOp f) { return f->hasAttr(kCustomCallAttr); }

class InjectExecutionContextPass
    : public impl::InjectExecutionContextPassBase<InjectExecutionContextPass> {
 public:
  using InjectExecutionContextPassBase::InjectExecutionContextPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto entry = module.lookupSymbol<FuncOp>(entryName);
    if (!entry) {
      module.emitError() << "no entry function @" << entryName << " in the module";
      return signalPassFailure();
    }
    if (failed(checkEntry(entry))) return signalPassFailure();

    // Functions with a body reachable from the entry through direct calls.
    SymbolTable symbols(module);
    llvm::SetVector<FuncOp> with_ctx;
    with_ctx.insert(entry);
    for (size_t i = 0; i < with_ctx.size(); ++i) {
      FuncOp f = with_ctx[i];
      f.walk([&](CallOp call) {
        auto callee = symbols.lookup<FuncOp>(call.getCallee());
        if (callee && !callee.isExternal() && !isCustomCall(callee)) with_ctx.insert(callee);
      });
    }

    Type ctx_type = ContextType::get(&getContext());
    for (FuncOp f : with_ctx) {
      if (f.getNumArguments() > 0 && isa<ContextType>(f.getArgument(0).getType())) {
        f.emitError() << "@" << f.getName() << " already takes an execution context";
        return signalPassFailure();
      }
      f.insertArgument(0, ctx_type, DictionaryAttr(), f.getLoc());
    }
    bindEntry(entry);

    // Every call of a function that now takes the context passes the caller's.
    WalkResult walk = module.walk([&](CallOp call) -> WalkResult {
      auto callee = symbols.lookup<FuncOp>(call.getCallee());
      if (!callee || !with_ctx.contains(callee)) return WalkResult::advance();
      auto caller = call->getParentOfType<FuncOp>();
      if (callee == entry) {
        call.emitError() << "the entry function @" << entryName << " cannot be called";
        return WalkResult::interrupt();
      }
      if (!with_ctx.contains(caller)) {
        call.emitError() << "@" << caller.getName() << " calls @" << callee.getName()
                         << ", which takes the execution context, but is not reachable from the "
                            "entry function @"
                         << entryName << " and has no context to pass";
        return WalkResult::interrupt();
      }
      call->insertOperands(0, caller.getArgument(0));
      return WalkResult::advance();
    });
    if (walk.wasInterrupted()) return signalPassFailure();
    if (failed(checkBoundedCalls(entry, with_ctx, symbols))) signalPassFailure();
  }

 private:
  LogicalResult checkEntry(FuncOp entry) {
    if (entry.isExternal())
      return entry.emitError() << "entry function @" << entryName << " has no body";
    FunctionType type = entry.getFunctionType();
    for (auto it : llvm::enumerate(type.getInputs())) {
      if (isa<ContextType>(it.value()))
        return entry.emitError() << "entry function @" << entryName
                                 << " already takes an execution context";
      if (auto m = dyn_cast<MemRefType>(it.value())) {
        SmallVector<int64_t> strides;
        int64_t offset = 0;
        if (succeeded(getStridesAndOffset(m, strides, offset)) && !ShapedType::isDynamic(offset) &&
            offset != 0)
          return entry.emitError()
                 << "argument #" << it.index() << " of entry function @" << entryName
                 << " has type " << it.value() << ": an input starts at the element the host "
                 << "passes, so its layout's offset must be 0 or ?, got " << offset;
        if (llvm::any_of(strides, [](int64_t s) { return !ShapedType::isDynamic(s) && s < 0; }))
          return entry.emitError()
                 << "argument #" << it.index() << " of entry function @" << entryName
                 << " has type " << it.value() << ": its layout has a negative stride, which "
                 << "hosts cannot lay an input out in; use ? for a stride the input decides";
      }
      if (!isBindableMemRef(it.value()))
        return entry.emitError() << "argument #" << it.index() << " of entry function @"
                                 << entryName << " has type " << it.value()
                                 << ", which RAL cannot bind: " << kBindableTypes;
    }
    for (auto it : llvm::enumerate(type.getResults()))
      if (!isBindableMemRef(it.value()))
        return entry.emitError() << "result #" << it.index() << " of entry function @" << entryName
                                 << " has type " << it.value()
                                 << ", which RAL cannot bind: " << kBindableTypes;
    return success();
  }

  // Recursion (direct or through other functions) and indirect calls are refused in the code the
  // entry reaches: a call depth set by the input would overflow the stack of the host's thread and
  // kill the process, where every other failure of a module is an error. Iterative, so a long
  // call chain does not overflow this pass's stack either.
  LogicalResult checkBoundedCalls(FuncOp entry, const llvm::SetVector<FuncOp>& reachable,
                                  SymbolTable& symbols) {
    llvm::DenseMap<Operation*, SmallVector<std::pair<FuncOp, CallOp>>> callees;
    for (FuncOp f : reachable) {
      WalkResult indirect = f.walk([&](Operation* op) {
        if (isa<func::CallIndirectOp>(op)) {
          op->emitOpError() << "is not supported: a RAL module's calls must be direct, so that "
                               "recursion can be refused";
          return WalkResult::interrupt();
        }
        if (auto call = dyn_cast<CallOp>(op))
          if (auto callee = symbols.lookup<FuncOp>(call.getCallee());
              callee && reachable.contains(callee))
            callees[f].emplace_back(callee, call);
        return WalkResult::advance();
      });
      if (indirect.wasInterrupted()) return failure();
    }
    enum class State { kUnseen, kOnPath, kDone };
    llvm::DenseMap<Operation*, State> state;
    struct Frame {
      FuncOp f;
      size_t next = 0;
    };
    SmallVector<Frame> path{{entry}};
    state[entry] = State::kOnPath;
    while (!path.empty()) {
      const FuncOp f = path.back().f;
      auto& out = callees[f];
      if (path.back().next == out.size()) {
        state[f] = State::kDone;
        path.pop_back();
        continue;
      }
      auto [callee, call] = out[path.back().next++];
      const State s = state.lookup(callee);
      if (s == State::kUnseen) {
        state[callee] = State::kOnPath;
        path.push_back({callee});
      } else if (s == State::kOnPath) {
        auto diag = call.emitError() << "@" << callee.getName() << " calls itself";
        auto start = llvm::find_if(path, [&](const Frame& fr) { return fr.f == callee; });
        if (std::next(start) != path.end()) {
          diag << " through";
          for (auto it = std::next(start); it != path.end(); ++it) diag << " @" << it->f.getName();
        }
        return diag << ": recursion is not supported (a call depth set by the input could "
                       "overflow the host thread's stack)";
      }
    }
    return success();
  }

  // Input `index` as a memref of `declared` type. Hosts bind any strided view, while code compiled
  // for a static layout (row-major for the identity) reads it as that layout: the view is
  // received with a fully dynamic layout, its strides and offset are checked against the static
  // ones (dims of size 1 and empty inputs accept any; the offset is moved into the pointer by
  // disc-ral-to-llvm), a mismatch fails the execution instead of
  // giving wrong results, and the view is reinterpreted as the declared type.
  Value receiveChecked(OpBuilder& b, Location loc, Value ctx, unsigned index, MemRefType declared) {
    SmallVector<int64_t> strides;
    int64_t offset;
    if (failed(getStridesAndOffset(declared, strides, offset)))
      return b.create<RecvInputOp>(loc, declared, ctx, index);  // verified strided earlier
    const bool all_dynamic = ShapedType::isDynamic(offset) && llvm::all_of(strides, [](int64_t s) {
                               return ShapedType::isDynamic(s);
                             });
    if (all_dynamic) return b.create<RecvInputOp>(loc, declared, ctx, index);

    const int64_t rank = declared.getRank();
    auto any_layout =
        MemRefType::get(declared.getShape(), declared.getElementType(),
                        StridedLayoutAttr::get(b.getContext(), ShapedType::kDynamic,
                                               SmallVector<int64_t>(rank, ShapedType::kDynamic)),
                        declared.getMemorySpace());
    Value view = b.create<RecvInputOp>(loc, any_layout, ctx, index);
    auto meta = b.create<memref::ExtractStridedMetadataOp>(loc, view);
    auto constant = [&](int64_t v) { return b.create<arith::ConstantIndexOp>(loc, v); };
    Value one = constant(1);
    Value ok = b.create<arith::ConstantOp>(loc, b.getBoolAttr(true));
    Value empty = b.create<arith::ConstantOp>(loc, b.getBoolAttr(false));
    // The identity layout is row-major whatever the sizes: its strides are products of the
    // received sizes, even where the type leaves them dynamic.
    const bool row_major = declared.getLayout().isIdentity();
    SmallVector<Value> expected(rank);
    Value product = one;
    for (int64_t d = rank - 1; d >= 0; --d) {
      expected[d] = row_major                           ? product
                    : ShapedType::isDynamic(strides[d]) ? Value()
                                                        : Value(constant(strides[d]));
      if (row_major) product = b.create<arith::MulIOp>(loc, product, meta.getSizes()[d]);
    }
    for (int64_t d = 0; d < rank; ++d) {
      Value size = meta.getSizes()[d];
      Value is_empty = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, size, constant(0));
      empty = b.create<arith::OrIOp>(loc, empty, is_empty);
      if (!expected[d]) continue;
      Value same =
          b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, meta.getStrides()[d], expected[d]);
      Value unit = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ule, size, one);
      ok = b.create<arith::AndIOp>(loc, ok, b.create<arith::OrIOp>(loc, same, unit));
    }
    ok = b.create<arith::OrIOp>(loc, ok, empty);
    Value bad =
        b.create<arith::XOrIOp>(loc, ok, b.create<arith::ConstantOp>(loc, b.getBoolAttr(true)));
    auto branch = b.create<scf::IfOp>(loc, bad);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(branch.thenBlock());
      std::string message;
      llvm::raw_string_ostream os(message);
      os << "input #" << index << " is a view whose strides differ from the layout the "
         << "module was compiled for (" << declared
         << "); pass a contiguous (row-major) tensor, or compile the input with a strided layout";
      b.create<SignalErrorOp>(loc, ctx, os.str(),
                              static_cast<int32_t>(ral::StatusCode::kInvalidArgument));
    }
    // A reinterpret_cast, not a memref.cast: canonicalization folds casts into their users, which
    // would then see the dynamic layout again (slower loops, memref.copy through MLIR's runtime).
    SmallVector<OpFoldResult> sizes, new_strides;
    for (int64_t d = 0; d < rank; ++d) {
      if (declared.isDynamicDim(d))
        sizes.push_back(meta.getSizes()[d]);
      else
        sizes.push_back(b.getIndexAttr(declared.getDimSize(d)));
      if (!ShapedType::isDynamic(strides[d]))
        new_strides.push_back(b.getIndexAttr(strides[d]));
      else
        new_strides.push_back(expected[d] ? expected[d] : meta.getStrides()[d]);
    }
    // disc-ral-to-llvm moves a received view's offset into its pointer: element 0 is at offset 0.
    OpFoldResult new_offset = b.getIndexAttr(0);
    return b.create<memref::ReinterpretCastOp>(loc, declared, view, new_offset, sizes, new_strides);
  }

  // The context is already argument 0: receive the others, send what is returned.
  void bindEntry(FuncOp entry) {
    Block& body = entry.front();
    Value ctx = entry.getArgument(0);
    OpBuilder builder(&body, body.begin());
    const unsigned num_inputs = entry.getNumArguments() - 1;
    llvm::BitVector erase(entry.getNumArguments());
    for (unsigned i = 0; i < num_inputs; ++i) {
      BlockArgument arg = entry.getArgument(i + 1);
      Value received =
          receiveChecked(builder, arg.getLoc(), ctx, i, cast<MemRefType>(arg.getType()));
      arg.replaceAllUsesWith(received);
      erase.set(i + 1);
    }
    entry.eraseArguments(erase);

    entry.walk([&](ReturnOp ret) {
      OpBuilder b(ret);
      for (auto it : llvm::enumerate(ret.getOperands()))
        b.create<SendOutputOp>(ret.getLoc(), ctx, it.index(), it.value());
      b.create<ReturnOp>(ret.getLoc());
      ret.erase();
    });
    llvm::BitVector results(entry.getNumResults());
    results.set();
    entry.eraseResults(results);
    entry->setAttr(kEntryAttr, UnitAttr::get(&getContext()));
  }
};

}  // namespace
}  // namespace disc_ral
}  // namespace mlir
