// MLIR types -> RAL element types and name-encoding codes. The codes come from the runtime's own
// helpers (ral/name_encoding.h), so a name the compiler emits is exactly the name RAL_API
// registers for the matching C++ signature.
#ifndef RAL_COMPILER_PASSES_DIALECT_TYPE_CODES_H_
#define RAL_COMPILER_PASSES_DIALECT_TYPE_CODES_H_

#include <string>

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeRange.h"
#include "ral/dtype.h"

namespace mlir {
namespace disc_ral {

// The RAL element type of a scalar MLIR type: i1 -> kBool, signless and signed iN -> kIN,
// unsigned uiN -> kUIN, index -> kI64, f16/bf16/f32/f64. kInvalid for anything else.
ral::DType elementDType(Type type);

// True for the types an entry function may receive or return: ranked memrefs with a strided
// layout, a RAL element type and rank <= ral::kMaxMemRefRank.
bool isBindableMemRef(Type type);

// The code of one argument or result type: "f32", "i1", "i64" (index), "m2df32" (ranked strided
// memref), "pvoid" (!disc_ral.context, and !llvm.ptr: LLVM pointers are opaque). Empty when
// the type has no RAL encoding.
std::string typeCode(Type type);

// target___device___pvoid_<inputs>___<results>: the context comes first implicitly, `inputs` are
// the arguments after it. Empty when one of the types has no encoding (`bad` is set to it).
std::string encodeCallName(StringRef target, StringRef device, TypeRange inputs, TypeRange results,
                           Type* bad = nullptr);

}  // namespace disc_ral
}  // namespace mlir

#endif  // RAL_COMPILER_PASSES_DIALECT_TYPE_CODES_H_
