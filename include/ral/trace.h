// Traces of RAL executions in Chrome's trace-event JSON (open in https://ui.perfetto.dev or
// chrome://tracing): one track per thread, a span per execution of a module and, inside it, a
// span per RAL call the module makes (ral_gemm, ral_kernel_launch, ral_alloc, ...), inside each
// kernel launch a span (category "kernel") named after the kernel, so a trace shows where an
// execution's time went. Drivers add spans (category "driver") for the host side of copies,
// fills, stream synchronizations and semaphore waits, with the device and size in their args,
// and spans (category "device") of the device time of kernels and copies, on a track per device
// queue, where the device measures it (Vulkan timestamp queries, CUDA events).
//
// Recording starts with start(path), with RAL_TRACE=path in the environment (from the first use
// of the library until the process exits), or with `ral-run --trace=path`; stop() writes the
// file. The calls a module makes are traced whenever a trace records, whether the module was
// linked before or during the recording (its import table is switched to recording wrappers and
// back), by-name calls (ral_api_call) always. Off, the cost is one relaxed atomic
// load per execution. Events are buffered in memory until stop(). Thread-safe.
#ifndef RAL_TRACE_H_
#define RAL_TRACE_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>

#include "ral/abi.h"
#include "ral/status.h"

namespace ral::trace {

namespace internal {
extern std::atomic<bool> g_active;
// `name` and `args` outlive the trace (string literals, the wrappers' own strings); a null one
// is taken from `owned_name` / `owned_args`.
void record(const char* category, const char* name, const char* args, std::string owned_name,
            std::string owned_args, int64_t begin_ns, int64_t end_ns);
int64_t nowNs();
}  // namespace internal

// Whether a trace is being recorded.
inline bool active() { return internal::g_active.load(std::memory_order_relaxed); }

// Starts recording into `path` (written by stop()). FailedPrecondition when already recording.
Status start(const std::string& path);
// Writes the events recorded since start() to its path and stops. FailedPrecondition when not
// recording; the write's error otherwise (recording has stopped either way).
Status stop();
// The path being recorded to, or empty.
std::string path();

// A track that is not a thread: a device queue, on which drivers record the device time of
// their work (kernels, copies) once it completed, as measured by the device (Vulkan timestamp
// queries, CUDA events). `name` labels the track ("vulkan:0 queue"); the same name gives the same
// track for the life of the process.
uint32_t track(const std::string& name);
// A span on `track` (from track()) at host steady-clock times (the time base of every span; a
// driver converts its device clock), recorded when a trace is active.
void recordOn(uint32_t track, const char* category, std::string name, std::string args,
              int64_t begin_ns, int64_t end_ns);
// Host steady-clock time in ns, the time base of spans.
inline int64_t nowNs() { return internal::nowNs(); }

// Work a driver measured but has not recorded yet (device time read back once the device is
// done): stop() calls every registered hook first, so what completed before stop() is in the
// file. `key` identifies the hook for removeStopHook, which returns once no call of it runs; a
// hook must not call addStopHook or removeStopHook itself.
void addStopHook(const void* key, std::function<void()> hook);
void removeStopHook(const void* key);

// A span on the calling thread from construction to destruction, recorded when a trace was
// active at construction. `name` and `args` (a JSON object's members, "\"k\": 1", or null) must
// outlive the trace; the std::string form copies the name.
class Scope {
 public:
  Scope(const char* category, const char* name, const char* args = nullptr) {
    if (active()) {
      category_ = category;
      name_ = name;
      args_ = args;
      begin_ = internal::nowNs();
    }
  }
  Scope(const char* category, const std::string& name) {
    if (active()) {
      category_ = category;
      owned_ = name;
      begin_ = internal::nowNs();
    }
  }
  // Args made by make_args() (a std::string of JSON members), called only when recording, so an
  // inactive trace formats nothing.
  template <typename MakeArgs,
            typename = std::enable_if_t<std::is_invocable_r_v<std::string, MakeArgs&>>>
  Scope(const char* category, const char* name, MakeArgs make_args) {
    if (active()) {
      category_ = category;
      name_ = name;
      owned_args_ = make_args();
      begin_ = internal::nowNs();
    }
  }
  ~Scope() {
    if (category_ != nullptr)
      internal::record(category_, name_, args_, std::move(owned_), std::move(owned_args_), begin_,
                       internal::nowNs());
  }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  const char* category_ = nullptr;
  const char* name_ = nullptr;
  const char* args_ = nullptr;
  std::string owned_;
  std::string owned_args_;
  int64_t begin_ = 0;
};

// `fn`, the function registered as `api_name`, wrapped so each call is a span named after the
// API's target (the wrapper is shared by every import of that name). `fn` itself when no trace
// is active or every wrapper slot is taken.
ral_fn traced(const char* api_name, ral_fn fn);

// The import table of a linked module, whose entries start() switches to wrappers and stop()
// back (each entry's function as linked, unwrapped). The owner calls unwatchImports before the
// table's memory goes away. Both are thread-safe.
void watchImports(ral_import* imports, size_t count);
void unwatchImports(ral_import* imports);

}  // namespace ral::trace

#endif  // RAL_TRACE_H_
