// disc-ral-place-inputs-outputs (Passes.td): partial execution. Inputs are received right before
// their first use and outputs sent as soon as they are final, so a host can start a module before
// all its inputs are ready and hand out output 0 while output 1 is still being computed.
#include "compiler_passes/dialect/dialect.h"
#include "compiler_passes/passes.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir {
namespace disc_ral {

#define GEN_PASS_DEF_PLACEINPUTSOUTPUTSPASS
#include "compiler_passes/Passes.h.inc"

namespace {

// Whether `op` (or an op nested in it) reads a result of an op in `set`.
bool usesAny(Operation* op, const llvm::SmallPtrSetImpl<Operation*>& set) {
  return op
      ->walk([&](Operation* inner) {
        for (Value v : inner->getOperands())
          if (Operation* def = v.getDefiningOp(); def && set.contains(def))
            return WalkResult::interrupt();
        return WalkResult::advance();
      })
      .wasInterrupted();
}

// The layout check inject-execution-context puts after a receive: `scf.if %bad { signal_error }`.
bool isInputCheck(Operation* op) {
  auto check = dyn_cast<scf::IfOp>(op);
  if (!check || check.getNumResults() != 0 || !check.getElseRegion().empty()) return false;
  for (Operation& inner : check.getThenRegion().front())
    if (!isa<SignalErrorOp, scf::YieldOp>(inner) && !isMemoryEffectFree(&inner)) return false;
  return true;
}

// Moves `recv` and what only prepares its input (pure ops, the layout check) down to right
// before the first op that uses the input otherwise.
void sinkReceive(RecvInputOp recv) {
  llvm::SmallPtrSet<Operation*, 16> group = {recv};
  SmallVector<Operation*> order = {recv};
  Operation* target = nullptr;
  for (Operation* op = recv->getNextNode(); op; op = op->getNextNode()) {
    if (!usesAny(op, group)) continue;
    // Allocations sized by the input move down too: only their lifetime shrinks.
    const bool prepares = (op->getNumRegions() == 0 && isMemoryEffectFree(op)) ||
                          isInputCheck(op) || isa<memref::AllocOp, AllocOp>(op);
    if (!prepares) {
      target = op;
      break;
    }
    group.insert(op);
    order.push_back(op);
  }
  // Unused (or used only by the terminator, which is not reached): leave it.
  if (!target || target->hasTrait<OpTrait::IsTerminator>()) return;
  for (Operation* op : order) op->moveBefore(target);
}

// The op after which `value` is final: the last op of `block` before `end` that uses its buffer
// (through views of it, or anything derived from them), or null when that is not known.
Operation* lastUse(Block& block, Value value, Operation* end) {
  Value root = value;
  while (auto view = root.getDefiningOp<ViewLikeOpInterface>()) root = view.getViewSource();
  Operation* alloc = root.getDefiningOp();
  if (!alloc || alloc->getBlock() != &block || !isa<memref::AllocOp, AllocOp>(alloc))
    return nullptr;
  Operation* last = alloc;
  SmallVector<Value> work = {root};
  llvm::SmallPtrSet<Value, 8> seen = {root};
  while (!work.empty()) {
    Value m = work.pop_back_val();
    // `m` is the buffer, a view of it, or its address as an integer (kernel launches take that).
    const bool address = !isa<BaseMemRefType>(m.getType());
    for (Operation* user : m.getUsers()) {
      Operation* own = block.findAncestorOpInBlock(*user);
      if (!own) return nullptr;  // used in another block: keep the send where it is
      if (own == end || isa<SendOutputOp>(own)) continue;
      if (!own->isBeforeInBlock(end)) return nullptr;
      if (last->isBeforeInBlock(own)) last = own;
      // What may alias the buffer: views, its address and arithmetic on that address; not the
      // sizes a dim reads or the data a load reads.
      const bool takes_address = address || isa<memref::ExtractAlignedPointerAsIndexOp>(user);
      for (Value r : user->getResults()) {
        const bool alias = isa<BaseMemRefType, LLVM::LLVMPointerType>(r.getType()) ||
                           (takes_address && r.getType().isIntOrIndex());
        if (alias && seen.insert(r).second) work.push_back(r);
      }
    }
  }
  return last;
}

class PlaceInputsOutputsPass : public impl::PlaceInputsOutputsPassBase<PlaceInputsOutputsPass> {
 public:
  void runOnOperation() override {
    getOperation().walk([&](func::FuncOp f) {
      if (!f->hasAttr(kEntryAttr) || f.isExternal()) return;
      Block& body = f.front();
      for (auto recv : llvm::to_vector(body.getOps<RecvInputOp>())) sinkReceive(recv);

      Operation* end = body.getTerminator();
      // Sends are hoisted in output order; those after the same op keep that order.
      llvm::DenseMap<Operation*, Operation*> placed_after;
      for (auto send : llvm::to_vector(body.getOps<SendOutputOp>())) {
        Operation* last = lastUse(body, send.getValue(), end);
        if (!last || !last->isBeforeInBlock(send)) continue;  // only ever earlier
        Operation*& anchor = placed_after[last];
        send->moveAfter(anchor ? anchor : last);
        anchor = send;
      }
    });
  }
};

}  // namespace
}  // namespace disc_ral
}  // namespace mlir
