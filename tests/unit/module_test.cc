// The module file: builder round trip, loading every test module, and every way a file can be
// wrong (truncated at each byte, flipped bytes, wrong version or identifier, missing parts).
#include "ral/module.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "ral/standalone_context.h"
#include "ral/context.h"
#include "ral/module_builder.h"

namespace ral {
namespace {

std::string modulePath(const std::string& name) {
  return std::string(RAL_TEST_MODULE_DIR) + "/" + name + ".ralm";
}

std::vector<uint8_t> readBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
}

std::vector<uint8_t> hostLibrary(const std::string& name) {
  return readBytes(std::string(RAL_TEST_MODULE_DIR) + "/" + name + ".so");
}

// The identity module's spec, with constants and executables of every kind.
ModuleSpec identitySpec() {
  ModuleSpec spec;
  spec.name = "identity";
  spec.inputs.push_back({"x", DType::kF32, {2, 3}, DeviceKind::kCpu, {}});
  spec.outputs.push_back({"y", DType::kF32, {2, 3}, DeviceKind::kCpu, {}});
  spec.host_library = hostLibrary("identity");
  spec.imports = {"ral_recv_input___cpu___pvoid_i64___m2df32",
                  "ral_alloc___cpu___pvoid_i64___pvoid",
                  "ral_send_output___cpu___pvoid_i64_m2df32___void"};
  return spec;
}

Status loadStatus(const std::vector<uint8_t>& bytes, bool host = true) {
  LoadOptions o;
  o.load_host_library = host;
  return Module::load(bytes.data(), bytes.size(), o).status();
}

bool contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

TEST(ModuleFileTest, BuilderRoundTripKeepsEveryField) {
  ModuleSpec spec = identitySpec();
  spec.inputs.push_back(
      {"dyn", DType::kBF16, {kDynamicDim, 4, kDynamicDim}, DeviceKind::kCuda, {kDynamicDim, 8, 1}});
  spec.outputs.push_back({"", DType::kBool, {}, DeviceKind::kCpu, {}});
  spec.constants.push_back({"scalar", DType::kF64, {}, std::vector<uint8_t>(8, 7)});
  spec.constants.push_back({"big", DType::kI32, {3, 5}, std::vector<uint8_t>(60, 1)});
  spec.constants.push_back({"empty", DType::kF16, {0, 2}, {}});
  spec.executables.push_back({"k1",
                              ExecutableFormat::kSpirv,
                              std::vector<uint8_t>(37, 3),
                              {{"main", {64, 1, 1}}, {"other", {0, 0, 0}}}});
  spec.executables.push_back({"k2", ExecutableFormat::kHsaco, {1, 2, 3}, {}});
  auto bytes = ModuleBuilder(spec).build();
  ASSERT_TRUE(bytes.ok()) << bytes.status();

  LoadOptions inspect;
  inspect.load_host_library = false;
  auto m = Module::load(bytes->data(), bytes->size(), inspect);
  ASSERT_TRUE(m.ok()) << m.status();
  const Module& mod = **m;
  EXPECT_EQ(mod.abiVersion(), RAL_ABI_VERSION);
  EXPECT_EQ(mod.name(), "identity");
  EXPECT_EQ(mod.entryName(), "ral_entry");
  EXPECT_EQ(mod.fileSize(), bytes->size());
  EXPECT_EQ(mod.hostLibrarySize(), spec.host_library.size());
  EXPECT_FALSE(mod.hostLibraryLoaded());
  ASSERT_EQ(mod.inputs().size(), 2u);
  EXPECT_EQ(mod.inputs()[0].toString(), "2x3xf32");
  EXPECT_EQ(mod.inputs()[1].toString(), "?x4x?xbf16,strided<[?,8,1]>@cuda");
  EXPECT_TRUE(mod.inputs()[0].hasIdentityLayout());
  EXPECT_EQ(mod.inputs()[1].strides, (std::vector<int64_t>{kDynamicDim, 8, 1}));
  EXPECT_EQ(mod.inputs()[1].name, "dyn");
  ASSERT_EQ(mod.outputs().size(), 2u);
  EXPECT_EQ(mod.outputs()[1].toString(), "i1");
  EXPECT_EQ(mod.imports(), spec.imports);
  ASSERT_EQ(mod.constants().size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    const ConstantRef& c = mod.constants()[i];
    EXPECT_EQ(c.name, spec.constants[i].name);
    EXPECT_EQ(c.dtype, spec.constants[i].dtype);
    EXPECT_EQ(c.shape, spec.constants[i].shape);
    ASSERT_EQ(c.size, spec.constants[i].data.size());
    if (c.size > 0) {
      EXPECT_EQ(reinterpret_cast<uintptr_t>(c.data) % kConstantAlignment, 0u) << c.name;
      EXPECT_TRUE(std::equal(spec.constants[i].data.begin(), spec.constants[i].data.end(),
                             static_cast<const uint8_t*>(c.data)));
    }
  }
  ASSERT_NE(mod.findConstant("big"), nullptr);
  EXPECT_EQ(mod.findConstant("nope"), nullptr);
  ASSERT_EQ(mod.executables().size(), 2u);
  const ExecutableRef* k1 = mod.findExecutable("k1");
  ASSERT_NE(k1, nullptr);
  EXPECT_EQ(k1->format, ExecutableFormat::kSpirv);
  EXPECT_EQ(k1->size, 37u);
  ASSERT_EQ(k1->entries.size(), 2u);
  EXPECT_EQ(k1->entries[0].name, "main");
  EXPECT_EQ(k1->entries[0].workgroup_size.x, 64u);
  EXPECT_EQ(k1->entries[1].workgroup_size.count(), 0u);
  EXPECT_EQ(k1->spec().size, 37u);
  EXPECT_EQ(mod.findExecutable("k2")->format, ExecutableFormat::kHsaco);

  // The same through a file, memory-mapped: constants stay aligned in the mapping.
  const std::string path = ::testing::TempDir() + "/round_trip.ralm";
  ASSERT_TRUE(ModuleBuilder(spec).writeFile(path).ok());
  auto mapped = Module::load(path, inspect);
  ASSERT_TRUE(mapped.ok()) << mapped.status();
  EXPECT_EQ((*mapped)->source(), path);
  EXPECT_EQ(reinterpret_cast<uintptr_t>((*mapped)->findConstant("big")->data) % 64, 0u);
  std::remove(path.c_str());
}

TEST(ModuleFileTest, LoadsEveryTestModuleAndItsCode) {
  const std::pair<const char*, size_t> modules[] = {
      {"identity", 3}, {"add_r0", 4},         {"add_r1", 4},  {"add_r2", 4},
      {"add_r3", 4},   {"add_r4", 4},         {"add_r8", 4},  {"alias", 2},
      {"error", 5},    {"missing_import", 3}, {"by_name", 0}, {"empty", 3}};
  for (const auto& [name, imports] : modules) {
    auto m = Module::load(modulePath(name));
    ASSERT_TRUE(m.ok()) << name << ": " << m.status();
    EXPECT_EQ((*m)->name(), name);
    EXPECT_TRUE((*m)->hostLibraryLoaded());
    EXPECT_NE((*m)->entry(), nullptr);
    EXPECT_EQ((*m)->imports().size(), imports) << name;
  }
  auto id = Module::load(modulePath("identity"));
  ASSERT_TRUE(id.ok());
  EXPECT_EQ((*id)->constants().size(), 2u);
  EXPECT_EQ((*id)->executables().size(), 1u);
  EXPECT_EQ((*id)->executables()[0].entries.size(), 2u);
  auto r8 = Module::load(modulePath("add_r8"));
  EXPECT_EQ((*r8)->inputs()[0].toString(), "?x?x?x?x?x?x?x?xf32,strided<[?,?,?,?,?,?,?,?]>");
}

TEST(ModuleFileTest, SameModuleLoadsTwiceIndependently) {
  auto a = Module::load(modulePath("add_r1"));
  auto b = Module::load(modulePath("add_r1"));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE((*a)->entry(), (*b)->entry());  // two copies of the code, two import tables
}

TEST(ModuleFileTest, TruncationAtEveryByteIsRejected) {
  const auto bytes = readBytes(modulePath("identity"));
  ASSERT_GT(bytes.size(), 1000u);
  for (size_t n = 0; n < bytes.size(); ++n) {
    Status s = Module::load(bytes.data(), n).status();
    ASSERT_FALSE(s.ok()) << "accepted a file truncated to " << n << " bytes";
    ASSERT_FALSE(s.message().empty());
    if (n >= 12) {
      ASSERT_EQ(s.code(), StatusCode::kDataLoss) << n << ": " << s;
      ASSERT_TRUE(contains(s.message(), "truncated")) << s;
    }
  }
  EXPECT_TRUE(Module::load(bytes.data(), bytes.size()).ok());
}

TEST(ModuleFileTest, FlippedBytesAreRejectedOrHarmless) {
  const auto bytes = readBytes(modulePath("identity"));
  const auto so = hostLibrary("identity");
  const auto host_at = std::search(bytes.begin(), bytes.end(), so.begin(), so.end());
  ASSERT_NE(host_at, bytes.end());
  const size_t host_begin = static_cast<size_t>(host_at - bytes.begin());
  const size_t host_end = host_begin + so.size();
  int rejected = 0, accepted = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    auto copy = bytes;
    copy[i] ^= 0xff;
    auto m = Module::load(copy.data(), copy.size());
    if (i >= host_begin && i < host_end) {
      // Corrupt code never reaches dlopen.
      ASSERT_EQ(m.status().code(), StatusCode::kDataLoss) << i << ": " << m.status();
      ASSERT_TRUE(contains(m.status().message(), "checksum")) << m.status();
    }
    if (!m.ok()) {
      ASSERT_FALSE(m.status().message().empty());
      ++rejected;
      continue;
    }
    ++accepted;  // padding, a name, constant data: the module is still consistent
    standalone::StandaloneContext::Options options;
    auto ctx = standalone::StandaloneContext::create(*m, options);
    (void)ctx;  // linking may fail on a changed name; it must not crash
  }
  EXPECT_GT(rejected, static_cast<int>(so.size()));
  RecordProperty("accepted_flips", accepted);
  // The original still loads and the process is fine.
  EXPECT_TRUE(Module::load(bytes.data(), bytes.size()).ok());
}

