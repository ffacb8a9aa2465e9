// HsaStream: a RAL stream on one HSA user-mode queue (AQL packets), plus the copies the runtime's
// DMA engines run for it, all in submission order:
//  - every queued operation has a completion signal (from the device's SignalPool) and is kept
//    until it completes (with what it must release then: kernarg slots, staging memory);
//  - packets are written as AQL demands: reserve a slot (hsa_queue_add_write_index_screlease),
//    wait while the ring is full, fill the body, store the header last with a release atomic,
//    ring the doorbell. Every packet has the barrier bit, so the queue runs them in order;
//  - a copy depends on the previous operation's completion signal; the packet after a copy is
//    preceded by a barrier-AND packet on the copy's completion signal;
//  - a semaphore wait is a barrier-AND packet on a WaitPoint; a semaphore signal is a barrier
//    packet whose completion signal runs HsaSemaphore::signal on the runtime's signal-handler
//    thread (hsa_amd_signal_async_handler);
//  - a queue error (the runtime's callback, e.g. a barrier on a failed semaphore) makes the
//    stream fail: its pending semaphore signals fail with the same error, synchronize() reports
//    it once, and the stream continues on a fresh queue.
// Destroying a stream waits for its work; waits on semaphores that were never signalled are
// cancelled first. Every member function is thread-safe (one mutex per stream).
#ifndef RAL_DRIVERS_HSA_HSA_STREAM_H_
#define RAL_DRIVERS_HSA_HSA_STREAM_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>

#include "drivers/hsa/hsa_device.h"
#include "drivers/hsa/hsa_semaphore.h"
#include "ral/driver.h"
#include "ral/status.h"

namespace ral::hsa {

// The fields of one kernel-dispatch packet.
struct KernelDispatch {
  uint64_t kernel_object = 0;
  uint16_t dimensions = 1;
  uint16_t workgroup_size[3] = {1, 1, 1};
  uint32_t grid_size[3] = {1, 1, 1};  // work-items
  uint32_t group_segment_size = 0;
  uint32_t private_segment_size = 0;
  void* kernarg = nullptr;
};

class HsaStream final : public Stream {
 public:
  // `owner` identifies the driver that created the stream.
  static StatusOr<std::unique_ptr<HsaStream>> create(std::shared_ptr<HsaDevice> device,
                                                     const void* owner);
  ~HsaStream() override;
  const void* owner() const { return owner_; }

  // `release` runs once the operation completed (or the stream dropped it after a failure).
  Status dispatch(const KernelDispatch& packet, std::function<void()> release);
  Status copy(void* dst, hsa_agent_t dst_agent, const void* src, hsa_agent_t src_agent,
              size_t bytes, std::function<void()> release);
  Status wait(std::shared_ptr<WaitPoint> point);
  // On a failed stream the semaphore fails too (the signal can never happen).
  Status signal(std::shared_ptr<HsaSemaphore> semaphore, uint64_t value);
  // Waits for everything queued so far; returns the stream's failure once, if it failed.
  Status synchronize();

 private:
  struct Handler;
  struct Op {
    hsa_signal_t done{0};
    std::function<void()> release;
    std::shared_ptr<WaitPoint> wait;
    std::shared_ptr<Handler> handler;  // semaphore signals
    uint64_t seq = 0;                  // 1, 2, ... in submission order
  };

  HsaStream(std::shared_ptr<HsaDevice> device, const void* owner);
  static void onQueueError(hsa_status_t status, hsa_queue_t* source, void* data);
  static bool onSignalled(hsa_signal_value_t value, void* arg);
  Status createQueue();
  void fail(Status status);
  Status usable() const;
  // With mutex_ held: writes one packet (header word last) and rings the doorbell.
  Status writePacket(const void* packet, uint32_t header_word);
  Status writeBarrier(hsa_signal_t dep0, hsa_signal_t dep1, hsa_signal_t completion);
  // With mutex_ held: a barrier-AND on the last copy when the queue has not yet ordered it.
  Status orderAfterCopy();
  StatusOr<hsa_signal_t> newOp();
  void pushOp(Op op, bool is_copy);
  enum class Retire {
    kCompleted,      // completed operations whose successor completed too
    kCompletedTail,  // every completed operation (nothing is queued behind the last one)
    kEverything,     // all of them (the queue is gone)
  };
  void retireLocked(Retire mode);

  const std::shared_ptr<HsaDevice> device_;
  const void* const owner_;
  std::atomic<hsa_queue_t*> queue_{nullptr};
  std::atomic<bool> broken_{false};
  mutable std::mutex mutex_;
  std::condition_variable handled_;  // a semaphore-signal handler ran
  std::deque<Op> pending_;
  hsa_signal_t last_done_{0};  // completion of the newest pending operation (0: none)
  hsa_signal_t copy_done_{0};  // the newest copy, when no packet was ordered after it yet
  Status failure_;             // not yet reported by synchronize()
  uint64_t next_seq_ = 0;      // the newest operation's seq
};

}  // namespace ral::hsa

#endif  // RAL_DRIVERS_HSA_HSA_STREAM_H_
