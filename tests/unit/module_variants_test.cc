// Per-architecture executable variants (ral-compile --gpu-arch): they round-trip through the
// module file, a corrupted target name or variant is refused by the checksums, the builder and
// loader refuse malformed variant lists, and the Context loads the variant its driver ranks best,
// or fails naming the module's targets and the device.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "ral/context.h"
#include "ral/module.h"
#include "ral/module_builder.h"

namespace ral {
namespace {

std::vector<uint8_t> hostLibrary() {
  std::ifstream in(std::string(RAL_TEST_MODULE_DIR) + "/identity.so", std::ios::binary);
  EXPECT_TRUE(in.good());
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
}

std::vector<uint8_t> bytesOf(const std::string& s) { return {s.begin(), s.end()}; }

// A module whose executable 0 is PTX for three architectures and executable 1 plain SPIR-V.
ModuleSpec variantSpec() {
  ModuleSpec spec;
  spec.name = "m";
  spec.inputs.push_back({"x", DType::kF32, {2, 3}, DeviceKind::kCpu, {}});
  spec.outputs.push_back({"y", DType::kF32, {2, 3}, DeviceKind::kCpu, {}});
  spec.host_library = hostLibrary();
  spec.imports = {"ral_recv_input___cpu___pvoid_i64___m2df32",
                  "ral_alloc___cpu___pvoid_i64___pvoid",
                  "ral_send_output___cpu___pvoid_i64_m2df32___void"};
  ExecutableDef ptx;
  ptx.name = "ral_kernel_0";
  ptx.format = ExecutableFormat::kPtx;
  ptx.entries = {{"ral_kernel_0", {256, 1, 1}}};
  ptx.variants = {{"sm_75", bytesOf("<turing code>")},
                  {"sm_80", bytesOf("<ampere code and up>")},
                  {"sm_90", bytesOf("<hopper code only here>")}};
  spec.executables.push_back(ptx);
  spec.executables.push_back(
      {"plain", ExecutableFormat::kSpirv, std::vector<uint8_t>(12, 5), {{"main", {64, 1, 1}}}});
  return spec;
}

StatusOr<std::shared_ptr<Module>> loadBytes(const std::vector<uint8_t>& bytes) {
  LoadOptions options;
  options.load_host_library = false;
  return Module::load(bytes.data(), bytes.size(), options);
}

std::string text(const ExecutableRef::Variant& v) {
  return std::string(static_cast<const char*>(v.data), v.size);
}

// Replaces the only occurrence of `from` in `bytes` by `to` (same length).
void replaceOnce(std::vector<uint8_t>* bytes, const std::string& from, const std::string& to) {
  ASSERT_EQ(from.size(), to.size());
  auto at = std::search(bytes->begin(), bytes->end(), from.begin(), from.end());
  ASSERT_NE(at, bytes->end()) << from;
  ASSERT_EQ(std::search(at + 1, bytes->end(), from.begin(), from.end()), bytes->end()) << from;
  std::copy(to.begin(), to.end(), at);
}

TEST(ModuleVariantsTest, VariantsRoundTrip) {
  auto bytes = ModuleBuilder(variantSpec()).build();
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  auto m = loadBytes(*bytes);
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ((*m)->executables().size(), 2u);
  const ExecutableRef& ptx = (*m)->executables()[0];
  EXPECT_EQ(ptx.format, ExecutableFormat::kPtx);
  ASSERT_EQ(ptx.variants.size(), 3u);
  EXPECT_EQ(ptx.variants[0].target, "sm_75");
  EXPECT_EQ(ptx.variants[1].target, "sm_80");
  EXPECT_EQ(ptx.variants[2].target, "sm_90");
  EXPECT_EQ(text(ptx.variants[1]), "<ampere code and up>");
  EXPECT_EQ(reinterpret_cast<uintptr_t>(ptx.variants[2].data) % 16, 0u);
  EXPECT_EQ(ptx.data, ptx.variants[0].data);  // data/size: the first variant
  const ExecutableSpec spec = ptx.spec(2);
  EXPECT_EQ(spec.target, "sm_90");
  EXPECT_EQ(std::string(static_cast<const char*>(spec.data), spec.size), "<hopper code only here>");
  EXPECT_EQ(spec.entries.size(), 1u);
  // A single-code executable is one untargeted variant.
  const ExecutableRef& plain = (*m)->executables()[1];
  ASSERT_EQ(plain.variants.size(), 1u);
  EXPECT_EQ(plain.variants[0].target, "");
  EXPECT_EQ(plain.variants[0].size, 12u);
  EXPECT_EQ(plain.spec().target, "");
}

TEST(ModuleVariantsTest, ExecutablesWithoutVariantsAreWrittenAsBefore) {
  ModuleSpec spec = variantSpec();
  spec.executables.erase(spec.executables.begin());
  auto bytes = ModuleBuilder(spec).build();
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  // No variants vector at all: files of executables without targets do not change.
  const std::string sm = "sm_";
  EXPECT_EQ(std::search(bytes->begin(), bytes->end(), sm.begin(), sm.end()), bytes->end());
}

TEST(ModuleVariantsTest, CorruptTargetOrCodeIsRefused) {
  auto bytes = ModuleBuilder(variantSpec()).build();
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  std::vector<uint8_t> target = *bytes;
  replaceOnce(&target, "sm_80", "sm_86");
  auto m = loadBytes(target);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kDataLoss) << m.status();

