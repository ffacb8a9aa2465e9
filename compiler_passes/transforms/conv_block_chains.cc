// Finding the chains ral_conv_block runs (conv_block_chains.h).
#include "compiler_passes/transforms/conv_block_chains.h"

#include "compiler_passes/transforms/loop_analysis.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir {
namespace disc_ral {
namespace {

// The depthwise window's rows the kernel keeps (kernels/conv/conv_tiles.h's kMaxRows).
constexpr int64_t kMaxKernelRows = 16;

// An f32 2-D convolution on channels-last buffers whose activation the kernel computes.
bool isPlain(ConvOp op) {
  auto input = dyn_cast<MemRefType>(op.getInput().getType());
  auto filter = dyn_cast<MemRefType>(op.getFilter().getType());
  return input && filter && input.getRank() == 4 && input.getElementType().isF32() &&
         filter.hasStaticShape() && !op.isQuantized() && !op.getTransposed() &&
         op.getChannelsLast() && op.getActivation() != "gelu_erf" &&
         op.getActivation() != "gelu_tanh" &&
         llvm::all_of(op.getDilations(), [](int64_t d) { return d == 1; });
}

bool isPointwise(ConvOp op) {
  if (!isPlain(op) || op.getGroups() != 1) return false;
  auto filter = cast<MemRefType>(op.getFilter().getType());
  return filter.getDimSize(2) == 1 && filter.getDimSize(3) == 1 &&
         llvm::all_of(op.getStrides(), [](int64_t s) { return s == 1; }) &&
         llvm::all_of(op.getPadBegin(), [](int64_t p) { return p == 0; }) &&
         llvm::all_of(op.getPadEnd(), [](int64_t p) { return p == 0; });
}

bool isDepthwise(ConvOp op) {
  if (!isPlain(op)) return false;
  auto filter = cast<MemRefType>(op.getFilter().getType());
  auto input = cast<MemRefType>(op.getInput().getType());
  const int64_t groups = static_cast<int64_t>(op.getGroups());
  return filter.getDimSize(1) == 1 && filter.getDimSize(0) == groups &&
         input.getDimSize(3) == groups && filter.getDimSize(2) <= kMaxKernelRows;
}

// `buffer` is a fresh allocation that `producer` writes whole (no residual), `consumer` reads
// as its input after it in the same block, and nothing else touches but deallocations, which
// are appended to `dead` with the allocation.
bool isIntermediate(Value buffer, ConvOp producer, ConvOp consumer,
                    SmallVectorImpl<Operation*>* dead) {
  Operation* alloc = buffer.getDefiningOp();
  if (!alloc || !isa<memref::AllocOp, AllocOp>(alloc) || producer.getResidual() ||
      producer.getInit() != buffer || consumer.getInput() != buffer ||
      producer->getBlock() != consumer->getBlock() || !producer->isBeforeInBlock(consumer))
    return false;
  SmallVector<Operation*> frees;
  for (Operation* user : buffer.getUsers()) {
    if (user == producer.getOperation() || user == consumer.getOperation()) continue;
    if (!isa<memref::DeallocOp, DeallocOp>(user)) return false;
    frees.push_back(user);
  }
  dead->append(frees.begin(), frees.end());
  dead->push_back(alloc);
  return true;
}

// Nothing strictly between the chain's first and last op, other than its own ops and the
// intermediates' deallocations, writes or frees a buffer the fused call reads there.
bool nothingInterferes(const ConvBlockChain& chain) {
  ConvBlockChain c = chain;  // ConvOp's accessors are not const
  llvm::SmallPtrSet<Operation*, 8> own = {c.depthwise.getOperation()};
  if (c.expand) own.insert(c.expand.getOperation());
  if (c.project) own.insert(c.project.getOperation());
  for (Operation* op : chain.intermediates) own.insert(op);
  llvm::SmallPtrSet<Value, 8> read;
  for (ConvOp stage : {c.expand, c.depthwise, c.project}) {
    if (!stage) continue;
    read.insert(viewRoot(stage.getFilter()));
    read.insert(viewRoot(stage.getBias()));
  }
  read.insert(viewRoot(c.first().getInput()));
  return nothingWritesBetween(c.first(), c.last(), read, own);
}

}  // namespace

SmallVector<ConvBlockChain> findConvBlockChains(ModuleOp module) {
  SmallVector<ConvBlockChain> chains;
  llvm::SmallPtrSet<Operation*, 32> claimed;  // ops of an earlier chain
  // The pointwise stage that writes (or reads) `buffer` on the other side of `depthwise`.
  auto neighbour = [&](ConvOp depthwise, Value buffer, bool before,
                       SmallVectorImpl<Operation*>* dead) -> ConvOp {
    for (Operation* user : buffer.getUsers()) {
      auto conv = dyn_cast<ConvOp>(user);
      if (!conv || conv == depthwise || claimed.contains(conv) || !isPointwise(conv)) continue;
      SmallVector<Operation*> ops;
      if (before ? isIntermediate(buffer, conv, depthwise, &ops)
                 : isIntermediate(buffer, depthwise, conv, &ops)) {
        dead->append(ops.begin(), ops.end());
        return conv;
      }
    }
    return ConvOp();
  };
  module.walk([&](ConvOp depthwise) {
    if (!isDepthwise(depthwise)) return;
    ConvBlockChain chain;
    chain.depthwise = depthwise;
    chain.expand = neighbour(depthwise, depthwise.getInput(), true, &chain.intermediates);
    // A residual is added by the last stage: a residual depthwise stage ends the chain.
    if (!depthwise.getResidual())
      chain.project = neighbour(depthwise, depthwise.getInit(), false, &chain.intermediates);
    if ((!chain.expand && !chain.project) || !nothingInterferes(chain)) return;
    for (ConvOp stage : {chain.expand, chain.depthwise, chain.project})
      if (stage) claimed.insert(stage);
    chains.push_back(std::move(chain));
  });
  return chains;
}

}  // namespace disc_ral
}  // namespace mlir
