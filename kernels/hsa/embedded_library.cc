// The HSA kernel library's code objects as read-only data. embedded_library.inc (written by
// kernels/hsa/CMakeLists.txt) holds, per architecture, RAL_HSA_CODE_OBJECT(symbol, arch, path).
// Page-aligned, as code objects the HSA runtime reads from memory are at best.
#include "kernels/hsa/embedded_library.h"

#define RAL_HSA_CODE_OBJECT(sym, arch, path)    \
  __asm__(                                      \
      ".section .rodata\n"                      \
      ".balign 4096\n"                          \
      ".hidden " #sym                           \
      "_begin\n"                                \
      ".hidden " #sym "_end\n" #sym             \
      "_begin:\n"                               \
      ".incbin \"" path "\"\n" #sym             \
      "_end:\n"                                 \
      ".previous\n");                           \
  extern "C" const unsigned char sym##_begin[]; \
  extern "C" const unsigned char sym##_end[];
#include "embedded_library.inc"
#undef RAL_HSA_CODE_OBJECT

namespace ral::kernels::hsa {
namespace {

const EmbeddedCodeObject kLibrary[] = {
#define RAL_HSA_CODE_OBJECT(sym, arch, path) {arch, sym##_begin, sym##_end},
#include "embedded_library.inc"
#undef RAL_HSA_CODE_OBJECT
};

}  // namespace

size_t embeddedLibraryCount() { return sizeof(kLibrary) / sizeof(kLibrary[0]); }

const EmbeddedCodeObject& embeddedLibrary(size_t i) { return kLibrary[i]; }

}  // namespace ral::kernels::hsa
