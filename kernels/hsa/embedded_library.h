// The HSA kernel library's code objects, one per architecture of RAL_HSA_ARCHS, embedded as
// read-only data at build time (embedded_library.cc includes the generated list).
#ifndef RAL_KERNELS_HSA_EMBEDDED_LIBRARY_H_
#define RAL_KERNELS_HSA_EMBEDDED_LIBRARY_H_

#include <cstddef>

namespace ral::kernels::hsa {

struct EmbeddedCodeObject {
  const char* arch;
  const unsigned char* begin;
  const unsigned char* end;
};

size_t embeddedLibraryCount();
const EmbeddedCodeObject& embeddedLibrary(size_t i);

}  // namespace ral::kernels::hsa

#endif  // RAL_KERNELS_HSA_EMBEDDED_LIBRARY_H_
