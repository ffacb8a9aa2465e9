// ral-compile: MLIR in, RAL module (.ralm) out.
//
//   ral-compile model.mlir -o model.ralm [--device=cpu|vulkan|cuda|hsa] [--gpu-arch=sm_80,...]
//   [--by-name] [--entry=main] [--name=model]
//               [--emit=ralm|mlir|llvm] [-O=3] [--mcpu=generic|native|<cpu>]
//
// The signature (dtype and static/dynamic dims of each input and output) comes from the entry
// function's type; the pipeline is buildCompilePipeline (compiler_passes/passes.h); the LLVM IR
// is compiled in process and linked into a position-independent shared object.
#include <memory>
#include <string>

#include "compiler_passes/gpu_targets.h"
#include "compiler_passes/limits.h"
#include "compiler_passes/passes.h"
#include "compiler_passes/tools/codegen.h"
#include "compiler_passes/tools/host_symbols.h"
#include "compiler_passes/tools/module_writer.h"
#include "compiler_passes/type_codes.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/thread.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "plugins/standalone/tool_main.h"
#include "ral/driver.h"
#include "ral/file_reader.h"

namespace cl = llvm::cl;

namespace {

cl::opt<std::string> input_path(cl::Positional, cl::desc("<model.mlir>"), cl::Required);
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
cl::opt<std::string> emit("emit",
                          cl::desc("What to write: ralm (default), mlir (LLVM dialect), llvm "
                                   "(optimised LLVM IR)"),
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

// A dense constant as RAL stores it: row-major, little-endian, one byte per i1.
ral::ConstantDef constantOf(mlir::StringAttr name, mlir::DenseElementsAttr value) {
  ral::ConstantDef c;
  c.name = name.str();
  auto type = mlir::cast<mlir::ShapedType>(value.getType());
  c.dtype = mlir::disc_ral::elementDType(type.getElementType());
  c.shape.assign(type.getShape().begin(), type.getShape().end());
  const size_t width = ral::dtypeSize(c.dtype);
  c.data.reserve(width * static_cast<size_t>(type.getNumElements()));
  // Little-endian bytes of each element, zero-extended to the element's storage size.
  auto append = [&](const llvm::APInt& bits) {
    const llvm::APInt wide = bits.zextOrTrunc(static_cast<unsigned>(8 * width));
    for (size_t byte = 0; byte < width; ++byte)
      c.data.push_back(static_cast<uint8_t>(wide.extractBitsAsZExtValue(8, 8 * byte)));
  };

  if (mlir::isa<mlir::FloatType>(type.getElementType())) {
    for (const llvm::APFloat& v : value.getValues<llvm::APFloat>()) append(v.bitcastToAPInt());
  } else {
    for (const llvm::APInt& v : value.getValues<llvm::APInt>()) append(v);
  }
  return c;
}

// Exit codes as every RAL tool (plugins/standalone/tool_main.h): 1 the compile failed, 2 bad
// usage or an unreadable input file, 4 an internal error.
int fail(const llvm::Twine& message, int code = ral::cli::kExitFailed) {
  llvm::errs() << "ral-compile: error: " << message << "\n";
  return code;
}

// The .ralm signature of one entry argument or result; false when the type cannot be bound (the
// pipeline then reports it with its location).
bool signatureOf(mlir::Type type, ral::TensorSignature* sig) {
  // A tensor-level entry is bufferized with identity layouts (disc-ral-bufferize).
  if (auto tensor = mlir::dyn_cast<mlir::RankedTensorType>(type))
    type = mlir::MemRefType::get(tensor.getShape(), tensor.getElementType());
  if (!mlir::disc_ral::isBindableMemRef(type)) return false;
  auto memref = mlir::cast<mlir::MemRefType>(type);
  sig->dtype = mlir::disc_ral::elementDType(memref.getElementType());
  for (int64_t d : memref.getShape())
    sig->dims.push_back(mlir::ShapedType::isDynamic(d) ? ral::kDynamicDim : d);
  // The layout contract: hosts bind views this layout accepts and re-lay out the others.
  if (!memref.getLayout().isIdentity()) {
    llvm::SmallVector<int64_t> strides;
    int64_t offset;
    if (mlir::failed(mlir::getStridesAndOffset(memref, strides, offset))) return false;
    for (int64_t s : strides) {
      if (!mlir::ShapedType::isDynamic(s) && s < 0) return false;
      sig->strides.push_back(mlir::ShapedType::isDynamic(s) ? ral::kDynamicDim : s);
    }
  }
  return true;
}

// Where the module first calls each function it only declares: the op a symbol the host library
// may not import came from.
llvm::StringMap<mlir::Location> declaredCallSites(mlir::ModuleOp module) {
  llvm::StringMap<mlir::Location> sites;
  module.walk([&](mlir::LLVM::CallOp call) {
    auto callee = call.getCallee();
    if (!callee) return;
    auto f = module.lookupSymbol<mlir::LLVM::LLVMFuncOp>(*callee);
    if (f && f.isExternal()) sites.try_emplace(*callee, call.getLoc());
  });
  return sites;
}

// Fails (with a located error where the module calls the symbol) when the host library needs a
// symbol that neither RAL's import mechanism nor libc/libm provides: such a module could never
// load.
bool checkHostSymbols(const std::vector<uint8_t>& library,
                      const llvm::StringMap<mlir::Location>& sites) {
  std::vector<std::string> undefined;
  std::string error;
  if (!ral::compiler::undefinedSymbols(library, &undefined, &error)) {
    fail("cannot read the host library's symbols: " + error);
    return false;
  }
  bool ok = true;
  for (const std::string& name : undefined) {
    if (ral::compiler::isAllowedHostSymbol(name, by_name)) continue;
    ok = false;
    const std::string what = "the module needs '" + name + "', which neither RAL (import table" +
                             (by_name ? std::string(", ral_api_call") : std::string()) +
                             ") nor libc/libm provides: it would fail to load";
    auto site = sites.find(name);
    if (site != sites.end()) {
      mlir::emitError(site->second) << what << " (declare RAL functions with disc_ral.custom_call)";
    } else {
      fail(what + " (introduced by LLVM code generation)");
    }
  }
  return ok;
}

// The parser, the verifier, the printer and many passes recurse once per level of nesting, and
// LLVM's optimizers on long use-def chains and deep loop nests. Text beyond kMaxNestingDepth is
// refused before parsing, but MLIR bytecode can only be checked once parsed, and recursion in
// LLVM has no limit of ours: the compile runs on a thread with this much stack, reserved rather
// than committed (only the pages touched count), where the main thread has 8 MiB.
constexpr unsigned kCompileStackBytes = 256u << 20;

int compile() {
  if (device != "cpu" && device != "vulkan" && device != "cuda" && device != "hsa")
    return fail("--device=" + device +
                    " is not supported: this build generates code for cpu, vulkan, cuda and hsa",
                ral::cli::kExitUsage);
  const bool gpu = device == "cuda" || device == "hsa";
  if (!gpu && !gpu_arch.empty())
    return fail("--gpu-arch goes with --device=cuda or --device=hsa", ral::cli::kExitUsage);
  if (gpu) {
    std::vector<std::string> archs;
    std::string arch_error;
    if (!mlir::disc_ral::parseGpuArchs(device, gpu_arch, &archs, &arch_error))
      return fail("--gpu-arch: " + arch_error, ral::cli::kExitUsage);
  }
  if (device != "cpu" && !kernels)
    return fail("--device=" + device + " runs every loop as a kernel; --kernels=false is cpu only",
                ral::cli::kExitUsage);
  if (emit != "ralm" && emit != "mlir" && emit != "llvm")
    return fail("--emit must be ralm, mlir or llvm, got '" + emit + "'", ral::cli::kExitUsage);
  if (opt_level < 0 || opt_level > 3) return fail("-O must be 0..3", ral::cli::kExitUsage);
  std::string out_path = output_path;
  if (out_path.empty()) {
    llvm::SmallString<128> p(input_path.getValue());
    llvm::sys::path::replace_extension(p, emit == "ralm" ? "ralm" : emit == "llvm" ? "ll" : "mlir");
    out_path = std::string(p);
  }

  mlir::DialectRegistry registry;
  mlir::disc_ral::registerDialects(registry);
  // Single-threaded, so every pass runs on this thread's large stack, not on a pool thread's
  // (only convert-linalg-to-loops ran per function in parallel).
  mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
  // Diagnostics carry file:line:col; a dump of the failing op would only bury them.
  context.printOpOnDiagnostic(false);
  mlir::registerBuiltinDialectTranslation(context);
  mlir::registerLLVMDialectTranslation(context);
  llvm::SourceMgr source_mgr;
  mlir::SourceMgrDiagnosticHandler diagnostics(source_mgr, &context);

  std::string open_error;
  // A directory, FIFO or device is refused before it is read ("-" is stdin, read as given).
  if (input_path != "-") {
    const ral::Status readable = ral::checkRegularFile(input_path);
    if (!readable.ok()) return fail(std::string(readable.message()), ral::cli::kExitUsage);
  }
  auto file = mlir::openInputFile(input_path, &open_error);
  if (!file) return fail(open_error, ral::cli::kExitUsage);
  const unsigned buffer_id = source_mgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  // Before the parser recurses into the text.
  if (mlir::failed(mlir::disc_ral::checkTextNesting(source_mgr, buffer_id, &context))) return 1;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(source_mgr, mlir::ParserConfig(&context));
  if (!module) return 1;  // the diagnostic (file:line:col) is already printed

  ral::compiler::CompiledModule compiled;
  compiled.name =
      module_name.empty() ? llvm::sys::path::stem(input_path).str() : module_name.getValue();
  compiled.entry_symbol = "ral_entry";
  // Inputs and outputs live where the code runs; a host copies its tensors there.
  const ral::DeviceKind data_device = device == "vulkan" ? ral::DeviceKind::kVulkan
                                      : device == "cuda" ? ral::DeviceKind::kCuda
                                      : device == "hsa"  ? ral::DeviceKind::kHsa
                                                         : ral::DeviceKind::kCpu;
  if (auto f = module->lookupSymbol<mlir::func::FuncOp>(entry)) {
    for (mlir::Type t : f.getFunctionType().getInputs()) {
      ral::TensorSignature sig;
      sig.device = data_device;
      if (signatureOf(t, &sig)) compiled.inputs.push_back(std::move(sig));
    }
    for (mlir::Type t : f.getFunctionType().getResults()) {
      ral::TensorSignature sig;
      sig.device = data_device;
      if (signatureOf(t, &sig)) compiled.outputs.push_back(std::move(sig));
    }
  }

  mlir::PassManager pm(&context);
  mlir::disc_ral::PipelineOptions options;
  options.entry = entry;
  options.entry_symbol = compiled.entry_symbol;
  options.device = device;
  options.gpu_archs = gpu_arch;
  options.by_name = by_name;
  options.kernels = kernels;
  options.constant_min_bytes = constant_min_bytes;
  // Computed in f32, the inline forms beat libm on every target measured (even SSE2-only
  // `generic`: exp 1.9x, log 1.2x; README), and a device has no erf of its own.
  if (inline_f32_math == "auto")
    options.inline_f32_math = "exp,expm1,log,log1p,tanh,erf";
  else if (inline_f32_math == "all")
    options.inline_f32_math = "exp,expm1,log,log1p,tanh,erf";
  else if (inline_f32_math == "none")
    options.inline_f32_math = "";
  else
    options.inline_f32_math = inline_f32_math;
  mlir::disc_ral::buildCompilePipeline(pm, options);
  if (mlir::failed(pm.run(*module))) return 1;

  if (auto imports = (*module)->getAttrOfType<mlir::ArrayAttr>(mlir::disc_ral::kImportsAttr)) {
    for (mlir::Attribute a : imports)
      compiled.imports.push_back(mlir::cast<mlir::StringAttr>(a).str());
    (*module)->removeAttr(mlir::disc_ral::kImportsAttr);
  }
  if (auto names = (*module)->getAttrOfType<mlir::ArrayAttr>(mlir::disc_ral::kHostKernelsAttr)) {
    for (mlir::Attribute a : names)
      compiled.host_kernels.push_back(mlir::cast<mlir::StringAttr>(a).str());
    (*module)->removeAttr(mlir::disc_ral::kHostKernelsAttr);
  }
  if (auto kernels =
          (*module)->getAttrOfType<mlir::ArrayAttr>(mlir::disc_ral::kDeviceKernelsAttr)) {
    for (mlir::Attribute a : kernels) {
      auto entry = mlir::cast<mlir::DictionaryAttr>(a);
      ral::ExecutableDef exe;
      exe.name = entry.getAs<mlir::StringAttr>("name").str();
      const llvm::StringRef format = entry.getAs<mlir::StringAttr>("format").getValue();
      exe.format = format == "ptx"     ? ral::ExecutableFormat::kPtx
                   : format == "hsaco" ? ral::ExecutableFormat::kHsaco
                                       : ral::ExecutableFormat::kSpirv;
      if (auto data = entry.getAs<mlir::StringAttr>("data"))
        exe.data.assign(data.getValue().begin(), data.getValue().end());
      if (auto variants = entry.getAs<mlir::ArrayAttr>("variants"))
        for (mlir::Attribute v : variants) {
          auto variant = mlir::cast<mlir::DictionaryAttr>(v);
          llvm::StringRef bytes = variant.getAs<mlir::StringAttr>("data").getValue();
          exe.variants.push_back(
              ral::ExecutableVariantDef{variant.getAs<mlir::StringAttr>("target").str(),
                                        std::vector<uint8_t>(bytes.begin(), bytes.end())});
        }
      llvm::ArrayRef<int64_t> wg = entry.getAs<mlir::DenseI64ArrayAttr>("workgroup").asArrayRef();
      exe.entries.push_back(ral::EntryPoint{
          exe.name, ral::Dim3{static_cast<uint32_t>(wg[0]), static_cast<uint32_t>(wg[1]),
                              static_cast<uint32_t>(wg[2])}});
      compiled.device_executables.push_back(std::move(exe));
    }
    (*module)->removeAttr(mlir::disc_ral::kDeviceKernelsAttr);
  }
  if (auto constants = (*module)->getAttrOfType<mlir::ArrayAttr>(mlir::disc_ral::kConstantsAttr)) {
    for (mlir::Attribute a : constants) {
      auto entry = mlir::cast<mlir::DictionaryAttr>(a);
      compiled.constants.push_back(constantOf(entry.getAs<mlir::StringAttr>("name"),
                                              entry.getAs<mlir::DenseElementsAttr>("value")));
    }
    (*module)->removeAttr(mlir::disc_ral::kConstantsAttr);
  }

  if (emit == "mlir") {
    std::string error;
    auto out = mlir::openOutputFile(out_path, &error);
    if (!out) return fail(error);
    module->print(out->os());
    out->keep();
    return 0;
  }

  const llvm::StringMap<mlir::Location> call_sites = declaredCallSites(*module);
  llvm::LLVMContext llvm_context;
  std::unique_ptr<llvm::Module> llvm_module =
      mlir::translateModuleToLLVMIR(*module, llvm_context, compiled.name);
  if (!llvm_module) return fail("translation to LLVM IR failed");

  ral::compiler::CodegenOptions codegen;
  codegen.opt_level = opt_level;
  codegen.cpu = mcpu;
  codegen.linker = RAL_LINKER_DRIVER;
  codegen.max_optimized_loop_depth = max_optimized_loop_depth;
  codegen.max_optimized_function_size = max_optimized_function_size;
  std::string error;
  if (!ral::compiler::compileToSharedObject(*llvm_module, codegen, &compiled.host_library, &error))
    return fail(error);
  if (!checkHostSymbols(compiled.host_library, call_sites)) return 1;
  if (emit == "llvm") {
    auto out = mlir::openOutputFile(out_path, &error);
    if (!out) return fail(error);
    llvm_module->print(out->os(), nullptr);
    out->keep();
    return 0;
  }

  ral::Status status = ral::compiler::writeModuleFile(compiled, out_path);
  if (!status.ok()) return fail("cannot write " + out_path + ": " + status.toString());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  llvm::InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "ral-compile: compiles an MLIR model to a RAL module\n");
  int rc = 1;
  // The tools' exception barrier, on the thread that compiles.
  llvm::thread worker(std::optional<unsigned>(kCompileStackBytes),
                      [&rc] { rc = ral::cli::runTool("ral-compile", compile); });
  worker.join();
  return rc;
}
