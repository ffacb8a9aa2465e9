// Writes a compiled module as a .ralm file with RAL's own builder (ral/module_builder.h). Kept
// free of MLIR and LLVM headers so it compiles like the rest of RAL.
#ifndef RAL_COMPILER_PASSES_TOOLS_MODULE_WRITER_H_
#define RAL_COMPILER_PASSES_TOOLS_MODULE_WRITER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "ral/module_spec.h"
#include "ral/status.h"

namespace ral {
namespace compiler {

struct CompiledModule {
  std::string name;
  std::string entry_symbol;
  std::vector<TensorSignature> inputs;
  std::vector<TensorSignature> outputs;
  std::vector<uint8_t> host_library;          // the shared object
  std::vector<HostVariantDef> host_variants;  // the same code for newer CPU levels
  std::vector<std::string> imports;           // the ral_imports names, in table order
  // Symbols of the host library's kernels (entries of the `host` executable, in launch index
  // order); empty: the module has no kernels.
  std::vector<std::string> host_kernels;
  // Device kernels (SPIR-V, ...), executables 0..n-1 in launch index order; the host
  // executable, when there is one, follows them.
  std::vector<ExecutableDef> device_executables;
  std::vector<ConstantDef> constants;  // the constants section, in ral_constant index order
};

// Name of the executable holding a module's host kernels (after the device executables).
inline constexpr const char kHostKernelsExecutable[] = "host_kernels";

Status writeModuleFile(const CompiledModule& module, const std::string& path);

}  // namespace compiler
}  // namespace ral

#endif  // RAL_COMPILER_PASSES_TOOLS_MODULE_WRITER_H_
