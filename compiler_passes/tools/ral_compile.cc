// ral-compile: an MLIR or ONNX model in, RAL module (.ralm) out.
//
//   ral-compile model.mlir|model.onnx -o model.ralm [--device=cpu|vulkan|cuda|hsa]
//               [--gpu-arch=sm_80,...] [--by-name] [--entry=main] [--name=model]
//               [--emit=ralm|mlir|llvm|import] [-O=3] [--mcpu=generic|native|<cpu>]
//               [--max-memory=4G]
//
// The flags fill a CompileRequest; compileModel (compile_driver.h) does the rest, as it does for
// libral_compiler.so. An ONNX model is imported to tensor-level MLIR first (compiler_passes/onnx).
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <new>
#include <string>

#include "compiler_passes/tools/compile_driver.h"
#include "compiler_passes/tools/compile_options.h"
#include "compiler_passes/tools/memory_budget.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"
#include "plugins/standalone/tool_main.h"

namespace cl = llvm::cl;

namespace {

// ral-compile's own options; LLVM's (libLLVM registers hundreds) are hidden and refused.
cl::OptionCategory category("ral-compile options");

cl::opt<std::string> input_path(cl::Positional, cl::desc("<model.mlir | model.onnx>"), cl::Required,
                                cl::cat(category));
cl::opt<std::string> output_path(
    "o",
    cl::desc("Output file (default: <input>.ralm): a new path or a regular file, replaced through "
             "a temporary file renamed into place; a symbolic link only to your own regular file "
             "(its target is replaced). Devices, FIFOs, directories and other users' files are "
             "refused. '-' is stdout, for --emit=mlir, llvm or import"),
    cl::value_desc("path"), cl::cat(category));
cl::opt<std::string> device("device",
                            cl::desc("Device the module's loops and library calls run on: cpu "
                                     "(default), vulkan (SPIR-V kernels), cuda (PTX kernels) or "
                                     "hsa (HSACO kernels); inputs and outputs live on it"),
                            cl::init("cpu"), cl::cat(category));
cl::opt<std::string> gpu_arch(
    "gpu-arch",
    cl::desc("cuda, hsa: comma-separated architectures to compile kernels for, each stored as a "
             "variant the runtime picks from (default: sm_75,sm_80,sm_90 for cuda; "
             "gfx90a,gfx942,gfx1100 for hsa)"),
    cl::init(""), cl::cat(category));
cl::opt<bool> by_name("by-name",
                      cl::desc("Call RAL functions through ral_api_call(ctx, name, args) instead "
                               "of the import table"),
                      cl::init(false), cl::cat(category));
cl::opt<std::string> inline_f32_math(
    "inline-f32-math",
    cl::desc("f32 math computed inline (in f32, within about 1.2 ulp, vectorizable; <op>.f64 "
             "evaluates in f64 and rounds once) instead of by libm calls: auto (default: exp, "
             "expm1, log, log1p, tanh and erf), all (the same), none, or a comma-separated list "
             "of those ops"),
    cl::init("auto"), cl::cat(category));
cl::opt<bool> kernels("kernels",
                      cl::desc("Run parallel loops as kernels on the device's workgroups "
                               "(default true; false keeps them sequential host loops)"),
                      cl::init(true), cl::cat(category));
cl::opt<bool> library_conv(
    "library-conv",
    cl::desc("cpu and cuda: run ONNX f32 Conv and ConvTranspose, with their bias, activation and "
             "residual add, as ral_conv library calls (oneDNN on the cpu, where RAL is built with "
             "it; cuDNN on cuda; default true), and on the cpu also MatMul and Gemm by constant "
             "weights (1x1 convolutions over the rows); false: im2col and GEMM"),
    cl::init(true), cl::cat(category));
cl::opt<bool> conv_blocks(
    "conv-blocks",
    cl::desc("cpu: run each pointwise expansion, depthwise convolution and pointwise projection "
             "that follow one another (MobileNet's and EfficientNet's blocks) as one "
             "ral_conv_block call that keeps the expanded activations in the cache (default "
             "true); false: one ral_conv call per convolution"),
    cl::init(true), cl::cat(category));
cl::opt<bool> conv_scales(
    "conv-scales",
    cl::desc("cpu: run a convolution whose input is multiplied by one value per image and "
             "channel (the squeeze-and-excitation of EfficientNet's blocks) as one "
             "ral_conv_scaled call that scales the input as it reads it (default true); false: "
             "the multiply as a loop, then ral_conv"),
    cl::init(true), cl::cat(category));
// Integer options are taken as text and parsed with the C API's range checks
// (parseIntegerOption): LLVM's own parsers print their errors themselves.
cl::opt<std::string> constant_min_bytes(
    "constant-min-bytes",
    cl::desc("Constants of at least this many bytes go to the module's constants section "
             "(0 or more; default 256)"),
    cl::value_desc("bytes"), cl::init("256"), cl::cat(category));
cl::opt<std::string> entry("entry",
                           cl::desc("Entry function (default: main; printable ASCII, no spaces)"),
                           cl::init("main"), cl::cat(category));
cl::opt<std::string> module_name("name",
                                 cl::desc("Module name recorded in the .ralm (default: the input "
                                          "file's stem; at most 256 bytes of UTF-8 without "
                                          "control characters)"),
                                 cl::value_desc("name"), cl::cat(category));
cl::opt<std::string> input_format(
    "input-format",
    cl::desc("auto (default: .onnx files are ONNX, anything else MLIR text or bytecode), mlir "
             "or onnx"),
    cl::init("auto"), cl::cat(category));
cl::opt<std::string> emit("emit",
                          cl::desc("What to write: ralm (default), mlir (LLVM dialect), llvm "
                                   "(optimised LLVM IR), import (the tensor-level MLIR an ONNX "
                                   "model becomes, before any RAL pass)"),
                          cl::init("ralm"), cl::cat(category));
cl::opt<std::string> opt_level("O", cl::desc("Optimisation level 0..3 (default 3)"),
                               cl::value_desc("level"), cl::init("3"), cl::Prefix,
                               cl::cat(category));
cl::opt<std::string> max_optimized_loop_depth(
    "max-optimized-loop-depth",
    cl::desc("Functions with loops nested deeper than this are not optimised: LLVM's loop "
             "passes take time growing with the fourth power of the depth (0 to 2^32-1; "
             "default 32)"),
    cl::value_desc("depth"), cl::init("32"), cl::cat(category));
cl::opt<std::string> max_optimized_function_size(
    "max-optimized-function-size",
    cl::desc("Functions of more LLVM instructions than this after optimisation get the fast "
             "instruction selector, and of ten times more before it are not optimised: LLVM's "
             "code generation takes time quadratic in a function's size (0 to 2^64-1; default "
             "10000)"),
    cl::value_desc("instructions"), cl::init("10000"), cl::cat(category));
cl::opt<std::string> mcpu("mcpu",
                          cl::desc("Target CPU: generic (default, portable), native (this "
                                   "machine's), or a CPU name LLVM knows for this machine's "
                                   "target (checked before compiling: x86-64-v3, skylake, ...)"),
                          cl::init("generic"), cl::cat(category));
cl::opt<std::string> host_variants(
    "host-variants",
    cl::desc("Host code also compiled for newer CPU levels, each loaded where the CPU runs it: "
             "auto (default: x86-64-v3 and x86-64-v4 when --mcpu=generic, none otherwise), none, "
             "or a comma-separated list of x86-64-v2, x86-64-v3, x86-64-v4"),
    cl::value_desc("list"), cl::init("auto"), cl::cat(category));
cl::opt<std::string> max_memory(
    "max-memory",
    cl::desc("Stop the compile once its memory has grown by more than this (bytes, or with a K, "
             "M, G or T suffix: 512M, 4G; default: no limit). Checked after every pass and ONNX "
             "node, as growth of the process's resident memory, so one step may overshoot; here "
             "the address space is limited too (RLIMIT_AS), so no allocation goes far beyond it"),
    cl::value_desc("size"), cl::init(""), cl::cat(category));

// LLVM's messages about the command line ("ral-compile: for the -O option: '9999999999' value
// invalid ..."), as one error line like every RAL tool's, with the usage exit code.
int usageError(std::string messages) {
  std::string line;
  llvm::StringRef rest(messages);
  while (!rest.empty()) {
    auto [message, next] = rest.split('\n');
    rest = next;
    message = message.trim();
    message.consume_front("ral-compile:");
    message = message.trim();
    if (message.empty()) continue;
    line += (line.empty() ? "" : "; ") + message.str();
  }
  std::fprintf(stderr, "ral-compile: error: %s (see --help)\n", line.c_str());
  return ral::compiler::kCompileUsage;
}

// --max-memory as a hard limit: the address space the process has now (code, mapped libraries),
// the compile thread's reserved stack, the input (it is mapped), the budget, and 512 MiB for
// malloc's per-thread arenas and the linker (run as a child, which inherits the limit).
void limitAddressSpace(uint64_t budget, const std::string& input) {
  uint64_t mapped_pages = 0;
  if (std::FILE* statm = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(statm, "%lu", &mapped_pages) != 1) mapped_pages = 0;
    std::fclose(statm);
  }
  struct stat st {};
  const uint64_t input_bytes =
      stat(input.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
  const uint64_t slack = uint64_t{512} << 20;
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  uint64_t limit = mapped_pages * page + ral::compiler::kCompileStackBytes + input_bytes + slack;
  limit = budget > UINT64_MAX - limit ? RLIM_INFINITY : limit + budget;
  struct rlimit current {};
  if (getrlimit(RLIMIT_AS, &current) != 0) return;
  if (current.rlim_cur != RLIM_INFINITY && current.rlim_cur <= limit) return;  // already lower
  if (current.rlim_max != RLIM_INFINITY && limit > current.rlim_max) limit = current.rlim_max;
  current.rlim_cur = limit;
  if (setrlimit(RLIMIT_AS, &current) != 0)
    std::perror("ral-compile: warning: cannot limit the address space for --max-memory");
}

}  // namespace

