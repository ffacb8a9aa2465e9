// libFuzzer target for Module::load(bytes): any input must give a module or a Status with a
// message, never a crash, a sanitizer report or a hang.
//
// Module code is native code: the loader verifies its checksum but dlopen is not a parser for
// hostile ELF files, so the full load (dlopen, symbol checks, import linking) runs only when the
// host library is one of the test modules' own (RAL_TEST_MODULE_DIR). Everything else — the
// file structure, the manifest, constants, executables, checksums — is fuzzed on every input.
// Each input is loaded as given and, when its structure verifies, again with its manifest
// checksum recomputed: otherwise nearly every mutation would stop at the checksum, and the
// checks behind it would go unfuzzed.
#include <dirent.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "ral/standalone_context.h"
#include "ral/manifest_checksum.h"
#include "ral/module.h"

namespace {

std::set<uint64_t>& trustedLibraries() {
  static std::set<uint64_t> trusted;
  return trusted;
}

void touch(const ral::Module& m) {
  size_t sum = m.name().size() + m.entryName().size() + m.hostLibrarySize();
  for (const auto& s : m.inputs()) sum += s.toString().size();
  for (const auto& s : m.outputs()) sum += s.toString().size();
  for (const auto& i : m.imports()) sum += i.size();
  for (const auto& c : m.constants()) {
    const auto* p = static_cast<const uint8_t*>(c.data);
    for (size_t i = 0; i < c.size; ++i) sum += p[i];
  }
  for (const auto& e : m.executables()) {
    const auto* p = static_cast<const uint8_t*>(e.data);
    for (size_t i = 0; i < e.size; ++i) sum += p[i];
    for (const auto& ep : e.entries) sum += ep.name.size() + ep.workgroup_size.count();
  }
  if (sum == 1) std::fputc(0, stderr);  // keeps the reads
}

void checkError(const ral::Status& s) {
  if (s.ok() || s.message().empty()) __builtin_trap();  // failures must explain themselves
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const std::string dir = RAL_TEST_MODULE_DIR;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name.size() < 4 || name.compare(name.size() - 3, 3, ".so") != 0) continue;
      std::ifstream in(dir + "/" + name, std::ios::binary);
      std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
      trustedLibraries().insert(ral::moduleChecksum(bytes.data(), bytes.size()));
    }
    closedir(d);
  }
  return 0;
}

namespace {

void loadOne(const uint8_t* data, size_t size) {
  ral::LoadOptions inspect;
  inspect.load_host_library = false;
  auto m = ral::Module::load(data, size, inspect);
  if (!m.ok()) {
    checkError(m.status());
    return;
  }
  touch(**m);
  if (trustedLibraries().count((*m)->hostLibraryChecksum()) == 0) return;
  auto full = ral::Module::load(data, size);
  if (!full.ok()) {
    checkError(full.status());
    return;
  }
  auto ctx = ral::standalone::StandaloneContext::create(*full);
  if (!ctx.ok()) checkError(ctx.status());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  loadOne(data, size);
  std::vector<uint8_t> resealed(data, data + size);
  if (ral::internal::resealManifest(resealed.data(), resealed.size()).ok())
    loadOne(resealed.data(), resealed.size());
  return 0;
}