// The device a module's code runs on: from its signatures, else from the devices its imports
// name; two devices are refused by name.
TEST(ModuleFileTest, ModuleDeviceComesFromSignaturesAndImports) {
  auto deviceOf = [](const ModuleSpec& spec) -> StatusOr<DeviceKind> {
    ModuleBuilder b(spec);
    RAL_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, b.build());
    LoadOptions o;
    o.load_host_library = false;
    RAL_ASSIGN_OR_RETURN(std::shared_ptr<Module> m, Module::load(bytes.data(), bytes.size(), o));
    return moduleDevice(*m);
  };
  ModuleSpec spec = identitySpec();
  EXPECT_EQ(*deviceOf(spec), DeviceKind::kCpu);
  spec.imports.push_back("ral_gemm___vulkan___pvoid_m2df32_m2df32_m2df32_i1_i1___void");
  EXPECT_EQ(*deviceOf(spec), DeviceKind::kVulkan);
  spec = identitySpec();
  spec.inputs[0].device = spec.outputs[0].device = DeviceKind::kVulkan;
  EXPECT_EQ(*deviceOf(spec), DeviceKind::kVulkan);
  spec.imports.push_back("ral_gemm___cuda___pvoid_m2df32_m2df32_m2df32_i1_i1___void");
  auto two = deviceOf(spec);
  ASSERT_FALSE(two.ok());
  EXPECT_EQ(two.status().code(), StatusCode::kUnsupported);
  EXPECT_TRUE(contains(two.status().message(), "uses two devices: vulkan (input 0) and cuda"))
      << two.status();
}

