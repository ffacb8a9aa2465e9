// Semantic checks of module contents, shared by the builder (refuse to write a bad module) and
// the loader (refuse to use one). Each returns an error naming the offending part.
#ifndef RAL_MODULE_CHECKS_H_
#define RAL_MODULE_CHECKS_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "ral/driver.h"
#include "ral/dtype.h"
#include "ral/module_spec.h"
#include "ral/status.h"

namespace ral::module_checks {

// `what` names the part in messages, e.g. "input 1".
Status checkSignature(const TensorSignature& sig, std::string_view what);
// Raw enum values as stored in a file.
Status checkDType(uint8_t value, std::string_view what);
Status checkDevice(uint8_t value, std::string_view what);
Status checkFormat(uint8_t value, std::string_view what);
// A C identifier: the entry symbol.
Status checkSymbol(std::string_view symbol, std::string_view what);
// target___device___inputs___outputs.
Status checkImportName(std::string_view name, size_t index);
Status checkConstant(std::string_view name, DType dtype, const std::vector<int64_t>& shape,
                     size_t bytes);
Status checkExecutable(std::string_view name, size_t bytes, const std::vector<EntryPoint>& entries);
// The per-architecture variants of executable `name` (`targets[i]` holds `sizes[i]` bytes), when
// it has any: then its own data is empty (`data_bytes`), it is device code, and each target is a
// unique, non-empty architecture name (letters, digits, '_', '-', '.', '+', ':'; at most 64).
Status checkExecutableVariants(std::string_view name, ExecutableFormat format, size_t data_bytes,
                               const std::vector<std::string_view>& targets,
                               const std::vector<size_t>& sizes);
// An ELF shared object for this machine, by its header.
Status checkHostLibraryHeader(const void* data, size_t size);
// Host library variants: unique target names (the executable-variant rules), each an ELF shared
// object for this machine (`datas[i]` of `sizes[i]` bytes).
Status checkHostVariants(const std::vector<std::string_view>& targets,
                         const std::vector<const void*>& datas, const std::vector<size_t>& sizes);
// Names of executables and constants are unique.
Status checkUniqueNames(const std::vector<std::string_view>& names, std::string_view what);

// numel of a static shape, or an error on negative dims or overflow.
StatusOr<uint64_t> staticNumel(const std::vector<int64_t>& shape, std::string_view what);

}  // namespace ral::module_checks

#endif  // RAL_MODULE_CHECKS_H_
