#include "compiler_passes/dialect/type_codes.h"

#include <vector>

#include "compiler_passes/dialect/dialect.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "ral/memref.h"
#include "ral/name_encoding.h"

namespace mlir {
namespace disc_ral {

ral::DType elementDType(Type type) {
  using ral::DType;
  if (auto i = dyn_cast<IntegerType>(type)) {
    const bool is_unsigned = i.isUnsigned();
    switch (i.getWidth()) {
      case 1:
        return DType::kBool;
      case 8:
        return is_unsigned ? DType::kUI8 : DType::kI8;
      case 16:
        return is_unsigned ? DType::kUI16 : DType::kI16;
      case 32:
        return is_unsigned ? DType::kUI32 : DType::kI32;
      case 64:
        return is_unsigned ? DType::kUI64 : DType::kI64;
      default:
        return DType::kInvalid;
    }
  }
  if (type.isIndex()) return DType::kI64;
  if (type.isF16()) return DType::kF16;
  if (type.isBF16()) return DType::kBF16;
  if (type.isF32()) return DType::kF32;
  if (type.isF64()) return DType::kF64;
  return DType::kInvalid;
}

bool isBindableMemRef(Type type) {
  auto m = dyn_cast<MemRefType>(type);
  // index has no fixed width in memory, so it cannot be a RAL tensor element.
  return m && m.getRank() <= ral::kMaxMemRefRank && !m.getElementType().isIndex() &&
         elementDType(m.getElementType()) != ral::DType::kInvalid && isStrided(m) &&
         !m.getMemorySpace();
}

std::string typeCode(Type type) {
  if (isa<ContextType>(type)) return "pvoid";
  if (auto m = dyn_cast<MemRefType>(type)) {
    if (!isBindableMemRef(m)) return "";
    return ral::memrefTypeCode(elementDType(m.getElementType()), static_cast<int>(m.getRank()));
  }
  // LLVM pointers are opaque: every one is a void*.
  if (isa<LLVM::LLVMPointerType>(type)) return "pvoid";
  const ral::DType t = elementDType(type);
  if (t == ral::DType::kInvalid) return "";
  return ral::scalarTypeCode(t);
}

std::string encodeCallName(StringRef target, StringRef device, TypeRange inputs, TypeRange results,
                           Type* bad) {
  std::vector<std::string> in{"pvoid"};
  std::vector<std::string> out;
  auto add = [&](TypeRange types, std::vector<std::string>& codes) {
    for (Type t : types) {
      std::string code = typeCode(t);
      if (code.empty()) {
        if (bad) *bad = t;
        return false;
      }
      codes.push_back(std::move(code));
    }
    return true;
  };
  if (!add(inputs, in) || !add(results, out)) return "";
  return ral::encodeApiName(std::string_view(target.data(), target.size()),
                            std::string_view(device.data(), device.size()), in, out);
}

}  // namespace disc_ral
}  // namespace mlir