  std::vector<uint8_t> code = *bytes;
  replaceOnce(&code, "<hopper code only here>", "<hopper code only HERE>");
  m = loadBytes(code);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kDataLoss) << m.status();
  EXPECT_NE(m.status().message().find("sm_90"), std::string_view::npos) << m.status();
}

TEST(ModuleVariantsTest, MalformedVariantListsAreRefused) {
  auto refused = [](const std::function<void(ExecutableDef&)>& change, const char* why) {
    ModuleSpec spec = variantSpec();
    change(spec.executables[0]);
    Status s = ModuleBuilder(spec).build().status();
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << why << ": " << s;
    EXPECT_NE(s.message().find("ral_kernel_0"), std::string_view::npos) << s;
  };
  refused([](ExecutableDef& e) { e.data = {1}; }, "code and variants");
  refused([](ExecutableDef& e) { e.variants[1].target = "sm_75"; }, "two variants per target");
  refused([](ExecutableDef& e) { e.variants[0].target = ""; }, "empty target");
  refused([](ExecutableDef& e) { e.variants[0].target = "sm 75"; }, "invalid character");
  refused([](ExecutableDef& e) { e.variants[0].target = std::string(65, 'a'); }, "too long");
  refused([](ExecutableDef& e) { e.variants[2].data.clear(); }, "empty variant");
  refused([](ExecutableDef& e) { e.format = ExecutableFormat::kHostFunction; }, "host code");
}

// A CUDA-like driver of compute capability `cc`: PTX for sm_XY runs when XY <= cc, rank XY.
class RankingDriver : public Driver {
 public:
  explicit RankingDriver(int cc, std::vector<std::string>* loaded) : cc_(cc), loaded_(loaded) {}
  DeviceKind kind() const override { return DeviceKind::kCuda; }
  std::string deviceName() const override {
    return "cuda:0 (test, sm_" + std::to_string(cc_) + ")";
  }
  int targetRank(ExecutableFormat format, std::string_view target) const override {
    if (format != ExecutableFormat::kPtx || target.substr(0, 3) != "sm_") return -1;
    const int arch = std::stoi(std::string(target.substr(3)));
    return arch <= cc_ ? arch : -1;
  }
  StatusOr<Executable*> load(const ExecutableSpec& spec) override {
    loaded_->push_back(spec.target + ":" +
                       std::string(static_cast<const char*>(spec.data), spec.size));
    return unavailable("test driver: recorded, not loaded");
  }
  StatusOr<void*> allocate(size_t, size_t, MemoryKind) override { return outOfMemory("test"); }
  Status deallocate(void*) override { return Status(); }
  Status copy(void*, const void*, size_t, CopyKind, Stream*) override { return Status(); }
  Status fill(void*, size_t, const void*, size_t, Stream*) override { return Status(); }
  MemoryStats memoryStats() const override { return {}; }
  Status trim() override { return Status(); }
  Status launch(Executable*, uint32_t, const LaunchConfig&, const KernelArgs&, Stream*) override {
    return unsupported("test");
  }
  StatusOr<std::unique_ptr<Stream>> createStream() override { return unsupported("test"); }
  Status synchronize(Stream*) override { return Status(); }
  StatusOr<std::shared_ptr<Semaphore>> createSemaphore(uint64_t) override {
    return unsupported("test");
  }
  Status queueSignal(Stream*, Semaphore*, uint64_t) override { return unsupported("test"); }
  Status queueWait(Stream*, Semaphore*, uint64_t) override { return unsupported("test"); }

 private:
  int cc_;
  std::vector<std::string>* loaded_;
};

// Loads executable 0 on a RankingDriver of compute capability `cc`; what it was asked to load.
Status loadOn(int cc, std::vector<std::string>* loaded) {
  auto bytes = ModuleBuilder(variantSpec()).build();
  if (!bytes.ok()) return bytes.status();
  auto m = loadBytes(*bytes);
  if (!m.ok()) return m.status();
  Context context;
  RAL_RETURN_IF_ERROR(context.setModule(*m));
  RAL_RETURN_IF_ERROR(context.setDriverFactory(
      DeviceKind::kCuda, [cc, loaded](Context&) -> StatusOr<std::unique_ptr<Driver>> {
        return std::unique_ptr<Driver>(new RankingDriver(cc, loaded));
      }));
  return context.moduleExecutable(DeviceKind::kCuda, 0).status();
}

TEST(ModuleVariantsTest, ContextLoadsTheBestRankedVariant) {
  std::vector<std::string> loaded;
  (void)loadOn(86, &loaded);  // sm_75 and sm_80 run on sm_86; sm_80 ranks higher
  (void)loadOn(90, &loaded);
  (void)loadOn(75, &loaded);
  EXPECT_EQ(loaded,
            (std::vector<std::string>{"sm_80:<ampere code and up>", "sm_90:<hopper code only here>",
                                      "sm_75:<turing code>"}));
}

TEST(ModuleVariantsTest, NoUsableVariantIsAClearError) {
  std::vector<std::string> loaded;
  Status s = loadOn(70, &loaded);
  EXPECT_TRUE(loaded.empty());
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s;
  for (const char* part :
       {"module 'm'", "sm_75, sm_80, sm_90", "cuda:0 (test, sm_70)", "--gpu-arch", "ral_kernel_0"})
    EXPECT_NE(s.message().find(part), std::string_view::npos) << part << " in " << s;
}

}  // namespace
}  // namespace ral
