// compileModel: ral-compile's pipeline from an input file to what --emit asks for.
#include "compiler_passes/tools/compile_driver.h"

#include <pthread.h>

#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "compiler_passes/transforms/limits.h"
#include "compiler_passes/passes.h"
#include "compiler_passes/tools/codegen.h"
#include "compiler_passes/tools/compile_options.h"
#include "compiler_passes/tools/host_symbols.h"
#include "compiler_passes/tools/llvm_errors.h"
#include "compiler_passes/tools/memory_budget.h"
#include "compiler_passes/tools/module_writer.h"
#include "compiler_passes/dialect/type_codes.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "ral/driver.h"
#include "ral/file_reader.h"
#include "ral/file_writer.h"

#if RAL_HAVE_ONNX
#include "compiler_passes/onnx/importer.h"
#endif

// Set where the runtime built beside registers ral_conv (RAL_ENABLE_DNNL; CMakeLists.txt).
#ifndef RAL_HAVE_LIBRARY_CONV
#define RAL_HAVE_LIBRARY_CONV 0
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

// `bytes` in MiB, rounded up.
std::string mebibytes(uint64_t bytes) {
  return std::to_string((bytes >> 20) + ((bytes & ((uint64_t{1} << 20) - 1)) != 0));
}

// Exit codes as every RAL tool (plugins/standalone/tool_main.h): 1 the compile failed, 2 bad
// usage or an unreadable input file, 4 an internal error.
int fail(llvm::raw_ostream& os, const llvm::Twine& message, int code = kCompileFailed) {
  os << "ral-compile: error: " << message << "\n";
  return code;
}

