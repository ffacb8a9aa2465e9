// Device memory for one kernel call's temporaries on a GPU device, written for every GPU kernel
// (the GPU library's, cuBLAS's and cuDNN's callers).
//
// The object owns the allocation and releases it when it goes out of scope, once the work queued
// on its stream before the release no longer needs it: with a stream-ordered free where the
// driver has one (CUDA's CudaQueueService, so the release never waits), else by waiting for the
// stream if the caller said a launch using the memory was queued (launched()). One object per
// call; not thread-safe.
#ifndef RAL_KERNELS_COMMON_DEVICE_SCRATCH_H_
#define RAL_KERNELS_COMMON_DEVICE_SCRATCH_H_

#include <cstddef>

#include "ral/driver.h"
#include "ral/status.h"

namespace ral::kernels {

class DeviceScratch {
 public:
  // `driver` and `stream` (nullptr: the driver's default stream) must outlive the object.
  DeviceScratch(Driver* driver, Stream* stream) : driver_(driver), stream_(stream) {}
  DeviceScratch(const DeviceScratch&) = delete;
  DeviceScratch& operator=(const DeviceScratch&) = delete;
  ~DeviceScratch();

  // Allocates `bytes` (called once).
  Status allocate(size_t bytes);
  char* get() const { return static_cast<char*>(ptr_); }
  // Work that uses the memory was queued on the stream.
  void launched() { launched_ = true; }

 private:
  Driver* driver_;
  Stream* stream_;
  void* ptr_ = nullptr;
  bool stream_ordered_ = false;
  bool launched_ = false;
};

}  // namespace ral::kernels

#endif  // RAL_KERNELS_COMMON_DEVICE_SCRATCH_H_
