#include "drivers/hsa/hsa_signal_pool.h"

namespace ral::hsa {

SignalPool::~SignalPool() {
  for (hsa_signal_t s : free_) (void)lib_.symbols().hsa_signal_destroy(s);
}

StatusOr<hsa_signal_t> SignalPool::acquire() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!free_.empty()) {
      hsa_signal_t s = free_.back();
      free_.pop_back();
      lib_.symbols().hsa_signal_store_screlease(s, 1);
      return s;
    }
  }
  hsa_signal_t s{0};
  RAL_RETURN_IF_ERROR(RAL_HSA_CALL(lib_, hsa_signal_create, 1, 0, nullptr, &s));
  return s;
}

void SignalPool::release(hsa_signal_t signal) {
  std::lock_guard<std::mutex> lock(mutex_);
  free_.push_back(signal);
}

}  // namespace ral::hsa
