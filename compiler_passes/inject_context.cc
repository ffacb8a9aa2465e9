// disc-ral-inject-execution-context (pass 1 of DESIGN.md §7).
//
// The entry `func @main(args) -> results` becomes `func @main(%ctx: !disc_ral.context)`: each
// argument is received with disc_ral.recv_input, each returned value is sent with
// disc_ral.send_output, and every function reachable from the entry takes the context as its
// first argument, so later passes always find one in the enclosing function.
#include "compiler_passes/dialect.h"
#include "compiler_passes/passes.h"
#include "compiler_passes/type_codes.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/SetVector.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

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
    if (walk.wasInterrupted()) signalPassFailure();
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

  // The context is already argument 0: receive the others, send what is returned.
  void bindEntry(FuncOp entry) {
    Block& body = entry.front();
    Value ctx = entry.getArgument(0);
    OpBuilder builder(&body, body.begin());
    const unsigned num_inputs = entry.getNumArguments() - 1;
    llvm::BitVector erase(entry.getNumArguments());
    for (unsigned i = 0; i < num_inputs; ++i) {
      BlockArgument arg = entry.getArgument(i + 1);
      Value received = builder.create<RecvInputOp>(arg.getLoc(), arg.getType(), ctx, i);
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
