// The dlopen of an optional vendor library (cuBLAS, cuDNN): the path in an environment variable
// when it is set, else the first of a list of sonames that loads. Every attempt that failed is
// described in `tried`, for the caller's error message. Thread-safe (dlopen is).
#ifndef RAL_KERNELS_COMMON_LIBRARY_LOADER_H_
#define RAL_KERNELS_COMMON_LIBRARY_LOADER_H_

#include <dlfcn.h>

#include <cstdlib>
#include <initializer_list>
#include <string>

namespace ral::kernels {

struct OpenedLibrary {
  void* handle = nullptr;  // null when nothing loaded
  std::string path;        // what loaded
};

inline OpenedLibrary openFirstLibrary(const char* path_env,
                                      std::initializer_list<const char*> sonames,
                                      std::string* tried) {
  auto attempt = [&](const std::string& candidate) {
    if (void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL))
      return OpenedLibrary{handle, candidate};
    const char* why = dlerror();
    *tried += "\n  " + candidate + ": " + (why != nullptr ? why : "not found");
    return OpenedLibrary{};
  };
  if (const char* env = std::getenv(path_env); env != nullptr && env[0] != '\0')
    return attempt(env);
  for (const char* soname : sonames) {
    OpenedLibrary opened = attempt(soname);
    if (opened.handle != nullptr) return opened;
  }
  return OpenedLibrary{};
}

}  // namespace ral::kernels

#endif  // RAL_KERNELS_COMMON_LIBRARY_LOADER_H_
