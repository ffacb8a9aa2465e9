#include "tests/fuzz/onnx_import_check.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "compiler_passes/onnx/importer.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/Verifier.h"

namespace ral::fuzz {
namespace {

constexpr const char* kSource = "fuzz.onnx";
// The importer's own verdict on a module it built that does not verify (importer.cc), at the
// start of its message, where no name from the model can forge it.
constexpr const char* kDoesNotVerify = "fuzz.onnx: the imported module does not verify";

[[noreturn]] void broken(const char* rule, const std::vector<std::string>& errors,
                         const std::vector<std::string>& diagnostics) {
  std::fprintf(stderr, "\n==== ONNX importer contract broken: %s\n", rule);
  for (const std::string& e : errors) std::fprintf(stderr, "  import error: %s\n", e.c_str());
  for (const std::string& d : diagnostics) std::fprintf(stderr, "  diagnostic: %s\n", d.c_str());
  std::fflush(stderr);
  std::abort();
}

// One import of the bytes with `options`, checked.
void importOnce(const uint8_t* data, size_t size,
                const mlir::disc_ral::onnx::ImportOptions& options) {
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  context.printOpOnDiagnostic(false);
  std::vector<std::string> diagnostics;
  bool diagnosed_error = false;
  mlir::ScopedDiagnosticHandler capture(&context, [&](mlir::Diagnostic& d) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << d;
    for (const mlir::Diagnostic& note : d.getNotes()) os << " (note: " << note << ")";
    os << " (at " << d.getLocation() << ")";
    diagnostics.push_back(os.str());
    diagnosed_error |= d.getSeverity() == mlir::DiagnosticSeverity::Error;
    return mlir::success();
  });

  mlir::disc_ral::onnx::ImportStatus status;
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::disc_ral::onnx::importModel(
      llvm::StringRef(reinterpret_cast<const char*>(data), size), options, &context, &status);

  // For triage (onnx_reduce.py show): what the importer answered.
  static const bool show = std::getenv("RAL_FUZZ_SHOW_ERRORS") != nullptr;
  if (show) {
    std::fprintf(stderr, "import %s\n", module ? "succeeded" : "failed");
    for (const std::string& e : status.errors) std::fprintf(stderr, "  error: %s\n", e.c_str());
  }
  if (!module) {
    if (status.errors.empty()) broken("the import failed without an error", {}, diagnostics);
    for (const std::string& e : status.errors) {
      if (e.empty()) broken("an import error is empty", status.errors, diagnostics);
      if (e.rfind(kDoesNotVerify, 0) == 0)
        broken("the importer built a module that does not verify", status.errors, diagnostics);
    }
    // The importer's errors are its own; an MLIR error means an op it built failed to verify.
    if (diagnosed_error)
      broken("the importer built ops that MLIR diagnosed", status.errors, diagnostics);
    return;
  }
  if (!status.errors.empty())
    broken("the import returned a module and errors", status.errors, diagnostics);
  if (diagnosed_error)
    broken("the import returned a module after MLIR diagnosed an error", {}, diagnostics);
  if (mlir::failed(mlir::verify(*module)))
    broken("the imported module does not verify", {}, diagnostics);
  // What `ral-compile --emit=import` does with it; the printers see every attribute and type.
  module->print(llvm::nulls(), mlir::OpPrintingFlags().elideLargeElementsAttrs(16));
}

}  // namespace

void importAndCheck(const uint8_t* data, size_t size) {
  mlir::disc_ral::onnx::ImportOptions options;
  options.source_name = kSource;
  options.max_constant_bytes = kFuzzMaxConstantBytes;
  // As ral-compile imports for a GPU: convolutions as im2col and GEMMs, no host reads.
  options.host_reads_tensors = false;
  importOnce(data, size, options);
  // And as for the CPU: library convolutions with their fused epilogues, linear layers and QDQ
  // Conv on them (compile_driver.cc's choices).
  options.host_reads_tensors = true;
  options.library_conv = true;
  options.conv_gelu = true;
  options.library_linear = true;
  options.int8_conv = true;
  importOnce(data, size, options);
}

}  // namespace ral::fuzz
