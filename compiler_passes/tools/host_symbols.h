// What a module's host library may leave undefined: RAL reaches modules only through the import
// table (filled by the loader) or ral_api_call (by name), and the library is linked against libc
// and libm alone. Anything else would make a module that compiles but never loads.
#ifndef RAL_COMPILER_PASSES_TOOLS_HOST_SYMBOLS_H_
#define RAL_COMPILER_PASSES_TOOLS_HOST_SYMBOLS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace ral {
namespace compiler {

// The undefined, non-weak dynamic symbols of a shared object (ELF). False with `error` set when
// the bytes are not one.
bool undefinedSymbols(const std::vector<uint8_t>& shared_object, std::vector<std::string>* names,
                      std::string* error);

// True for the symbols a host library may import: the libc memory, heap and libm math functions
// LLVM's and MLIR's lowerings call, and ral_api_call when `by_name`.
bool isAllowedHostSymbol(const std::string& name, bool by_name);

}  // namespace compiler
}  // namespace ral

#endif  // RAL_COMPILER_PASSES_TOOLS_HOST_SYMBOLS_H_