int main(int argc, char** argv) {
  llvm::InitLLVM init(argc, argv);
  // InitLLVM makes a failed `new` call LLVM's out-of-memory handler, which aborts outside a
  // compile; without it `new` throws std::bad_alloc, which runTool reports ("out of memory").
  std::set_new_handler(nullptr);
  cl::HideUnrelatedOptions(category);
  std::string cl_errors;
  llvm::raw_string_ostream cl_os(cl_errors);
  if (!cl::ParseCommandLineOptions(
          argc, argv, "ral-compile: compiles an MLIR or ONNX model to a RAL module\n", &cl_os))
    return usageError(cl_os.str());
  // LLVM's own options are switches of the whole process's code generator, some of which end it
  // (--stop-after=<unknown pass> is a report_fatal_error): not ral-compile's to take.
  for (const auto& registered : cl::getRegisteredOptions()) {
    const cl::Option* option = registered.getValue();
    if (option->getNumOccurrences() > 0 && !llvm::is_contained(option->Categories, &category))
      return usageError("--" + registered.getKey().str() +
                        " is one of LLVM's own options, which ral-compile does not take");
  }
  ral::compiler::CompileRequest request;
  request.input_path = input_path;
  request.output_path = output_path;
  request.input_format = input_format;
  request.device = device;
  request.gpu_arch = gpu_arch;
  request.by_name = by_name;
  request.inline_f32_math = inline_f32_math;
  request.kernels = kernels;
  request.library_conv = library_conv;
  request.conv_blocks = conv_blocks;
  request.conv_scales = conv_scales;
  request.entry = entry;
  request.module_name = module_name;
  request.emit = emit;
  request.mcpu = mcpu;
  request.host_variants = host_variants;
  std::string error;
  using ral::compiler::parseIntegerOption;
  if (!parseIntegerOption("-O", opt_level, &request.opt_level, &error) ||
      !parseIntegerOption("--constant-min-bytes", constant_min_bytes, &request.constant_min_bytes,
                          &error) ||
      !parseIntegerOption("--max-optimized-loop-depth", max_optimized_loop_depth,
                          &request.max_optimized_loop_depth, &error) ||
      !parseIntegerOption("--max-optimized-function-size", max_optimized_function_size,
                          &request.max_optimized_function_size, &error))
    return ral::cli::toolError("ral-compile", ral::compiler::kCompileUsage, error);
  if (!max_memory.empty()) {
    if (!ral::compiler::parseByteSize(max_memory, &request.max_memory, &error))
      return ral::cli::toolError("ral-compile", ral::compiler::kCompileUsage,
                                 "--max-memory: " + error);
    if (request.max_memory != 0) limitAddressSpace(request.max_memory, request.input_path);
  }
  int rc = ral::compiler::kCompileFailed;
  std::string thread_error;
  // The tools' exception barrier, on the thread that compiles.
  if (!ral::compiler::runOnCompileThread(
          [&] {
            rc = ral::cli::runTool(
                "ral-compile", [&] { return ral::compiler::compileModel(request, llvm::errs()); });
          },
          &thread_error))
    return ral::cli::toolError("ral-compile", ral::compiler::kCompileFailed, thread_error);
  return rc;
}
