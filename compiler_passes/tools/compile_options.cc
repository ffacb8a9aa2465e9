#include "compiler_passes/tools/compile_options.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "compiler_passes/conversion/gpu/gpu_targets.h"
#include "compiler_passes/transforms/math_approximations.h"
#include "compiler_passes/tools/codegen.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "ral/host_variant.h"

namespace ral {
namespace compiler {
namespace {

// Names recorded in a module and printed in messages: at most this many bytes.
constexpr size_t kMaxNameBytes = 256;

bool isControl(unsigned char c) { return c < 0x20 || c == 0x7f; }

// --name: UTF-8 without control characters (it is printed in every error about the module).
bool isGoodModuleName(llvm::StringRef name) {
  if (name.empty() || name.size() > kMaxNameBytes || !llvm::json::isUTF8(name)) return false;
  for (char c : name)
    if (isControl(static_cast<unsigned char>(c))) return false;
  return true;
}

// --entry: a function name is printable ASCII without spaces (a symbol MLIR prints bare or quoted,
// and the ONNX importer names its function with).
bool isGoodEntry(llvm::StringRef entry) {
  if (entry.empty() || entry.size() > kMaxNameBytes) return false;
  for (char c : entry)
    if (c <= ' ' || c > '~') return false;
  return true;
}

std::string checkInlineMath(llvm::StringRef list) {
  if (list == "auto" || list == "all" || list == "none") return "";
  llvm::SmallVector<llvm::StringRef> ops;
  list.split(ops, ',', -1, /*KeepEmpty=*/false);
  std::string known;
  for (const char* op : mlir::disc_ral::kInlineF32Ops)
    known += (known.empty() ? "" : ", ") + std::string(op);
  const std::string usage = "use auto, all, none, or a comma-separated list of " + known +
                            " (each may end in .f64: computed in f64)";
  if (ops.empty()) return "--inline-f32-math=" + quoted(list) + " names no op: " + usage;
  for (llvm::StringRef op : ops) {
    llvm::StringRef name = op.trim();
    name.consume_back(".f64");
    bool found = false;
    for (const char* k : mlir::disc_ral::kInlineF32Ops) found |= name == k;
    if (!found) return "--inline-f32-math: unknown op " + quoted(op.trim()) + ": " + usage;
  }
  return "";
}

}  // namespace

std::string quoted(llvm::StringRef text) { return "'" + escaped(text) + "'"; }

std::string escaped(llvm::StringRef text) {
  std::string out;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f && c != '\\') {
      out += c;
    } else {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "\\x%02x", u);
      out += hex;
    }
  }
  return out;
}

std::string defaultModuleName(llvm::StringRef input_path) {
  std::string name = llvm::sys::path::stem(input_path).str();
  if (name.size() > kMaxNameBytes) name.resize(kMaxNameBytes);
  if (!llvm::json::isUTF8(name)) name = llvm::json::fixUTF8(name);
  std::string clean;
  for (char c : name) clean += isControl(static_cast<unsigned char>(c)) ? '_' : c;
  // fixUTF8 may have grown it past the limit (each bad byte is 3 bytes of U+FFFD).
  while (!isGoodModuleName(clean) && !clean.empty()) clean.pop_back();
  return clean.empty() ? "module" : clean;
}

namespace {

// "" when `list` (CompileRequest::host_variants) is valid, else the message.
std::string checkHostVariants(llvm::StringRef list) {
  if (list == "auto" || list == "none") return "";
  const std::vector<std::string>& known = ral::internal::knownHostTargets();
  std::string names;
  for (const std::string& k : known) names += (names.empty() ? "" : ", ") + k;
  llvm::SmallVector<llvm::StringRef> parts;
  list.split(parts, ',');
  for (size_t i = 0; i < parts.size(); ++i) {
    if (std::find(known.begin(), known.end(), parts[i].str()) == known.end())
      return "--host-variants: " + quoted(parts[i]) + " is not a host variant target (auto, " +
             "none, or a comma-separated list of: " + (names.empty() ? "none here" : names) + ")";
    for (size_t j = 0; j < i; ++j)
      if (parts[j] == parts[i]) return "--host-variants: " + quoted(parts[i]) + " is listed twice";
  }
  return "";
}

}  // namespace

std::vector<std::string> hostVariantTargets(const CompileRequest& r) {
  std::vector<std::string> targets;
  if (r.host_variants == "none" || r.emit != "ralm") return targets;
  if (r.host_variants == "auto") {
    // Only for portable code: a module built for a named CPU is as fast as it gets there.
    if (r.mcpu != "generic" || r.opt_level == 0) return targets;
    for (const std::string& t : ral::internal::knownHostTargets())
      if (t != "x86-64-v2") targets.push_back(t);  // v2 measures no faster than the baseline
    return targets;
  }
  llvm::SmallVector<llvm::StringRef> parts;
  llvm::StringRef(r.host_variants).split(parts, ',');
  for (llvm::StringRef p : parts) targets.push_back(p.str());
  return targets;
}

std::string checkRequest(const CompileRequest& r) {
  const std::string& device = r.device;
  if (r.input_path.empty()) return "no input file given";
  if (device != "cpu" && device != "vulkan" && device != "cuda" && device != "hsa")
    return "--device=" + escaped(device) +
           " is not supported: this build generates code for cpu, vulkan, cuda and hsa";
  const bool gpu = device == "cuda" || device == "hsa";
  if (!gpu && !r.gpu_arch.empty()) return "--gpu-arch goes with --device=cuda or --device=hsa";
  if (gpu) {
    std::vector<std::string> archs;
    std::string arch_error;
    if (!mlir::disc_ral::parseGpuArchs(device, r.gpu_arch, &archs, &arch_error))
      return "--gpu-arch: " + arch_error;
  }
  if (device != "cpu" && !r.kernels)
    return "--device=" + device + " runs every loop as a kernel; --kernels=false is cpu only";
  if (r.emit != "ralm" && r.emit != "mlir" && r.emit != "llvm" && r.emit != "import")
    return "--emit must be ralm, mlir, llvm or import, got " + quoted(r.emit);
  if (r.input_format != "auto" && r.input_format != "mlir" && r.input_format != "onnx")
    return "--input-format must be auto, mlir or onnx, got " + quoted(r.input_format);
  if (r.opt_level < 0 || r.opt_level > 3)
    return "-O must be 0..3, got " + std::to_string(r.opt_level);
  if (r.constant_min_bytes < 0)
    return "--constant-min-bytes must be 0 or more, got " + std::to_string(r.constant_min_bytes);
  if (std::string error = checkInlineMath(r.inline_f32_math); !error.empty()) return error;
  if (std::string error = checkHostVariants(r.host_variants); !error.empty()) return error;
  if (!isGoodEntry(r.entry))
    return "--entry=" + quoted(r.entry) + " is not a function name: use 1 to " +
           std::to_string(kMaxNameBytes) + " printable ASCII characters without spaces";
  if (!r.module_name.empty() && !isGoodModuleName(r.module_name))
    return "--name=" + quoted(r.module_name) + " is not a module name: use 1 to " +
           std::to_string(kMaxNameBytes) + " bytes of UTF-8 without control characters";
  // Before LLVM sees it: a CPU it does not know, or one without 64-bit mode, ends in
  // report_fatal_error deep in code generation.
  std::string cpu_error;
  if (!checkTargetCpu(r.mcpu, &cpu_error)) return cpu_error;
  return "";
}

}  // namespace compiler
}  // namespace ral
