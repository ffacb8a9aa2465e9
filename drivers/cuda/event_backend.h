// EventBackend: the few device operations the timeline-semaphore machinery needs:
// binary events that a stream records and other streams or the host wait for, and host functions
// that run when a stream reaches them. The CUDA driver implements it over CUevent/CUstream; the
// unit tests implement it in-process, so the bookkeeping is tested without a GPU.
//
// Contract (CUDA's): a stream wait or query refers to the event's latest record at the time of
// the call; a host function must not call back into the backend (CUDA returns
// CUDA_ERROR_NOT_PERMITTED there).
#ifndef RAL_DRIVERS_CUDA_EVENT_BACKEND_H_
#define RAL_DRIVERS_CUDA_EVENT_BACKEND_H_

#include "ral/status.h"

namespace ral::cuda {

using BackendEvent = void*;   // CUevent
using BackendStream = void*;  // CUstream
using HostFn = void (*)(void* user);

class EventBackend {
 public:
  virtual ~EventBackend();
  virtual StatusOr<BackendEvent> createEvent() = 0;
  virtual void destroyEvent(BackendEvent event) = 0;
  virtual Status recordEvent(BackendEvent event, BackendStream stream) = 0;
  // True once the work captured by the latest record has completed (or nothing was recorded).
  virtual StatusOr<bool> queryEvent(BackendEvent event) = 0;
  virtual Status synchronizeEvent(BackendEvent event) = 0;
  // Work queued on `stream` after this call waits for the event's latest record.
  virtual Status streamWaitEvent(BackendStream stream, BackendEvent event) = 0;
  // Runs fn(user) on a backend thread once `stream` reaches this point.
  virtual Status launchHostFunc(BackendStream stream, HostFn fn, void* user) = 0;
};

}  // namespace ral::cuda

#endif  // RAL_DRIVERS_CUDA_EVENT_BACKEND_H_