TEST(ModuleFileTest, WrongAbiVersionIsRejected) {
  ModuleBuilder b(identitySpec());
  b.setAbiVersion(RAL_ABI_VERSION + 1);
  auto bytes = b.build();
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  Status s = loadStatus(*bytes);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(contains(s.message(), "ABI version 2")) << s;
  EXPECT_TRUE(contains(s.message(), "implements version 1")) << s;
}

TEST(ModuleFileTest, WrongFileIdentifierIsRejected) {
  auto bytes = readBytes(modulePath("identity"));
  std::copy_n("NOPE", 4, bytes.begin() + 8);
  Status s = loadStatus(bytes);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(contains(s.message(), "not a RAL module: the file identifier is 'NOPE'")) << s;
  // Something else entirely.
  std::string text = "#!/bin/sh\necho this is not a module\n";
  EXPECT_TRUE(contains(loadStatus(std::vector<uint8_t>(text.begin(), text.end())).message(),
                       "not a RAL module"));
}

TEST(ModuleFileTest, MissingOrBrokenHostLibraryIsRejected) {
  ModuleSpec spec = identitySpec();
  spec.host_library.clear();
  EXPECT_TRUE(contains(ModuleBuilder(spec).build().status().message(), "no host library"));
  Status s = loadStatus(ModuleBuilder(spec).buildUnchecked());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(contains(s.message(), "the module has no host library")) << s;

  spec.host_library = std::vector<uint8_t>(100, 'x');
  EXPECT_TRUE(contains(loadStatus(ModuleBuilder(spec).buildUnchecked()).message(), "not an ELF"));
  // An ELF header with nothing behind it: dlopen refuses it with a message, nothing crashes.
  spec.host_library = hostLibrary("identity");
  spec.host_library.resize(200);
  s = loadStatus(ModuleBuilder(spec).buildUnchecked());
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s;
  EXPECT_TRUE(contains(s.message(), "cannot load the host library")) << s;
}

