#include "ral/module_builder.h"

#include <cstdlib>
#include <string_view>
#include <utility>

#include "module_generated.h"
#include "ral/file_writer.h"
#include "ral/manifest_checksum.h"
#include "ral/module_checks.h"

namespace ral {

ModuleBuilder& ModuleBuilder::setName(std::string name) {
  spec_.name = std::move(name);
  return *this;
}
ModuleBuilder& ModuleBuilder::setEntry(std::string symbol) {
  spec_.entry = std::move(symbol);
  return *this;
}
ModuleBuilder& ModuleBuilder::setAbiVersion(uint32_t version) {
  spec_.abi_version = version;
  return *this;
}
ModuleBuilder& ModuleBuilder::addInput(TensorSignature sig) {
  spec_.inputs.push_back(std::move(sig));
  return *this;
}
ModuleBuilder& ModuleBuilder::addOutput(TensorSignature sig) {
  spec_.outputs.push_back(std::move(sig));
  return *this;
}
ModuleBuilder& ModuleBuilder::setHostLibrary(std::vector<uint8_t> elf_shared_object) {
  spec_.host_library = std::move(elf_shared_object);
  return *this;
}
ModuleBuilder& ModuleBuilder::addHostVariant(HostVariantDef variant) {
  spec_.host_variants.push_back(std::move(variant));
  return *this;
}
ModuleBuilder& ModuleBuilder::addExecutable(ExecutableDef executable) {
  spec_.executables.push_back(std::move(executable));
  return *this;
}
ModuleBuilder& ModuleBuilder::addConstant(ConstantDef constant) {
  spec_.constants.push_back(std::move(constant));
  return *this;
}
ModuleBuilder& ModuleBuilder::addImport(std::string encoded_name) {
  spec_.imports.push_back(std::move(encoded_name));
  return *this;
}

Status ModuleBuilder::check() const {
  using namespace module_checks;
  if (spec_.name.empty()) return invalidArgument("the module has no name");
  RAL_RETURN_IF_ERROR(checkSymbol(spec_.entry, "the entry symbol"));
  RAL_RETURN_IF_ERROR(checkHostLibraryHeader(spec_.host_library.data(), spec_.host_library.size()));
  {
    std::vector<std::string_view> targets;
    std::vector<const void*> datas;
    std::vector<size_t> sizes;
    for (const HostVariantDef& v : spec_.host_variants) {
      targets.push_back(v.target);
      datas.push_back(v.data.data());
      sizes.push_back(v.data.size());
    }
    RAL_RETURN_IF_ERROR(checkHostVariants(targets, datas, sizes));
  }
  for (size_t i = 0; i < spec_.inputs.size(); ++i)
    RAL_RETURN_IF_ERROR(checkSignature(spec_.inputs[i], internal::strCat("input ", i)));
  for (size_t i = 0; i < spec_.outputs.size(); ++i)
    RAL_RETURN_IF_ERROR(checkSignature(spec_.outputs[i], internal::strCat("output ", i)));
  for (size_t i = 0; i < spec_.imports.size(); ++i)
    RAL_RETURN_IF_ERROR(checkImportName(spec_.imports[i], i));
  std::vector<std::string_view> names;
  for (const ExecutableDef& e : spec_.executables) {
    std::vector<std::string_view> targets;
    std::vector<size_t> sizes;
    size_t bytes = e.data.size();
    for (const ExecutableVariantDef& v : e.variants) {
      targets.push_back(v.target);
      sizes.push_back(v.data.size());
      bytes += v.data.size();
    }
    RAL_RETURN_IF_ERROR(checkExecutable(e.name, bytes, e.entries));
    RAL_RETURN_IF_ERROR(checkExecutableVariants(e.name, e.format, e.data.size(), targets, sizes));
    names.push_back(e.name);
  }
  RAL_RETURN_IF_ERROR(checkUniqueNames(names, "executables"));
  names.clear();
  for (const ConstantDef& c : spec_.constants) {
    RAL_RETURN_IF_ERROR(checkConstant(c.name, c.dtype, c.shape, c.data.size()));
    names.push_back(c.name);
  }
  return checkUniqueNames(names, "constants");
}

StatusOr<std::vector<uint8_t>> ModuleBuilder::build() const {
  RAL_RETURN_IF_ERROR(check().withContext("cannot build module"));
  return buildUnchecked();
}

namespace {

flatbuffers::Offset<fb::TensorSignature> writeSignature(flatbuffers::FlatBufferBuilder& fbb,
                                                        const TensorSignature& sig) {
  // An identity layout is written as no strides, as modules from before layouts were recorded.
  return fb::CreateTensorSignatureDirect(fbb, sig.name.c_str(), static_cast<fb::DType>(sig.dtype),
                                         &sig.dims, static_cast<fb::Device>(sig.device),
                                         sig.strides.empty() ? nullptr : &sig.strides);
}

}  // namespace

std::vector<uint8_t> ModuleBuilder::buildUnchecked() const {
  size_t code_bytes = spec_.host_library.size();
  for (const HostVariantDef& v : spec_.host_variants) code_bytes += v.data.size();
  flatbuffers::FlatBufferBuilder fbb(1024 + code_bytes);
  // Every field is stored, defaults too: the manifest checksum then covers a byte for each.
  fbb.ForceDefaults(true);
  // Constant payloads first (FlatBuffers writes back to front, so they end up at the end of the
  // file), each aligned so that the data of a mapped file is usable in place.
  std::vector<flatbuffers::Offset<fb::Constant>> constants;
  for (const ConstantDef& c : spec_.constants) {
    fbb.ForceVectorAlignment(c.data.size(), 1, kConstantAlignment);
    auto data = fbb.CreateVector(c.data);
    constants.push_back(fb::CreateConstant(
        fbb, fbb.CreateString(c.name), static_cast<fb::DType>(c.dtype), fbb.CreateVector(c.shape),
        data, moduleChecksum(c.data.data(), c.data.size())));
  }
  std::vector<flatbuffers::Offset<fb::Executable>> executables;
  for (const ExecutableDef& e : spec_.executables) {
    std::vector<flatbuffers::Offset<fb::ExecutableEntry>> entries;
    for (const EntryPoint& ep : e.entries) {
      const fb::WorkgroupSize wg(ep.workgroup_size.x, ep.workgroup_size.y, ep.workgroup_size.z);
      entries.push_back(fb::CreateExecutableEntry(fbb, fbb.CreateString(ep.name), &wg));
    }
    // Variants only when there are some: a single-code executable is written as before them.
    flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::ExecutableVariant>>> variants;
    if (!e.variants.empty()) {
      std::vector<flatbuffers::Offset<fb::ExecutableVariant>> list;
      for (const ExecutableVariantDef& v : e.variants) {
        fbb.ForceVectorAlignment(v.data.size(), 1, 16);
        auto code = fbb.CreateVector(v.data);
        list.push_back(fb::CreateExecutableVariant(fbb, fbb.CreateString(v.target), code,
                                                   moduleChecksum(v.data.data(), v.data.size())));
      }
      variants = fbb.CreateVector(list);
    }
    fbb.ForceVectorAlignment(e.data.size(), 1, 16);
    auto data = fbb.CreateVector(e.data);
    executables.push_back(fb::CreateExecutable(
        fbb, fbb.CreateString(e.name), static_cast<fb::ExecutableFormat>(e.format), data,
        fbb.CreateVector(entries), moduleChecksum(e.data.data(), e.data.size()), variants));
  }
  // Variants only when there are some: a module without them is written as before them.
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::HostVariant>>> host_variants;
  if (!spec_.host_variants.empty()) {
    std::vector<flatbuffers::Offset<fb::HostVariant>> list;
    for (const HostVariantDef& v : spec_.host_variants) {
      fbb.ForceVectorAlignment(v.data.size(), 1, 16);
      auto code = fbb.CreateVector(v.data);
      list.push_back(fb::CreateHostVariant(fbb, fbb.CreateString(v.target), code,
                                           moduleChecksum(v.data.data(), v.data.size())));
    }
    host_variants = fbb.CreateVector(list);
  }
  fbb.ForceVectorAlignment(spec_.host_library.size(), 1, 16);
  auto host = fbb.CreateVector(spec_.host_library);
  std::vector<flatbuffers::Offset<fb::TensorSignature>> inputs, outputs;
  for (const auto& s : spec_.inputs) inputs.push_back(writeSignature(fbb, s));
  for (const auto& s : spec_.outputs) outputs.push_back(writeSignature(fbb, s));
  auto root = fb::CreateModule(fbb, spec_.abi_version, fbb.CreateString(spec_.name),
                               fbb.CreateString(spec_.entry), fbb.CreateVector(inputs),
                               fbb.CreateVector(outputs), host,
                               moduleChecksum(spec_.host_library.data(), spec_.host_library.size()),
                               fbb.CreateVector(executables), fbb.CreateVector(constants),
                               fbb.CreateVectorOfStrings(spec_.imports),
                               /*manifest_checksum=*/~uint64_t{0},  // non-default: stored
                               host_variants);
  fb::FinishSizePrefixedModuleBuffer(fbb, root);
  std::vector<uint8_t> bytes(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  // Sealed once every other byte is final; the field's placeholder is not part of the checksum.
  const Status sealed = internal::resealManifest(bytes.data(), bytes.size());
  if (!sealed.ok()) std::abort();  // a buffer this builder just wrote always verifies
  return bytes;
}

Status ModuleBuilder::writeFile(const std::string& path) const {
  // Checked before building: a refused path costs nothing (ral/file_writer.h has the rules).
  RAL_RETURN_IF_ERROR(checkOutputFile(path));
  RAL_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, build());
  return writeFileAtomically(path, bytes.data(), bytes.size());
}

}  // namespace ral