// The .ralm signature of one entry argument or result; false when the type cannot be bound (the
// pipeline then reports it with its location). `is_unsigned`: the argument or result carries
// kUnsignedAttr (signless integers that hold unsigned values).
bool signatureOf(mlir::Type type, bool is_unsigned, ral::TensorSignature* sig) {
  // A tensor-level entry is bufferized with identity layouts (disc-ral-bufferize).
  if (auto tensor = mlir::dyn_cast<mlir::RankedTensorType>(type))
    type = mlir::MemRefType::get(tensor.getShape(), tensor.getElementType());
  auto shaped = mlir::dyn_cast<mlir::MemRefType>(type);
  auto element = shaped ? mlir::dyn_cast<mlir::IntegerType>(shaped.getElementType()) : nullptr;
  if (is_unsigned && element && element.isSignless() && element.getWidth() > 1) {
    auto memref = mlir::cast<mlir::MemRefType>(type);
    type = mlir::MemRefType::get(
        memref.getShape(),
        mlir::IntegerType::get(type.getContext(), element.getWidth(), mlir::IntegerType::Unsigned),
        memref.getLayout());
  }
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

// What one compile builds that MLIR and LLVM code change: leaked rather than destroyed when an
// exception unwinds the compile (llvm_errors.h). Members are destroyed in reverse order.
struct CompileState {
  CompileState(const mlir::DialectRegistry& registry, llvm::raw_ostream& os)
      // Single-threaded, so every pass runs on this thread's large stack, not on a pool thread's
      // (only convert-linalg-to-loops ran per function in parallel).
      : context(registry, mlir::MLIRContext::Threading::DISABLED),
        diagnostics(source_mgr, &context, os) {}

  mlir::MLIRContext context;
  llvm::SourceMgr source_mgr;
  mlir::SourceMgrDiagnosticHandler diagnostics;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  llvm::LLVMContext llvm_context;
  std::vector<std::string> llvm_errors;  // LLVM's error diagnostics (routeLlvmDiagnostics)
  std::unique_ptr<llvm::Module> llvm_module;
  std::vector<std::unique_ptr<llvm::Module>> llvm_variants;  // copies for the host variants
};

// Writes what `print` prints to `path` ("-": stdout) as every RAL output is written: a temporary
// file renamed into place (ral/file_writer.h).
int writeText(llvm::raw_ostream& os, const std::string& path,
              llvm::function_ref<void(llvm::raw_ostream&)> print) {
  if (path == "-") {
    print(llvm::outs());
    llvm::outs().flush();
    return kCompileOk;
  }
  ral::OutputFile file;
  ral::Status opened = file.open(path);
  if (!opened.ok()) return fail(os, opened.message());
  {
    llvm::raw_fd_ostream out(file.fd(), /*shouldClose=*/false);
    print(out);
    out.flush();
    // Cleared here: a stream destroyed with an error calls report_fatal_error.
    if (out.has_error()) {
      const std::string message = out.error().message();
      out.clear_error();
      return fail(os, "cannot write '" + path + "': " + message);
    }
  }
  ral::Status committed = file.commit();
  if (!committed.ok()) return fail(os, committed.message());
  return kCompileOk;
}

// Splats are a few bytes in the IR, and every constant is copied when it is written out: those
// of the constants section into the module file, those left in the code (splats among them) into
// LLVM globals. With --max-memory they are refused by size before that, naming the largest.
int checkConstantBytes(mlir::ModuleOp module, uint64_t max_memory, llvm::raw_ostream& os) {
  if (max_memory == 0) return kCompileOk;
  uint64_t total = 0, largest = 0;
  std::string largest_name;
  auto add = [&](llvm::StringRef name, mlir::Attribute value) {
    auto elements = mlir::dyn_cast_or_null<mlir::ElementsAttr>(value);
    if (!elements) return;
    auto type = mlir::cast<mlir::ShapedType>(elements.getType());
    if (!type.hasStaticShape() || !type.getElementType().isIntOrIndexOrFloat()) return;
    const uint64_t bytes =
        static_cast<uint64_t>(type.getNumElements()) * ((type.getElementTypeBitWidth() + 7) / 8);
    total += bytes;
    if (bytes > largest) {
      largest = bytes;
      largest_name = name.str();
    }
  };
  if (auto constants = module->getAttrOfType<mlir::ArrayAttr>(mlir::disc_ral::kConstantsAttr))
    for (mlir::Attribute a : constants) {
      auto entry = mlir::cast<mlir::DictionaryAttr>(a);
      add(entry.getAs<mlir::StringAttr>("name").getValue(), entry.get("value"));
    }
  for (auto global : module.getOps<mlir::LLVM::GlobalOp>())
    add(global.getSymName(), global.getValueOrNull());
  if (total <= max_memory) return kCompileOk;
  return fail(os, "the module's constants take " + mebibytes(total) +
                      " MiB, more than --max-memory (" + mebibytes(max_memory) +
                      " MiB); the largest is @" + largest_name + " (" + mebibytes(largest) +
                      " MiB): raise --max-memory, or make the model's weights smaller");
}

// Inline assembly in host code would do what RAL checks a host library cannot (system calls,
// code outside RAL and libc/libm; checkHostSymbols), and this code generator has no assembler
// for it. Device kernels are serialized by now and not looked at.
mlir::LogicalResult refuseInlineAssembly(mlir::ModuleOp module) {
  mlir::LogicalResult result = mlir::success();
  for (auto f : module.getOps<mlir::LLVM::LLVMFuncOp>())
    f.walk([&](mlir::LLVM::InlineAsmOp op) {
      op.emitError(
          "inline assembly is not supported: a module's host code may only call RAL and "
          "libc/libm, which is checked when the module is built");
      result = mlir::failure();
    });
  return result;
}

int compile(const CompileRequest& r, llvm::raw_ostream& os) {
  const std::string& device = r.device;
  const std::string& emit = r.emit;
  const std::string& input_path = r.input_path;
  if (std::string error = checkRequest(r); !error.empty()) return fail(os, error, kCompileUsage);
  std::string out_path = r.output_path;
  if (out_path.empty()) {
    llvm::SmallString<128> p(input_path);
    llvm::sys::path::replace_extension(p, emit == "ralm" ? "ralm" : emit == "llvm" ? "ll" : "mlir");
    // The tensor-level import of model.mlir would overwrite it.
    if (emit == "import" && p == input_path) p += ".import.mlir";
    out_path = std::string(p);
  }
  // Before any work: a device node, FIFO, directory or another user's file is never an output.
  if (out_path == "-") {
    if (emit == "ralm")
      return fail(os, "-o - (stdout) takes --emit=mlir, llvm or import; a .ralm needs a file",
                  kCompileUsage);
  } else if (ral::Status writable = ral::checkOutputFile(out_path); !writable.ok()) {
    return fail(os, "-o: " + std::string(writable.message()), kCompileUsage);
  }
  MemoryBudget budget(r.max_memory);
  if (!budget.unavailable().empty()) return fail(os, budget.unavailable(), kCompileUsage);

  mlir::DialectRegistry registry;
  mlir::disc_ral::registerDialects(registry);
  LeakOnUnwind<CompileState> state(std::make_unique<CompileState>(registry, os));
  mlir::MLIRContext& context = state->context;
  // Diagnostics carry file:line:col; a dump of the failing op would only bury them.
  context.printOpOnDiagnostic(false);
  mlir::registerBuiltinDialectTranslation(context);
  mlir::registerLLVMDialectTranslation(context);
  routeLlvmDiagnostics(state->llvm_context, &state->llvm_errors, &os);
  if (budget.limited()) {
    // Checked after every pass (nested ones included). Once over the limit, the passes left are
    // skipped (not run: the IR stays as the last pass left it) and the excess is reported below.
    context.registerActionHandler(
        [&budget](llvm::function_ref<void()> transform, const mlir::tracing::Action& action) {
          auto* pass = llvm::dyn_cast<mlir::PassExecutionAction>(&action);
          if (pass == nullptr) return transform();
          if (budget.exceeded()) return;
          transform();
          llvm::StringRef name = pass->getPass().getArgument();
          if (name.empty()) name = pass->getPass().getName();
          budget.check("after pass '" + name.str() + "'");
        });
  }

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
  mlir::OwningOpRef<mlir::ModuleOp>& module = state->module;
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
    // Only where this build's runtime registers ral_conv (on the CPU with RAL_ENABLE_DNNL; on
    // CUDA always, over the cuDNN it loads at run time): a module must never import a kernel its
    // own runtime lacks.
    import.library_conv = r.library_conv && ((r.device == "cpu" && RAL_HAVE_LIBRARY_CONV) ||
                                             r.device == "cuda");
    import.conv_hardswish = r.device != "cuda";
    import.conv_gelu = r.device == "cpu";
    // On CUDA a GEMM stays cuBLAS's.
    import.library_linear = r.device == "cpu";
    // ral_qconv is registered with ral_conv on the CPU (oneDNN's int8 convolution).
    import.int8_conv = r.device == "cpu";
    import.host_reads_tensors = r.device == "cpu";
    if (budget.limited()) {
      // No constant may take more than the whole budget; the budget is asked after each node.
      if (r.max_memory < static_cast<uint64_t>(import.max_constant_bytes))
        import.max_constant_bytes = static_cast<int64_t>(r.max_memory);
      import.check_budget = [&budget]()->std::string {
        return budget.check("while importing the ONNX model") ? std::string() : budget.error();
    };
  }
  mlir::disc_ral::onnx::ImportStatus status;
  module = mlir::disc_ral::onnx::importModel(file->getBuffer(), import, &context, &status);
  if (!module) {
    for (const std::string& error : status.errors) os << "ral-compile: error: " << error << "\n";
    return status.unsupported ? kCompileUnsupported : kCompileFailed;
  }
#endif
  } else {
    const unsigned buffer_id = state->source_mgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
    // Before the parser recurses into the text.
    if (mlir::failed(mlir::disc_ral::checkTextNesting(state->source_mgr, buffer_id, &context)))
      return kCompileFailed;
    module = mlir::parseSourceFile<mlir::ModuleOp>(state->source_mgr, mlir::ParserConfig(&context));
    if (!module) return kCompileFailed;  // the diagnostic (file:line:col) is already printed
  }
  if (!budget.check("after reading the model")) return fail(os, budget.error());
  if (emit == "import")
    return writeText(os, out_path, [&](llvm::raw_ostream& out) { module->print(out); });

  ral::compiler::CompiledModule compiled;
  compiled.name = r.module_name.empty() ? defaultModuleName(input_path) : r.module_name;
  compiled.entry_symbol = "ral_entry";
  // Inputs and outputs live where the code runs; a host copies its tensors there.
  const ral::DeviceKind data_device = device == "vulkan" ? ral::DeviceKind::kVulkan
                                      : device == "cuda" ? ral::DeviceKind::kCuda
                                      : device == "hsa"  ? ral::DeviceKind::kHsa
                                                         : ral::DeviceKind::kCpu;
  if (auto f = module->lookupSymbol<mlir::func::FuncOp>(r.entry)) {
    for (auto [i, t] : llvm::enumerate(f.getFunctionType().getInputs())) {
      ral::TensorSignature sig;
      sig.device = data_device;
      const bool is_unsigned = static_cast<bool>(f.getArgAttr(i, mlir::disc_ral::kUnsignedAttr));
      if (signatureOf(t, is_unsigned, &sig)) compiled.inputs.push_back(std::move(sig));
    }
    for (auto [i, t] : llvm::enumerate(f.getFunctionType().getResults())) {
      ral::TensorSignature sig;
      sig.device = data_device;
      const bool is_unsigned = static_cast<bool>(f.getResultAttr(i, mlir::disc_ral::kUnsignedAttr));
      if (signatureOf(t, is_unsigned, &sig)) compiled.outputs.push_back(std::move(sig));
    }
  }

  LeakOnUnwind<mlir::PassManager> pm(std::make_unique<mlir::PassManager>(&context));
  mlir::disc_ral::PipelineOptions options;
  options.entry = r.entry;
  options.entry_symbol = compiled.entry_symbol;
  options.device = device;
  options.gpu_archs = r.gpu_arch;
  options.by_name = r.by_name;
  options.kernels = r.kernels;
  options.conv_blocks = r.conv_blocks;
  options.conv_scales = r.conv_scales;
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
  mlir::disc_ral::buildCompilePipeline(*pm, options);
  const bool ran = mlir::succeeded(pm->run(*module));
  if (budget.exceeded()) return fail(os, budget.error());
  if (!ran) return kCompileFailed;
  if (mlir::failed(refuseInlineAssembly(*module))) return kCompileFailed;

  if (int rc = checkConstantBytes(*module, r.max_memory, os); rc != kCompileOk) return rc;

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
    if (!budget.check("after collecting the module's constants")) return fail(os, budget.error());
  }

  if (emit == "mlir")
    return writeText(os, out_path, [&](llvm::raw_ostream& out) { module->print(out); });

  const llvm::StringMap<mlir::Location> call_sites = declaredCallSites(*module);
  std::unique_ptr<llvm::Module>& llvm_module = state->llvm_module;
  llvm_module = mlir::translateModuleToLLVMIR(*module, state->llvm_context, compiled.name);
  if (!llvm_module) return fail(os, "translation to LLVM IR failed");
  if (!budget.check("after translation to LLVM IR")) return fail(os, budget.error());

  ral::compiler::CodegenOptions codegen;
  codegen.opt_level = r.opt_level;
  codegen.cpu = r.mcpu;
  codegen.linker = RAL_LINKER_DRIVER;
  codegen.max_optimized_loop_depth = r.max_optimized_loop_depth;
  codegen.max_optimized_function_size = r.max_optimized_function_size;
  codegen.budget = &budget;
  // Each host variant is optimised for its own CPU level (the vectoriser's widths differ), from
  // a copy of the IR taken before the baseline's optimisation changes it.
  const std::vector<std::string> variant_targets = hostVariantTargets(r);
  for (size_t i = 0; i < variant_targets.size(); ++i)
    state->llvm_variants.push_back(llvm::CloneModule(*llvm_module));
  std::string error;
  const bool generated =
      ral::compiler::compileToSharedObject(*llvm_module, codegen, &compiled.host_library, &error);
  // LLVM's error diagnostics first: code generation goes on after one, and what fails later (the
  // link) is only a consequence.
  if (!state->llvm_errors.empty()) {
    for (const std::string& e : state->llvm_errors) fail(os, e);
    return kCompileFailed;
  }
  if (!generated) return fail(os, error);
  if (!checkHostSymbols(os, r.by_name, compiled.host_library, call_sites)) return kCompileFailed;
  for (size_t i = 0; i < variant_targets.size(); ++i) {
    ral::compiler::CodegenOptions variant = codegen;
    variant.cpu = variant_targets[i];
    ral::HostVariantDef def{variant_targets[i], {}};
    const bool built =
        ral::compiler::compileToSharedObject(*state->llvm_variants[i], variant, &def.data, &error);
    if (!state->llvm_errors.empty()) {
      for (const std::string& e : state->llvm_errors) fail(os, e);
      return kCompileFailed;
    }
    if (!built) return fail(os, "host variant " + variant_targets[i] + ": " + error);
    state->llvm_variants[i].reset();  // its IR is not needed any more
    compiled.host_variants.push_back(std::move(def));
  }
  if (emit == "llvm")
    return writeText(os, out_path,
                     [&](llvm::raw_ostream& out) { llvm_module->print(out, nullptr); });

  ral::Status status = ral::compiler::writeModuleFile(compiled, out_path);
  if (!status.ok()) return fail(os, "cannot write " + out_path + ": " + status.toString());
  return 0;
}  // namespace

