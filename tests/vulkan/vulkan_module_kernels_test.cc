// A module compiled with ral-compile --device=vulkan (examples/softmax.mlir) through the
// standalone context: its loop runs as a SPIR-V kernel on the Vulkan device, CPU inputs (also
// strided views and empty ones) are copied in at the boundary, outputs come back as CPU tensors;
// a corrupt SPIR-V executable and bad launches are errors on the execution, and the next run is
// correct.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "ral/device_uri.h"
#include "ral/module_builder.h"
#include "ral/standalone_context.h"
#include "tests/support/compiled_softmax.h"

namespace ral::standalone {
namespace {

constexpr char kLaunch[] =
    "ral_kernel_launch___vulkan___pvoid_i64_i64_i64_i64_i64_i64_i64_i64_i64_ppvoid_pi64_i64___"
    "void";

std::string modulePath() {
  return std::string(RAL_TEST_MODULE_DIR) + "/compiled_softmax_vulkan.ralm";
}

#define SKIP_WITHOUT_MODULE_OR_DEVICE()                                                 \
  if (!std::ifstream(modulePath()).good())                                              \
    GTEST_SKIP() << "built without the MLIR compiler: no compiled_softmax_vulkan.ralm"; \
  if (!Context().driver(DeviceKind::kVulkan).ok()) GTEST_SKIP() << "no Vulkan device"

bool contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

using ral::testing::expectSoftmaxWorks;

TEST(VulkanModuleKernelsTest, SpirvKernelRunsOnCpuInputs) {
  SKIP_WITHOUT_MODULE_OR_DEVICE();
  auto module = Module::load(modulePath());
  ASSERT_TRUE(module.ok()) << module.status();
  ASSERT_EQ((*module)->executables().size(), 1u);
  EXPECT_EQ((*module)->executables()[0].format, ExecutableFormat::kSpirv);
  EXPECT_EQ((*module)->inputs()[0].device, DeviceKind::kVulkan);
  auto ctx = StandaloneContext::create(*module);
  ASSERT_TRUE(ctx.ok()) << ctx.status();
  EXPECT_EQ((*ctx)->device(), DeviceKind::kVulkan);
  expectSoftmaxWorks(**ctx, 5, 7, 7);
  expectSoftmaxWorks(**ctx, 0, 7, 7);     // an empty grid launches nothing
  expectSoftmaxWorks(**ctx, 300, 1, 1);   // more rows than one workgroup
  expectSoftmaxWorks(**ctx, 70, 33, 40);  // a strided view: re-laid out on the way in
}

// Device URIs select the Vulkan device by ordinal, UUID or name; one matching nothing (or of
// another kind) is an error listing the devices, and no context is made.
TEST(VulkanModuleKernelsTest, DeviceUrisSelectTheDevice) {
  SKIP_WITHOUT_MODULE_OR_DEVICE();
  auto devices = enumerateDevices(DeviceKind::kVulkan);
  ASSERT_TRUE(devices.ok()) << devices.status();
  ASSERT_FALSE(devices->empty());
  const DeviceInfo& first = devices->front();
  std::vector<std::string> uris = {"vulkan", "vulkan:" + std::to_string(first.ordinal),
                                   "vulkan://name=" + first.name.substr(0, 4)};
  if (!first.uuid.empty()) uris.push_back("vulkan://" + first.uuid);
  for (const std::string& uri : uris) {
    StandaloneContext::Options options;
    options.device = uri;
    auto ctx = StandaloneContext::load(modulePath(), options);
    ASSERT_TRUE(ctx.ok()) << uri << ": " << ctx.status();
    expectSoftmaxWorks(**ctx, 5, 7, 7);
  }
  for (const char* uri : {"vulkan:64", "vulkan://name=no-such-gpu", "vulkan://GPU-00000000ffff"}) {
    StandaloneContext::Options options;
    options.device = uri;
    auto ctx = StandaloneContext::load(modulePath(), options);
    ASSERT_FALSE(ctx.ok()) << uri;
    EXPECT_EQ(ctx.status().code(), StatusCode::kNotFound) << ctx.status();
    EXPECT_TRUE(contains(ctx.status().message(), describeDevice(first))) << ctx.status();
  }
  StandaloneContext::Options cpu;
  cpu.device = "cpu:0";
  auto wrong = StandaloneContext::load(modulePath(), cpu);
  ASSERT_FALSE(wrong.ok());
  EXPECT_TRUE(contains(wrong.status().message(), "runs on vulkan, not on device 'cpu:0'"))
      << wrong.status();
}

Status launch(StandaloneContext& ctx, int64_t executable, int64_t grid, int64_t block, void** args,
              int64_t* sizes, int64_t count) {
  return ral::testing::callKernelLaunch(ctx, kLaunch, executable, 0, grid, block, args, sizes,
                                        count);
}

TEST(VulkanModuleKernelsTest, BadLaunchesAreErrorsAndTheNextRunIsCorrect) {
  SKIP_WITHOUT_MODULE_OR_DEVICE();
  auto ctx = StandaloneContext::load(modulePath());
  ASSERT_TRUE(ctx.ok()) << ctx.status();
  StandaloneContext& c = **ctx;
  int64_t value = 0;
  void* args[] = {&value};
  int64_t sizes[] = {8};
  struct Case {
    int64_t executable, grid, block;
    int64_t count;
    const char* message;
  } cases[] = {
      {3, 1, 64, 1, "has 1 executables, not #3"},
      {0, 1, 32, 1, "compiled for workgroup size 64x1x1"},
      {0, 1, 64, 1, "binds 4 buffers; the launch passes 1 arguments"},
      {0, 70000, 64, 1, "grid dimension 0 is 70000"},
  };
  for (const Case& k : cases) {
    Status s = launch(c, k.executable, k.grid, k.block, args, sizes, k.count);
    EXPECT_FALSE(s.ok()) << k.message;
    EXPECT_TRUE(contains(s.message(), k.message)) << s;
    expectSoftmaxWorks(c, 3, 9, 9);
  }
}

TEST(VulkanModuleKernelsTest, CorruptSpirvIsACleanError) {
  SKIP_WITHOUT_MODULE_OR_DEVICE();
  auto good = Module::load(modulePath());
  ASSERT_TRUE(good.ok()) << good.status();
  ModuleSpec spec;
  const Module& m = **good;
  spec.name = m.name();
  spec.entry = m.entryName();
  spec.inputs = m.inputs();
  spec.outputs = m.outputs();
  spec.imports = m.imports();
  spec.host_library.assign(m.hostLibraryData(), m.hostLibraryData() + m.hostLibrarySize());
  const ExecutableRef& e = m.executables()[0];
  ExecutableDef def{e.name, e.format, {}, e.entries};
  const auto* bytes = static_cast<const uint8_t*>(e.data);
  def.data.assign(bytes, bytes + e.size);
  for (size_t i = 20; i < def.data.size(); i += 7) def.data[i] ^= 0xa5;  // keep the header
  spec.executables.push_back(std::move(def));
  ModuleBuilder builder(std::move(spec));
  auto file = builder.build();
  ASSERT_TRUE(file.ok()) << file.status();
  auto bad = Module::load(file->data(), file->size());
  ASSERT_TRUE(bad.ok()) << bad.status();
  auto ctx = StandaloneContext::create(*bad);
  ASSERT_TRUE(ctx.ok()) << ctx.status();
  std::vector<float> x(6, 1.0f);
  const int64_t shape[] = {2, 3};
  for (int attempt = 0; attempt < 2; ++attempt) {  // a failed load is not cached as success
    Execution ex = (*ctx)->newExecution();
    ASSERT_TRUE(ex.bindInput(0, TensorRef{x.data(), DType::kF32, 2, shape, nullptr}).ok());
    Status run = ex.run();
    ASSERT_FALSE(run.ok());
    EXPECT_TRUE(contains(run.message(), "ral_kernel_launch")) << run;
  }
  auto fine = StandaloneContext::create(*good);
  ASSERT_TRUE(fine.ok()) << fine.status();
  expectSoftmaxWorks(**fine, 4, 33, 33);
}

}  // namespace
}  // namespace ral::standalone
