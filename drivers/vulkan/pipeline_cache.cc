#include "drivers/vulkan/pipeline_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

#include "ral/file_reader.h"

namespace ral::vulkan {
namespace {

// Pipeline caches are megabytes; a larger file is not one this driver wrote.
constexpr uint64_t kMaxCacheFileBytes = uint64_t{1} << 30;

std::string hex(const uint8_t* bytes, size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    s += digits[bytes[i] >> 4];
    s += digits[bytes[i] & 15];
  }
  return s;
}

// mkdir -p; OK when the directory exists.
Status makeDirectories(const std::string& path) {
  std::string partial;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    partial = path.substr(0, pos);
    if (partial.empty()) continue;
    if (::mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST)
      return unavailable("vulkan: cannot create the pipeline cache directory '", partial,
                         "': ", std::strerror(errno));
  }
  return Status();
}

}  // namespace

std::string PipelineCache::defaultDirectory() {
  if (const char* dir = std::getenv("RAL_VULKAN_PIPELINE_CACHE_DIR"); dir != nullptr && *dir)
    return std::string(dir) == "off" ? std::string() : std::string(dir);
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg == '/')
    return std::string(xdg) + "/ral";
  if (const char* home = std::getenv("HOME"); home != nullptr && *home == '/')
    return std::string(home) + "/.cache/ral";
  return std::string();
}

StatusOr<std::unique_ptr<PipelineCache>> PipelineCache::open(std::shared_ptr<VulkanDevice> device,
                                                             const std::string& directory) {
  std::unique_ptr<PipelineCache> cache(new PipelineCache(std::move(device)));
  const std::string dir = directory.empty() ? defaultDirectory() : directory;
  const auto& props = cache->device_->properties();
  if (!dir.empty() && dir != "off") {
    cache->stats_.path = internal::strCat(dir, "/vulkan-pipelines-", std::hex, props.vendorID, "-",
                                          props.deviceID, "-", props.driverVersion, "-",
                                          hex(props.pipelineCacheUUID, VK_UUID_SIZE), ".bin");
    // Whatever is at the path (a directory, a FIFO, a huge file) is at worst a rejected cache.
    auto read = readRegularFile(cache->stats_.path, kMaxCacheFileBytes);
    if (read.ok()) {
      std::vector<char> data(read->begin(), read->end());
      if (cache->headerMatches(data)) {
        cache->on_disk_ = std::move(data);
      } else {
        ++cache->stats_.rejected;
      }
    } else if (read.status().code() != StatusCode::kNotFound) {
      ++cache->stats_.rejected;
    }
  }

  const auto& api = cache->device_->api();
  VkPipelineCacheCreateInfo info{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  info.initialDataSize = cache->on_disk_.size();
  info.pInitialData = cache->on_disk_.empty() ? nullptr : cache->on_disk_.data();
  VkResult r = api.vkCreatePipelineCache(cache->device_->device(), &info, nullptr, &cache->cache_);
  if (r != VK_SUCCESS && !cache->on_disk_.empty()) {
    // The driver refused the data: start empty rather than fail.
    ++cache->stats_.rejected;
    cache->on_disk_.clear();
    info.initialDataSize = 0;
    info.pInitialData = nullptr;
    r = api.vkCreatePipelineCache(cache->device_->device(), &info, nullptr, &cache->cache_);
  }
  if (r != VK_SUCCESS) {
    cache->cache_ = VK_NULL_HANDLE;
    return vkStatus(r, "vkCreatePipelineCache");
  }
  cache->stats_.loaded = !cache->on_disk_.empty();
  cache->stats_.loaded_bytes = cache->on_disk_.size();
  return cache;
}

PipelineCache::~PipelineCache() {
  if (cache_ != VK_NULL_HANDLE)
    device_->api().vkDestroyPipelineCache(device_->device(), cache_, nullptr);
}

bool PipelineCache::headerMatches(const std::vector<char>& data) const {
  // VkPipelineCacheHeaderVersionOne: size, version, vendor, device, UUID.
  if (data.size() < 16 + VK_UUID_SIZE) return false;
  uint32_t words[4];
  std::memcpy(words, data.data(), sizeof(words));
  const auto& props = device_->properties();
  return words[0] >= 16 + VK_UUID_SIZE && words[0] <= data.size() &&
         words[1] == VK_PIPELINE_CACHE_HEADER_VERSION_ONE && words[2] == props.vendorID &&
         words[3] == props.deviceID &&
         std::memcmp(data.data() + 16, props.pipelineCacheUUID, VK_UUID_SIZE) == 0;
}

void PipelineCache::recordPipeline(bool hit) {
  pipelines_.fetch_add(1, std::memory_order_relaxed);
  if (hit) hits_.fetch_add(1, std::memory_order_relaxed);
}

Status PipelineCache::save() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (stats_.path.empty()) return Status();
  const auto& api = device_->api();
  size_t size = 0;
  RAL_VK_RETURN_IF_ERROR(api.vkGetPipelineCacheData(device_->device(), cache_, &size, nullptr),
                         "vkGetPipelineCacheData");
  std::vector<char> data(size);
  VkResult r = api.vkGetPipelineCacheData(device_->device(), cache_, &size, data.data());
  if (r != VK_SUCCESS && r != VK_INCOMPLETE) return vkStatus(r, "vkGetPipelineCacheData");
  data.resize(size);
  if (data == on_disk_ || data.empty()) return Status();

  const std::string dir = stats_.path.substr(0, stats_.path.rfind('/'));
  RAL_RETURN_IF_ERROR(makeDirectories(dir));
  const std::string tmp = internal::strCat(stats_.path, ".tmp.", ::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    out.close();
    if (!out) {
      std::remove(tmp.c_str());
      return unavailable("vulkan: cannot write the pipeline cache '", tmp, "'");
    }
  }
  if (std::rename(tmp.c_str(), stats_.path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    return unavailable("vulkan: cannot rename '", tmp, "' to '", stats_.path,
                       "': ", std::strerror(err));
  }
  on_disk_ = std::move(data);
  ++stats_.saves;
  stats_.saved_bytes = on_disk_.size();
  return Status();
}

PipelineCacheStats PipelineCache::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  PipelineCacheStats s = stats_;
  s.pipelines = pipelines_.load(std::memory_order_relaxed);
  s.hits = hits_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace ral::vulkan