// What an exception that reached compileModel means for the caller. The compile's state was
// leaked, not destroyed (llvm_errors.h).
int reportFatalError(const LlvmFatalError& e, llvm::raw_ostream& os) {
  return fail(os,
              llvm::Twine("LLVM could not compile this module: ") + e.what() +
                  " (an internal error: please report it with the model; the process can go on "
                  "compiling)",
              kCompileInternal);
}

int reportOutOfMemory(const CompileRequest& r, llvm::raw_ostream& os) {
  if (r.max_memory == 0) return fail(os, "out of memory");
  return fail(os, "out of memory (with --max-memory=" + mebibytes(r.max_memory) +
                      "M; ral-compile limits its address space to a little more than that)");
}

}  // namespace

int compileModel(const CompileRequest& request, llvm::raw_ostream& diagnostics) {
  installLlvmErrorHandlers();
  CompileThreadScope scope;
  try {
    return compile(request, diagnostics);
  } catch (const LlvmFatalError& e) {
    return reportFatalError(e, diagnostics);
  } catch (const std::bad_alloc&) {
    return reportOutOfMemory(request, diagnostics);
  }
}

namespace {

void* runBody(void* body) {
  (*static_cast<const std::function<void()>*>(body))();
  return nullptr;
}

}  // namespace

