// ral_topk and ral_sort on the GPU library's devices (cuda, hsa; kernels/topk_sort/topk_sort.h
// has the contract): the library's ral_order_rows_<type> kernel (kernels/gpu/device_kernels.py)
// sorts (value, index) pairs of each row bitonically in device scratch, one workgroup per row, so
// the result is the CPU kernel's order exactly, ties and NaN included. Any strides, ranks 1-4.
// topk_sort_<device>.cc registers Impl for its device.
#ifndef RAL_KERNELS_TOPK_SORT_TOPK_SORT_GPU_H_
#define RAL_KERNELS_TOPK_SORT_TOPK_SORT_GPU_H_

#include <algorithm>
#include <cstdint>

#include "kernels/gpu/gpu_library.h"
#include "kernels/topk_sort/topk_sort.h"

namespace ral::kernels::gpu {

// The scratch holds one slot of `padded` pairs per workgroup; the grid is capped to keep it small.
inline constexpr uint64_t kOrderScratchBudget = uint64_t{64} << 20;
inline constexpr int64_t kOrderMaxGroups = 65535;

template <DeviceKind kKind>
struct TopkSortImpl {
  template <typename T, int N>
  static Status orderRows(ExecutionContext* ctx, const MemRef<T, N>& in, const MemRef<T, N>& values,
                          const MemRef<int64_t, N>& indices, int64_t k, bool descending,
                          bool partial) {
    static_assert(N - 1 <= kMaxRank, "rank too large for the GPU library kernels");
    const char* kernel = partial ? "ral_topk" : "ral_sort";
    const int64_t n = in.sizes[N - 1];
    int64_t rows = 1;
    for (int d = 0; d < N - 1; ++d) rows *= in.sizes[d];
    if (rows == 0 || k == 0) return Status();
    if (n > (int64_t{1} << 40))
      return unsupported(kernel, ": rows of ", n, " elements exceed the ", deviceKindName(kKind),
                         " kernel's scratch");
    RAL_ASSIGN_OR_RETURN(GpuEnv env, gpuEnv(ctx, kKind));
    RAL_RETURN_IF_ERROR(checkDeviceAccess(*env.driver, in, kernel, "input"));
    RAL_RETURN_IF_ERROR(checkDeviceAccess(*env.driver, values, kernel, "values"));
    RAL_RETURN_IF_ERROR(checkDeviceAccess(*env.driver, indices, kernel, "indices"));

    OrderArgs p{};
    while ((int64_t{1} << p.log2_padded) < n) ++p.log2_padded;
    p.padded = int64_t{1} << p.log2_padded;
    const uint64_t slot_bytes = static_cast<uint64_t>(p.padded) * (sizeof(int64_t) + sizeof(T));
    p.groups = static_cast<int64_t>(
        std::clamp<uint64_t>(kOrderScratchBudget / slot_bytes, 1,
                             static_cast<uint64_t>(std::min(rows, kOrderMaxGroups))));
    const size_t index_bytes = static_cast<size_t>(p.groups * p.padded) * sizeof(int64_t);
    DeviceScratch scratch(env.driver, env.stream);
    RAL_RETURN_IF_ERROR(scratch.allocate(index_bytes + p.groups * p.padded * sizeof(T)));
    p.in = in.data();
    p.values = values.data();
    p.indices = indices.data();
    p.scratch_index = reinterpret_cast<int64_t*>(scratch.get());
    p.scratch_value = scratch.get() + index_bytes;
    p.rows = rows;
    p.n = n;
    p.k = k;
    p.descending = descending ? 1 : 0;
    p.in_step = in.strides[N - 1];
    p.values_step = values.strides[N - 1];
    p.indices_step = indices.strides[N - 1];
    padView(N - 1, in.sizes, in.strides, p.sizes, p.in_strides);
    padView(N - 1, in.sizes, values.strides, p.sizes, p.values_strides);
    padView(N - 1, in.sizes, indices.strides, p.sizes, p.indices_strides);
    LaunchConfig config;
    config.grid.x = static_cast<uint32_t>(p.groups);
    config.block.x = kLinearBlock;
    RAL_RETURN_IF_ERROR(
        launch(env, entryAfter(Entry::kOrderF32, orderedTypeIndex<T>()), config, p));
    scratch.launched();
    return Status();
  }
};

}  // namespace ral::kernels::gpu

#endif  // RAL_KERNELS_TOPK_SORT_TOPK_SORT_GPU_H_
