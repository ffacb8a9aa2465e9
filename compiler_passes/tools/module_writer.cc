#include "compiler_passes/tools/module_writer.h"

#include "ral/module_builder.h"

namespace ral {
namespace compiler {

namespace {

// The loader refuses files of 2 GiB or more (ral/module.cc), and the FlatBuffers builder cannot
// make them: its offsets are 32-bit. What the payloads (plus alignment padding, names and the
// manifest, well under the margin) add up to is checked before anything is built.
constexpr uint64_t kMaxPayloadBytes = (uint64_t{1} << 31) - (uint64_t{1} << 20);

}  // namespace

Status writeModuleFile(const CompiledModule& module, const std::string& path) {
  uint64_t payload = module.host_library.size();
  for (const HostVariantDef& v : module.host_variants) payload += v.data.size();
  for (const ExecutableDef& exe : module.device_executables) {
    payload += exe.data.size();
    for (const ExecutableVariantDef& v : exe.variants) payload += v.data.size();
  }
  for (const ConstantDef& c : module.constants) payload += c.data.size() + 64;
  if (payload > kMaxPayloadBytes)
    return Status(StatusCode::kUnsupported, "the module's code and constants take " +
                                                std::to_string(payload) +
                                                " bytes; a module file holds at most 2 GiB");
  ModuleBuilder builder(module.name);
  builder.setEntry(module.entry_symbol).setHostLibrary(module.host_library);
  for (const HostVariantDef& v : module.host_variants) builder.addHostVariant(v);
  for (const TensorSignature& s : module.inputs) builder.addInput(s);
  for (const TensorSignature& s : module.outputs) builder.addOutput(s);
  for (const std::string& name : module.imports) builder.addImport(name);
  for (const ExecutableDef& exe : module.device_executables) builder.addExecutable(exe);
  if (!module.host_kernels.empty()) {
    // A host executable holds its entries' symbol names (ral/module.h, ExecutableRef).
    ExecutableDef kernels;
    kernels.name = kHostKernelsExecutable;
    kernels.format = ExecutableFormat::kHostFunction;
    for (const std::string& symbol : module.host_kernels) {
      kernels.entries.push_back(EntryPoint{symbol, Dim3{0, 0, 0}});
      kernels.data.insert(kernels.data.end(), symbol.begin(), symbol.end());
      kernels.data.push_back(0);
    }
    builder.addExecutable(std::move(kernels));
  }
  for (const ConstantDef& c : module.constants) builder.addConstant(c);
  return builder.writeFile(path);
}

}  // namespace compiler
}  // namespace ral
