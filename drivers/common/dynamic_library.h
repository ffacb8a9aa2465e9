// Opening a vendor runtime with dlopen — the CUDA driver, the HSA runtime, the Vulkan loader,
// cuBLAS, cuDNN — by one convention:
//
//   RAL_<NAME>_PATH unset or empty  the library's sonames, in order, through the dynamic
//                                   linker's own search (LD_LIBRARY_PATH, ld.so.cache)
//   RAL_<NAME>_PATH=/a/file.so      that file
//   RAL_<NAME>_PATH=/dir1:/dir2     the first directory that holds one of the sonames
//
// What failed is an Unavailable error naming every path tried, why dlopen refused it, and what
// to install. Libraries are opened RTLD_NOW | RTLD_LOCAL; closing them is the caller's choice
// (runtimes with threads of their own are never closed). Header-only; thread-safe (dlopen is).
#ifndef RAL_DRIVERS_COMMON_DYNAMIC_LIBRARY_H_
#define RAL_DRIVERS_COMMON_DYNAMIC_LIBRARY_H_

#include <dlfcn.h>
#include <sys/stat.h>

#include <cstdlib>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "ral/status.h"

namespace ral::drivers {

struct DynamicLibrary {
  void* handle = nullptr;
  std::string path;  // what loaded
};

// The paths RAL tries for a library, by the convention above: `env` names the variable, and
// `sonames` the library's names, preferred first. Never empty.
inline std::vector<std::string> libraryCandidates(const char* env,
                                                  std::initializer_list<const char*> sonames) {
  auto is = [](const std::string& path, bool directory) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 &&
           (directory ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode));
  };
  const char* value = std::getenv(env);
  if (value == nullptr || value[0] == '\0')
    return std::vector<std::string>(sonames.begin(), sonames.end());
  const std::string set(value);
  if (is(set, false)) return {set};
  std::vector<std::string> found;
  for (size_t start = 0; start <= set.size();) {
    size_t end = set.find(':', start);
    if (end == std::string::npos) end = set.size();
    const std::string dir = set.substr(start, end - start);
    if (!dir.empty() && is(dir, true))
      for (const char* soname : sonames)
        if (is(dir + "/" + soname, false)) found.push_back(dir + "/" + soname);
    start = end + 1;
  }
  if (found.empty()) found.push_back(set);  // dlopen's error then names what was set
  return found;
}

// dlopen of the first candidate that loads. `what` opens the error ("cuda: cannot load cuBLAS"),
// `install` says what provides the library ("cuBLAS (CUDA toolkit)").
inline StatusOr<DynamicLibrary> openDynamicLibrary(std::string_view what, const char* env,
                                                   std::initializer_list<const char*> sonames,
                                                   std::string_view install) {
  std::string tried;
  for (const std::string& path : libraryCandidates(env, sonames)) {
    dlerror();
    if (void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL))
      return DynamicLibrary{handle, path};
    const char* why = dlerror();
    tried += "\n  " + path + ": " + (why != nullptr ? why : "unknown dlopen error");
  }
  return unavailable(what, "; tried:", tried, "\nInstall ", install, " or point ", env,
                     " at it (a file, or directories separated by ':')");
}

}  // namespace ral::drivers

#endif  // RAL_DRIVERS_COMMON_DYNAMIC_LIBRARY_H_
