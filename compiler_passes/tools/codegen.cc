#include "compiler_passes/tools/codegen.h"

#include <algorithm>
#include <cstdint>
#include <memory>

#include "compiler_passes/tools/compile_options.h"
#include "compiler_passes/tools/llvm_errors.h"
#include "compiler_passes/tools/memory_budget.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/StandardInstrumentations.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

namespace ral {
namespace compiler {
namespace {

std::string hostFeatures() {
  const llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  std::string out;
  for (const auto& f : features) {
    if (!out.empty()) out += ',';
    out += (f.getValue() ? '+' : '-');
    out += f.getKey().str();
  }
  return out;
}

llvm::OptimizationLevel optLevel(int level) {
  switch (level) {
    case 0:
      return llvm::OptimizationLevel::O0;
    case 1:
      return llvm::OptimizationLevel::O1;
    case 2:
      return llvm::OptimizationLevel::O2;
    default:
      return llvm::OptimizationLevel::O3;
  }
}

// The new pass manager's state for one run of the IR pipeline, in one object that can be leaked as
// a whole (llvm_errors.h); members are destroyed in the reverse order of the analyses' needs.
struct Optimizer {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassInstrumentationCallbacks instrumentation;
  std::unique_ptr<llvm::StandardInstrumentations> standard;
  llvm::ModulePassManager mpm;
};

void optimize(llvm::Module& module, llvm::TargetMachine* tm, int level, MemoryBudget* budget) {
  LeakOnUnwind<Optimizer> o(std::make_unique<Optimizer>());
  // The standard instrumentations include the one that skips optnone functions.
  o->standard =
      std::make_unique<llvm::StandardInstrumentations>(module.getContext(), /*DebugLogging=*/false);
  o->standard->registerCallbacks(o->instrumentation, &o->mam);
  if (budget != nullptr && budget->limited()) {
    // Once over the limit the optional passes left are skipped; the caller reports the excess.
    o->instrumentation.registerShouldRunOptionalPassCallback(
        [budget](llvm::StringRef, llvm::Any) { return !budget->exceeded(); });
    o->instrumentation.registerAfterPassCallback(
        [budget](llvm::StringRef pass, llvm::Any, const llvm::PreservedAnalyses&) {
          budget->check("after LLVM pass '" + pass.str() + "'");
        });
  }
  // As clang at -O2 and above: LLVM's own defaults leave the SLP vectorizer off, and compiled
  // loops that keep one sum per channel across an outer loop then add in scalars.
  llvm::PipelineTuningOptions tuning;
  tuning.SLPVectorization = level >= 2;
  llvm::PassBuilder pb(tm, tuning, std::nullopt, &o->instrumentation);
  pb.registerModuleAnalyses(o->mam);
  pb.registerCGSCCAnalyses(o->cgam);
  pb.registerFunctionAnalyses(o->fam);
  pb.registerLoopAnalyses(o->lam);
  pb.crossRegisterProxies(o->lam, o->fam, o->cgam, o->mam);
  o->mpm = level == 0 ? pb.buildO0DefaultPipeline(llvm::OptimizationLevel::O0)
                      : pb.buildPerModuleDefaultPipeline(optLevel(level));
  o->mpm.run(module, o->mam);
}

// Compile time must stay near-linear in the input: a generated or hostile model can put 100k ops
// in one function, or nest loops hundreds deep. Two parts of LLVM 19 are far from linear there
// (measured on a 2-vCPU VM):
//  - the loop passes of the -O1..-O3 pipelines (LICM, loop-instsimplify, simple-loop-unswitch,
//    loop-simplifycfg) grow with about the fourth power of the loop nest depth: 200 nested loops
//    took 5 s, 300 took 29 s;
//  - the two-address instruction pass of code generation is quadratic in the instructions of a
//    function with two-address forms (x86 SSE arithmetic, integer ops): 10k scalar ops took
//    1.7 s, 50k 72 s, 100k 770 s (the IR pipeline took 0.8 s on those 100k).
// A function beyond max_optimized_function_size instructions after the IR pipeline gets
// `optnone` then, which selects the fast instruction selector (and skips the two-address
// pass's optimisations) for it alone; one beyond max_optimized_loop_depth, or ten times that
// size, gets it before the IR pipeline, which then leaves it as the MLIR pipeline made it
// (canonicalized and CSE'd). The rest of the module keeps the requested level. What stays
// superlinear is LLVM's greedy register allocator on functions of a million instructions
// (100k ops of which 8k are RAL calls: 28 s, half of it there).
unsigned maxLoopDepth(llvm::Function& f) {
  if (f.isDeclaration()) return 0;
  llvm::DominatorTree dominators(f);
  llvm::LoopInfo loops(dominators);
  unsigned deepest = 0;
  for (llvm::Loop* loop : loops.getLoopsInPreorder())
    deepest = std::max(deepest, loop->getLoopDepth());
  return deepest;
}

void skipOptimization(llvm::Function& f) {
  // optnone requires noinline; the entry wrapper's call of it stays a call.
  f.removeFnAttr(llvm::Attribute::AlwaysInline);
  f.addFnAttr(llvm::Attribute::NoInline);
  f.addFnAttr(llvm::Attribute::OptimizeNone);
}

// Removes the files of a temporary directory when it goes out of scope.
struct TempDir {
  llvm::SmallString<128> path;
  std::vector<std::string> files;
  ~TempDir() {
    for (const std::string& f : files) llvm::sys::fs::remove(f);
    if (!path.empty()) llvm::sys::fs::remove(path);
  }
  std::string file(llvm::StringRef name) {
    llvm::SmallString<128> p(path);
    llvm::sys::path::append(p, name);
    files.push_back(std::string(p));
    return files.back();
  }
};

}  // namespace

bool checkTargetCpu(const std::string& cpu, std::string* error) {
  if (cpu == "generic" || cpu == "native") return true;
  llvm::InitializeNativeTarget();
  const std::string triple = llvm::sys::getDefaultTargetTriple();
  std::string lookup_error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, lookup_error);
  if (!target) {
    *error = "no LLVM target for " + triple + ": " + lookup_error;
    return false;
  }
  // Asked of the generic CPU's subtarget: one made for an unknown CPU prints a warning.
  std::unique_ptr<llvm::MCSubtargetInfo> generic(
      target->createMCSubtargetInfo(triple, "generic", ""));
  if (!generic) {
    *error = "LLVM's target for " + triple + " has no subtarget information";
    return false;
  }
  const bool known = generic->isCPUStringValid(cpu);
  if (known) {
    std::unique_ptr<llvm::MCSubtargetInfo> chosen(target->createMCSubtargetInfo(triple, cpu, ""));
    // LLVM ends the process (report_fatal_error) on x86-64 code for a CPU without 64-bit mode.
    const bool x86_64 = llvm::Triple(triple).getArch() == llvm::Triple::x86_64;
    if (chosen && (!x86_64 || chosen->checkFeatures("+64bit"))) return true;
  }
  static constexpr const char* kExamples[] = {"x86-64-v2",   "x86-64-v3", "x86-64-v4",
                                              "skylake",     "znver4",    "neoverse-n1",
                                              "neoverse-v2", "apple-m1"};
  std::string examples;
  for (const char* example : kExamples)
    if (generic->isCPUStringValid(example)) examples += std::string(", ") + example;
  *error = "--mcpu=" + quoted(cpu) +
           (known ? " cannot run the 64-bit code of " : " is not a CPU that LLVM knows for ") +
           triple + ": use generic (portable), native (this machine's CPU, " +
           llvm::sys::getHostCPUName().str() + ") or a CPU name" +
           (examples.empty() ? std::string() : " such as " + examples.substr(2));
  return false;
}

bool compileToSharedObject(llvm::Module& module, const CodegenOptions& options,
                           std::vector<uint8_t>* shared_object, std::string* error) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  const std::string triple = llvm::sys::getDefaultTargetTriple();
  std::string lookup_error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, lookup_error);
  if (!target) {
    *error = "no LLVM target for " + triple + ": " + lookup_error;
    return false;
  }
  if (!checkTargetCpu(options.cpu, error)) return false;
  const bool native = options.cpu == "native";
  const std::string cpu = native ? llvm::sys::getHostCPUName().str() : options.cpu;
  const std::string features = native ? hostFeatures() : "";
  llvm::TargetOptions target_options;
  LeakOnUnwind<llvm::TargetMachine> tm(
      std::unique_ptr<llvm::TargetMachine>(target->createTargetMachine(
          triple, cpu, features, target_options, llvm::Reloc::PIC_, std::nullopt,
          options.opt_level == 0 ? llvm::CodeGenOptLevel::None
                                 : llvm::CodeGenOptLevel::Aggressive)));
  if (!tm.get()) {
    *error = "cannot create a target machine for " + triple + " (cpu '" + cpu + "')";
    return false;
  }
  module.setTargetTriple(triple);
  module.setDataLayout(tm->createDataLayout());
  std::string verify_message;
  llvm::raw_string_ostream verify_os(verify_message);
  if (llvm::verifyModule(module, &verify_os)) {
    *error = "invalid LLVM IR: " + verify_os.str();
    return false;
  }
  // Saturating: the limit is the user's, ten times it may not fit.
  const size_t unoptimized_size = options.max_optimized_function_size > SIZE_MAX / 10
                                      ? SIZE_MAX
                                      : 10 * options.max_optimized_function_size;
  if (options.opt_level > 0) {
    for (llvm::Function& f : module)
      if (maxLoopDepth(f) > options.max_optimized_loop_depth ||
          f.getInstructionCount() > unoptimized_size)
        skipOptimization(f);
  }
  optimize(module, tm.get(), options.opt_level, options.budget);
  if (options.budget != nullptr && !options.budget->check("after LLVM's optimisation")) {
    *error = options.budget->error();
    return false;
  }
  if (options.opt_level > 0) {
    for (llvm::Function& f : module)
      if (!f.isDeclaration() && f.getInstructionCount() > options.max_optimized_function_size)
        skipOptimization(f);
  }

  TempDir dir;
  if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("ral-compile", dir.path)) {
    *error = "cannot create a temporary directory: " + ec.message();
    return false;
  }
  const std::string object_path = dir.file("module.o");
  const std::string library_path = dir.file("module.so");
  {
    std::error_code ec;
    LeakOnUnwind<llvm::raw_fd_ostream> out(
        std::make_unique<llvm::raw_fd_ostream>(object_path, ec, llvm::sys::fs::OF_None));
    if (ec) {
      *error = "cannot write " + object_path + ": " + ec.message();
      return false;
    }
    LeakOnUnwind<llvm::legacy::PassManager> codegen(std::make_unique<llvm::legacy::PassManager>());
    if (tm->addPassesToEmitFile(*codegen, *out, nullptr, llvm::CodeGenFileType::ObjectFile)) {
      *error = "the target cannot emit object files";
      return false;
    }
    codegen->run(module);
    out->close();
    // Checked and cleared here: a stream destroyed with an error calls report_fatal_error.
    if (out->has_error()) {
      *error = "cannot write " + object_path + ": " + out->error().message();
      out->clear_error();
      return false;
    }
  }
  if (options.budget != nullptr && !options.budget->check("after code generation")) {
    *error = options.budget->error();
    return false;
  }

  // The module must stay free of link-time dependencies on RAL: only libc/libm are linked;
  // ral_api_call (by-name mode) resolves against the already loaded libral.
  const std::string linker = options.linker;
  std::vector<llvm::StringRef> args{linker,           "-shared",   "-fPIC", "-o",
                                    library_path,     object_path, "-lm",   "-Wl,-z,noexecstack",
                                    "-Wl,--as-needed"};
  std::string exec_error;
  const int rc = llvm::sys::ExecuteAndWait(linker, args, std::nullopt, {}, 0, 0, &exec_error);
  if (rc != 0) {
    *error = "linking the shared object with '" + linker + "' failed" +
             (exec_error.empty() ? "" : ": " + exec_error);
    return false;
  }
  auto buffer = llvm::MemoryBuffer::getFile(library_path);
  if (!buffer) {
    *error = "cannot read " + library_path + ": " + buffer.getError().message();
    return false;
  }
  const llvm::StringRef bytes = (*buffer)->getBuffer();
  shared_object->assign(bytes.begin(), bytes.end());
  return true;
}

}  // namespace compiler
}  // namespace ral
