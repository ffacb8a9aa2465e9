// The pieces that keep libral_compiler.so from ending its host process, tested directly: LLVM's
// fatal-error and out-of-memory reports on a compile thread (exceptions) and elsewhere (LLVM's own
// behaviour, in a death test), LLVMContext error diagnostics (kept, not exit(1)), objects leaked
// rather than destroyed by an unwinding compile, the memory budget and the option checks.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "compiler_passes/tools/compile_driver.h"
#include "compiler_passes/tools/compile_options.h"
#include "compiler_passes/tools/llvm_errors.h"
#include "compiler_passes/tools/memory_budget.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/MemAlloc.h"
#include "llvm/Support/raw_ostream.h"

namespace ral {
namespace compiler {
namespace {

TEST(LlvmErrors, FatalErrorOnACompileThreadIsAnException) {
  installLlvmErrorHandlers();
  CompileThreadScope scope;
  try {
    llvm::report_fatal_error("the reason", /*gen_crash_diag=*/true);
    FAIL() << "report_fatal_error returned";
  } catch (const LlvmFatalError& e) {
    EXPECT_STREQ(e.what(), "the reason");
  }
  // And again: the handler stays installed.
  EXPECT_THROW(llvm::report_fatal_error("again"), LlvmFatalError);
}

TEST(LlvmErrors, FailedAllocationsOnACompileThreadAreBadAlloc) {
  installLlvmErrorHandlers();
  CompileThreadScope scope;
  EXPECT_THROW(llvm::report_bad_alloc_error("Allocation failed"), std::bad_alloc);
  // A genuine path: LLVM's checked malloc (SmallVector growth, DenseMap buckets) of more than any
  // machine has.
  EXPECT_THROW(llvm::safe_malloc(SIZE_MAX / 2), std::bad_alloc);
}

TEST(LlvmErrors, ScopesNest) {
  installLlvmErrorHandlers();
  CompileThreadScope outer;
  { CompileThreadScope inner; }
  EXPECT_THROW(llvm::report_fatal_error("still inside"), LlvmFatalError);
}

TEST(LlvmErrorsDeathTest, OtherThreadsKeepLlvmsBehaviour) {
  // Outside a compile, LLVM's own behaviour: the message, then exit(1) or abort.
  EXPECT_EXIT(
      {
        installLlvmErrorHandlers();
        llvm::report_fatal_error("not in a compile", /*gen_crash_diag=*/false);
      },
      ::testing::ExitedWithCode(1), "LLVM ERROR: not in a compile");
  EXPECT_DEATH(
      {
        installLlvmErrorHandlers();
        llvm::report_bad_alloc_error("not in a compile");
      },
      "LLVM ERROR: out of memory");
  // The mark is the thread's: another thread of a compiling process is not compiling.
  EXPECT_EXIT(
      {
        installLlvmErrorHandlers();
        CompileThreadScope scope;
        std::thread([] { llvm::report_fatal_error("other thread", false); }).join();
      },
      ::testing::ExitedWithCode(1), "LLVM ERROR: other thread");
}

TEST(LlvmErrors, ContextErrorsAreKeptNotExited) {
  llvm::LLVMContext context;
  std::vector<std::string> errors;
  std::string warnings;
  llvm::raw_string_ostream os(warnings);
  routeLlvmDiagnostics(context, &errors, &os);
  // Without the handler, LLVMContext::diagnose prints an error and calls exit(1).
  context.emitError("a code generation error");
  context.diagnose(llvm::DiagnosticInfoInlineAsm("a warning", llvm::DS_Warning));
  context.diagnose(llvm::DiagnosticInfoInlineAsm("a remark", llvm::DS_Remark));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "LLVM: a code generation error");
  EXPECT_EQ(os.str(), "ral-compile: warning: LLVM: a warning\n");
}

struct Counted {
  explicit Counted(int* destroyed) : destroyed(destroyed) {}
  ~Counted() { ++*destroyed; }
  int* destroyed;
};

TEST(LlvmErrors, LeakOnUnwindLeaksOnlyWhenUnwinding) {
  int destroyed = 0;
  { LeakOnUnwind<Counted> kept(std::make_unique<Counted>(&destroyed)); }
  EXPECT_EQ(destroyed, 1);
  try {
    LeakOnUnwind<Counted> leaked(std::make_unique<Counted>(&destroyed));
    throw LlvmFatalError("unwinding");
  } catch (const LlvmFatalError&) {
  }
  EXPECT_EQ(destroyed, 1) << "an object an exception unwound past was destroyed";
  // Created while another exception is in flight (in a catch block): destroyed normally.
  try {
    throw 1;
  } catch (int) {
    LeakOnUnwind<Counted> inside(std::make_unique<Counted>(&destroyed));
  }
  EXPECT_EQ(destroyed, 2);
}

TEST(MemoryBudget, GrowthBeyondTheLimitFailsNamingTheStep) {
  MemoryBudget unlimited(0);
  EXPECT_FALSE(unlimited.limited());
  EXPECT_TRUE(unlimited.check("anywhere"));

  MemoryBudget budget(uint64_t{16} << 20);
  ASSERT_TRUE(budget.unavailable().empty()) << budget.unavailable();
  EXPECT_TRUE(budget.check("at the start"));
  // 64 MiB, touched so that it is resident.
  std::vector<char> big(size_t{64} << 20);
  std::memset(big.data(), 1, big.size());
  EXPECT_FALSE(budget.check("after the big step"));
  EXPECT_TRUE(budget.exceeded());
  EXPECT_NE(budget.error().find("the compile exceeded its memory limit of 16 MiB after the big "
                                "step (the process grew by "),
            std::string::npos)
      << budget.error();
  // Sticky: later checks fail, and keep the first step's name.
  big.clear();
  big.shrink_to_fit();
  EXPECT_FALSE(budget.check("later"));
  EXPECT_EQ(budget.error().find("later"), std::string::npos);
}

TEST(MemoryBudget, Sizes) {
  struct Case {
    const char* text;
    uint64_t bytes;
  };
  for (const Case& c :
       {Case{"0", 0}, Case{"1048576", 1048576}, Case{"512M", 512ull << 20}, Case{"4G", 4ull << 30},
        Case{"4gib", 4ull << 30}, Case{"2KB", 2048}, Case{"1T", 1ull << 40}, Case{"7b", 7},
        Case{"16777215T", 16777215ull << 40}}) {
    uint64_t bytes = 1;
    std::string error;
    EXPECT_TRUE(parseByteSize(c.text, &bytes, &error)) << c.text << ": " << error;
    EXPECT_EQ(bytes, c.bytes) << c.text;
  }
  for (const char* bad : {"", "M", "-1", "1.5G", "12Q", "4 G", "4Gi", "4GBs", "16777216T",
                          "18446744073709551616", "99999999999999999999999"}) {
    uint64_t bytes = 0;
    std::string error;
    EXPECT_FALSE(parseByteSize(bad, &bytes, &error)) << bad;
    EXPECT_NE(error.find("is not a size in bytes"), std::string::npos) << error;
  }
}

TEST(CompileOptions, ValuesLlvmWouldAbortOnAreRefused) {
  CompileRequest r;
  r.input_path = "model.mlir";
  EXPECT_EQ(checkRequest(r), "");
  auto refused = [&](auto set, const std::string& message) {
    CompileRequest bad = r;
    set(bad);
    const std::string error = checkRequest(bad);
    EXPECT_NE(error.find(message), std::string::npos) << "'" << error << "' lacks " << message;
  };
  refused([](CompileRequest& q) { q.mcpu = "bogus"; }, "is not a CPU that LLVM knows");
  refused([](CompileRequest& q) { q.mcpu = "i386"; }, "cannot run the 64-bit code");
  refused([](CompileRequest& q) { q.opt_level = 4; }, "-O must be 0..3");
  refused([](CompileRequest& q) { q.constant_min_bytes = -1; }, "--constant-min-bytes");
  refused([](CompileRequest& q) { q.inline_f32_math = "exp,cos"; }, "unknown op 'cos'");
  refused([](CompileRequest& q) { q.entry = ""; }, "--entry='' is not a function name");
  refused([](CompileRequest& q) { q.entry = "a b"; }, "is not a function name");
  refused([](CompileRequest& q) { q.module_name = std::string("a\nb"); }, "'a\\x0ab'");
  refused([](CompileRequest& q) { q.module_name = std::string(300, 'x'); }, "not a module name");
  refused([](CompileRequest& q) { q.emit = "so"; }, "--emit must be");
  refused([](CompileRequest& q) { q.input_path = ""; }, "no input file");
}

TEST(CompileOptions, DefaultNamesAreClean) {
  EXPECT_EQ(defaultModuleName("dir/model.onnx"), "model");
  EXPECT_EQ(defaultModuleName("dir/mo\ndel.onnx"), "mo_del");
  EXPECT_EQ(defaultModuleName("dir/.onnx"), "module");
  const std::string fixed = defaultModuleName("dir/m\xff.mlir");
  EXPECT_EQ(checkRequest([&] {
              CompileRequest r;
              r.input_path = "x";
              r.module_name = fixed;
              return r;
            }()),
            "");
  EXPECT_EQ(quoted("a\x01\\b"), "'a\\x01\\x5cb'");
}

}  // namespace
}  // namespace compiler
}  // namespace ral
