#include "ral/module_checks.h"

#include <elf.h>

#include <cctype>
#include <cstring>
#include <set>
#include <string>

#include "ral/memref.h"
#include "ral/name_encoding.h"

namespace ral::module_checks {

Status checkDType(uint8_t value, std::string_view what) {
  if (value == 0 || value >= kNumDTypes)
    return invalidArgument(what, " has an invalid element type (code ", int{value}, ")");
  return Status();
}

Status checkDevice(uint8_t value, std::string_view what) {
  if (value >= kNumDeviceKinds)
    return invalidArgument(what, " has an invalid device (code ", int{value}, ")");
  return Status();
}

Status checkFormat(uint8_t value, std::string_view what) {
  if (value > static_cast<uint8_t>(ExecutableFormat::kHsaco))
    return invalidArgument(what, " has an invalid executable format (code ", int{value}, ")");
  return Status();
}

Status checkSignature(const TensorSignature& sig, std::string_view what) {
  RAL_RETURN_IF_ERROR(checkDType(static_cast<uint8_t>(sig.dtype), what));
  RAL_RETURN_IF_ERROR(checkDevice(static_cast<uint8_t>(sig.device), what));
  if (sig.rank() > kMaxMemRefRank)
    return invalidArgument(what, " has rank ", sig.rank(), "; at most ", kMaxMemRefRank,
                           " is supported");
  for (int d = 0; d < sig.rank(); ++d)
    if (sig.dims[d] < kDynamicDim)
      return invalidArgument(what, " has an invalid size ", sig.dims[d], " in dimension ", d,
                             " (sizes are >= 0, or -1 for dynamic)");
  if (!sig.strides.empty() && sig.strides.size() != sig.dims.size())
    return invalidArgument(what, " has a layout with ", sig.strides.size(), " strides for rank ",
                           sig.rank());
  for (size_t d = 0; d < sig.strides.size(); ++d)
    if (sig.strides[d] < kDynamicDim)
      return invalidArgument(what, " has an invalid stride ", sig.strides[d], " in dimension ", d,
                             " of its layout (strides are >= 0, or -1 for any)");
  return Status();
}

Status checkSymbol(std::string_view symbol, std::string_view what) {
  if (symbol.empty()) return invalidArgument(what, " is empty");
  if (symbol.size() > 256) return invalidArgument(what, " is longer than 256 characters");
  for (size_t i = 0; i < symbol.size(); ++i) {
    const auto c = static_cast<unsigned char>(symbol[i]);
    if (!(std::isalnum(c) || c == '_') || (i == 0 && std::isdigit(c)))
      return invalidArgument(what, " '", symbol, "' is not a C identifier");
  }
  return Status();
}

Status checkImportName(std::string_view name, size_t index) {
  for (char c : name)
    if (!std::isprint(static_cast<unsigned char>(c)))
      return invalidArgument("import #", index, " has a non-printable character in its name");
  auto parts = parseApiName(name);
  if (!parts.ok())
    return invalidArgument("import #", index, " '", name,
                           "' is not an encoded RAL function name "
                           "(target___device___inputs___outputs)");
  return Status();
}

StatusOr<uint64_t> staticNumel(const std::vector<int64_t>& shape, std::string_view what) {
  if (shape.size() > static_cast<size_t>(kMaxMemRefRank))
    return invalidArgument(what, " has rank ", shape.size(), "; at most ", kMaxMemRefRank,
                           " is supported");
  uint64_t n = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] < 0)
      return invalidArgument(what, " has a negative size ", shape[d], " in dimension ", d);
    if (shape[d] != 0 && n > (uint64_t{1} << 62) / static_cast<uint64_t>(shape[d]))
      return invalidArgument(what, " has too many elements");
    n *= static_cast<uint64_t>(shape[d]);
  }
  return n;
}

Status checkConstant(std::string_view name, DType dtype, const std::vector<int64_t>& shape,
                     size_t bytes) {
  const std::string what = internal::strCat("constant '", name, "'");
  if (name.empty()) return invalidArgument("a constant has no name");
  RAL_RETURN_IF_ERROR(checkDType(static_cast<uint8_t>(dtype), what));
  RAL_ASSIGN_OR_RETURN(uint64_t numel, staticNumel(shape, what));
  const uint64_t expected = numel * dtypeSize(dtype);
  if (expected != bytes)
    return invalidArgument(what, " of shape ",
                           shapeString(dtype, shape.data(), static_cast<int>(shape.size())),
                           " needs ", expected, " bytes but holds ", bytes);
  return Status();
}

