// oneDNN's thread count on the CPU: oneDNN (Debian's build) runs on OpenMP, whose thread count is
// per calling thread. Kernels that call oneDNN (ral_conv, ral_gemm's f32 path) set it to the CPU
// driver's thread count for the duration of a call, so RAL never oversubscribes the machine.
// Thread-safety: OmpThreads touches only the calling thread's OpenMP state.
#ifndef RAL_KERNELS_COMMON_OMP_THREADS_H_
#define RAL_KERNELS_COMMON_OMP_THREADS_H_

#include "oneapi/dnnl/dnnl_config.h"

#if DNNL_CPU_THREADING_RUNTIME == DNNL_RUNTIME_OMP
// From the runtime oneDNN uses (libgomp). Declared here because clang builds (the fuzzer's)
// have no <omp.h>.
extern "C" {
int omp_get_max_threads(void);
void omp_set_num_threads(int);
}
#endif

#if defined(__SANITIZE_THREAD__)
#define RAL_OMP_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define RAL_OMP_UNDER_TSAN 1
#endif
#endif

namespace ral::kernels::cpu {

// Sets the calling thread's OpenMP thread count for the scope of one call.
class OmpThreads {
 public:
  explicit OmpThreads(int n) {
#if DNNL_CPU_THREADING_RUNTIME == DNNL_RUNTIME_OMP
#ifdef RAL_OMP_UNDER_TSAN
    // ThreadSanitizer cannot see libgomp's barriers (it is not instrumented) and would report
    // every hand-off to a worker as a race: oneDNN runs on the calling thread only.
    n = 1;
#endif
    previous_ = omp_get_max_threads();
    if (previous_ != n) omp_set_num_threads(n);
#else
    (void)n;
#endif
  }
  ~OmpThreads() {
#if DNNL_CPU_THREADING_RUNTIME == DNNL_RUNTIME_OMP
    if (previous_ != omp_get_max_threads()) omp_set_num_threads(previous_);
#endif
  }
  OmpThreads(const OmpThreads&) = delete;
  OmpThreads& operator=(const OmpThreads&) = delete;

 private:
  int previous_ = 0;
};

}  // namespace ral::kernels::cpu

#endif  // RAL_KERNELS_COMMON_OMP_THREADS_H_
