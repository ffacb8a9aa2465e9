#include "compiler_passes/tools/llvm_errors.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <string>

#include "llvm/IR/DiagnosticHandler.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

namespace ral {
namespace compiler {
namespace {

thread_local bool t_compiling = false;

void writeStderr(const char* text) {
  // As LLVM does: straight to the descriptor, nothing allocated.
  (void)!::write(2, text, std::strlen(text));
}

// LLVM's behaviour without a handler (llvm/lib/Support/ErrorHandling.cpp, LLVM 19).
[[noreturn]] void defaultFatalError(const char* reason, bool gen_crash_diag) {
  writeStderr("LLVM ERROR: ");
  writeStderr(reason);
  writeStderr("\n");
  llvm::sys::RunInterruptHandlers();
  if (gen_crash_diag) std::abort();
  std::exit(1);
}

[[noreturn]] void defaultBadAlloc(const char* reason) {
  writeStderr("LLVM ERROR: out of memory\n");
  writeStderr(reason);
  writeStderr("\n");
  std::abort();
}

// The handlers must not return (LLVM ends the process if they do).
void onFatalError(void*, const char* reason, bool gen_crash_diag) {
  if (t_compiling) {
    // One line: some reasons end in a newline.
    std::string text = reason ? reason : "(no reason given)";
    for (char& c : text)
      if (c == '\n') c = ' ';
    while (!text.empty() && text.back() == ' ') text.pop_back();
    throw LlvmFatalError(text);
  }
  defaultFatalError(reason ? reason : "", gen_crash_diag);
}

void onBadAlloc(void*, const char* reason, bool) {
  if (t_compiling) throw std::bad_alloc();
  defaultBadAlloc(reason ? reason : "");
}

class CompileDiagnostics : public llvm::DiagnosticHandler {
 public:
  CompileDiagnostics(std::vector<std::string>* errors, llvm::raw_ostream* warnings)
      : errors_(errors), warnings_(warnings) {}

  bool handleDiagnostics(const llvm::DiagnosticInfo& info) override {
    const llvm::DiagnosticSeverity severity = info.getSeverity();
    if (severity != llvm::DS_Error && severity != llvm::DS_Warning) return true;
    std::string text;
    llvm::raw_string_ostream os(text);
    llvm::DiagnosticPrinterRawOStream printer(os);
    info.print(printer);
    os.flush();
    for (char& c : text)
      if (c == '\n') c = ' ';
    if (severity == llvm::DS_Error)
      errors_->push_back("LLVM: " + text);
    else
      *warnings_ << "ral-compile: warning: LLVM: " << text << "\n";
    return true;  // handled: LLVM neither prints it nor exits
  }

 private:
  std::vector<std::string>* errors_;
  llvm::raw_ostream* warnings_;
};

}  // namespace

void installLlvmErrorHandlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::install_fatal_error_handler(&onFatalError, nullptr);
    llvm::install_bad_alloc_error_handler(&onBadAlloc, nullptr);
  });
}

CompileThreadScope::CompileThreadScope() : previous_(t_compiling) { t_compiling = true; }
CompileThreadScope::~CompileThreadScope() { t_compiling = previous_; }

void routeLlvmDiagnostics(llvm::LLVMContext& context, std::vector<std::string>* errors,
                          llvm::raw_ostream* warnings) {
  context.setDiagnosticHandler(std::make_unique<CompileDiagnostics>(errors, warnings));
}

}  // namespace compiler
}  // namespace ral
