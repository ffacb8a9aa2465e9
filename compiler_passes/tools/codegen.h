// LLVM IR -> optimised, position-independent shared object (the host library of a module).
#ifndef RAL_COMPILER_PASSES_TOOLS_CODEGEN_H_
#define RAL_COMPILER_PASSES_TOOLS_CODEGEN_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace llvm {
class Module;
}

namespace ral {
namespace compiler {

class MemoryBudget;

struct CodegenOptions {
  int opt_level = 3;            // 0..3
  std::string cpu = "generic";  // "native": the build machine's CPU and features
  std::string linker = "";      // compiler driver used to link (clang); a build-time default
  // Compile time stays near-linear in the input (codegen.cc has the measurements): a function
  // with loops nested deeper than this, or of more than ten times the size below, is not
  // optimised, and one with more instructions than this after optimisation gets the fast
  // instruction selector.
  unsigned max_optimized_loop_depth = 32;
  size_t max_optimized_function_size = 10000;
  // Checked after each LLVM optimisation pass and after code generation (null: no limit).
  MemoryBudget* budget = nullptr;
};

// Whether LLVM's target for this machine accepts `cpu` as -mcpu: generic, native, or a CPU it
// knows that runs this machine's (64-bit) code. False with `error` naming the value and a few
// accepted ones. LLVM itself ends the process on a CPU without 64-bit mode.
bool checkTargetCpu(const std::string& cpu, std::string* error);

// Optimises `module` in place (it gets the target's triple and data layout), emits an object
// file and links it into a shared object. False with `error` set on failure.
bool compileToSharedObject(llvm::Module& module, const CodegenOptions& options,
                           std::vector<uint8_t>* shared_object, std::string* error);

}  // namespace compiler
}  // namespace ral

#endif  // RAL_COMPILER_PASSES_TOOLS_CODEGEN_H_