TEST(ModuleFileTest, EntryAndImportTableMustMatchTheLibrary) {
  ModuleBuilder b(identitySpec());
  b.setEntry("not_there");
  Status s = loadStatus(*b.build());
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_TRUE(contains(s.message(), "does not define the entry function 'not_there'")) << s;

  ModuleSpec spec = identitySpec();
  spec.imports.pop_back();
  s = loadStatus(*ModuleBuilder(spec).build());
  EXPECT_TRUE(contains(s.message(), "does not match the 2 imports")) << s;
  spec = identitySpec();
  spec.imports[1] = "ral_alloc___cpu___pvoid_i32___pvoid";
  s = loadStatus(*ModuleBuilder(spec).build());
  EXPECT_TRUE(contains(s.message(),
                       "import #1 of the host library is "
                       "'ral_alloc___cpu___pvoid_i64___pvoid'"))
      << s;
  spec.imports[1] = "not an encoded name";
  EXPECT_TRUE(contains(ModuleBuilder(spec).build().status().message(), "not an encoded RAL"));
  EXPECT_TRUE(
      contains(loadStatus(ModuleBuilder(spec).buildUnchecked()).message(), "not an encoded RAL"));
  spec = identitySpec();
  spec.entry = "1bad";
  EXPECT_TRUE(
      contains(loadStatus(ModuleBuilder(spec).buildUnchecked()).message(), "not a C identifier"));
}

