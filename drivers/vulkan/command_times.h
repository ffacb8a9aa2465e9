// CommandTimes: the device time of the commands of one command buffer, for traces. Each command
// recorded while a trace is active is bracketed by two timestamps (written once everything
// before them in the buffer completed, so the pair spans exactly that command: the stream puts a
// full barrier between commands); once the buffer completed, the timestamps are read back,
// placed on the host's clock and recorded as spans on the device queue's trace track.
//
// Owned by the command stream's slot that records the buffer; used under the stream's lock.
#ifndef RAL_DRIVERS_VULKAN_COMMAND_TIMES_H_
#define RAL_DRIVERS_VULKAN_COMMAND_TIMES_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "drivers/vulkan/vulkan_device.h"
#include "ral/status.h"

namespace ral::vulkan {

class CommandTimes {
 public:
  // Room for `max_commands` commands per buffer. Unsupported where the device cannot time them.
  static StatusOr<std::unique_ptr<CommandTimes>> create(std::shared_ptr<VulkanDevice> device,
                                                        uint32_t max_commands);
  ~CommandTimes();
  CommandTimes(const CommandTimes&) = delete;
  CommandTimes& operator=(const CommandTimes&) = delete;

  // Records the reset of the queries at the start of `cmd` (a buffer being recorded afresh).
  void begin(VkCommandBuffer cmd);
  // Around one command: a timestamp before it, then one after it with what it was (`name`, and
  // `args` as JSON object members). False when the buffer has no room left (nothing written).
  bool before(VkCommandBuffer cmd);
  void after(VkCommandBuffer cmd, std::string name, std::string args);
  // The buffer completed: records the spans of its timed commands and forgets them.
  void publish();
  bool empty() const { return commands_.empty(); }

 private:
  CommandTimes(std::shared_ptr<VulkanDevice> device, VkQueryPool pool, uint32_t max_commands)
      : device_(std::move(device)), pool_(pool), max_commands_(max_commands) {}

  struct Timed {
    std::string name, args;
  };
  std::shared_ptr<VulkanDevice> device_;
  VkQueryPool pool_;
  uint32_t max_commands_;
  std::vector<Timed> commands_;  // command i uses queries 2i and 2i+1
};

}  // namespace ral::vulkan

#endif  // RAL_DRIVERS_VULKAN_COMMAND_TIMES_H_
