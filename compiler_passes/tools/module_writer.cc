#include "compiler_passes/tools/module_writer.h"

#include "ral/module_builder.h"

namespace ral {
namespace compiler {

Status writeModuleFile(const CompiledModule& module, const std::string& path) {
  ModuleBuilder builder(module.name);
  builder.setEntry(module.entry_symbol).setHostLibrary(module.host_library);
  for (const TensorSignature& s : module.inputs) builder.addInput(s);
  for (const TensorSignature& s : module.outputs) builder.addOutput(s);
  for (const std::string& name : module.imports) builder.addImport(name);
  return builder.writeFile(path);
}

}  // namespace compiler
}  // namespace ral
