// PipelineCache: the driver's VkPipelineCache, loaded from and saved to disk so the next process
// on the same device skips pipeline compilation where the Vulkan driver supports it.
//
// Directory: RAL_VULKAN_PIPELINE_CACHE_DIR, else $XDG_CACHE_HOME/ral, else $HOME/.cache/ral;
// "off" (or no usable directory) keeps the cache in memory only. One file per device and driver
// version: vulkan-pipelines-<vendor>-<device>-<driver version>-<pipelineCacheUUID>.bin. A file
// whose header does not match the device is ignored (counted in Stats::rejected). Saving writes a
// temporary file and renames it, so concurrent processes never see a torn file.
#ifndef RAL_DRIVERS_VULKAN_PIPELINE_CACHE_H_
#define RAL_DRIVERS_VULKAN_PIPELINE_CACHE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "drivers/vulkan/vulkan_device.h"
#include "ral/status.h"

namespace ral::vulkan {

struct PipelineCacheStats {
  std::string path;         // empty when persistence is off
  bool loaded = false;      // a file was found, validated and handed to Vulkan
  size_t loaded_bytes = 0;  // its size
  uint64_t rejected = 0;    // files ignored (bad header, other device)
  uint64_t saves = 0;       // files written by this process
  size_t saved_bytes = 0;   // size of the last file written
  uint64_t pipelines = 0;   // pipelines created through the cache
  uint64_t hits = 0;        // of which the Vulkan driver reported as cache hits
};

class PipelineCache {
 public:
  // `directory`: empty means the environment/default above.
  static StatusOr<std::unique_ptr<PipelineCache>> open(std::shared_ptr<VulkanDevice> device,
                                                       const std::string& directory);
  ~PipelineCache();

  VkPipelineCache handle() const { return cache_; }
  // Writes the cache when its contents changed since it was loaded or last saved.
  Status save();
  void recordPipeline(bool hit);
  PipelineCacheStats stats() const;

  // The directory the environment selects ("" when persistence is off).
  static std::string defaultDirectory();

 private:
  PipelineCache(std::shared_ptr<VulkanDevice> device) : device_(std::move(device)) {}
  bool headerMatches(const std::vector<char>& data) const;

  std::shared_ptr<VulkanDevice> device_;
  VkPipelineCache cache_ = VK_NULL_HANDLE;
  mutable std::mutex mutex_;
  std::vector<char> on_disk_;  // what the file holds (as loaded or last saved)
  PipelineCacheStats stats_;
  std::atomic<uint64_t> pipelines_{0}, hits_{0};
};

}  // namespace ral::vulkan

#endif  // RAL_DRIVERS_VULKAN_PIPELINE_CACHE_H_
