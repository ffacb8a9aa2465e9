// The Vulkan driver in other processes: a broken or missing Vulkan installation gives a clear
// Unavailable error (and the CPU keeps working), the device is chosen from the environment, and
// the pipeline cache written by one process is found and used by the next.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "tests/vulkan/test_support.h"

namespace ral::vulkan {
namespace {

using testing::runProcess;

struct ChildRun {
  int code;
  std::string out;
};

ChildRun probe(const std::map<std::string, std::string>& env, bool load = false) {
  ChildRun r;
  std::vector<std::string> argv = {RAL_VULKAN_PROBE};
  if (load) argv.push_back("--load");
  r.code = runProcess(argv, env, &r.out);
  return r;
}

TEST(VulkanEnvironment, NoDriverIsUnavailable) {
  const ChildRun r = probe({{"VK_ICD_FILENAMES", "/nonexistent/ral_icd.json"},
                            {"VK_DRIVER_FILES", "/nonexistent/ral_icd.json"}});
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_NE(r.out.find("cpu: OK"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("vulkan: UNAVAILABLE:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cannot create a Vulkan instance"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("VK_ICD_FILENAMES"), std::string::npos) << r.out;
}

TEST(VulkanEnvironment, NoLoaderIsUnavailable) {
  const ChildRun r = probe({{"RAL_VULKAN_LOADER_PATH", "/nonexistent/libvulkan.so.1"}});
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_NE(r.out.find("cpu: OK"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cannot load the Vulkan loader '/nonexistent/libvulkan.so.1'"),
            std::string::npos)
      << r.out;
}

TEST(VulkanEnvironment, DeviceChosenByEnvironment) {
  ChildRun r = probe({{"RAL_VULKAN_DEVICE", "0"}});
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("(device 0,"), std::string::npos) << r.out;
  r = probe({{"RAL_VULKAN_DEVICE", "no-such-device"}});
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_NE(r.out.find("no device name contains 'no-such-device' (from RAL_VULKAN_DEVICE)"),
            std::string::npos)
      << r.out;
}

std::string field(const std::string& out, const std::string& key) {
  const auto at = out.find(key + "=");
  if (at == std::string::npos) return "";
  const auto start = at + key.size() + 1;
  return out.substr(start, out.find_first_of(" \n", start) - start);
}

std::vector<char> readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<char>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST(VulkanEnvironment, PipelineCachePersistsAcrossProcesses) {
  const testing::TempDir temp("pipeline_cache");
  const std::string dir = temp.path() + "/nested/ral";
  const std::map<std::string, std::string> env = {{"RAL_VULKAN_PIPELINE_CACHE_DIR", dir}};
  const ChildRun first = probe(env, /*load=*/true);
  ASSERT_EQ(first.code, 0) << first.out;
  EXPECT_EQ(field(first.out, "loaded"), "0") << first.out;
  EXPECT_EQ(field(first.out, "pipelines"), "1") << first.out;
  const std::string path = field(first.out, "path");
  ASSERT_EQ(path.rfind(dir + "/vulkan-pipelines-", 0), 0u) << first.out;
  const std::vector<char> written = readFile(path);
  ASSERT_GE(written.size(), 32u) << "no pipeline cache file at " << path;
  // A Vulkan pipeline cache: header length, then VK_PIPELINE_CACHE_HEADER_VERSION_ONE.
  uint32_t header[2];
  std::memcpy(header, written.data(), sizeof(header));
  EXPECT_GE(header[0], 32u);
  EXPECT_EQ(header[1], 1u);

  const ChildRun second = probe(env, /*load=*/true);
  ASSERT_EQ(second.code, 0) << second.out;
  EXPECT_EQ(field(second.out, "path"), path);
  EXPECT_EQ(field(second.out, "loaded"), "1") << second.out;
  EXPECT_EQ(field(second.out, "loaded_bytes"), std::to_string(written.size())) << second.out;
  EXPECT_EQ(field(second.out, "rejected"), "0") << second.out;

  // A damaged file is ignored (and replaced), never fatal.
  {
    std::ofstream damage(path, std::ios::binary | std::ios::trunc);
    damage << "not a pipeline cache at all, but long enough to have a header";
  }
  const ChildRun third = probe(env, /*load=*/true);
  ASSERT_EQ(third.code, 0) << third.out;
  EXPECT_EQ(field(third.out, "loaded"), "0") << third.out;
  EXPECT_EQ(field(third.out, "rejected"), "1") << third.out;
  EXPECT_EQ(readFile(path), written);
}

// The cache file replaced by a directory (or anything not a regular file): a rejected cache, not
// an exception out of the driver (std::ifstream threw "Is a directory" while reading).
TEST(VulkanEnvironment, APipelineCachePathThatIsADirectoryIsRejectedNotFatal) {
  const testing::TempDir temp("pipeline_cache_dir");
  const std::string dir = temp.path();
  const std::map<std::string, std::string> env = {{"RAL_VULKAN_PIPELINE_CACHE_DIR", dir}};
  const ChildRun first = probe(env, /*load=*/true);
  ASSERT_EQ(first.code, 0) << first.out;
  const std::string path = field(first.out, "path");
  ASSERT_EQ(std::remove(path.c_str()), 0) << path;
  ASSERT_EQ(mkdir(path.c_str(), 0700), 0) << path;
  const ChildRun second = probe(env, /*load=*/true);
  ASSERT_EQ(second.code, 0) << second.out;
  EXPECT_EQ(field(second.out, "loaded"), "0") << second.out;
  EXPECT_EQ(field(second.out, "rejected"), "1") << second.out;
  EXPECT_EQ(field(second.out, "pipelines"), "1") << second.out;
}

TEST(VulkanEnvironment, PipelineCacheCanBeTurnedOff) {
  const ChildRun r = probe({{"RAL_VULKAN_PIPELINE_CACHE_DIR", "off"}}, /*load=*/true);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(field(r.out, "path"), "") << r.out;
}

}  // namespace
}  // namespace ral::vulkan
