#include "kernels/common/device_scratch.h"

#include "ral/driver_services.h"

namespace ral::kernels {

DeviceScratch::~DeviceScratch() {
  if (ptr_ == nullptr) return;
  // Without stream-ordered frees the allocator may hand the memory out again at once.
  if (launched_ && !stream_ordered_) (void)driver_->synchronize(stream_);
  (void)driver_->deallocate(ptr_);
}

Status DeviceScratch::allocate(size_t bytes) {
  if (ptr_ != nullptr) return internalError("DeviceScratch::allocate called twice");
  if (auto* queue = driver_->service<CudaQueueService>()) {
    RAL_ASSIGN_OR_RETURN(ptr_, queue->allocateOn(bytes, stream_));
    stream_ordered_ = true;
    return Status();
  }
  RAL_ASSIGN_OR_RETURN(ptr_, driver_->allocate(bytes));
  return Status();
}

}  // namespace ral::kernels
