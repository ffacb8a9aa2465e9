// SignalPool: recycles HSA signals (creating one is a runtime call, and every queued operation
// needs a completion signal). acquire() hands out a signal holding 1; release() takes it back,
// whatever value it holds. The pool owns the free signals and destroys them with itself; callers
// own what they acquired until they release it. Thread-safe.
#ifndef RAL_DRIVERS_HSA_HSA_SIGNAL_POOL_H_
#define RAL_DRIVERS_HSA_HSA_SIGNAL_POOL_H_

#include <mutex>
#include <vector>

#include "drivers/hsa/hsa_library.h"
#include "ral/status.h"

namespace ral::hsa {

class SignalPool {
 public:
  explicit SignalPool(const HsaLibrary& lib) : lib_(lib) {}
  ~SignalPool();
  SignalPool(const SignalPool&) = delete;
  SignalPool& operator=(const SignalPool&) = delete;

  StatusOr<hsa_signal_t> acquire();
  void release(hsa_signal_t signal);

 private:
  const HsaLibrary& lib_;
  std::mutex mutex_;
  std::vector<hsa_signal_t> free_;
};

}  // namespace ral::hsa

#endif  // RAL_DRIVERS_HSA_HSA_SIGNAL_POOL_H_
