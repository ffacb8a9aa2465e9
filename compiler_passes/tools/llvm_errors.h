// LLVM's ways of ending the process, turned into errors of the compile that caused them.
//
// libral_compiler.so runs inside other people's processes (ral_torch.compile: the user's Python).
// LLVM reports what it cannot handle with report_fatal_error ("LLVM ERROR: ...", then abort or
// exit), a failed allocation with report_bad_alloc_error (abort: Debian's LLVM is built without
// exceptions), and an error diagnostic of an LLVMContext without a handler with exit(1).
//  - installLlvmErrorHandlers installs handlers for the first two, once per process. They are
//    global (LLVM keeps one of each): on a thread inside a compile (CompileThreadScope) they throw
//    LlvmFatalError or std::bad_alloc, which compileModel turns into an error result; on any other
//    thread they do exactly what LLVM does without a handler. LLVM keeps one handler of each kind
//    and cannot chain them: a library of the same process that installed its own before the first
//    compile loses it, and one that installs its own afterwards replaces these.
//  - routeLlvmDiagnostics gives one LLVMContext a handler that keeps its errors for the compile.
// MLIR's own failures (emitError, failed passes) are ordinary compile errors and need none of this;
// a crash inside LLVM (a segfault) is not a report and is not caught.
//
// The exception unwinds through LLVM and MLIR frames built without exceptions: their destructors
// do not run, so the IR being changed may be half-updated, and a lock such a frame held stays held
// (none of the code generation paths that report fatal errors hold one). What the compile built is
// therefore never destroyed after such an exception but leaked (LeakOnUnwind): destroying IR with
// dangling uses could crash the host, and leaking costs only memory. The process can compile again.
#ifndef RAL_COMPILER_PASSES_TOOLS_LLVM_ERRORS_H_
#define RAL_COMPILER_PASSES_TOOLS_LLVM_ERRORS_H_

#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace llvm {
class LLVMContext;
class raw_ostream;
}  // namespace llvm

namespace ral {
namespace compiler {

// What LLVM's fatal-error handler throws on a compile thread: the reason LLVM gave.
class LlvmFatalError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Installs the handlers (thread-safe; only the first call does anything).
void installLlvmErrorHandlers();

// Marks the calling thread as compiling for the scope's lifetime (scopes nest).
class CompileThreadScope {
 public:
  CompileThreadScope();
  ~CompileThreadScope();
  CompileThreadScope(const CompileThreadScope&) = delete;
  CompileThreadScope& operator=(const CompileThreadScope&) = delete;

 private:
  bool previous_;
};

// Error diagnostics of `context` are appended to `errors` (one line each, "LLVM: ..."), warnings
// written to `warnings` as "ral-compile: warning: ..." lines, remarks dropped. Both must outlive
// every use of `context`.
void routeLlvmDiagnostics(llvm::LLVMContext& context, std::vector<std::string>* errors,
                          llvm::raw_ostream* warnings);

// Owns an object that MLIR or LLVM code may be in the middle of changing when an exception
// leaves the scope: destroyed when the scope ends normally, leaked when an exception unwinds it
// (see above).
template <typename T>
class LeakOnUnwind {
 public:
  explicit LeakOnUnwind(std::unique_ptr<T> object)
      : object_(std::move(object)), exceptions_(std::uncaught_exceptions()) {}
  ~LeakOnUnwind() {
    if (std::uncaught_exceptions() > exceptions_) (void)object_.release();
  }
  LeakOnUnwind(const LeakOnUnwind&) = delete;
  LeakOnUnwind& operator=(const LeakOnUnwind&) = delete;

  T* get() const { return object_.get(); }
  T* operator->() const { return object_.get(); }
  T& operator*() const { return *object_; }

 private:
  std::unique_ptr<T> object_;
  int exceptions_;
};

}  // namespace compiler
}  // namespace ral

#endif  // RAL_COMPILER_PASSES_TOOLS_LLVM_ERRORS_H_
