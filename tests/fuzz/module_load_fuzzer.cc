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
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "ral/module.h"
#include "ral/standalone_context.h"
#include "tests/fuzz/module_fuzz_support.h"

namespace {

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

void loadOne(const uint8_t* data, size_t size) {
  ral::LoadOptions inspect;
  inspect.load_host_library = false;
  auto m = ral::Module::load(data, size, inspect);
  if (!m.ok()) {
    ral::fuzz::checkError(m.status());
    return;
  }
  touch(**m);
  if (ral::fuzz::trustedLibraries().count((*m)->hostLibraryChecksum()) == 0) return;
  auto full = ral::Module::load(data, size);
  if (!full.ok()) {
    ral::fuzz::checkError(full.status());
    return;
  }
  auto ctx = ral::standalone::StandaloneContext::create(*full);
  if (!ctx.ok()) ral::fuzz::checkError(ctx.status());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ral::fuzz::asGivenAndResealed(data, size, loadOne);
  return 0;
}
