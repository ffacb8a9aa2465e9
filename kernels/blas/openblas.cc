#include "kernels/blas/openblas.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "drivers/common/dynamic_library.h"

namespace ral::kernels::cpu {
namespace {

template <typename F>
F symbol(void* handle, const char* name) {
  return reinterpret_cast<F>(dlsym(handle, name));
}

struct Loaded {
  OpenBlas api;
  Status status;
};

Loaded load() {
  Loaded out;
  OpenBlas& api = out.api;
  const std::vector<std::string> candidates =
      drivers::libraryCandidates("RAL_OPENBLAS_PATH", {"libopenblas.so.0", "libopenblas.so"});

  void* handle = nullptr;
  for (const std::string& name : candidates) {
    handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (handle != nullptr) {
      api.was_already_loaded = true;
      api.library = name;
      break;
    }
  }
  if (handle == nullptr) {
    // Before the constructor runs: choose the kernels, unless the user did.
    const char* user = std::getenv("OPENBLAS_CORETYPE");
    if (user == nullptr || *user == '\0') {
      const std::string chosen = recommendedOpenBlasCoreType();
      if (!chosen.empty() && setenv("OPENBLAS_CORETYPE", chosen.c_str(), 1) == 0)
        api.coretype_chosen_by_ral = true;
    }
    std::string errors;
    for (const std::string& name : candidates) {
      handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (handle != nullptr) {
        api.library = name;
        break;
      }
      const char* e = dlerror();
      errors += internal::strCat("\n  ", name, ": ", e ? e : "unknown error");
    }
    if (handle == nullptr) {
      out.status = unavailable(
          "OpenBLAS could not be loaded (install libopenblas0 or point RAL_OPENBLAS_PATH at it):",
          errors);
      return out;
    }
  }
  if (const char* ct = std::getenv("OPENBLAS_CORETYPE")) api.coretype = ct;
  api.sgemm = symbol<decltype(api.sgemm)>(handle, "cblas_sgemm");
  api.dgemm = symbol<decltype(api.dgemm)>(handle, "cblas_dgemm");
  api.set_num_threads = symbol<decltype(api.set_num_threads)>(handle, "openblas_set_num_threads");
  api.get_num_threads = symbol<decltype(api.get_num_threads)>(handle, "openblas_get_num_threads");
  api.get_corename = symbol<decltype(api.get_corename)>(handle, "openblas_get_corename");
  api.get_config = symbol<decltype(api.get_config)>(handle, "openblas_get_config");
  if (!api.sgemm || !api.dgemm || !api.set_num_threads || !api.get_num_threads) {
    out.status = unavailable("'", api.library,
                             "' lacks cblas_sgemm, cblas_dgemm or openblas_set_num_threads: "
                             "is it OpenBLAS?");
  }
  // The handle stays open for the life of the process, as OpenBLAS's threads expect.
  return out;
}

const Loaded& loaded() {
  static const Loaded* instance = new Loaded(load());
  return *instance;
}

std::mutex threads_mutex;
std::atomic<int> threads_set{0};

}  // namespace

std::string recommendedOpenBlasCoreType() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  // __builtin_cpu_supports checks XGETBV too, so these are usable, not just present.
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
                      __builtin_cpu_supports("avx512cd");
  if (avx512 && __builtin_cpu_supports("avx512bf16")) return "Cooperlake";
  if (avx512) return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
#endif
  return "";
}

StatusOr<const OpenBlas*> openBlas() {
  const Loaded& l = loaded();
  if (!l.status.ok()) return l.status;
  return &l.api;
}

Status setOpenBlasThreads(int threads) {
  if (threads < 1) threads = 1;
  if (threads_set.load(std::memory_order_acquire) == threads) return Status();
  RAL_ASSIGN_OR_RETURN(const OpenBlas* blas, openBlas());
  std::lock_guard<std::mutex> lock(threads_mutex);
  if (threads_set.load(std::memory_order_relaxed) != threads) {
    blas->set_num_threads(threads);
    threads_set.store(threads, std::memory_order_release);
  }
  return Status();
}

std::string openBlasDescription() {
  auto blas = openBlas();
  if (!blas.ok()) return blas.status().toString();
  const OpenBlas& b = **blas;
  return internal::strCat(
      b.library, ": ", b.get_config ? b.get_config() : "OpenBLAS", ", core ",
      b.get_corename ? b.get_corename() : "?",
      b.coretype.empty()
          ? std::string()
          : internal::strCat(" (OPENBLAS_CORETYPE=", b.coretype,
                             b.coretype_chosen_by_ral ? ", set by RAL)" : ", set by the user)"),
      b.was_already_loaded ? ", loaded before RAL" : "", ", ", b.get_num_threads(), " threads");
}

}  // namespace ral::kernels::cpu
