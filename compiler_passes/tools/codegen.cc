#include "compiler_passes/tools/codegen.h"

#include <memory>

#include "llvm/ADT/StringMap.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
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
  llvm::PassBuilder pb(tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm = level == 0 ? pb.buildO0DefaultPipeline(llvm::OptimizationLevel::O0)
                                           : pb.buildPerModuleDefaultPipeline(optLevel(level));
  mpm.run(module, mam);
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
  optimize(module, tm.get(), options.opt_level);

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
