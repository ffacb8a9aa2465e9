// See command_times.h.
#include "drivers/vulkan/command_times.h"

#include <utility>

#include "ral/trace.h"

namespace ral::vulkan {

StatusOr<std::unique_ptr<CommandTimes>> CommandTimes::create(std::shared_ptr<VulkanDevice> device,
                                                             uint32_t max_commands) {
  if (!device->timesCommands())
    return unsupported("vulkan: '", device->name(), "' cannot time its commands");
  VkQueryPoolCreateInfo info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
  info.queryType = VK_QUERY_TYPE_TIMESTAMP;
  info.queryCount = 2 * max_commands;
  VkQueryPool pool = VK_NULL_HANDLE;
  RAL_VK_RETURN_IF_ERROR(device->api().vkCreateQueryPool(device->device(), &info, nullptr, &pool),
                         "vkCreateQueryPool");
  return std::unique_ptr<CommandTimes>(new CommandTimes(std::move(device), pool, max_commands));
}

CommandTimes::~CommandTimes() {
  device_->api().vkDestroyQueryPool(device_->device(), pool_, nullptr);
}

void CommandTimes::begin(VkCommandBuffer cmd) {
  commands_.clear();
  device_->api().vkCmdResetQueryPool(cmd, pool_, 0, 2 * max_commands_);
}

bool CommandTimes::before(VkCommandBuffer cmd) {
  if (commands_.size() >= max_commands_) return false;
  const auto query = static_cast<uint32_t>(2 * commands_.size());
  device_->api().vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool_, query);
  return true;
}

void CommandTimes::after(VkCommandBuffer cmd, std::string name, std::string args) {
  const auto query = static_cast<uint32_t>(2 * commands_.size() + 1);
  device_->api().vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool_, query);
  commands_.push_back({std::move(name), std::move(args)});
}

void CommandTimes::publish() {
  if (commands_.empty()) return;
  std::vector<uint64_t> stamps(2 * commands_.size());
  const VkResult r = device_->api().vkGetQueryPoolResults(
      device_->device(), pool_, 0, static_cast<uint32_t>(stamps.size()),
      stamps.size() * sizeof(uint64_t), stamps.data(), sizeof(uint64_t), VK_QUERY_RESULT_64_BIT);
  auto offset = device_->hostMinusDeviceNs();
  if (r == VK_SUCCESS && offset.ok() && trace::active()) {
    for (size_t i = 0; i < commands_.size(); ++i)
      trace::recordOn(device_->traceTrack(), "device", std::move(commands_[i].name),
                      std::move(commands_[i].args), device_->hostTimeNs(stamps[2 * i], *offset),
                      device_->hostTimeNs(stamps[2 * i + 1], *offset));
  }
  commands_.clear();
}

}  // namespace ral::vulkan