TEST(ModuleFileTest, BadSignaturesAndConstantsAreRejected) {
  ModuleSpec spec = identitySpec();
  spec.inputs[0].dims = std::vector<int64_t>(9, 1);
  EXPECT_TRUE(
      contains(loadStatus(ModuleBuilder(spec).buildUnchecked()).message(), "input 0 has rank 9"))
      << loadStatus(ModuleBuilder(spec).buildUnchecked());
  spec = identitySpec();
  spec.outputs[0].dims = {2, -5};
  EXPECT_TRUE(contains(loadStatus(ModuleBuilder(spec).buildUnchecked()).message(),
                       "output 0 has an invalid size -5"));
  spec = identitySpec();
  spec.outputs[0].dtype = static_cast<DType>(77);
  EXPECT_TRUE(contains(loadStatus(ModuleBuilder(spec).buildUnchecked()).message(),
                       "invalid element type (code 77)"));
  spec = identitySpec();
  spec.inputs[0].strides = {1};
  EXPECT_TRUE(contains(loadStatus(ModuleBuilder(spec).buildUnchecked()).message(),
                       "input 0 has a layout with 1 strides for rank 2"));
  spec.inputs[0].strides = {-7, 1};
  EXPECT_TRUE(contains(loadStatus(ModuleBuilder(spec).buildUnchecked()).message(),
                       "invalid stride -7 in dimension 0"));
  spec = identitySpec();
  spec.inputs[0].device = static_cast<DeviceKind>(9);
  EXPECT_TRUE(
      contains(loadStatus(ModuleBuilder(spec).buildUnchecked()).message(), "invalid device"));

  spec = identitySpec();
  spec.constants.push_back({"w", DType::kF32, {2, 2}, std::vector<uint8_t>(12)});
  EXPECT_FALSE(ModuleBuilder(spec).build().ok());
  Status s = loadStatus(ModuleBuilder(spec).buildUnchecked());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(contains(s.message(), "constant 'w' of shape 2x2xf32 needs 16 bytes but holds 12"))
      << s;
  spec.constants[0] = {"w", DType::kF32, {int64_t{1} << 40, int64_t{1} << 40}, {}};
  EXPECT_TRUE(
      contains(loadStatus(ModuleBuilder(spec).buildUnchecked()).message(), "too many elements"));
  spec.constants[0] = {"w", DType::kF32, {1}, std::vector<uint8_t>(4)};
  spec.constants.push_back(spec.constants[0]);
  EXPECT_TRUE(contains(loadStatus(ModuleBuilder(spec).buildUnchecked()).message(),
                       "two constants are named 'w'"));
  spec = identitySpec();
  spec.executables.push_back({"k", ExecutableFormat::kPtx, {}, {}});
  EXPECT_TRUE(contains(loadStatus(ModuleBuilder(spec).buildUnchecked()).message(),
                       "executable 'k' is empty"));
  spec.executables[0] = {"k", ExecutableFormat::kPtx, {1}, {{"e", {0, 4, 1}}}};
  EXPECT_TRUE(
      contains(loadStatus(ModuleBuilder(spec).buildUnchecked()).message(), "workgroup size 0x4x1"));
  spec.name.clear();
  EXPECT_TRUE(contains(loadStatus(ModuleBuilder(spec).buildUnchecked()).message(), "no name"));
}

TEST(ModuleFileTest, FileProblemsAreClearErrors) {
  auto missing = Module::load(std::string("/nonexistent/model.ralm"));
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(contains(missing.status().message(), "/nonexistent/model.ralm")) << missing.status();
  EXPECT_FALSE(Module::load(::testing::TempDir()).ok());
  const std::string empty = ::testing::TempDir() + "/empty.ralm";
  std::fclose(std::fopen(empty.c_str(), "wb"));
  EXPECT_TRUE(contains(Module::load(empty).status().message(), "the file is empty"));
  std::remove(empty.c_str());
  EXPECT_FALSE(Module::load(nullptr, 10).ok());

  auto bytes = readBytes(modulePath("identity"));
  bytes.push_back(0);
  Status s = loadStatus(bytes);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_TRUE(contains(s.message(), "1 unexpected bytes after the module data")) << s;
}

TEST(ModuleFileTest, ImportsAreResolvedOnceWithEveryMissingName) {
  auto m = Module::load(modulePath("missing_import"));
  ASSERT_TRUE(m.ok()) << m.status();
  auto ctx = standalone::StandaloneContext::create(*m);
  ASSERT_FALSE(ctx.ok());
  const Status& s = ctx.status();
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_TRUE(contains(s.message(), "linking module 'missing_import'")) << s;
  EXPECT_TRUE(contains(s.message(), "2 of 3 imports could not be resolved")) << s;
  EXPECT_TRUE(contains(s.message(), "ral_no_such_function___cpu___pvoid___void")) << s;
  EXPECT_TRUE(contains(s.message(), "ral_recv_inptu___cpu___pvoid_i64___m1df32")) << s;
  // The typo gets the real name as a suggestion.
  EXPECT_TRUE(
      contains(s.message(), "closest registered: ral_recv_input___cpu___pvoid_i64___m1df32"))
      << s;
  EXPECT_FALSE((*m)->linked());
}

