#include "compiler_passes/conversion/gpu/gpu_targets.h"

#include <algorithm>
#include <memory>
#include <mutex>
#include <set>

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/TargetParser.h"

namespace mlir {
namespace disc_ral {

namespace {

// sm_XY names from the NVPTX back end's processor table.
std::vector<std::string> nvptxArchs() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTargetMC();
  });
  std::vector<std::string> names;
  std::string error;
  const char* triple = "nvptx64-nvidia-cuda";
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (target == nullptr) return names;
  std::unique_ptr<llvm::MCSubtargetInfo> info(target->createMCSubtargetInfo(triple, "", ""));
  if (!info) return names;
  for (const llvm::SubtargetSubTypeKV& cpu : info->getAllProcessorDescriptions())
    if (llvm::StringRef(cpu.Key).starts_with("sm_")) names.push_back(cpu.Key);
  return names;
}

// gfx names from LLVM's AMDGPU target parser (generic "gfx*-generic" targets excluded: the HSA
// runtime matches code objects to agents by processor).
std::vector<std::string> amdgpuArchs() {
  llvm::SmallVector<llvm::StringRef> list;
  llvm::AMDGPU::fillValidArchListAMDGCN(list);
  std::vector<std::string> names;
  for (llvm::StringRef name : list)
    if (name.starts_with("gfx") && !name.ends_with("-generic")) names.push_back(name.str());
  return names;
}

}  // namespace

std::vector<std::string> knownGpuArchs(llvm::StringRef device) {
  std::vector<std::string> names;
  if (device == "cuda") names = nvptxArchs();
  if (device == "hsa") names = amdgpuArchs();
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

bool parseGpuArchs(llvm::StringRef device, llvm::StringRef list, std::vector<std::string>* archs,
                   std::string* error) {
  if (list.empty()) list = device == "cuda" ? kDefaultCudaArchs : kDefaultHsaArchs;
  const std::vector<std::string> known = knownGpuArchs(device);
  if (known.empty()) {
    *error = "no GPU architectures are known for device '" + device.str() + "'";
    return false;
  }
  llvm::SmallVector<llvm::StringRef> parts;
  list.split(parts, ',', -1, /*KeepEmpty=*/false);
  std::set<std::string> seen;
  archs->clear();
  for (llvm::StringRef part : parts) {
    const std::string name = part.trim().str();
    if (!std::binary_search(known.begin(), known.end(), name)) {
      *error = "unknown " + device.str() + " architecture '" + name + "'; the accepted ones are " +
               llvm::join(known, ", ");
      return false;
    }
    if (seen.insert(name).second) archs->push_back(name);
  }
  if (archs->empty()) {
    *error = "--gpu-arch names no architecture";
    return false;
  }
  return true;
}

std::string ptxFeature(llvm::StringRef arch) {
  // PTX ISA versions that introduced each architecture (PTX ISA manual, "Release Notes").
  struct Min {
    const char* arch;
    int ptx;
  };
  static constexpr Min kTable[] = {
      {"sm_72", 61}, {"sm_75", 63}, {"sm_80", 70}, {"sm_86", 71},
      {"sm_87", 74}, {"sm_89", 78}, {"sm_90", 78}, {"sm_90a", 80},
  };
  int ptx = 60;  // sm_70 and everything older
  for (const Min& m : kTable)
    if (arch == m.arch) ptx = m.ptx;
  return "+ptx" + std::to_string(ptx);
}

}  // namespace disc_ral
}  // namespace mlir
