// Loading a module's host shared object straight from memory: the bytes go into
// an anonymous memfd and are dlopen'ed through /proc/self/fd/N, so nothing touches the file
// system and nothing is left behind.
#ifndef RAL_HOST_LIBRARY_H_
#define RAL_HOST_LIBRARY_H_

#include <cstddef>
#include <string_view>

#include "ral/status.h"

namespace ral::internal {

// A dlopen handle (RTLD_NOW | RTLD_LOCAL). Before the first load, libral's own symbols are made
// globally visible, so a module that calls ral_api_call resolves it even when the host opened
// libral with RTLD_LOCAL (as Python extensions do).
StatusOr<void*> dlopenFromMemory(const void* data, size_t size, std::string_view label);

// Idempotent; OK when libral's symbols are global (also when the attempt was not needed).
Status makeRalSymbolsGlobal();

}  // namespace ral::internal

#endif  // RAL_HOST_LIBRARY_H_
