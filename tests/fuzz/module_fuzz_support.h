// What the module fuzzers share: the set of host libraries trusted enough to dlopen (the test
// modules' own), the rule that failures explain themselves, and trying each input both as given
// and with its manifest checksum recomputed (otherwise nearly every mutation stops at the
// checksum and the checks behind it go unfuzzed).
#ifndef RAL_TESTS_FUZZ_MODULE_FUZZ_SUPPORT_H_
#define RAL_TESTS_FUZZ_MODULE_FUZZ_SUPPORT_H_

#include <dirent.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "ral/file_reader.h"
#include "ral/manifest_checksum.h"
#include "ral/module_spec.h"
#include "ral/status.h"

namespace ral::fuzz {

// Checksums of the shared objects in RAL_TEST_MODULE_DIR: module code is native code and dlopen
// is no parser for hostile ELF files, so only these are ever loaded.
inline std::set<uint64_t>& trustedLibraries() {
  static std::set<uint64_t>* trusted = [] {
    auto* set = new std::set<uint64_t>();
    const std::string dir = RAL_TEST_MODULE_DIR;
    if (DIR* d = opendir(dir.c_str())) {
      while (dirent* e = readdir(d)) {
        const std::string name = e->d_name;
        if (name.size() < 4 || name.compare(name.size() - 3, 3, ".so") != 0) continue;
        auto bytes = readRegularFile(dir + "/" + name);
        if (bytes.ok()) set->insert(moduleChecksum(bytes->data(), bytes->size()));
      }
      closedir(d);
    }
    return set;
  }();
  return *trusted;
}

inline void checkError(const Status& s) {
  if (s.ok() || s.message().empty()) __builtin_trap();  // failures must explain themselves
}

// Runs `load` on the input as given and, when its structure verifies, resealed.
template <typename Load>
void asGivenAndResealed(const uint8_t* data, size_t size, Load&& load) {
  load(data, size);
  std::vector<uint8_t> resealed(data, data + size);
  if (internal::resealManifest(resealed.data(), resealed.size()).ok())
    load(resealed.data(), resealed.size());
}

}  // namespace ral::fuzz

#endif  // RAL_TESTS_FUZZ_MODULE_FUZZ_SUPPORT_H_
