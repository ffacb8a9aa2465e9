#include "compiler_passes/tools/host_symbols.h"

#include <set>

#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

namespace ral {
namespace compiler {

bool undefinedSymbols(const std::vector<uint8_t>& shared_object, std::vector<std::string>* names,
                      std::string* error) {
  llvm::MemoryBufferRef buffer(
      llvm::StringRef(reinterpret_cast<const char*>(shared_object.data()), shared_object.size()),
      "host library");
  auto object = llvm::object::ObjectFile::createObjectFile(buffer);
  if (!object) {
    *error = llvm::toString(object.takeError());
    return false;
  }
  auto* elf = llvm::dyn_cast<llvm::object::ELFObjectFileBase>(object->get());
  if (!elf) {
    *error = "the host library is not an ELF shared object";
    return false;
  }
  for (const llvm::object::ELFSymbolRef& symbol : elf->getDynamicSymbolIterators()) {
    auto flags = symbol.getFlags();
    if (!flags) {
      *error = llvm::toString(flags.takeError());
      return false;
    }
    // Weak references (__cxa_finalize, __gmon_start__ from the C runtime objects) may stay
    // unresolved.
    if (!(*flags & llvm::object::SymbolRef::SF_Undefined) ||
        (*flags & llvm::object::SymbolRef::SF_Weak))
      continue;
    auto name = symbol.getName();
    if (!name) {
      *error = llvm::toString(name.takeError());
      return false;
    }
    if (!name->empty()) names->push_back(name->str());
  }
  return true;
}

bool isAllowedHostSymbol(const std::string& name, bool by_name) {
  if (by_name && name == "ral_api_call") return true;
  // libc: what LLVM lowers memory intrinsics and large copies to, and the heap MLIR's own
  // lowerings use (an unranked memref returned from a function is copied to malloc'd memory the
  // caller frees; memref.alloc outside the entry may lower to malloc/aligned_alloc).
  static const std::set<std::string> kLibc = {"memcpy",        "memmove", "memset", "memcmp",
                                              "bcmp",          "malloc",  "free",   "calloc",
                                              "aligned_alloc", "realloc", "posix_memalign"};
  if (kLibc.count(name)) return true;
  // libm, double and float forms (LLVM calls them for math intrinsics it does not expand).
  static const std::set<std::string> kLibm = {
      "acos", "acosh",    "asin",      "asinh",  "atan",   "atan2",     "atanh", "cbrt",
      "ceil", "copysign", "cos",       "cosh",   "erf",    "erfc",      "exp",   "exp10",
      "exp2", "expm1",    "fabs",      "fdim",   "floor",  "fma",       "fmax",  "fmin",
      "fmod", "frexp",    "hypot",     "ldexp",  "lgamma", "log",       "log10", "log1p",
      "log2", "logb",     "lrint",     "lround", "modf",   "nearbyint", "pow",   "remainder",
      "rint", "round",    "roundeven", "sin",    "sincos", "sinh",      "sqrt",  "tan",
      "tanh", "tgamma",   "trunc"};
  if (kLibm.count(name)) return true;
  if (!name.empty() && name.back() == 'f' && kLibm.count(name.substr(0, name.size() - 1)))
    return true;
  return false;
}

}  // namespace compiler
}  // namespace ral
