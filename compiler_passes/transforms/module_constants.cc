// disc-ral-module-constants: large constant globals move into the module file (Passes.td has
// the contract). The idea is BladeDISC's disc-const-to-ral: weights live in the module's
// constants section, not in the code, and a device gets its copy once per context.
#include "compiler_passes/dialect/dialect.h"
#include "compiler_passes/passes.h"
#include "compiler_passes/dialect/type_codes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir {
namespace disc_ral {

#define GEN_PASS_DEF_MODULECONSTANTSPASS
#include "compiler_passes/Passes.h.inc"

namespace {

// Element types with a ral_constant registration (kernels/module_code/module_code.h).
bool hasConstantApi(Type t) {
  if (t.isF16() || t.isBF16() || t.isF32() || t.isF64()) return true;
  if (auto i = dyn_cast<IntegerType>(t)) {
    if (i.isUnsigned()) return i.getWidth() == 8;
    return llvm::is_contained({1u, 8u, 16u, 32u, 64u}, i.getWidth());
  }
  return false;
}

int64_t storedBytes(MemRefType type) {
  return type.getNumElements() *
         static_cast<int64_t>(ral::dtypeSize(elementDType(type.getElementType())));
}

class ModuleConstantsPass : public impl::ModuleConstantsPassBase<ModuleConstantsPass> {
 public:
  using ModuleConstantsPassBase::ModuleConstantsPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext* ctx = &getContext();
    SmallVector<Attribute> entries;
    if (auto existing = module->getAttrOfType<ArrayAttr>(kConstantsAttr))
      entries.assign(existing.begin(), existing.end());
    llvm::DenseMap<Operation*, int64_t> index_of;
    SmallVector<memref::GetGlobalOp> uses;
    module.walk([&](memref::GetGlobalOp get) { uses.push_back(get); });
    for (memref::GetGlobalOp get : uses) {
      auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(get, get.getNameAttr());
      if (!global || !global.getConstant() || global->hasAttr(kHostConstantAttr)) continue;
      auto value = dyn_cast_or_null<DenseElementsAttr>(global.getConstantInitValue());
      MemRefType type = global.getType();
      if (!value || (value.isSplat() && minBytes > 0) || !type.getLayout().isIdentity() ||
          !hasConstantApi(type.getElementType()) || storedBytes(type) < minBytes)
        continue;
      auto f = get->getParentOfType<func::FuncOp>();
      if (!f || f.getNumArguments() == 0 || !isa<ContextType>(f.getArgument(0).getType()))
        continue;  // only code that receives the execution context can ask RAL for it
      auto [it, inserted] = index_of.try_emplace(global, static_cast<int64_t>(entries.size()));
      if (inserted) {
        entries.push_back(DictionaryAttr::get(
            ctx, {NamedAttribute(StringAttr::get(ctx, "name"), global.getSymNameAttr()),
                  NamedAttribute(StringAttr::get(ctx, "value"), value)}));
      }
      OpBuilder b(get);
      Value c = b.create<ConstantOp>(get.getLoc(), get.getType(), f.getArgument(0),
                                     b.getI64IntegerAttr(it->second));
      get.replaceAllUsesWith(c);
      get.erase();
    }
    for (auto& [op, index] : index_of) {
      auto global = cast<memref::GlobalOp>(op);
      if (SymbolTable::symbolKnownUseEmpty(global, module)) global.erase();
    }
    if (!entries.empty()) module->setAttr(kConstantsAttr, ArrayAttr::get(ctx, entries));
  }
};

}  // namespace
}  // namespace disc_ral
}  // namespace mlir
