// The whole of ral-compile as a function: a model file (MLIR text or bytecode, or ONNX) in, a
// RAL module (.ralm) or an intermediate form out. ral-compile (the command line) and
// libral_compiler.so (the in-process C API, compiler_c_api.h) both call compileModel.
//
// Thread-safety: compileModel may run on several threads at once; each call has its own
// MLIRContext and LLVMContext. It recurses deeply on deep inputs: call it on a thread with
// kCompileStackBytes of stack (runOnCompileThread does).
#ifndef RAL_COMPILER_PASSES_TOOLS_COMPILE_DRIVER_H_
#define RAL_COMPILER_PASSES_TOOLS_COMPILE_DRIVER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace llvm {
class raw_ostream;
}

namespace ral {
namespace compiler {

// What to compile and how; the fields are ral-compile's flags (see its --help).
struct CompileRequest {
  std::string input_path;             // "-" reads MLIR from stdin
  std::string output_path;            // empty: the input's path with the emitted kind's extension
  std::string input_format = "auto";  // auto (by extension: .onnx is ONNX), mlir, onnx
  std::string device = "cpu";
  std::string gpu_arch;
  bool by_name = false;
  std::string inline_f32_math = "auto";
  bool kernels = true;
  // ONNX f32 convolutions as ral_conv library calls (kernels/conv/conv.h); cpu only.
  bool library_conv = true;
  // Depthwise-separable chains of those as one ral_conv_block call each (conv_block.h); cpu.
  bool conv_blocks = true;
  // A convolution of a per-image, per-channel scaled input as one ral_conv_scaled call; cpu.
  bool conv_scales = true;
  int64_t constant_min_bytes = 256;
  std::string entry = "main";
  std::string module_name;  // empty: the input file's stem
  // ralm; mlir (LLVM dialect); llvm (optimised LLVM IR); import (the tensor-level MLIR an ONNX
  // model imports to, before any RAL pass: checks that every operator is supported).
  std::string emit = "ralm";
  int opt_level = 3;
  unsigned max_optimized_loop_depth = 32;
  size_t max_optimized_function_size = 10000;
  std::string mcpu = "generic";
  // Host library variants for newer CPU levels, loaded where the CPU runs them: "auto" (with
  // --mcpu=generic on x86-64: x86-64-v3 and x86-64-v4; otherwise none), "none", or a
  // comma-separated list of ral::internal::knownHostTargets().
  std::string host_variants = "auto";
  // Bytes the compile's memory may grow by (memory_budget.h has what is measured and how
  // coarsely); 0: no limit. ral-compile also limits its address space by it.
  uint64_t max_memory = 0;
};

// Exit codes, as every RAL tool's (plugins/standalone/tool_main.h) plus one of the compiler's.
inline constexpr int kCompileOk = 0;
inline constexpr int kCompileFailed = 1;  // the model is wrong, or a bug: diagnostics say which
inline constexpr int kCompileUsage = 2;   // bad options or an unreadable input file
inline constexpr int kCompileInternal = 4;
// The model uses an operator, attribute or type the importer does not handle; each diagnostic
// names the node and what is missing.
inline constexpr int kCompileUnsupported = 5;

// Compiles per `request`, writing every diagnostic (file:line:col or ONNX node names) to
// `diagnostics`. Returns one of the exit codes above. Option values are checked before anything
// else (kCompileUsage), and so is the output path: only a regular file or a new path is written
// (ral/file_writer.h). Nothing that happens inside ends the calling process: LLVM's fatal errors
// are kCompileInternal and a failed allocation kCompileFailed ("out of memory"), after which the
// compile's IR is leaked rather than destroyed (llvm_errors.h).
int compileModel(const CompileRequest& request, llvm::raw_ostream& diagnostics);

// Runs `body` on a thread with kCompileStackBytes of stack (reserved, not committed) and waits.
// False, with `error` set, when the thread cannot be started (`body` did not run). `body` must
// not throw.
inline constexpr unsigned kCompileStackBytes = 256u << 20;
bool runOnCompileThread(const std::function<void()>& body, std::string* error);

}  // namespace compiler
}  // namespace ral

#endif  // RAL_COMPILER_PASSES_TOOLS_COMPILE_DRIVER_H_
