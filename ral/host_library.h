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

// The address of `symbol` defined by `library` itself (not by a library it depends on) with the
// ELF type `kind` wants: a function (STT_FUNC, STT_GNU_IFUNC) or data (STT_OBJECT). A module
// naming a data symbol as its entry would otherwise be "called" and crash the host. `what` names
// the symbol's role in messages ("the entry function").
enum class SymbolKind { kFunction, kData };
StatusOr<void*> findSymbol(void* library, const char* symbol, SymbolKind kind,
                           std::string_view what);

// Idempotent; OK when libral's symbols are global (also when the attempt was not needed).
Status makeRalSymbolsGlobal();

}  // namespace ral::internal

#endif  // RAL_HOST_LIBRARY_H_
