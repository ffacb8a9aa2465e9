#include "tests/vulkan/test_support.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

extern char** environ;

namespace ral::vulkan {
namespace test_spirv {
extern const uint32_t add_one[];
extern const size_t add_one_size;
extern const uint32_t fill_index[];
extern const size_t fill_index_size;
extern const uint32_t saxpy[];
extern const size_t saxpy_size;
}  // namespace test_spirv

namespace testing {

std::unique_ptr<VulkanDriver> makeDriver(VulkanDriverOptions options) {
  if (options.pipeline_cache_dir.empty()) options.pipeline_cache_dir = "off";
  auto driver = VulkanDriver::create(options);
  EXPECT_TRUE(driver.ok()) << driver.status();
  if (!driver.ok()) return nullptr;
  return std::move(driver).value();
}

namespace {
ExecutableSpec spec(const char* name, const uint32_t* words, size_t size) {
  ExecutableSpec s;
  s.name = name;
  s.format = ExecutableFormat::kSpirv;
  s.data = words;
  s.size = size;
  return s;
}
}  // namespace

ExecutableSpec fillIndexSpec() {
  return spec("test.fill_index", test_spirv::fill_index, test_spirv::fill_index_size);
}
ExecutableSpec saxpySpec() { return spec("test.saxpy", test_spirv::saxpy, test_spirv::saxpy_size); }
ExecutableSpec addOneSpec() {
  return spec("test.add_one", test_spirv::add_one, test_spirv::add_one_size);
}

int runProcess(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
               std::string* output) {
  std::map<std::string, std::string> merged;
  for (char** e = environ; *e != nullptr; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (eq != nullptr) merged[std::string(*e, static_cast<size_t>(eq - *e))] = eq + 1;
  }
  for (const auto& [k, v] : env) merged[k] = v;
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : merged) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp, args;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (auto& s : argv_copy) args.push_back(s.data());
  args.push_back(nullptr);

  char out_path[] = "/tmp/ral_vulkan_child_XXXXXX";
  const int fd = mkstemp(out_path);
  if (fd < 0) return -1000;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fd, 1);
  posix_spawn_file_actions_adddup2(&actions, fd, 2);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  int status = 0;
  if (rc == 0) waitpid(pid, &status, 0);
  output->clear();
  lseek(fd, 0, SEEK_SET);
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) > 0) output->append(buf, static_cast<size_t>(n));
  close(fd);
  unlink(out_path);
  if (rc != 0) return -1001;
  if (WIFSIGNALED(status)) return -WTERMSIG(status);
  return WEXITSTATUS(status);
}

TempDir::TempDir(const std::string& tag) {
  const char* base = std::getenv("TEST_TMPDIR");
  std::string templ = std::string(base != nullptr ? base : "/tmp") + "/ral_vk_" + tag + "_XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (const char* dir = mkdtemp(buf.data())) path_ = dir;
}

TempDir::~TempDir() {
  std::error_code ignored;
  if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
}

}  // namespace testing
}  // namespace ral::vulkan

namespace {
// Tests never write the user's pipeline cache: persistence is off unless a test turns it on.
// (A static initializer runs before any thread exists, so setenv is safe here.)
const bool kCacheOff = [] { return setenv("RAL_VULKAN_PIPELINE_CACHE_DIR", "off", 0) == 0; }();
}  // namespace
