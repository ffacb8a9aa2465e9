// Host library variants (ral/host_variant.h): they round-trip through the module file, the loader
// opens the best one this CPU runs (or RAL_HOST_VARIANT's), skips targets it does not know,
// refuses corrupt or malformed ones, and the module runs whichever is loaded.
#include "ral/host_variant.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "ral/module.h"
#include "ral/module_builder.h"
#include "ral/standalone_context.h"

namespace ral {
namespace {

std::vector<uint8_t> identityLibrary() {
  std::ifstream in(std::string(RAL_TEST_MODULE_DIR) + "/identity.so", std::ios::binary);
  EXPECT_TRUE(in.good());
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
}

// The identity module (y = x, 2x3 f32) with the given host variants, each the same library.
ModuleSpec spec(const std::vector<std::string>& targets) {
  ModuleSpec s;
  s.name = "identity";
  s.inputs.push_back({"x", DType::kF32, {2, 3}, DeviceKind::kCpu, {}});
  s.outputs.push_back({"y", DType::kF32, {2, 3}, DeviceKind::kCpu, {}});
  s.host_library = identityLibrary();
  for (const std::string& t : targets) s.host_variants.push_back({t, identityLibrary()});
  s.imports = {"ral_recv_input___cpu___pvoid_i64___m2df32", "ral_alloc___cpu___pvoid_i64___pvoid",
               "ral_send_output___cpu___pvoid_i64_m2df32___void"};
  return s;
}

// Sets (or unsets, with null) RAL_HOST_VARIANT for one scope.
class ScopedHostVariant {
 public:
  explicit ScopedHostVariant(const char* value) {
    if (const char* old = getenv("RAL_HOST_VARIANT")) old_ = old, had_ = true;
    if (value) {
      setenv("RAL_HOST_VARIANT", value, 1);
    } else {
      unsetenv("RAL_HOST_VARIANT");
    }
  }
  ~ScopedHostVariant() {
    if (had_) {
      setenv("RAL_HOST_VARIANT", old_.c_str(), 1);
    } else {
      unsetenv("RAL_HOST_VARIANT");
    }
  }

