// Device URIs: the grammar, resolution against an enumerator, the errors that list devices, and
// Context::selectDevice handing the chosen ordinal to the driver factory.
#include "ral/device_uri.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ral/context.h"

namespace ral {
namespace {

using Selector = DeviceUri::Selector;

TEST(DeviceUri, ParsesEveryForm) {
  auto kind = parseDeviceUri("hsa");
  ASSERT_TRUE(kind.ok()) << kind.status();
  EXPECT_EQ(kind->kind, DeviceKind::kHsa);
  EXPECT_EQ(kind->selector, Selector::kDefault);

  for (const char* text : {"cuda:1", "cuda://1", "CUDA:1"}) {
    auto uri = parseDeviceUri(text);
    ASSERT_TRUE(uri.ok()) << text << ": " << uri.status();
    EXPECT_EQ(uri->kind, DeviceKind::kCuda);
    EXPECT_EQ(uri->selector, Selector::kOrdinal);
    EXPECT_EQ(uri->ordinal, 1);
    EXPECT_EQ(uri->text, text);
  }
  for (const char* text : {"hsa://GPU-0e12865a3bf5b7ab", "hsa://gpu-0E12865A3BF5B7AB",
                           "hsa://0e12865a-3bf5-b7ab", "hsa:GPU-0e12865a3bf5b7ab"}) {
    auto uri = parseDeviceUri(text);
    ASSERT_TRUE(uri.ok()) << text << ": " << uri.status();
    EXPECT_EQ(uri->selector, Selector::kUuid);
    EXPECT_EQ(uri->uuid, "0e12865a3bf5b7ab");
  }
  // A UUID may start with a digit and still not be an ordinal.
  auto digits = parseDeviceUri("cuda://12345678-aaaa");
  ASSERT_TRUE(digits.ok()) << digits.status();
  EXPECT_EQ(digits->selector, Selector::kUuid);
  EXPECT_EQ(digits->uuid, "12345678aaaa");

  auto name = parseDeviceUri("vulkan://name=LLVMpipe");
  ASSERT_TRUE(name.ok()) << name.status();
  EXPECT_EQ(name->selector, Selector::kName);
  EXPECT_EQ(name->name, "LLVMpipe");
}

TEST(DeviceUri, RefusesWhatIsNotAUri) {
  for (const char* text : {"", "tpu", "tpu:0", "cuda:", "cuda://", "cuda:-1", "cuda:1x2",
                           "cuda://GPU-xyz", "cuda://abc", "vulkan://name=", "cuda:99999999999"}) {
    auto uri = parseDeviceUri(text);
    ASSERT_FALSE(uri.ok()) << "'" << text << "' was accepted";
    EXPECT_EQ(uri.status().code(), StatusCode::kInvalidArgument) << text;
    EXPECT_NE(uri.status().message().find("bad device '" + std::string(text) + "'"),
              std::string::npos)
        << uri.status();
    EXPECT_NE(uri.status().message().find("KIND://GPU-<uuid>"), std::string::npos);
  }
}

TEST(DeviceUri, ResolvesAgainstTheEnumerator) {
  // The CPU driver is built in and reports exactly cpu:0.
  auto cpu = resolveDevice("cpu");
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  EXPECT_EQ(cpu->kind, DeviceKind::kCpu);
  EXPECT_EQ(cpu->ordinal, 0);
  EXPECT_FALSE(cpu->name.empty());
  auto zero = resolveDevice("cpu:0");
  ASSERT_TRUE(zero.ok()) << zero.status();

  auto missing = resolveDevice("cpu:3");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("no cpu device matches 'cpu:3'"), std::string::npos)
      << missing.status();
  EXPECT_NE(missing.status().message().find("cpu:0  "), std::string::npos) << missing.status();

  auto by_uuid = resolveDevice("cpu://GPU-0123456789abcdef");
  ASSERT_FALSE(by_uuid.ok());
  EXPECT_EQ(by_uuid.status().code(), StatusCode::kNotFound);
}

TEST(DeviceUri, DescribesADevice) {
  DeviceInfo d;
  d.kind = DeviceKind::kHsa;
  d.ordinal = 2;
  d.uuid = "GPU-0e12865a3bf5b7ab";
  d.name = "AMD Instinct MI210";
  d.arch = "gfx90a";
  EXPECT_EQ(describeDevice(d), "hsa:2  GPU-0e12865a3bf5b7ab  AMD Instinct MI210 (gfx90a)");
}

TEST(DeviceUri, ContextHandsTheOrdinalToTheFactory) {
  Context context;
  EXPECT_EQ(context.deviceOrdinal(DeviceKind::kCpu), -1);
  ASSERT_TRUE(context.selectDevice("cpu").ok());  // the kind alone: still the default
  EXPECT_EQ(context.deviceOrdinal(DeviceKind::kCpu), -1);
  ASSERT_TRUE(context.selectDevice("cpu:0").ok());
  EXPECT_EQ(context.deviceOrdinal(DeviceKind::kCpu), 0);
  int seen = -2;
  ASSERT_TRUE(context
                  .setDriverFactory(DeviceKind::kCpu,
                                    [&seen](Context& c) -> StatusOr<std::unique_ptr<Driver>> {
                                      seen = c.deviceOrdinal(DeviceKind::kCpu);
                                      return unavailable("test factory");
                                    })
                  .ok());
  EXPECT_FALSE(context.driver(DeviceKind::kCpu).ok());
  EXPECT_EQ(seen, 0);
  // Once the driver was created (or failed), another device cannot be chosen for it.
  DeviceInfo other;
  other.kind = DeviceKind::kCpu;
  other.ordinal = 1;
  Status late = context.selectDevice(other);
  EXPECT_EQ(late.code(), StatusCode::kFailedPrecondition) << late;
  EXPECT_FALSE(context.selectDevice("cpu:5").ok());
}

}  // namespace
}  // namespace ral
