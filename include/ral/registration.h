// Explicit registration of RAL's built-in components.
//
// Every component registers itself when its object files are loaded: RAL_API registrations of
// kernels and host functions, RAL_REGISTER_DRIVER of drivers. In libral.so that always happens.
// A program linking the static archive (libral_static.a) gets only the object files it refers
// to, so static registrations of kernels and drivers nothing names would be dropped by the
// linker. Calling the function of a component names it: its object files are linked in and
// their registrations have run by the time main() starts; the function then returns the
// registry's health (OK, or the conflicting registrations seen so far).
//
//   int main() {
//     if (!ral::registerAll().ok()) return 1;  // or only what the program uses:
//     // ral::registerCpuDriver(); ral::registerCpuKernels(); ral::registerHostApi();
//   }
//
// A function exists only when its component was built (the Vulkan and CUDA ones need
// RAL_ENABLE_VULKAN / RAL_ENABLE_CUDA); registerAll() covers whatever was. All are thread-safe
// and may be called any number of times.
#ifndef RAL_REGISTRATION_H_
#define RAL_REGISTRATION_H_

#include "ral/status.h"

namespace ral {

// The host protocol every compiled module imports (ral_recv_input, ral_send_output, ral_alloc,
// ral_dealloc, ral_signal_error).
Status registerHostApi();

Status registerCpuDriver();
Status registerCpuKernels();
Status registerVulkanDriver();
Status registerVulkanKernels();
Status registerCudaDriver();
Status registerCudaKernels();
Status registerHsaDriver();
Status registerHsaKernels();

// Every component built into this library.
Status registerAll();

namespace internal {
// Touches an anchor so the linker keeps the object file defining it.
inline void keepLinked(const volatile int& anchor) { static_cast<void>(static_cast<int>(anchor)); }
// The health of the global registry (what every register function returns).
Status registrationHealth();
}  // namespace internal

}  // namespace ral

// In a source file whose static registrations must be linkable on their own:
// RAL_REGISTRATION_ANCHOR(kernels_gemm_cpu) at namespace scope, outside any namespace.
#define RAL_REGISTRATION_ANCHOR(name)              \
  extern "C" {                                     \
  volatile int ral_registration_anchor_##name = 0; \
  }                                                \
  static_assert(true)
// In the register function of the component, outside any namespace:
// RAL_DECLARE_REGISTRATION_ANCHOR(name), then RAL_KEEP_LINKED(name) inside the function.
#define RAL_DECLARE_REGISTRATION_ANCHOR(name) extern "C" volatile int ral_registration_anchor_##name
#define RAL_KEEP_LINKED(name) ::ral::internal::keepLinked(ral_registration_anchor_##name)

#endif  // RAL_REGISTRATION_H_
