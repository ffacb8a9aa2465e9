#include "compiler_passes/tools/codegen.h"

#include <algorithm>
#include <memory>

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

void optimize(llvm::Module& module, llvm::TargetMachine* tm, int level) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  // The standard instrumentations include the one that skips optnone functions.
  llvm::PassInstrumentationCallbacks instrumentation;
  llvm::StandardInstrumentations standard(module.getContext(), /*DebugLogging=*/false);
  standard.registerCallbacks(instrumentation, &mam);
  llvm::PassBuilder pb(tm, llvm::PipelineTuningOptions(), std::nullopt, &instrumentation);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm = level == 0 ? pb.buildO0DefaultPipeline(llvm::OptimizationLevel::O0)
                                           : pb.buildPerModuleDefaultPipeline(optLevel(level));
  mpm.run(module, mam);
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
  const bool native = options.cpu == "native";
  const std::string cpu = native ? llvm::sys::getHostCPUName().str() : options.cpu;
  const std::string features = native ? hostFeatures() : "";
  llvm::TargetOptions target_options;
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      triple, cpu, features, target_options, llvm::Reloc::PIC_, std::nullopt,
      options.opt_level == 0 ? llvm::CodeGenOptLevel::None : llvm::CodeGenOptLevel::Aggressive));
  if (!tm) {
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
  if (options.opt_level > 0) {
    for (llvm::Function& f : module)
      if (maxLoopDepth(f) > options.max_optimized_loop_depth ||
          f.getInstructionCount() > 10 * options.max_optimized_function_size)
        skipOptimization(f);
  }
  optimize(module, tm.get(), options.opt_level);
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
    llvm::raw_fd_ostream out(object_path, ec, llvm::sys::fs::OF_None);
    if (ec) {
      *error = "cannot write " + object_path + ": " + ec.message();
      return false;
    }
    llvm::legacy::PassManager codegen;
    if (tm->addPassesToEmitFile(codegen, out, nullptr, llvm::CodeGenFileType::ObjectFile)) {
      *error = "the target cannot emit object files";
      return false;
    }
    codegen.run(module);
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
