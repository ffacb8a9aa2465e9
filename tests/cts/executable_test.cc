// Conformance: executables (load caching by name, bad blobs and missing entries are errors,
// arguments of every size, grids of one and of many workgroups, bad launches).
#include <cstring>

#include "cts.h"

namespace ral::cts {
namespace {

using Executables = DriverTest;

TEST_P(Executables, LoadIsCachedByName) {
  auto first = driver().load(backend().kernel(KernelId::kAddOne));
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = driver().load(backend().kernel(KernelId::kAddOne));
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(*first, *second);
  EXPECT_EQ((*first)->spec().name, "cts.add_one");
  auto other = driver().load(backend().kernel(KernelId::kFillIndex));
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_NE(*other, *first);
  EXPECT_EQ(*(*first)->entryIndex((*first)->spec().entries[0].name), 0u);
  EXPECT_EQ((*first)->entryIndex("no_such_entry").status().code(), StatusCode::kNotFound);
}

TEST_P(Executables, BadBlobsAreErrors) {
  const ExecutableSpec good = backend().kernel(KernelId::kFillIndex);
  static const uint32_t garbage[3] = {0xdeadbeef, 0x01234567, 0x89abcdef};
  struct Case {
    const char* name;
    const void* data;
    size_t size;
  } cases[] = {{"cts.bad.garbage", garbage, sizeof(garbage)},
               {"cts.bad.empty", garbage, 0},
               {"cts.bad.null", nullptr, 0},
               {"cts.bad.truncated", good.data, good.size / 2 / 4 * 4}};
  for (const Case& c : cases) {
    ExecutableSpec spec = good;
    spec.name = c.name;
    spec.data = c.data;
    spec.size = c.size;
    auto exe = driver().load(spec);
    EXPECT_FALSE(exe.ok()) << c.name;
  }
  ExecutableSpec no_entries = good;
  no_entries.name = "cts.bad.no_entries";
  no_entries.entries.clear();
  if (good.format != ExecutableFormat::kSpirv) {  // SPIR-V modules list their own entries
    EXPECT_FALSE(driver().load(no_entries).ok());
  }
  ExecutableSpec wrong_format = good;
  wrong_format.name = "cts.bad.format";
  wrong_format.format =
      good.format == ExecutableFormat::kHsaco ? ExecutableFormat::kSpirv : ExecutableFormat::kHsaco;
  EXPECT_EQ(driver().load(wrong_format).status().code(), StatusCode::kUnsupported);
  // The driver still loads and runs good executables.
  void* data = buffer(10, 0);
  ASSERT_TRUE(fillIndex(data, 10, 5).ok());
  EXPECT_EQ(read(data, 1)[0], 5u);
}

TEST_P(Executables, MissingEntryIsAnError) {
  auto exe = driver().load(backend().missingEntry());
  EXPECT_FALSE(exe.ok());
  // Not cached: the good executable under its own name still loads.
  EXPECT_TRUE(driver().load(backend().kernel(KernelId::kAddOne)).ok());
}

// One argument of each size 1, 2, 4, 8 and 16 bytes after the buffer.
TEST_P(Executables, ArgumentsOfEverySize) {
  Executable* exe = kernel(KernelId::kArgs);
  ASSERT_NE(exe, nullptr);
  void* out = buffer(kArgsWords, 0);
  uint8_t a = 0xab;
  uint16_t b = 0xcdef;
  uint32_t c = 0x12345678;
  uint64_t d = 0x0123456789abcdefull;
  uint32_t e[4] = {0xa0a1a2a3, 0xb0b1b2b3, 0xc0c1c2c3, 0xd0d1d2d3};
  void* values[] = {&out, &a, &b, &c, &d, e};
  const size_t sizes[] = {sizeof(void*), 1, 2, 4, 8, 16};
  LaunchConfig one{{1, 1, 1}, {1, 1, 1}, 0};
  ASSERT_TRUE(driver().launch(exe, 0, one, KernelArgs{values, sizes, 6}).ok());
  // The arguments were copied at launch: changing them now must not matter.
  a = 0;
  d = 0;
  e[3] = 0;
  EXPECT_EQ(read(out, kArgsWords),
            (std::vector<uint32_t>{0xab, 0xcdef, 0x12345678, 0x89abcdef, 0x01234567, 0xa0a1a2a3,
                                   0xb0b1b2b3, 0xc0c1c2c3, 0xd0d1d2d3}));
}

TEST_P(Executables, GridsOfOneAndOfManyWorkgroups) {
  for (uint32_t n : {1u, kWorkgroupSize, kWorkgroupSize + 1, 37 * kWorkgroupSize + 5, 100000u}) {
    SCOPED_TRACE(n);
    void* data = buffer(n + 1, 0xffffffff);
    ASSERT_TRUE(fillIndex(data, n, 7).ok());
    const auto got = read(data, n + 1);
    for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(got[i], i + 7) << i;
    EXPECT_EQ(got[n], 0xffffffffu) << "written past n";
  }
}

TEST_P(Executables, BadLaunchesAreErrors) {
  Executable* exe = kernel(KernelId::kAddOne);
  ASSERT_NE(exe, nullptr);
  void* data = buffer(64, 0);
  uint32_t n = 64;
  void* values[] = {&data, &n};
  const size_t sizes[] = {sizeof(void*), 4};
  const KernelArgs args{values, sizes, 2};
  // An empty grid is either refused or runs nothing (checked below).
  LaunchConfig empty{{0, 1, 1}, {kWorkgroupSize, 1, 1}, 0};
  Status st = driver().launch(exe, 0, empty, args);
  EXPECT_TRUE(st.ok() || st.code() == StatusCode::kInvalidArgument) << st;
  LaunchConfig ok{{1, 1, 1}, {kWorkgroupSize, 1, 1}, 0};
  EXPECT_FALSE(driver().launch(exe, 1, ok, args).ok()) << "entry 1 does not exist";
  EXPECT_FALSE(driver().launch(nullptr, 0, ok, args).ok());
  auto other = backend().createDriver();
  ASSERT_TRUE(other.ok()) << other.status();
  auto foreign = (*other)->load(backend().kernel(KernelId::kAddOne));
  ASSERT_TRUE(foreign.ok()) << foreign.status();
  EXPECT_EQ(driver().launch(*foreign, 0, ok, args).code(), StatusCode::kInvalidArgument);
  // Nothing ran.
  EXPECT_EQ(read(data, 64), std::vector<uint32_t>(64, 0));
}

RAL_CTS_INSTANTIATE(Executables);

}  // namespace
}  // namespace ral::cts