 private:
  std::string old_;
  bool had_ = false;
};

StatusOr<std::shared_ptr<Module>> load(const std::vector<uint8_t>& bytes) {
  return Module::load(bytes.data(), bytes.size());
}

// The best of `targets` this CPU runs, as the loader should pick it ("" for the baseline).
std::string expectedBest(const std::vector<std::string>& targets) {
  std::string best;
  int best_rank = -1;
  const auto& known = internal::knownHostTargets();
  for (const std::string& t : targets)
    for (int r = 0; r < static_cast<int>(known.size()); ++r)
      if (known[r] == t && r > best_rank && internal::cpuRunsHostTarget(t)) best = t, best_rank = r;
  return best;
}

// The identity module runs: y equals x.
void expectRuns(const std::shared_ptr<Module>& module) {
  auto context = standalone::StandaloneContext::create(module);
  ASSERT_TRUE(context.ok()) << context.status();
  std::vector<float> x = {1, 2, 3, 4, 5, 6};
  int64_t shape[2] = {2, 3};
  DLTensor t{};
  t.data = x.data();
  t.device = {kDLCPU, 0};
  t.ndim = 2;
  t.dtype = {kDLFloat, 32, 1};
  t.shape = shape;
  auto outputs = (*context)->run({&t});
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  ASSERT_EQ(outputs->size(), 1u);
  const float* y = static_cast<const float*>((*outputs)[0]->dl_tensor.data);
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(y[i], x[i]);
}

TEST(HostVariantTest, TheBestVariantTheCpuRunsIsLoaded) {
  ScopedHostVariant unset(nullptr);
  const std::vector<std::string> targets = {"x86-64-v3", "x86-64-v4"};
  auto bytes = ModuleBuilder(spec(targets)).build();
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  auto module = load(*bytes);
  ASSERT_TRUE(module.ok()) << module.status();
  ASSERT_EQ((*module)->hostVariants().size(), 2u);
  EXPECT_EQ((*module)->hostVariants()[0].target, "x86-64-v3");
  EXPECT_EQ((*module)->hostVariants()[1].target, "x86-64-v4");
  EXPECT_EQ((*module)->hostVariants()[1].size, identityLibrary().size());
  EXPECT_EQ((*module)->loadedHostTarget(), expectedBest(targets));
  expectRuns(*module);
}

TEST(HostVariantTest, ListOrderDoesNotMatterAndUnknownTargetsAreSkipped) {
  ScopedHostVariant unset(nullptr);
  const std::vector<std::string> targets = {"riscv64-rva23", "x86-64-v4", "x86-64-v2", "x86-64-v9"};
  auto bytes = ModuleBuilder(spec(targets)).build();
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  auto module = load(*bytes);
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ((*module)->loadedHostTarget(), expectedBest(targets));
  EXPECT_NE((*module)->loadedHostTarget(), "riscv64-rva23");
  EXPECT_NE((*module)->loadedHostTarget(), "x86-64-v9");
  expectRuns(*module);
}

TEST(HostVariantTest, AModuleWithoutVariantsLoadsTheBaseline) {
  ScopedHostVariant unset(nullptr);
  auto bytes = ModuleBuilder(spec({})).build();
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  auto module = load(*bytes);
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_TRUE((*module)->hostVariants().empty());
  EXPECT_EQ((*module)->loadedHostTarget(), "");
  expectRuns(*module);
}

TEST(HostVariantTest, TheEnvironmentPicksOneOrTheBaseline) {
  auto bytes = ModuleBuilder(spec({"x86-64-v2", "x86-64-v3", "x86-64-v4"})).build();
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  {
    ScopedHostVariant forced("baseline");
    auto module = load(*bytes);
    ASSERT_TRUE(module.ok()) << module.status();
    EXPECT_EQ((*module)->loadedHostTarget(), "");
    expectRuns(*module);
  }
  for (const char* target : {"x86-64-v2", "x86-64-v3", "x86-64-v4"}) {
    ScopedHostVariant forced(target);
    auto module = load(*bytes);
    if (!internal::cpuRunsHostTarget(target)) {
      ASSERT_FALSE(module.ok());
      EXPECT_EQ(module.status().code(), StatusCode::kUnsupported) << module.status();
      EXPECT_NE(module.status().message().find("does not run"), std::string_view::npos);
      continue;
    }
    ASSERT_TRUE(module.ok()) << module.status();
    EXPECT_EQ((*module)->loadedHostTarget(), target);
    expectRuns(*module);
  }
  {
    ScopedHostVariant forced("x86-64-v9");
    auto module = load(*bytes);
    ASSERT_FALSE(module.ok());
    EXPECT_EQ(module.status().code(), StatusCode::kNotFound) << module.status();
    EXPECT_NE(module.status().message().find("baseline, x86-64-v2, x86-64-v3, x86-64-v4"),
              std::string_view::npos)
        << module.status();
  }
  // Inspecting reads the variants without opening any, whatever the environment says.
  ScopedHostVariant forced("x86-64-v9");
  LoadOptions inspect;
  inspect.load_host_library = false;
  auto module = Module::load(bytes->data(), bytes->size(), inspect);
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ((*module)->hostVariants().size(), 3u);
}

TEST(HostVariantTest, TheBuilderRefusesMalformedVariants) {
  auto refused = [](ModuleSpec s, const char* says) {
    auto bytes = ModuleBuilder(s).build();
    ASSERT_FALSE(bytes.ok()) << says;
    EXPECT_EQ(bytes.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(bytes.status().message().find(says), std::string_view::npos) << bytes.status();
  };
  refused(spec({"x86-64-v3", "x86-64-v3"}), "two host variants for target 'x86-64-v3'");
  refused(spec({""}), "target name of 0 characters");
  refused(spec({"x86 64"}), "invalid target name");
  refused(spec({std::string(65, 'v')}), "target name of 65 characters");
  ModuleSpec not_elf = spec({"x86-64-v3"});
  not_elf.host_variants[0].data = {1, 2, 3, 4};
  refused(not_elf, "host variant 'x86-64-v3'");
  ModuleSpec empty = spec({"x86-64-v4"});
  empty.host_variants[0].data.clear();
  refused(empty, "no host library");
}

TEST(HostVariantTest, ACorruptVariantIsRefusedByItsChecksum) {
  ModuleSpec s = spec({"x86-64-v3"});
  // A marker in the variant's bytes (past its ELF header), to find it in the file.
  const std::string marker = "host-variant-marker";
  s.host_variants[0].data.insert(s.host_variants[0].data.end(), marker.begin(), marker.end());
  auto bytes = ModuleBuilder(s).build();
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  std::string file(bytes->begin(), bytes->end());
  const size_t at = file.find(marker);
  ASSERT_NE(at, std::string::npos);
  std::vector<uint8_t> corrupt = *bytes;
  corrupt[at] ^= 0x20;
  LoadOptions inspect;
  inspect.load_host_library = false;
  auto module = Module::load(corrupt.data(), corrupt.size(), inspect);
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(module.status().message().find("host variant 'x86-64-v3' fails its checksum"),
            std::string_view::npos)
      << module.status();
}

TEST(HostVariantTest, PickingIsAPureFunctionOfTargetsAndCpu) {
  EXPECT_EQ(*internal::pickHostVariant({}, nullptr), -1);
  EXPECT_EQ(*internal::pickHostVariant({"unknown"}, nullptr), -1);
  EXPECT_EQ(*internal::pickHostVariant({"x86-64-v3"}, "baseline"), -1);
  EXPECT_EQ(*internal::pickHostVariant({"x86-64-v3"}, ""),
            *internal::pickHostVariant({"x86-64-v3"}, nullptr));
  EXPECT_FALSE(internal::cpuRunsHostTarget("unknown"));
  EXPECT_FALSE(internal::cpuRunsHostTarget(""));
#if defined(__x86_64__)
  // The known targets, oldest first.
  ASSERT_EQ(internal::knownHostTargets().size(), 3u);
  EXPECT_EQ(internal::knownHostTargets()[0], "x86-64-v2");
  // A CPU that runs a level runs the levels below it.
  if (internal::cpuRunsHostTarget("x86-64-v4")) {
    EXPECT_TRUE(internal::cpuRunsHostTarget("x86-64-v3"));
  }
  if (internal::cpuRunsHostTarget("x86-64-v3")) {
    EXPECT_TRUE(internal::cpuRunsHostTarget("x86-64-v2"));
  }
#endif
}

}  // namespace
}  // namespace ral
