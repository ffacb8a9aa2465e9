// HsaLibrary: the HSA runtime (libhsa-runtime64.so.1, ROCr), loaded with dlopen so RAL has no
// link-time dependency on it. Every entry point RAL uses is one field of a single symbol table
// (RAL_HSA_SYMBOLS), resolved once per library path; hsa_init runs once per loaded library and
// hsa_shut_down never (runtime threads may still call back during process exit).
//
// Where the library comes from: HsaDriverOptions::library_path, else $RAL_HSA_RUNTIME_PATH (a
// file, or a colon-separated list of directories searched for libhsa-runtime64.so.1), else the
// default name through the dynamic loader's own search path.
//
// Libraries are process-wide and never unloaded; get() is thread-safe and returns the same
// answer (library or error) for the same path every time. This header includes hsa.h for its
// types only; it stays inside drivers/hsa and the tests of this driver.
#ifndef RAL_DRIVERS_HSA_HSA_LIBRARY_H_
#define RAL_DRIVERS_HSA_HSA_LIBRARY_H_

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>

#include <string>
#include <string_view>

#include "ral/status.h"

namespace ral::hsa {

inline constexpr char kHsaRuntimePathEnv[] = "RAL_HSA_RUNTIME_PATH";
inline constexpr char kHsaRuntimeName[] = "libhsa-runtime64.so.1";

#define RAL_HSA_SYMBOLS(X)                     \
  X(hsa_init)                                  \
  X(hsa_status_string)                         \
  X(hsa_iterate_agents)                        \
  X(hsa_agent_get_info)                        \
  X(hsa_agent_iterate_isas)                    \
  X(hsa_isa_get_info_alt)                      \
  X(hsa_amd_agent_iterate_memory_pools)        \
  X(hsa_amd_memory_pool_get_info)              \
  X(hsa_amd_memory_pool_allocate)              \
  X(hsa_amd_memory_pool_free)                  \
  X(hsa_amd_agents_allow_access)               \
  X(hsa_amd_memory_async_copy)                 \
  X(hsa_amd_memory_lock)                       \
  X(hsa_amd_memory_unlock)                     \
  X(hsa_signal_create)                         \
  X(hsa_signal_destroy)                        \
  X(hsa_signal_load_scacquire)                 \
  X(hsa_signal_store_screlease)                \
  X(hsa_signal_wait_scacquire)                 \
  X(hsa_amd_signal_async_handler)              \
  X(hsa_queue_create)                          \
  X(hsa_queue_destroy)                         \
  X(hsa_queue_add_write_index_screlease)       \
  X(hsa_queue_load_read_index_scacquire)       \
  X(hsa_code_object_reader_create_from_memory) \
  X(hsa_code_object_reader_destroy)            \
  X(hsa_executable_create_alt)                 \
  X(hsa_executable_load_agent_code_object)     \
  X(hsa_executable_freeze)                     \
  X(hsa_executable_validate)                   \
  X(hsa_executable_get_symbol_by_name)         \
  X(hsa_executable_symbol_get_info)            \
  X(hsa_executable_destroy)

struct HsaSymbols {
#define RAL_HSA_DECLARE_SYMBOL(name) decltype(&::name) name = nullptr;
  RAL_HSA_SYMBOLS(RAL_HSA_DECLARE_SYMBOL)
#undef RAL_HSA_DECLARE_SYMBOL
};

class HsaLibrary {
 public:
  // The library at `path` (empty: hsaRuntimePath()), loaded and hsa_init-ed on the first call.
  // Unavailable, naming HSA, the path and the cause, when the library or one of its symbols is
  // missing or hsa_init fails.
  static StatusOr<const HsaLibrary*> get(const std::string& path = "");
  HsaLibrary(const HsaLibrary&) = delete;
  HsaLibrary& operator=(const HsaLibrary&) = delete;

  const HsaSymbols& symbols() const { return symbols_; }
  const std::string& path() const { return path_; }

  // OK for HSA_STATUS_SUCCESS (and HSA_STATUS_INFO_BREAK), else an error naming the call and
  // the runtime's text for `status`. Out-of-resources errors are OutOfMemory, bad code objects
  // and arguments InvalidArgument.
  Status check(hsa_status_t status, std::string_view call) const;
  // The runtime's own description of `status`.
  std::string describe(hsa_status_t status) const;

 private:
  HsaLibrary() = default;
  static StatusOr<const HsaLibrary*> load(const std::string& path);

  void* handle_ = nullptr;
  std::string path_;
  HsaSymbols symbols_;
};

// The library path get() uses for an empty argument: $RAL_HSA_RUNTIME_PATH resolved (a file; the
// first directory of the list holding libhsa-runtime64.so.1; else the variable as given, so
// the load error names it), or "libhsa-runtime64.so.1".
std::string hsaRuntimePath();

}  // namespace ral::hsa

// RAL_HSA_CALL(lib, hsa_foo, args...) -> Status naming "hsa_foo".
#define RAL_HSA_CALL(lib, fn, ...) (lib).check((lib).symbols().fn(__VA_ARGS__), #fn)

#endif  // RAL_DRIVERS_HSA_HSA_LIBRARY_H_
