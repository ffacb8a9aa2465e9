// Tampered module files: every field of the manifest changed in place (without recomputing the
// manifest checksum) must be refused as a corrupt file; every single-byte change must be refused
// or leave the module exactly as it was (padding); symbols of the wrong kind or from another
// library must not be run.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "module_generated.h"
#include "ral/manifest_checksum.h"
#include "ral/module.h"
#include "ral/module_builder.h"
#include "ral/standalone_context.h"

namespace ral {
namespace {

std::vector<uint8_t> readBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
}

std::vector<uint8_t> hostLibrary(const std::string& name) {
  return readBytes(std::string(RAL_TEST_MODULE_DIR) + "/" + name + ".so");
}

bool contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

// The add module (rank 2) with every kind of manifest field filled in: named, strided and
// static signatures, an executable with entries and workgroup sizes, one with per-architecture
// variants, a constant, imports.
ModuleSpec completeSpec() {
  ModuleSpec spec;
  spec.name = "add_full";
  spec.inputs.push_back({"a", DType::kF32, {256, kDynamicDim}, DeviceKind::kCpu, {kDynamicDim, 1}});
  spec.inputs.push_back({"b", DType::kF32, {256, kDynamicDim}, DeviceKind::kCpu, {}});
  spec.outputs.push_back({"sum", DType::kF32, {256, kDynamicDim}, DeviceKind::kCpu, {}});
  spec.host_library = hostLibrary("add_r2");
  spec.imports = {"ral_recv_input___cpu___pvoid_i64___m2df32",
                  "ral_alloc___cpu___pvoid_i64___pvoid",
                  "ral_send_output___cpu___pvoid_i64_m2df32___void",
                  "ral_signal_error___cpu___pvoid_i32_pi8___void"};
  ExecutableDef spirv;
  spirv.name = "kernels";
  spirv.format = ExecutableFormat::kSpirv;
  spirv.data.assign(64, 0x5a);
  spirv.entries.push_back({"main", Dim3{64, 1, 1}});
  spirv.entries.push_back({"other", Dim3{0, 0, 0}});
  spec.executables.push_back(spirv);
  // Per-architecture code (ral-compile --gpu-arch).
  ExecutableDef ptx;
  ptx.name = "gpu_kernels";
  ptx.format = ExecutableFormat::kPtx;
  ptx.entries.push_back({"gpu_main", Dim3{256, 1, 1}});
  ptx.variants.push_back({"sm_80", std::vector<uint8_t>(24, 0x61)});
  ptx.variants.push_back({"sm_90", std::vector<uint8_t>(20, 0x62)});
  spec.executables.push_back(ptx);
  ConstantDef c;
  c.name = "weights";
  c.dtype = DType::kF32;
  c.shape = {2, 2};
  c.data.resize(16);
  const float values[4] = {1, 2, 3, 4};
  std::memcpy(c.data.data(), values, 16);
  spec.constants.push_back(c);
  return spec;
}

std::vector<uint8_t> completeModule() {
  auto bytes = ModuleBuilder(completeSpec()).build();
  EXPECT_TRUE(bytes.ok()) << bytes.status();
  return *bytes;
}

fb::Module* mutableRoot(std::vector<uint8_t>& bytes) {
  return fb::GetMutableSizePrefixedModule(bytes.data());
}

void flipString(flatbuffers::String* s) {
  ASSERT_NE(s, nullptr);
  ASSERT_GT(s->size(), 0u);
  const_cast<char*>(s->c_str())[0] ^= 0x01;
}

// Everything a loaded module exposes, as text, to compare a changed file with the original.
std::string describe(const Module& m) {
  std::string d = m.name() + "|" + m.entryName() + "|" + std::to_string(m.abiVersion());
  for (const auto& s : m.inputs()) d += "|in " + s.name + ":" + s.toString();
  for (const auto& s : m.outputs()) d += "|out " + s.name + ":" + s.toString();
  for (const auto& i : m.imports()) d += "|imp " + i;
  for (const auto& e : m.executables()) {
    d += "|exe " + e.name + " " + std::to_string(static_cast<int>(e.format)) + " ";
    for (const auto& v : e.variants) {
      d += " [" + v.target + "] ";
      d.append(static_cast<const char*>(v.data), v.size);
    }
    for (const auto& ep : e.entries)
      d += " " + ep.name + "=" + std::to_string(ep.workgroup_size.x) + "x" +
           std::to_string(ep.workgroup_size.y) + "x" + std::to_string(ep.workgroup_size.z);
  }
  for (const auto& c : m.constants()) {
    d += "|const " + c.name + " " + std::string(dtypeName(c.dtype));
    for (int64_t s : c.shape) d += " " + std::to_string(s);
    d.append(static_cast<const char*>(c.data), c.size);
  }
  d += "|host " + std::to_string(m.hostLibrarySize()) + " " +
       std::to_string(m.hostLibraryChecksum());
  return d;
}

TEST(TamperedModuleTest, TheUntouchedModuleLoadsAndRuns) {
  const auto bytes = completeModule();
  auto m = Module::load(bytes.data(), bytes.size());
  ASSERT_TRUE(m.ok()) << m.status();
}

// One case per manifest field: the file is changed where that field is stored.
TEST(TamperedModuleTest, EveryManifestFieldIsCoveredByTheChecksum) {
  const std::vector<std::pair<const char*, std::function<void(fb::Module*)>>> fields = {
      {"name", [](fb::Module* m) { flipString(m->mutable_name()); }},
      {"entry", [](fb::Module* m) { flipString(m->mutable_entry()); }},
      {"input name",
       [](fb::Module* m) { flipString(m->mutable_inputs()->GetMutableObject(0)->mutable_name()); }},
      {"input dtype",
       [](fb::Module* m) {
         m->mutable_inputs()->GetMutableObject(0)->mutate_dtype(fb::DType_f64);
       }},
      {"input dim (256 -> 0)",
       [](fb::Module* m) {
         m->mutable_inputs()->GetMutableObject(0)->mutable_dims()->Mutate(0, 0);
       }},
      {"input dim (256 -> 257)",
       [](fb::Module* m) {
         m->mutable_inputs()->GetMutableObject(1)->mutable_dims()->Mutate(0, 257);
       }},
      {"input stride",
       [](fb::Module* m) {
         m->mutable_inputs()->GetMutableObject(0)->mutable_strides()->Mutate(1, 2);
       }},
      {"input device",
       [](fb::Module* m) {
         m->mutable_inputs()->GetMutableObject(0)->mutate_device(fb::Device_cuda);
       }},
      {"output dim",
       [](fb::Module* m) {
         m->mutable_outputs()->GetMutableObject(0)->mutable_dims()->Mutate(0, 1);
       }},
      {"output dtype",
       [](fb::Module* m) {
         m->mutable_outputs()->GetMutableObject(0)->mutate_dtype(fb::DType_i32);
       }},
      {"host library checksum",
       [](fb::Module* m) { m->mutate_host_library_checksum(m->host_library_checksum() ^ 1); }},
      {"executable name",
       [](fb::Module* m) {
         flipString(m->mutable_executables()->GetMutableObject(0)->mutable_name());
       }},
      {"executable format",
       [](fb::Module* m) {
         m->mutable_executables()->GetMutableObject(0)->mutate_format(fb::ExecutableFormat_ptx);
       }},
      {"executable entry name",
       [](fb::Module* m) {
         flipString(m->mutable_executables()
                        ->GetMutableObject(0)
                        ->mutable_entries()
                        ->GetMutableObject(0)
                        ->mutable_name());
       }},
      {"executable workgroup size",
       [](fb::Module* m) {
         auto* wg = m->mutable_executables()
                        ->GetMutableObject(0)
                        ->mutable_entries()
                        ->GetMutableObject(0)
                        ->mutable_workgroup_size();
         wg->mutate_x(128);
       }},
      {"executable checksum",
       [](fb::Module* m) {
         auto* e = m->mutable_executables()->GetMutableObject(0);
         e->mutate_checksum(e->checksum() ^ 1);
       }},
      {"variant target",
       [](fb::Module* m) {
         flipString(m->mutable_executables()
                        ->GetMutableObject(1)
                        ->mutable_variants()
                        ->GetMutableObject(1)
                        ->mutable_target());
       }},
      {"variant checksum",
       [](fb::Module* m) {
         auto* v =
             m->mutable_executables()->GetMutableObject(1)->mutable_variants()->GetMutableObject(0);
         v->mutate_checksum(v->checksum() ^ 1);
       }},
      {"constant name",
       [](fb::Module* m) {
         flipString(m->mutable_constants()->GetMutableObject(0)->mutable_name());
       }},
      {"constant dtype",
       [](fb::Module* m) {
         m->mutable_constants()->GetMutableObject(0)->mutate_dtype(fb::DType_i32);
       }},
      {"constant shape",
       [](fb::Module* m) {
         m->mutable_constants()->GetMutableObject(0)->mutable_shape()->Mutate(0, 1);
       }},
      {"constant checksum",
       [](fb::Module* m) {
         auto* c = m->mutable_constants()->GetMutableObject(0);
         c->mutate_checksum(c->checksum() ^ 1);
       }},
      {"import name",
       [](fb::Module* m) { flipString(const_cast<flatbuffers::String*>(m->imports()->Get(3))); }},
  };
  const auto original = completeModule();
  for (const auto& [field, change] : fields) {
    SCOPED_TRACE(field);
    auto bytes = original;
    change(mutableRoot(bytes));
    ASSERT_NE(bytes, original) << "the change did not reach the file";
    Status s = Module::load(bytes.data(), bytes.size()).status();
    ASSERT_EQ(s.code(), StatusCode::kDataLoss) << s;
    EXPECT_TRUE(contains(s.message(), "manifest")) << s;
    EXPECT_TRUE(contains(s.message(), "fails its checksum")) << s;
  }
}

TEST(TamperedModuleTest, PayloadsAreCoveredByTheirChecksums) {
  const auto original = completeModule();
  auto constant = original;
  mutableRoot(constant)->mutable_constants()->GetMutableObject(0)->mutable_data()->Mutate(5, 0x7f);
  Status s = Module::load(constant.data(), constant.size()).status();
  EXPECT_EQ(s.code(), StatusCode::kDataLoss) << s;
  EXPECT_TRUE(contains(s.message(), "constant 'weights' fails its checksum")) << s;
  auto code = original;
  mutableRoot(code)->mutable_executables()->GetMutableObject(0)->mutable_data()->Mutate(0, 0);
  s = Module::load(code.data(), code.size()).status();
  EXPECT_TRUE(contains(s.message(), "executable 'kernels' fails its checksum")) << s;
  auto variant = original;
  mutableRoot(variant)
      ->mutable_executables()
      ->GetMutableObject(1)
      ->mutable_variants()
      ->GetMutableObject(1)
      ->mutable_data()
      ->Mutate(3, 0);
  s = Module::load(variant.data(), variant.size()).status();
  EXPECT_EQ(s.code(), StatusCode::kDataLoss) << s;
  EXPECT_TRUE(contains(s.message(), "executable 'gpu_kernels' variant 'sm_90' fails its checksum"))
      << s;
}

TEST(TamperedModuleTest, AFileWithoutAManifestChecksumIsRefusedWithAHint) {
  auto bytes = completeModule();
  ASSERT_TRUE(mutableRoot(bytes)->mutate_manifest_checksum(0));
  Status s = Module::load(bytes.data(), bytes.size()).status();
  EXPECT_EQ(s.code(), StatusCode::kDataLoss) << s;
  EXPECT_TRUE(contains(s.message(), "no manifest checksum")) << s;
  EXPECT_TRUE(contains(s.message(), "rebuild it")) << s;
}

// A resealed change is a different, valid module: the checks behind the checksum still apply.
TEST(TamperedModuleTest, AResealedBadSignatureIsStillChecked) {
  auto bytes = completeModule();
  mutableRoot(bytes)->mutable_inputs()->GetMutableObject(0)->mutate_dtype(
      static_cast<fb::DType>(200));
  ASSERT_TRUE(internal::resealManifest(bytes.data(), bytes.size()).ok());
  Status s = Module::load(bytes.data(), bytes.size()).status();
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(contains(s.message(), "input 0")) << s;
}

// Every byte of the file, each bit: refused, or (padding bytes) the very same module.
TEST(TamperedModuleTest, EverySingleBitFlipIsRefusedOrChangesNothing) {
  const auto original = completeModule();
  LoadOptions inspect;
  inspect.load_host_library = false;
  auto reference = Module::load(original.data(), original.size(), inspect);
  ASSERT_TRUE(reference.ok()) << reference.status();
  const std::string expected = describe(**reference);
  size_t refused = 0, unchanged = 0;
  for (size_t i = 0; i < original.size(); ++i)
    for (int bit = 0; bit < 8; ++bit) {
      auto bytes = original;
      bytes[i] ^= static_cast<uint8_t>(1u << bit);
      auto m = Module::load(bytes.data(), bytes.size(), inspect);
      if (!m.ok()) {
        ASSERT_FALSE(m.status().message().empty());
        ++refused;
        continue;
      }
      ASSERT_EQ(describe(**m), expected)
          << "byte " << i << " bit " << bit << " changed the module and it still loaded";
      ++unchanged;
    }
  RecordProperty("refused", static_cast<int>(refused));
  RecordProperty("padding", static_cast<int>(unchanged));
  EXPECT_GT(refused, original.size() * 7);
}

StatusOr<std::shared_ptr<Module>> loadWithEntry(const std::string& library,
                                                const std::string& entry) {
  ModuleSpec spec = completeSpec();
  spec.executables.clear();
  spec.host_library = hostLibrary(library);
  spec.entry = entry;
  RAL_ASSIGN_OR_RETURN(auto bytes, ModuleBuilder(spec).build());
  return Module::load(bytes.data(), bytes.size());
}

TEST(TamperedModuleTest, TheEntryMustBeAFunctionOfTheModulesOwnLibrary) {
  // Data: calling it would jump into the import table.
  for (const char* data : {"ral_imports", "ral_import_count"}) {
    auto m = loadWithEntry("add_r2", data);
    ASSERT_FALSE(m.ok()) << data;
    EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument) << m.status();
    EXPECT_TRUE(contains(m.status().message(), "is not a function")) << m.status();
  }
  // Functions of other libraries, reachable through dlsym's dependency search.
  for (const char* foreign : {"malloc", "abort", "ral_api_call"}) {
    auto m = loadWithEntry("add_r2", foreign);
    ASSERT_FALSE(m.ok()) << foreign;
    EXPECT_TRUE(contains(m.status().message(), "does not define the entry function") ||
                contains(m.status().message(), "not by the module's host library"))
        << m.status();
  }
  EXPECT_TRUE(loadWithEntry("add_r2", "ral_entry").ok());
}

TEST(TamperedModuleTest, HostKernelEntriesMustBeFunctions) {
  ModuleSpec spec = completeSpec();
  spec.executables.clear();
  ExecutableDef host;
  host.name = "host_kernels";
  host.format = ExecutableFormat::kHostFunction;
  const std::string names("ral_import_count\0", 17);
  host.data.assign(names.begin(), names.end());
  host.entries.push_back({"ral_import_count", Dim3{0, 0, 0}});
  spec.executables.push_back(host);
  auto bytes = ModuleBuilder(spec).build();
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  Status s = Module::load(bytes->data(), bytes->size()).status();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s;
  EXPECT_TRUE(contains(s.message(), "host executable 'host_kernels'")) << s;
  EXPECT_TRUE(contains(s.message(), "is not a function")) << s;
}

}  // namespace
}  // namespace ral
