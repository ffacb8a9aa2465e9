#include "drivers/vulkan/vulkan_stream.h"

#include <utility>

#include "ral/trace.h"

namespace ral::vulkan {
namespace {

constexpr VkPipelineStageFlags kWorkStages =
    VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
constexpr uint32_t kSetsPerPool = 256;

}  // namespace

StatusOr<std::shared_ptr<CommandStream>> CommandStream::create(
    std::shared_ptr<VulkanDevice> device, std::shared_ptr<Scheduler> scheduler) {
  std::shared_ptr<CommandStream> s(new CommandStream(std::move(device), std::move(scheduler)));
  RAL_ASSIGN_OR_RETURN(auto timeline, Timeline::create(s->device_, 0));
  s->queue_ = std::make_shared<StreamQueue>(std::move(timeline));
  VkCommandPoolCreateInfo info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  info.queueFamilyIndex = s->device_->queueFamily();
  RAL_VK_RETURN_IF_ERROR(
      s->device_->api().vkCreateCommandPool(s->device_->device(), &info, nullptr, &s->pool_),
      "vkCreateCommandPool");
  if (s->device_->timesCommands()) {
    CommandStream* self = s.get();
    trace::addStopHook(self, [self] {
      std::lock_guard<std::mutex> lock(self->mutex_);
      self->publishTimesLocked();
    });
  }
  return s;
}

CommandStream::~CommandStream() {
  trace::removeStopHook(this);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    (void)flushLocked();
  }
  scheduler_->retire(*queue_);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    publishTimesLocked();
  }
  const auto& api = device_->api();
  for (const Slot& slot : all_slots_)
    if (slot.pool != VK_NULL_HANDLE)
      api.vkDestroyDescriptorPool(device_->device(), slot.pool, nullptr);
  if (pool_ != VK_NULL_HANDLE) api.vkDestroyCommandPool(device_->device(), pool_, nullptr);
}

