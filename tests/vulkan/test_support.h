// Shared helpers of the Vulkan tests: a driver on the test device (pipeline cache off unless a
// test asks), the test shaders as ExecutableSpecs, and a child-process runner.
#ifndef RAL_TESTS_VULKAN_TEST_SUPPORT_H_
#define RAL_TESTS_VULKAN_TEST_SUPPORT_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "drivers/vulkan/vulkan_driver.h"
#include "ral/driver.h"

namespace ral::vulkan::testing {

// Creates a driver with the pipeline cache off; fails the test (with the reason) when no
// Vulkan device is usable.
std::unique_ptr<VulkanDriver> makeDriver(VulkanDriverOptions options = {});

ExecutableSpec fillIndexSpec();  // data[i] = i + add        (1 binding; n, add)
ExecutableSpec saxpySpec();      // y = a x + y              (2 bindings; a, n)
ExecutableSpec addOneSpec();     // data[i] += 1             (1 binding; n)

// Runs `argv` (argv[0] a path) with `env` added to this process's environment; returns the
// exit code (or -signal) and fills `output` with stdout+stderr.
int runProcess(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
               std::string* output);

// A fresh empty directory under the test temp dir ($TEST_TMPDIR, else /tmp), removed with
// everything in it when the object goes.
class TempDir {
 public:
  explicit TempDir(const std::string& tag);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;  // empty when mkdtemp failed
};

}  // namespace ral::vulkan::testing

#endif  // RAL_TESTS_VULKAN_TEST_SUPPORT_H_