bool runOnCompileThread(const std::function<void()>& body, std::string* error) {
  // The parser, the verifier, the printer and many passes recurse once per level of nesting, and
  // LLVM's optimizers on long use-def chains and deep loop nests. Text beyond kMaxNestingDepth is
  // refused before parsing, but MLIR bytecode can only be checked once parsed, and recursion in
  // LLVM has no limit of ours: the compile runs on a thread with this much stack, reserved rather
  // than committed (only the pages touched count), where the main thread has 8 MiB. Started with
  // pthreads directly: llvm::thread ends the process when the thread cannot be created.
  pthread_attr_t attributes;
  int rc = pthread_attr_init(&attributes);
  if (rc == 0) {
    rc = pthread_attr_setstacksize(&attributes, kCompileStackBytes);
    pthread_t thread;
    if (rc == 0)
      rc =
          pthread_create(&thread, &attributes, &runBody, const_cast<std::function<void()>*>(&body));
    pthread_attr_destroy(&attributes);
    if (rc == 0) {
      pthread_join(thread, nullptr);
      return true;
    }
  }
  *error = "cannot start a compile thread with " + std::to_string(kCompileStackBytes >> 20) +
           " MiB of stack: " + std::strerror(rc);
  return false;
}

}  // namespace compiler
}  // namespace ral
