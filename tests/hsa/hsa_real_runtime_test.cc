// The HSA driver on the machine's real runtime (Debian's libhsa-runtime64.so.1): without an AMD
// GPU, creating the driver is one clear Unavailable naming HSA and the cause; with one, it works.
// Skipped, with the reason, only when the runtime library itself is not installed.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include "drivers/hsa/hsa_driver.h"

namespace ral::hsa {
namespace {

TEST(HsaRealRuntime, CreatesTheDriverOrSaysWhyNot) {
  void* probe = dlopen("libhsa-runtime64.so.1", RTLD_NOW | RTLD_LOCAL);
  if (probe == nullptr)
    GTEST_SKIP() << "libhsa-runtime64.so.1 is not installed (scripts/install-deps.sh installs it)";
  HsaDriverOptions options;
  options.library_path = "libhsa-runtime64.so.1";
  auto d = HsaDriver::create(options);
  if (d.ok()) {
    EXPECT_EQ((*d)->deviceName().rfind("hsa:", 0), 0u);
    return;
  }
  EXPECT_EQ(d.status().code(), StatusCode::kUnavailable) << d.status();
  const std::string message(d.status().message());
  EXPECT_EQ(message.rfind("hsa: ", 0), 0u) << message;
  EXPECT_NE(message.find("no GPU agent"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

}  // namespace
}  // namespace ral::hsa
