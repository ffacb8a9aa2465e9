// LLVM IR of one AMD GPU kernel module -> HSACO (an AMDGPU code object: an ELF shared object the
// HSA runtime's code object reader loads). LLVM's AMDGPU back end emits the object in process
// (code object v5, whose AMDHSA metadata note lists each kernel, its `.kd` descriptor symbol and
// kernarg layout); ld.lld (found at configure time, Debian's lld-19) links it into a shared
// object. No ROCm installation and no device library is involved.
#ifndef RAL_COMPILER_PASSES_CONVERSION_GPU_AMDGPU_CODEGEN_H_
#define RAL_COMPILER_PASSES_CONVERSION_GPU_AMDGPU_CODEGEN_H_

#include <string>
#include <vector>

#include "llvm/ADT/StringRef.h"

namespace llvm {
class Module;
}

namespace mlir {
namespace disc_ral {

// Optimises `module` (given the amdgcn-amd-amdhsa triple and `chip`'s data layout) at -O3 and
// compiles it for processor `chip` ("gfx90a") into `hsaco`. False with `error` set on failure.
// Thread-safe.
bool compileHsaco(llvm::Module& module, llvm::StringRef chip, std::vector<char>* hsaco,
                  std::string* error);

}  // namespace disc_ral
}  // namespace mlir

#endif  // RAL_COMPILER_PASSES_CONVERSION_GPU_AMDGPU_CODEGEN_H_
