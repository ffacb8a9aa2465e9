// compileModel: ral-compile's pipeline from an input file to what --emit asks for.
#include "compiler_passes/tools/compile_driver.h"

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
#include "ral/driver.h"
#include "ral/file_reader.h"

#if RAL_HAVE_ONNX
#include "compiler_passes/onnx/importer.h"
#endif

namespace ral {
namespace compiler {
namespace {

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
int fail(llvm::raw_ostream& os, const llvm::Twine& message, int code = kCompileFailed) {
  os << "ral-compile: error: " << message << "\n";
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
bool checkHostSymbols(llvm::raw_ostream& os, bool by_name, const std::vector<uint8_t>& library,
                      const llvm::StringMap<mlir::Location>& sites) {
  std::vector<std::string> undefined;
  std::string error;
  if (!ral::compiler::undefinedSymbols(library, &undefined, &error)) {
    fail(os, "cannot read the host library's symbols: " + error);
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
      fail(os, what + " (introduced by LLVM code generation)");
    }
  }
  return ok;
}

int compile(const CompileRequest& r, llvm::raw_ostream& os) {
  const std::string& device = r.device;
  const std::string& emit = r.emit;
  const std::string& input_path = r.input_path;
  if (device != "cpu" && device != "vulkan" && device != "cuda" && device != "hsa")
    return fail(os,
                "--device=" + device +
                    " is not supported: this build generates code for cpu, vulkan, cuda and hsa",
                kCompileUsage);
  const bool gpu = device == "cuda" || device == "hsa";
  if (!gpu && !r.gpu_arch.empty())
    return fail(os, "--gpu-arch goes with --device=cuda or --device=hsa", kCompileUsage);
  if (gpu) {
    std::vector<std::string> archs;
    std::string arch_error;
    if (!mlir::disc_ral::parseGpuArchs(device, r.gpu_arch, &archs, &arch_error))
      return fail(os, "--gpu-arch: " + arch_error, kCompileUsage);
  }
  if (device != "cpu" && !r.kernels)
    return fail(os,
                "--device=" + device + " runs every loop as a kernel; --kernels=false is cpu only",
                kCompileUsage);
  if (emit != "ralm" && emit != "mlir" && emit != "llvm" && emit != "import")
    return fail(os, "--emit must be ralm, mlir, llvm or import, got '" + emit + "'", kCompileUsage);
  if (r.input_format != "auto" && r.input_format != "mlir" && r.input_format != "onnx")
    return fail(os, "--input-format must be auto, mlir or onnx, got '" + r.input_format + "'",
                kCompileUsage);
  if (r.opt_level < 0 || r.opt_level > 3) return fail(os, "-O must be 0..3", kCompileUsage);
  std::string out_path = r.output_path;
  if (out_path.empty()) {
    llvm::SmallString<128> p(input_path);
    llvm::sys::path::replace_extension(p, emit == "ralm" ? "ralm" : emit == "llvm" ? "ll" : "mlir");
    // The tensor-level import of model.mlir would overwrite it.
    if (emit == "import" && p == input_path) p += ".import.mlir";
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
  mlir::SourceMgrDiagnosticHandler diagnostics(source_mgr, &context, os);

  std::string open_error;
  // A directory, FIFO or device is refused before it is read ("-" is stdin, read as given).
  if (input_path != "-") {
    const ral::Status readable = ral::checkRegularFile(input_path);
    if (!readable.ok()) return fail(os, std::string(readable.message()), kCompileUsage);
  }
  auto file = mlir::openInputFile(input_path, &open_error);
  if (!file) return fail(os, open_error, kCompileUsage);
  const bool onnx = r.input_format == "onnx" ||
                    (r.input_format == "auto" && llvm::StringRef(input_path).ends_with(".onnx"));
  mlir::OwningOpRef<mlir::ModuleOp> module;
  if (onnx) {
#if !RAL_HAVE_ONNX
    return fail(os,
                input_path +
                    ": ONNX input needs a ral-compile built with ONNX (libonnx-dev, "
                    "RAL_ENABLE_ONNX)",
                kCompileUnsupported);
#else
    mlir::disc_ral::onnx::ImportOptions import;
    import.entry = r.entry;
    import.source_name = input_path;
    mlir::disc_ral::onnx::ImportStatus status;
    module = mlir::disc_ral::onnx::importModel(file->getBuffer(), import, &context, &status);
    if (!module) {
      for (const std::string& error : status.errors) os << "ral-compile: error: " << error << "\n";
      return status.unsupported ? kCompileUnsupported : kCompileFailed;
    }
#endif
  } else {
    const unsigned buffer_id = source_mgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
    // Before the parser recurses into the text.
    if (mlir::failed(mlir::disc_ral::checkTextNesting(source_mgr, buffer_id, &context)))
      return kCompileFailed;
    module = mlir::parseSourceFile<mlir::ModuleOp>(source_mgr, mlir::ParserConfig(&context));
    if (!module) return kCompileFailed;  // the diagnostic (file:line:col) is already printed
  }
  if (emit == "import") {
    std::string error;
    auto out = mlir::openOutputFile(out_path, &error);
    if (!out) return fail(os, error);
    module->print(out->os());
    out->keep();
    return kCompileOk;
  }

  ral::compiler::CompiledModule compiled;
  compiled.name = r.module_name.empty() ? llvm::sys::path::stem(input_path).str() : r.module_name;
  compiled.entry_symbol = "ral_entry";
  // Inputs and outputs live where the code runs; a host copies its tensors there.
  const ral::DeviceKind data_device = device == "vulkan" ? ral::DeviceKind::kVulkan
                                      : device == "cuda" ? ral::DeviceKind::kCuda
                                      : device == "hsa"  ? ral::DeviceKind::kHsa
                                                         : ral::DeviceKind::kCpu;
  if (auto f = module->lookupSymbol<mlir::func::FuncOp>(r.entry)) {
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
  options.entry = r.entry;
  options.entry_symbol = compiled.entry_symbol;
  options.device = device;
  options.gpu_archs = r.gpu_arch;
  options.by_name = r.by_name;
  options.kernels = r.kernels;
  options.constant_min_bytes = r.constant_min_bytes;
  // Computed in f32, the inline forms beat libm on every target measured (even SSE2-only
  // `generic`: exp 1.9x, log 1.2x; README), and a device has no erf of its own.
  if (r.inline_f32_math == "auto")
    options.inline_f32_math = "exp,expm1,log,log1p,tanh,erf";
  else if (r.inline_f32_math == "all")
    options.inline_f32_math = "exp,expm1,log,log1p,tanh,erf";
  else if (r.inline_f32_math == "none")
    options.inline_f32_math = "";
  else
    options.inline_f32_math = r.inline_f32_math;
  mlir::disc_ral::buildCompilePipeline(pm, options);
  if (mlir::failed(pm.run(*module))) return kCompileFailed;

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
    if (!out) return fail(os, error);
    module->print(out->os());
    out->keep();
    return 0;
  }

  const llvm::StringMap<mlir::Location> call_sites = declaredCallSites(*module);
  llvm::LLVMContext llvm_context;
  std::unique_ptr<llvm::Module> llvm_module =
      mlir::translateModuleToLLVMIR(*module, llvm_context, compiled.name);
  if (!llvm_module) return fail(os, "translation to LLVM IR failed");

  ral::compiler::CodegenOptions codegen;
  codegen.opt_level = r.opt_level;
  codegen.cpu = r.mcpu;
  codegen.linker = RAL_LINKER_DRIVER;
  codegen.max_optimized_loop_depth = r.max_optimized_loop_depth;
  codegen.max_optimized_function_size = r.max_optimized_function_size;
  std::string error;
  if (!ral::compiler::compileToSharedObject(*llvm_module, codegen, &compiled.host_library, &error))
    return fail(os, error);
  if (!checkHostSymbols(os, r.by_name, compiled.host_library, call_sites)) return kCompileFailed;
  if (emit == "llvm") {
    auto out = mlir::openOutputFile(out_path, &error);
    if (!out) return fail(os, error);
    llvm_module->print(out->os(), nullptr);
    out->keep();
    return 0;
  }

  ral::Status status = ral::compiler::writeModuleFile(compiled, out_path);
  if (!status.ok()) return fail(os, "cannot write " + out_path + ": " + status.toString());
  return 0;
}

}  // namespace

int compileModel(const CompileRequest& request, llvm::raw_ostream& diagnostics) {
  return compile(request, diagnostics);
}

void runOnCompileThread(const std::function<void()>& body) {
  // The parser, the verifier, the printer and many passes recurse once per level of nesting, and
  // LLVM's optimizers on long use-def chains and deep loop nests. Text beyond kMaxNestingDepth is
  // refused before parsing, but MLIR bytecode can only be checked once parsed, and recursion in
  // LLVM has no limit of ours: the compile runs on a thread with this much stack, reserved rather
  // than committed (only the pages touched count), where the main thread has 8 MiB.
  llvm::thread worker(std::optional<unsigned>(kCompileStackBytes), body);
  worker.join();
}

}  // namespace compiler
}  // namespace ral