StatusOr<CommandStream::Slot> CommandStream::acquireSlotLocked() {
  const auto& api = device_->api();
  VkDevice dev = device_->device();
  if (!used_.empty() && queue_->timeline->reached(used_.front().value)) {
    Slot slot = used_.front();
    used_.pop_front();
    if (slot.times) slot.times->publish();
    RAL_VK_RETURN_IF_ERROR(api.vkResetCommandBuffer(slot.cmd, 0), "vkResetCommandBuffer");
    if (slot.pool != VK_NULL_HANDLE)
      RAL_VK_RETURN_IF_ERROR(api.vkResetDescriptorPool(dev, slot.pool, 0), "vkResetDescriptorPool");
    return slot;
  }
  Slot slot;
  VkCommandBufferAllocateInfo info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  info.commandPool = pool_;
  info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  info.commandBufferCount = 1;
  RAL_VK_RETURN_IF_ERROR(api.vkAllocateCommandBuffers(dev, &info, &slot.cmd),
                         "vkAllocateCommandBuffers");
  if (!device_->hasPushDescriptors()) {
    const VkDescriptorPoolSize sizes[] = {
        {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kSetsPerPool * 8},
        {VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, kSetsPerPool * 2},
    };
    VkDescriptorPoolCreateInfo pinfo{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    pinfo.maxSets = kSetsPerPool;
    pinfo.poolSizeCount = 2;
    pinfo.pPoolSizes = sizes;
    const VkResult r = api.vkCreateDescriptorPool(dev, &pinfo, nullptr, &slot.pool);
    if (r != VK_SUCCESS) {
      api.vkFreeCommandBuffers(dev, pool_, 1, &slot.cmd);
      return vkStatus(r, "vkCreateDescriptorPool");
    }
  }
  all_slots_.push_back(slot);
  return slot;
}

StatusOr<VkCommandBuffer> CommandStream::beginCommandLocked() {
  const auto& api = device_->api();
  if (!open_) {
    RAL_ASSIGN_OR_RETURN(current_, acquireSlotLocked());
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    RAL_VK_RETURN_IF_ERROR(api.vkBeginCommandBuffer(current_.cmd, &begin), "vkBeginCommandBuffer");
    open_ = true;
    commands_ = 0;
    bound_pipeline_ = VK_NULL_HANDLE;
    current_.timed = false;
    if (trace::active() && device_->timesCommands()) {
      if (!current_.times) {
        auto times = CommandTimes::create(device_, kMaxCommandsPerBatch);
        if (times.ok()) current_.times = std::move(*times);
      }
      if (current_.times) {
        current_.times->begin(current_.cmd);
        current_.timed = true;
      }
    }
  }
  // In-order stream semantics: the next command sees everything before it, including work of
  // earlier submissions of this stream (a barrier's first scope covers all prior queue work).
  VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                          VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  api.vkCmdPipelineBarrier(current_.cmd, kWorkStages, kWorkStages, 0, 1, &barrier, 0, nullptr, 0,
                           nullptr);
  ++commands_;
  return current_.cmd;
}

bool CommandStream::timeBeforeLocked(VkCommandBuffer cmd) {
  return current_.timed && current_.times->before(cmd);
}

void CommandStream::timeAfterLocked(VkCommandBuffer cmd, bool timed, std::string name,
                                    std::string args) {
  if (timed) current_.times->after(cmd, std::move(name), std::move(args));
}

void CommandStream::publishTimesLocked() {
  for (Slot& slot : used_) {
    if (!queue_->timeline->reached(slot.value)) break;  // in value order
    if (slot.times) slot.times->publish();
  }
}

Status CommandStream::endCommandLocked() {
  const auto& api = device_->api();
  VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  barrier.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  api.vkCmdPipelineBarrier(current_.cmd, kWorkStages, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &barrier, 0,
                           nullptr, 0, nullptr);
  RAL_VK_RETURN_IF_ERROR(api.vkEndCommandBuffer(current_.cmd), "vkEndCommandBuffer");
  return Status();
}

StatusOr<uint64_t> CommandStream::flushLocked() {
  if (!open_ && waits_.empty() && signals_.empty()) return sealed_;
  Batch batch;
  Status ended;
  if (open_) {
    open_ = false;
    ended = endCommandLocked();
    current_.value = sealed_ + 1;
    used_.push_back(current_);
    // A buffer that failed to end cannot run; the batch still consumes its timeline value so
    // whatever waits for it proceeds, and the error goes to the caller.
    if (ended.ok()) batch.cmd = current_.cmd;
  }
  batch.value = ++sealed_;
  batch.waits = std::move(waits_);
  batch.signals = std::move(signals_);
  waits_.clear();
  signals_.clear();
  RAL_RETURN_IF_ERROR(scheduler_->enqueue(queue_, std::move(batch)));
  RAL_RETURN_IF_ERROR(ended);
  return sealed_;
}

StatusOr<VkDescriptorSet> CommandStream::allocateSetLocked(const VulkanExecutable& exe) {
  const auto& api = device_->api();
  VkDescriptorSetLayout layout = exe.setLayout();
  VkDescriptorSetAllocateInfo info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  info.descriptorPool = current_.pool;
  info.descriptorSetCount = 1;
  info.pSetLayouts = &layout;
  VkDescriptorSet set = VK_NULL_HANDLE;
  RAL_VK_RETURN_IF_ERROR(api.vkAllocateDescriptorSets(device_->device(), &info, &set),
                         "vkAllocateDescriptorSets");
  return set;
}

Status CommandStream::dispatchLocked(const VulkanExecutable& exe, uint32_t entry, const Dim3& grid,
                                     const BoundBuffer* buffers, size_t buffer_count,
                                     const void* push, uint32_t push_size) {
  const auto& api = device_->api();
  const auto& bindings = exe.layoutInfo().bindings;
  // A batch's descriptor pool may run out: start the next batch, whose pool is fresh.
  if (open_ && current_.pool != VK_NULL_HANDLE && commands_ >= static_cast<int>(kSetsPerPool)) {
    RAL_RETURN_IF_ERROR(flushLocked());
  }
  RAL_ASSIGN_OR_RETURN(VkCommandBuffer cmd, beginCommandLocked());
  const bool timed = timeBeforeLocked(cmd);
  const VkPipeline pipeline = exe.entry(entry).pipeline;
  if (pipeline != bound_pipeline_) {
    api.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
    bound_pipeline_ = pipeline;
  }
  if (buffer_count > 0) {
    VkDescriptorBufferInfo infos[32];
    VkWriteDescriptorSet writes[32];
    for (size_t i = 0; i < buffer_count; ++i) {
      infos[i] = VkDescriptorBufferInfo{buffers[i].buffer, buffers[i].offset, buffers[i].range};
      writes[i] = VkWriteDescriptorSet{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
      writes[i].dstBinding = bindings[i].binding;
      writes[i].descriptorCount = 1;
      writes[i].descriptorType = bindings[i].type == BindingType::kStorageBuffer
                                     ? VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
                                     : VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER;
      writes[i].pBufferInfo = &infos[i];
    }
    if (exe.pushDescriptors()) {
      api.vkCmdPushDescriptorSetKHR(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, exe.pipelineLayout(), 0,
                                    static_cast<uint32_t>(buffer_count), writes);
    } else {
      RAL_ASSIGN_OR_RETURN(VkDescriptorSet set, allocateSetLocked(exe));
      for (size_t i = 0; i < buffer_count; ++i) writes[i].dstSet = set;
      api.vkUpdateDescriptorSets(device_->device(), static_cast<uint32_t>(buffer_count), writes, 0,
                                 nullptr);
      api.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, exe.pipelineLayout(), 0, 1,
                                  &set, 0, nullptr);
    }
  }
  if (push_size > 0)
    api.vkCmdPushConstants(cmd, exe.pipelineLayout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, push_size,
                           push);
  api.vkCmdDispatch(cmd, grid.x, grid.y, grid.z);
  if (timed) {
    const ExecutableSpec& spec = exe.spec();
    timeAfterLocked(cmd, true, entry < spec.entries.size() ? spec.entries[entry].name : "dispatch",
                    internal::strCat("\"executable\": \"", spec.name, "\", \"grid\": [", grid.x,
                                     ", ", grid.y, ", ", grid.z, "]"));
  }
  if (commands_ >= kMaxCommandsPerBatch) RAL_RETURN_IF_ERROR(flushLocked());
  return Status();
}

Status CommandStream::copyLocked(VkBuffer src, VkDeviceSize src_offset, VkBuffer dst,
                                 VkDeviceSize dst_offset, VkDeviceSize bytes) {
  RAL_ASSIGN_OR_RETURN(VkCommandBuffer cmd, beginCommandLocked());
  const bool timed = timeBeforeLocked(cmd);
  const VkBufferCopy region{src_offset, dst_offset, bytes};
  device_->api().vkCmdCopyBuffer(cmd, src, dst, 1, &region);
  timeAfterLocked(cmd, timed, "copy", internal::strCat("\"bytes\": ", bytes));
  if (commands_ >= kMaxCommandsPerBatch) RAL_RETURN_IF_ERROR(flushLocked());
  return Status();
}

Status CommandStream::fillLocked(VkBuffer dst, VkDeviceSize offset, VkDeviceSize bytes,
                                 uint32_t pattern) {
  RAL_ASSIGN_OR_RETURN(VkCommandBuffer cmd, beginCommandLocked());
  const bool timed = timeBeforeLocked(cmd);
  device_->api().vkCmdFillBuffer(cmd, dst, offset, bytes, pattern);
  timeAfterLocked(cmd, timed, "fill", internal::strCat("\"bytes\": ", bytes));
  if (commands_ >= kMaxCommandsPerBatch) RAL_RETURN_IF_ERROR(flushLocked());
  return Status();
}

Status CommandStream::updateLocked(VkBuffer dst, VkDeviceSize offset, const void* data,
                                   VkDeviceSize bytes) {
  RAL_ASSIGN_OR_RETURN(VkCommandBuffer cmd, beginCommandLocked());
  const bool timed = timeBeforeLocked(cmd);
  device_->api().vkCmdUpdateBuffer(cmd, dst, offset, bytes, data);
  timeAfterLocked(cmd, timed, "update", internal::strCat("\"bytes\": ", bytes));
  if (commands_ >= kMaxCommandsPerBatch) RAL_RETURN_IF_ERROR(flushLocked());
  return Status();
}

Status CommandStream::waitLocked(SemaphoreOp op) {
  // The wait orders only what is recorded after it.
  if (open_) RAL_RETURN_IF_ERROR(flushLocked());
  waits_.push_back(std::move(op));
  return Status();
}

Status CommandStream::signalLocked(SemaphoreOp op) {
  signals_.push_back(std::move(op));
  return flushLocked().status();
}

bool CommandStream::idleLocked() {
  return !open_ && waits_.empty() && queue_->timeline->reached(sealed_);
}

void CommandStream::appendFenceLocked(UseFence* fence) {
  if (open_ || !waits_.empty()) {
    fence->emplace_back(queue_->timeline, sealed_ + 1);
  } else if (!queue_->timeline->reached(sealed_)) {
    fence->emplace_back(queue_->timeline, sealed_);
  }
}

Status CommandStream::synchronize(Timeout timeout) {
  uint64_t value;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    (void)flushLocked();  // a failure is reported by waitStream below
    value = sealed_;
  }
  Status done = scheduler_->waitStream(*queue_, value, timeout);
  if (done.ok() && trace::active()) {
    std::lock_guard<std::mutex> lock(mutex_);
    publishTimesLocked();
  }
  return done;
}

VulkanStream::~VulkanStream() = default;

}  // namespace ral::vulkan
