// CommandStream: records a stream's work into command buffers and hands sealed batches to the
// Scheduler (submission.h). Work is batched: a command buffer is submitted when the stream is
// synchronised, signals a semaphore, needs a result on the host, or reaches
// kMaxCommandsPerBatch commands. Every command is preceded by a full memory barrier, so a stream
// behaves like an in-order queue; each batch ends with a barrier that makes its writes visible
// to the host. Command buffers (and, without push descriptors, descriptor pools) are reused once
// the stream's timeline passes the batch that used them.
//
// While a trace records, each command's device time is measured (command_times.h) and recorded
// on the device queue's track once its batch completed (read back when the slot is reused, when
// the stream is synchronized or destroyed, and when the trace stops).
//
// VulkanStream is the ral::Stream handed to users; the driver's default stream is a
// CommandStream it owns.
#ifndef RAL_DRIVERS_VULKAN_VULKAN_STREAM_H_
#define RAL_DRIVERS_VULKAN_VULKAN_STREAM_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "drivers/vulkan/command_times.h"
#include "drivers/vulkan/submission.h"
#include "drivers/vulkan/timeline.h"
#include "drivers/vulkan/vulkan_device.h"
#include "drivers/vulkan/vulkan_executable.h"
#include "ral/driver.h"
#include "ral/status.h"

namespace ral::vulkan {

// One resolved buffer binding of a dispatch.
struct BoundBuffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;
  VkDeviceSize range = 0;
};

class CommandStream {
 public:
  static constexpr int kMaxCommandsPerBatch = 256;

  static StatusOr<std::shared_ptr<CommandStream>> create(std::shared_ptr<VulkanDevice> device,
                                                         std::shared_ptr<Scheduler> scheduler);
  ~CommandStream();
  CommandStream(const CommandStream&) = delete;
  CommandStream& operator=(const CommandStream&) = delete;

  // Recording needs the stream's lock; the *Locked methods expect it held.
  std::mutex& mutex() { return mutex_; }

  Status dispatchLocked(const VulkanExecutable& exe, uint32_t entry, const Dim3& grid,
                        const BoundBuffer* buffers, size_t buffer_count, const void* push,
                        uint32_t push_size);
  Status copyLocked(VkBuffer src, VkDeviceSize src_offset, VkBuffer dst, VkDeviceSize dst_offset,
                    VkDeviceSize bytes);
  // `offset` and `bytes` multiples of 4.
  Status fillLocked(VkBuffer dst, VkDeviceSize offset, VkDeviceSize bytes, uint32_t pattern);
  // Up to 65536 bytes (a multiple of 4) written from the command buffer itself.
  Status updateLocked(VkBuffer dst, VkDeviceSize offset, const void* data, VkDeviceSize bytes);
  Status waitLocked(SemaphoreOp op);
  Status signalLocked(SemaphoreOp op);
  // Submits what was recorded (if anything) and returns the value that marks its completion.
  StatusOr<uint64_t> flushLocked();
  // The timeline value of the batch now being recorded: memory used by recorded commands may be
  // reused once the timeline reaches it.
  uint64_t openValueLocked() const { return sealed_ + 1; }
  // True when nothing is recorded and every sealed batch has completed.
  bool idleLocked();

  // Flushes and waits for everything recorded so far; reports a failure of the stream.
  Status synchronize(Timeout timeout = kInfiniteTimeout);
  // What a free of memory used by this stream's recorded work must wait for (empty if idle).
  void appendFenceLocked(UseFence* fence);

  const std::shared_ptr<StreamQueue>& queue() const { return queue_; }
  const std::shared_ptr<Timeline>& timeline() const { return queue_->timeline; }

 private:
  struct Slot {
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    VkDescriptorPool pool = VK_NULL_HANDLE;  // without push descriptors
    uint64_t value = 0;
    std::shared_ptr<CommandTimes> times;  // created at the first traced recording
    bool timed = false;                   // the buffer being recorded is timed
  };
  CommandStream(std::shared_ptr<VulkanDevice> device, std::shared_ptr<Scheduler> scheduler)
      : device_(std::move(device)), scheduler_(std::move(scheduler)) {}
  // Opens a command buffer if needed and records the barrier that orders the next command.
  StatusOr<VkCommandBuffer> beginCommandLocked();
  Status endCommandLocked();
  // Around a command of the open buffer: whether it is timed, then what it was.
  bool timeBeforeLocked(VkCommandBuffer cmd);
  void timeAfterLocked(VkCommandBuffer cmd, bool timed, std::string name, std::string args);
  // Records the device time of the commands of completed batches.
  void publishTimesLocked();
  StatusOr<Slot> acquireSlotLocked();
  StatusOr<VkDescriptorSet> allocateSetLocked(const VulkanExecutable& exe);

  std::shared_ptr<VulkanDevice> device_;
  std::shared_ptr<Scheduler> scheduler_;
  std::shared_ptr<StreamQueue> queue_;
  std::mutex mutex_;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  bool open_ = false;
  Slot current_;
  int commands_ = 0;
  VkPipeline bound_pipeline_ = VK_NULL_HANDLE;
  std::vector<SemaphoreOp> waits_, signals_;
  uint64_t sealed_ = 0;
  std::deque<Slot> used_;  // sealed, in value order
  std::vector<Slot> all_slots_;
};

// The ral::Stream of the Vulkan driver.
class VulkanStream final : public Stream {
 public:
  VulkanStream(std::shared_ptr<CommandStream> stream, const void* owner)
      : stream_(std::move(stream)), owner_(owner) {}
  ~VulkanStream() override;
  CommandStream& commands() const { return *stream_; }
  const std::shared_ptr<CommandStream>& shared() const { return stream_; }
  const void* owner() const { return owner_; }

 private:
  std::shared_ptr<CommandStream> stream_;
  const void* owner_;
};

}  // namespace ral::vulkan

#endif  // RAL_DRIVERS_VULKAN_VULKAN_STREAM_H_
