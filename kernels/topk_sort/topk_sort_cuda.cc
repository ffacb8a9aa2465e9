// ral_topk and ral_sort for device "cuda" (kernels/topk_sort/topk_sort.h has the contract).
// A simple, exact version: each row is bitonic-sorted by (value, index) in one thread block, so
// the result is the CPU's order, ties included.
#include <algorithm>
#include <type_traits>

#include "kernels/cuda/cuda_env.h"
#include "kernels/topk_sort/topk_sort.h"
#include "ral/registration.h"

namespace ral::kernels::cuda {
namespace {

template <typename T>
constexpr Entry orderEntry() {
  return static_cast<Entry>(static_cast<uint32_t>(Entry::kOrderF32) + orderedTypeIndex<T>());
}

// The leading N-1 dims of `m` (rank 0 becomes one row).
template <typename T, int N>
StridedView rowsOf(const MemRef<T, N>& m) {
  StridedView v{};
  v.rank = N - 1;
  for (int d = 0; d < N - 1; ++d) {
    v.sizes[d] = m.sizes[d];
    v.strides[d] = m.strides[d];
  }
  return v;
}

template <typename T, int N>
Status orderRows(ExecutionContext* ctx, const MemRef<T, N>& in, const MemRef<T, N>& values,
                 const MemRef<int64_t, N>& indices, int64_t k, bool descending,
                 bool partial /*topk; the bitonic sort orders whole rows either way*/) {
  const int64_t n = in.sizes[N - 1];
  int64_t rows = 1;
  for (int d = 0; d < N - 1; ++d) rows *= in.sizes[d];
  if (rows == 0 || k == 0) return Status();
  if (rows > 0x7fffffff) return unsupported("cuda: ", rows, " rows exceed one grid");
  RAL_ASSIGN_OR_RETURN(CudaEnv env, cudaEnv(ctx));
  const char* kernel = partial ? "ral_topk" : "ral_sort";
  RAL_RETURN_IF_ERROR(checkDeviceAccess(*env.driver, in, kernel, "input"));
  RAL_RETURN_IF_ERROR(checkDeviceAccess(*env.driver, values, kernel, "values"));
  RAL_RETURN_IF_ERROR(checkDeviceAccess(*env.driver, indices, kernel, "indices"));
  int64_t padded = 1;
  while (padded < n) padded <<= 1;
  DeviceScratch scratch;
  RAL_RETURN_IF_ERROR(
      scratch.allocate(env, static_cast<size_t>(rows * padded) * (sizeof(int64_t) + sizeof(T))));
  OrderParams p{};
  p.rows = rowsOf(in);
  p.value_rows = rowsOf(values);
  p.index_rows = rowsOf(indices);
  p.n = n;
  p.padded = padded;
  p.k = k;
  p.in_step = in.strides[N - 1];
  p.value_step = values.strides[N - 1];
  p.index_step = indices.strides[N - 1];
  p.in = in.data();
  p.values = values.data();
  p.indices = indices.data();
  p.scratch_index = static_cast<int64_t*>(scratch.get());
  p.scratch_value = p.scratch_index + rows * padded;
  p.descending = descending ? 1 : 0;
  LaunchConfig config;
  config.grid.x = static_cast<uint32_t>(rows);
  config.block.x = static_cast<uint32_t>(std::clamp<int64_t>(padded / 2, 32, 512));
  void* args[] = {&p};
  const size_t sizes[] = {sizeof(p)};
  return env.driver->launch(env.kernels, static_cast<uint32_t>(orderEntry<T>()), config,
                            KernelArgs{args, sizes, 1}, env.stream);
}

struct Impl {
  template <typename T, int N>
  static Status orderRows(ExecutionContext* ctx, const MemRef<T, N>& in, const MemRef<T, N>& values,
                          const MemRef<int64_t, N>& indices, int64_t k, bool descending,
                          bool partial) {
    return kernels::cuda::orderRows(ctx, in, values, indices, k, descending, partial);
  }
};

constexpr char kDevice[] = "cuda";
RAL_REGISTER_TOPK_SORT()

}  // namespace
}  // namespace ral::kernels::cuda

RAL_REGISTRATION_ANCHOR(kernels_topk_sort_cuda);
