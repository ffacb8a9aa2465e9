// ral-compile: an MLIR or ONNX model in, RAL module (.ralm) out.
//
//   ral-compile model.mlir|model.onnx -o model.ralm [--device=cpu|vulkan|cuda|hsa]
//               [--gpu-arch=sm_80,...] [--by-name] [--entry=main] [--name=model]
//               [--emit=ralm|mlir|llvm|import] [-O=3] [--mcpu=generic|native|<cpu>]
//
// The flags fill a CompileRequest; compileModel (compile_driver.h) does the rest, as it does for
// libral_compiler.so. An ONNX model is imported to tensor-level MLIR first (compiler_passes/onnx).
#include <string>

#include "compiler_passes/tools/compile_driver.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"
#include "plugins/standalone/tool_main.h"

namespace cl = llvm::cl;

namespace {

cl::opt<std::string> input_path(cl::Positional, cl::desc("<model.mlir | model.onnx>"),
                                cl::Required);
cl::opt<std::string> output_path("o", cl::desc("Output file (default: <input>.ralm)"),
                                 cl::value_desc("path"));
cl::opt<std::string> device("device",
                            cl::desc("Device the module's loops and library calls run on: cpu "
                                     "(default), vulkan (SPIR-V kernels), cuda (PTX kernels) or "
                                     "hsa (HSACO kernels); inputs and outputs live on it"),
                            cl::init("cpu"));
cl::opt<std::string> gpu_arch(
    "gpu-arch",
    cl::desc("cuda, hsa: comma-separated architectures to compile kernels for, each stored as a "
             "variant the runtime picks from (default: sm_75,sm_80,sm_90 for cuda; "
             "gfx90a,gfx942,gfx1100 for hsa)"),
    cl::init(""));
cl::opt<bool> by_name("by-name",
                      cl::desc("Call RAL functions through ral_api_call(ctx, name, args) instead "
                               "of the import table"),
                      cl::init(false));
cl::opt<std::string> inline_f32_math(
    "inline-f32-math",
    cl::desc("f32 math computed inline (in f32, within about 1.2 ulp, vectorizable; <op>.f64 "
             "evaluates in f64 and rounds once) instead of by libm calls: auto (default: exp, "
             "expm1, log, log1p, tanh and erf), all (the same), none, or a comma-separated list "
             "of those ops"),
    cl::init("auto"));
cl::opt<bool> kernels("kernels",
                      cl::desc("Run parallel loops as kernels on the device's workgroups "
                               "(default true; false keeps them sequential host loops)"),
                      cl::init(true));
cl::opt<int64_t> constant_min_bytes(
    "constant-min-bytes",
    cl::desc("Constants of at least this many bytes go to the module's constants section "
             "(default 256)"),
    cl::init(256));
cl::opt<std::string> entry("entry", cl::desc("Entry function (default: main)"), cl::init("main"));
cl::opt<std::string> module_name("name",
                                 cl::desc("Module name recorded in the .ralm (default: the input "
                                          "file's stem)"),
                                 cl::value_desc("name"));
cl::opt<std::string> input_format(
    "input-format",
    cl::desc("auto (default: .onnx files are ONNX, anything else MLIR text or bytecode), mlir "
             "or onnx"),
    cl::init("auto"));
cl::opt<std::string> emit("emit",
                          cl::desc("What to write: ralm (default), mlir (LLVM dialect), llvm "
                                   "(optimised LLVM IR), import (the tensor-level MLIR an ONNX "
                                   "model becomes, before any RAL pass)"),
                          cl::init("ralm"));
cl::opt<int> opt_level("O", cl::desc("Optimisation level 0..3 (default 3)"), cl::init(3),
                       cl::Prefix);
cl::opt<unsigned> max_optimized_loop_depth(
    "max-optimized-loop-depth",
    cl::desc("Functions with loops nested deeper than this are not optimised: LLVM's loop "
             "passes take time growing with the fourth power of the depth (default 32)"),
    cl::init(32));
cl::opt<size_t> max_optimized_function_size(
    "max-optimized-function-size",
    cl::desc("Functions of more LLVM instructions than this after optimisation get the fast "
             "instruction selector, and of ten times more before it are not optimised: LLVM's "
             "code generation takes time quadratic in a function's size (default 10000)"),
    cl::init(10000));
cl::opt<std::string> mcpu("mcpu",
                          cl::desc("Target CPU: generic (default, portable), native, or an LLVM "
                                   "CPU name"),
                          cl::init("generic"));

}  // namespace

int main(int argc, char** argv) {
  llvm::InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv,
                              "ral-compile: compiles an MLIR or ONNX model to a RAL module\n");
  ral::compiler::CompileRequest request;
  request.input_path = input_path;
  request.output_path = output_path;
  request.input_format = input_format;
  request.device = device;
  request.gpu_arch = gpu_arch;
  request.by_name = by_name;
  request.inline_f32_math = inline_f32_math;
  request.kernels = kernels;
  request.constant_min_bytes = constant_min_bytes;
  request.entry = entry;
  request.module_name = module_name;
  request.emit = emit;
  request.opt_level = opt_level;
  request.max_optimized_loop_depth = max_optimized_loop_depth;
  request.max_optimized_function_size = max_optimized_function_size;
  request.mcpu = mcpu;
  int rc = ral::compiler::kCompileFailed;
  // The tools' exception barrier, on the thread that compiles.
  ral::compiler::runOnCompileThread([&] {
    rc = ral::cli::runTool("ral-compile",
                           [&] { return ral::compiler::compileModel(request, llvm::errs()); });
  });
  return rc;
}