TEST(ModuleFileTest, AModuleServesOneExecutionType) {
  auto m = Module::load(modulePath("add_r1"));
  ASSERT_TRUE(m.ok());
  auto ctx = standalone::StandaloneContext::create(*m);
  if (!ctx.ok()) GTEST_SKIP() << ctx.status();  // no CPU driver in this build
  EXPECT_TRUE((*m)->linked());
  EXPECT_TRUE((*m)->link(**ctx).ok());  // again: no-op
  Context base;                         // the base type cannot reuse the standalone table
  Status s = (*m)->link(base);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(contains(s.message(), "load it again")) << s;

  LoadOptions inspect;
  inspect.load_host_library = false;
  auto cold = Module::load(modulePath("add_r1"), inspect);
  ASSERT_TRUE(cold.ok());
  EXPECT_EQ((*cold)->entry(), nullptr);
  EXPECT_EQ((*cold)->link(base).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(standalone::StandaloneContext::create(*cold).status().code(),
            StatusCode::kFailedPrecondition);
}

TEST(TensorSignatureTest, ParsesAndPrints) {
  auto s = parseTensorSignature("a:?x3xf32");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->name, "a");
  EXPECT_EQ(s->dims, (std::vector<int64_t>{kDynamicDim, 3}));
  EXPECT_EQ(s->toString(), "?x3xf32");
  EXPECT_EQ(parseTensorSignature("i1")->rank(), 0);
  EXPECT_EQ(parseTensorSignature("2xbf16@cuda")->device, DeviceKind::kCuda);
  EXPECT_FALSE(parseTensorSignature("2x3").ok());
  EXPECT_FALSE(parseTensorSignature("2xax3xf32").ok());
  EXPECT_FALSE(parseTensorSignature("1x1x1x1x1x1x1x1x1xf32").ok());
  EXPECT_FALSE(parseTensorSignature("2xf32@tpu").ok());
  // Layouts: printed as parsed, spaces allowed, one stride per dimension.
  auto strided = parseTensorSignature("x:?x?xf32, strided<[?, 1]>@cuda");
  ASSERT_TRUE(strided.ok()) << strided.status();
  EXPECT_EQ(strided->name, "x");
  EXPECT_EQ(strided->strides, (std::vector<int64_t>{kDynamicDim, 1}));
  EXPECT_EQ(strided->device, DeviceKind::kCuda);
  EXPECT_EQ(strided->toString(), "?x?xf32,strided<[?,1]>@cuda");
  EXPECT_EQ(strided->layoutString(), "strided<[?,1]>");
  EXPECT_EQ(parseTensorSignature("?x?xf32,strided<[?,1]>")->toString(), "?x?xf32,strided<[?,1]>");
  EXPECT_EQ(parseTensorSignature("2x3xf32")->layoutString(), "row-major");
  EXPECT_EQ(parseTensorSignature("4xf32,strided<[2]>")->strides, (std::vector<int64_t>{2}));
  for (const char* bad : {"?x?xf32,strided<[1]>", "?xf32,strided<[-1]>", "?xf32,strided<[a]>",
                          "?xf32,strided[1]", "?xf32,strided<[]>", "?xf32,"}) {
    auto r = parseTensorSignature(bad);
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_TRUE(contains(r.status().message(), "layout") ||
                contains(r.status().message(), "stride"))
        << r.status();
  }
  EXPECT_NE(moduleChecksum("abc", 3), moduleChecksum("abd", 3));
  EXPECT_NE(moduleChecksum("", 0), moduleChecksum("\0", 1));
}

}  // namespace
}  // namespace ral
