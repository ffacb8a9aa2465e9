#include "compiler_passes/conversion/gpu/amdgpu_codegen.h"

#include <memory>
#include <mutex>
#include <optional>

#include "llvm/ADT/SmallString.h"
#include "llvm/Analysis/CGSCCPassManager.h"
#include "llvm/Analysis/LoopAnalysisManager.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"

namespace mlir {
namespace disc_ral {

namespace {

constexpr const char kTriple[] = "amdgcn-amd-amdhsa";
// AMDHSA code object version 5 (ROCm 5.0 and later read it).
constexpr int kCodeObjectVersion = 500;

// A file in the temporary directory, removed when this goes out of scope.
class TempFile {
 public:
  bool create(llvm::StringRef suffix, std::string* error) {
    if (std::error_code ec = llvm::sys::fs::createTemporaryFile("ral-hsaco", suffix, path_)) {
      *error = "cannot create a temporary file: " + ec.message();
      return false;
    }
    return true;
  }
  ~TempFile() {
    if (!path_.empty()) llvm::sys::fs::remove(path_);
  }
  llvm::StringRef path() const { return path_; }

 private:
  llvm::SmallString<128> path_;
};

// ld.lld -shared: the object's kernels become the dynamic symbols the HSA loader finds. Its
// diagnostics go to a file, quoted in the error.
bool linkSharedObject(llvm::StringRef object, std::vector<char>* hsaco, std::string* error) {
  TempFile in, out, log;
  if (!in.create("o", error) || !out.create("hsaco", error) || !log.create("log", error))
    return false;
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(in.path(), ec);
    if (ec) {
      *error = "cannot write " + in.path().str() + ": " + ec.message();
      return false;
    }
    os << object;
  }
  const llvm::StringRef linker = RAL_LLD;
  const llvm::StringRef args[] = {linker, "-shared", "--no-undefined", in.path(), "-o", out.path()};
  const std::optional<llvm::StringRef> redirects[] = {std::nullopt, log.path(), log.path()};
  std::string exec_error;
  const int rc =
      llvm::sys::ExecuteAndWait(linker, args, std::nullopt, redirects, 0, 0, &exec_error);
  if (rc != 0) {
    auto messages = llvm::MemoryBuffer::getFile(log.path());
    *error = "linking the AMDGPU code object with '" + linker.str() + "' failed" +
             (exec_error.empty() ? "" : ": " + exec_error) +
             (messages ? ": " + (*messages)->getBuffer().trim().str() : "");
    return false;
  }
  auto linked = llvm::MemoryBuffer::getFile(out.path());
  if (!linked) {
    *error = "cannot read the linked code object: " + linked.getError().message();
    return false;
  }
  hsaco->assign((*linked)->getBufferStart(), (*linked)->getBufferEnd());
  return true;
}

}  // namespace

bool compileHsaco(llvm::Module& module, llvm::StringRef chip, std::vector<char>* hsaco,
                  std::string* error) {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTarget();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUAsmPrinter();
  });
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(kTriple, *error);
  if (target == nullptr) return false;
  std::unique_ptr<llvm::TargetMachine> machine(
      target->createTargetMachine(kTriple, chip, "", llvm::TargetOptions(), llvm::Reloc::PIC_,
                                  std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (!machine) {
    *error = "no AMDGPU target machine for " + chip.str();
    return false;
  }
  module.setTargetTriple(kTriple);
  module.setDataLayout(machine->createDataLayout());
  if (!module.getModuleFlag("amdhsa_code_object_version"))
    module.addModuleFlag(llvm::Module::Error, "amdhsa_code_object_version", kCodeObjectVersion);
  for (llvm::Function& f : module)
    if (!f.isDeclaration()) f.addFnAttr("target-cpu", chip);

  {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PassBuilder builder(machine.get());
    builder.registerModuleAnalyses(mam);
    builder.registerCGSCCAnalyses(cgam);
    builder.registerFunctionAnalyses(fam);
    builder.registerLoopAnalyses(lam);
    builder.crossRegisterProxies(lam, fam, cgam, mam);
    builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3).run(module, mam);
  }

  llvm::SmallString<0> object;
  {
    llvm::raw_svector_ostream os(object);
    llvm::legacy::PassManager codegen;
    if (machine->addPassesToEmitFile(codegen, os, nullptr, llvm::CodeGenFileType::ObjectFile)) {
      *error = "the AMDGPU back end cannot emit an object for " + chip.str();
      return false;
    }
    codegen.run(module);
  }
  return linkSharedObject(object.str(), hsaco, error);
}

}  // namespace disc_ral
}  // namespace mlir
