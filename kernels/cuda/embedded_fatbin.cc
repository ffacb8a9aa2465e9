// The fatbin built from device_kernels.cu, embedded as read-only data.
#include "kernels/cuda/embedded_fatbin.h"

#include "ral_cuda_fatbin_md5.h"  // generated; changes whenever the fatbin does

#define RAL_STRINGIFY_INNER_(x) #x
#define RAL_STRINGIFY_(x) RAL_STRINGIFY_INNER_(x)

// cuModuleLoadData wants the image 8-byte aligned at least.
__asm__(".section .rodata\n"
        ".balign 64\n"
        ".hidden ral_cuda_fatbin_begin\n"
        ".hidden ral_cuda_fatbin_end\n"
        "ral_cuda_fatbin_begin:\n"
        ".incbin \"" RAL_STRINGIFY_(RAL_CUDA_FATBIN_PATH) "\"\n"
        "ral_cuda_fatbin_end:\n"
        ".previous\n");

extern "C" const unsigned char ral_cuda_fatbin_begin[];
extern "C" const unsigned char ral_cuda_fatbin_end[];

namespace ral::kernels::cuda {

const char* embeddedFatbinMd5() { return RAL_CUDA_FATBIN_MD5; }

const void* embeddedFatbin() { return ral_cuda_fatbin_begin; }

size_t embeddedFatbinSize() {
  return static_cast<size_t>(ral_cuda_fatbin_end - ral_cuda_fatbin_begin);
}

}  // namespace ral::kernels::cuda
