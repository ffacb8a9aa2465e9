#include "kernels/common/parallel.h"

#include <algorithm>
#include <mutex>

#include "drivers/cpu/host_kernel.h"

namespace ral::kernels {
namespace {

constexpr int64_t kMaxChunks = 256;

struct ParallelState {
  const std::function<Status(int64_t, int64_t)>* body;
  int64_t n;
  int64_t chunk;
  std::mutex mutex;
  Status error;
};

void parallelForKernel(const ral_host_workgroup* wg, void* const* args) {
  auto* state = *static_cast<ParallelState* const*>(args[0]);
  const int64_t begin = static_cast<int64_t>(wg->group_id[0]) * state->chunk;
  const int64_t end = std::min(state->n, begin + state->chunk);
  Status s;
  try {
    s = (*state->body)(begin, end);
  } catch (const std::exception& e) {
    s = internalError("exception in a kernel: ", e.what());
  }
  if (!s.ok()) {
    std::lock_guard<std::mutex> lock(state->mutex);
    if (state->error.ok()) state->error = std::move(s);
  }
}

const ral_host_kernel kTable[] = {parallelForKernel};

}  // namespace

Status parallelFor(Driver* driver, int64_t n, int64_t grain,
                   const std::function<Status(int64_t, int64_t)>& body) {
  if (n <= 0) return Status();
  grain = std::max<int64_t>(grain, 1);
  const int64_t chunks = std::min<int64_t>(kMaxChunks, (n + grain - 1) / grain);
  if (chunks <= 1 || driver == nullptr) return body(0, n);
  ExecutableSpec spec;
  spec.name = "ral.kernels.parallel_for";
  spec.format = ExecutableFormat::kHostFunction;
  spec.data = kTable;
  spec.size = sizeof(kTable);
  spec.entries = {{"parallel_for", {1, 1, 1}}};
  auto exe = driver->load(spec);
  if (!exe.ok()) return body(0, n);  // no host launches on this driver
  ParallelState state;
  state.body = &body;
  state.n = n;
  state.chunk = (n + chunks - 1) / chunks;
  ParallelState* state_ptr = &state;
  void* values[] = {&state_ptr};
  const size_t sizes[] = {sizeof(state_ptr)};
  LaunchConfig config;
  config.grid.x = static_cast<uint32_t>((n + state.chunk - 1) / state.chunk);
  RAL_RETURN_IF_ERROR(driver->launch(*exe, 0, config, KernelArgs{values, sizes, 1}));
  return std::move(state.error);
}

}  // namespace ral::kernels
