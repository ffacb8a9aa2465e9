// ModuleBuilder: writes module files (.ralm). Compilers and the ral-pack tool use
// it; the format itself (ral/schema/module.fbs) stays private to RAL.
//
//   ral::ModuleBuilder b("add");
//   b.setHostLibrary(so_bytes).addInput({"a", DType::kF32, {kDynamicDim}})
//    .addOutput({"sum", DType::kF32, {kDynamicDim}}).addImport(name);
//   RAL_RETURN_IF_ERROR(b.writeFile("add.ralm"));
#ifndef RAL_MODULE_BUILDER_H_
#define RAL_MODULE_BUILDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "ral/module_spec.h"
#include "ral/status.h"

namespace ral {

class ModuleBuilder {
 public:
  ModuleBuilder() = default;
  explicit ModuleBuilder(std::string name) { spec_.name = std::move(name); }
  explicit ModuleBuilder(ModuleSpec spec) : spec_(std::move(spec)) {}

  ModuleBuilder& setName(std::string name);
  ModuleBuilder& setEntry(std::string symbol);
  // The ABI the module's code follows; RAL_ABI_VERSION unless a tool rewrites an old module.
  ModuleBuilder& setAbiVersion(uint32_t version);
  ModuleBuilder& addInput(TensorSignature sig);
  ModuleBuilder& addOutput(TensorSignature sig);
  ModuleBuilder& setHostLibrary(std::vector<uint8_t> elf_shared_object);
  // The host library built for a newer CPU level (ral/host_variant.h), loaded where it runs.
  ModuleBuilder& addHostVariant(HostVariantDef variant);
  ModuleBuilder& addExecutable(ExecutableDef executable);
  ModuleBuilder& addConstant(ConstantDef constant);
  ModuleBuilder& addImport(std::string encoded_name);

  const ModuleSpec& spec() const { return spec_; }
  ModuleSpec& spec() { return spec_; }

  // Checks the spec with the loader's rules (except the ABI version) and serialises it.
  StatusOr<std::vector<uint8_t>> build() const;
  // build(), then writes `path` (via a new sibling file renamed into place, so readers never see
  // a half-written module). Only a regular file, a new path or a link to the user's own regular
  // file is written: a device, FIFO, directory or another user's file is refused
  // (InvalidArgument) before anything is built.
  Status writeFile(const std::string& path) const;

  // Serialises without any check: for tests that need files the loader must refuse.
  std::vector<uint8_t> buildUnchecked() const;

 private:
  Status check() const;
  ModuleSpec spec_;
};

}  // namespace ral

#endif  // RAL_MODULE_BUILDER_H_