Status checkExecutable(std::string_view name, size_t bytes,
                       const std::vector<EntryPoint>& entries) {
  if (name.empty()) return invalidArgument("an executable has no name");
  if (bytes == 0) return invalidArgument("executable '", name, "' is empty");
  std::set<std::string_view> seen;
  for (const EntryPoint& e : entries) {
    if (e.name.empty()) return invalidArgument("executable '", name, "' has an unnamed entry");
    if (!seen.insert(e.name).second)
      return invalidArgument("executable '", name, "' lists entry '", e.name, "' twice");
    const Dim3& w = e.workgroup_size;
    const bool unset = w.x == 0 && w.y == 0 && w.z == 0;
    if (!unset && (w.x == 0 || w.y == 0 || w.z == 0 || w.count() > 65536))
      return invalidArgument("executable '", name, "' entry '", e.name, "' has workgroup size ",
                             w.x, "x", w.y, "x", w.z,
                             " (each >= 1 and at most 65536 in all, or 0x0x0 for any)");
  }
  return Status();
}

Status checkExecutableVariants(std::string_view name, ExecutableFormat format, size_t data_bytes,
                               const std::vector<std::string_view>& targets,
                               const std::vector<size_t>& sizes) {
  if (targets.empty()) return Status();
  if (format == ExecutableFormat::kHostFunction)
    return invalidArgument("host executable '", name, "' has target variants");
  if (data_bytes != 0)
    return invalidArgument("executable '", name,
                           "' has both its own code and target variants (one or the other)");
  std::set<std::string_view> seen;
  for (size_t i = 0; i < targets.size(); ++i) {
    const std::string_view t = targets[i];
    if (t.empty() || t.size() > 64)
      return invalidArgument("executable '", name, "' variant #", i, " has a target name of ",
                             t.size(), " characters (1 to 64)");
    for (char c : t)
      if (!std::isalnum(static_cast<unsigned char>(c)) &&
          std::string_view("_-.+:").find(c) == std::string_view::npos)
        return invalidArgument("executable '", name, "' variant #", i,
                               " has an invalid target name (letters, digits and _-.+: only)");
    if (!seen.insert(t).second)
      return invalidArgument("executable '", name, "' has two variants for target '", t, "'");
    if (sizes[i] == 0) return invalidArgument("executable '", name, "' variant '", t, "' is empty");
  }
  return Status();
}

Status checkHostVariants(const std::vector<std::string_view>& targets,
                         const std::vector<const void*>& datas, const std::vector<size_t>& sizes) {
  std::set<std::string_view> seen;
  for (size_t i = 0; i < targets.size(); ++i) {
    const std::string_view t = targets[i];
    if (t.empty() || t.size() > 64)
      return invalidArgument("host variant #", i, " has a target name of ", t.size(),
                             " characters (1 to 64)");
    for (char c : t)
      if (!std::isalnum(static_cast<unsigned char>(c)) &&
          std::string_view("_-.+:").find(c) == std::string_view::npos)
        return invalidArgument("host variant #", i,
                               " has an invalid target name (letters, digits and _-.+: only)");
    if (!seen.insert(t).second) return invalidArgument("two host variants for target '", t, "'");
    RAL_RETURN_IF_ERROR(checkHostLibraryHeader(datas[i], sizes[i])
                            .withContext(internal::strCat("host variant '", t, "'")));
  }
  return Status();
}

Status checkHostLibraryHeader(const void* data, size_t size) {
  if (data == nullptr || size == 0)
    return invalidArgument("the module has no host library (its compiled host code)");
  if (size < sizeof(Elf64_Ehdr))
    return invalidArgument("the host library is ", size, " bytes, too small for an ELF file");
  Elf64_Ehdr h;
  std::memcpy(&h, data, sizeof(h));
  if (std::memcmp(h.e_ident, ELFMAG, SELFMAG) != 0)
    return invalidArgument("the host library is not an ELF file");
  if (h.e_ident[EI_CLASS] != ELFCLASS64 || h.e_ident[EI_DATA] != ELFDATA2LSB)
    return invalidArgument("the host library is not a 64-bit little-endian ELF file");
  if (h.e_type != ET_DYN) return invalidArgument("the host library is not a shared object");
#if defined(__x86_64__)
  if (h.e_machine != EM_X86_64)
    return invalidArgument("the host library was built for ELF machine ", h.e_machine,
                           ", not x86-64");
#elif defined(__aarch64__)
  if (h.e_machine != EM_AARCH64)
    return invalidArgument("the host library was built for ELF machine ", h.e_machine,
                           ", not AArch64");
#endif
  return Status();
}

Status checkUniqueNames(const std::vector<std::string_view>& names, std::string_view what) {
  std::set<std::string_view> seen;
  for (std::string_view n : names)
    if (!seen.insert(n).second) return invalidArgument("two ", what, " are named '", n, "'");
  return Status();
}

}  // namespace ral::module_checks
