// ral_topk and ral_sort on Vulkan (kernels/topk_sort/topk_sort.h has the contract): one
// workgroup per row (shaders/order_rows.glsl), a bitonic sort of (value, index) pairs in device
// scratch, so the result is the CPU kernel's order exactly, ties and NaN included. Rows, strides
// and the scratch must fit the shaders' 32-bit indices.
#include <algorithm>
#include <climits>
#include <type_traits>

#include "kernels/topk_sort/topk_sort.h"
#include "kernels/vulkan/shaders.h"
#include "kernels/vulkan/vulkan_env.h"
#include "ral/registration.h"

namespace ral::kernels::vulkan {
namespace {

constexpr int kLeadRank = 3;
// Scratch is one slot of `padded` pairs per workgroup; the grid is capped so it stays small.
constexpr uint64_t kScratchBudget = uint64_t{64} << 20;

struct OrderPush {
  uint32_t rows, n, padded, log2_padded, k, descending, lead_rank;
  int32_t x_base, values_base, indices_base, s_index_base, s_value_base;
  int32_t x_step, values_step, indices_step;
  int32_t sizes[kLeadRank];
  int32_t x_strides[kLeadRank];
  int32_t values_strides[kLeadRank];
  int32_t indices_strides[kLeadRank];
};
static_assert(sizeof(OrderPush) <= 128, "Vulkan guarantees 128 bytes of push constants");

template <typename T>
Shader orderShader() {
  if constexpr (std::is_same_v<T, float>) return RAL_VULKAN_SHADER_REF(order_rows_f32);
  if constexpr (std::is_same_v<T, double>) return RAL_VULKAN_SHADER_REF(order_rows_f64);
  if constexpr (std::is_same_v<T, int32_t>) return RAL_VULKAN_SHADER_REF(order_rows_i32);
  return RAL_VULKAN_SHADER_REF(order_rows_i64);
}

struct Impl {
  template <typename T, int N>
  static Status orderRows(ExecutionContext* ctx, const MemRef<T, N>& in, const MemRef<T, N>& values,
                          const MemRef<int64_t, N>& indices, int64_t k, bool descending,
                          bool partial) {
    const char* kernel = partial ? "ral_topk" : "ral_sort";
    const int64_t n = in.sizes[N - 1];
    int64_t rows = 1;
    for (int d = 0; d < N - 1; ++d) rows *= in.sizes[d];
    if (rows == 0 || k == 0) return Status();
    if (rows > UINT32_MAX || n > (int64_t{1} << 30))
      return unsupported(kernel, ": ", rows, " rows of ", n,
                         " exceed the Vulkan kernel's 32-bit indices");
    uint32_t log2_padded = 0;
    while ((int64_t{1} << log2_padded) < n) ++log2_padded;
    const int64_t padded = int64_t{1} << log2_padded;
    const uint64_t slot_bytes = static_cast<uint64_t>(padded) * (sizeof(uint32_t) + sizeof(T));
    const uint64_t groups = std::clamp<uint64_t>(
        std::min<uint64_t>(kScratchBudget / slot_bytes, static_cast<uint64_t>(INT32_MAX / padded)),
        1, std::min<uint64_t>(static_cast<uint64_t>(rows), 65535));

    RAL_ASSIGN_OR_RETURN(VulkanEnv env, vulkanEnv(ctx));
    // Index slots first, value slots after them at an 8-byte boundary.
    const uint64_t index_bytes = (groups * padded * sizeof(uint32_t) + 7) / 8 * 8;
    Scratch scratch;  // its reuse waits for this launch (the driver fences freed memory)
    RAL_RETURN_IF_ERROR(scratch.allocate(env.driver, index_bytes + groups * padded * sizeof(T)));
    auto* scratch_index = scratch.as<uint32_t>();
    auto* scratch_value = reinterpret_cast<T*>(scratch.as<char>() + index_bytes);

    Binding bind[5];
    RAL_ASSIGN_OR_RETURN(bind[0], bindView(env, kernel, "input", in));
    RAL_ASSIGN_OR_RETURN(bind[1], bindView(env, kernel, "values", values));
    RAL_ASSIGN_OR_RETURN(bind[2], bindView(env, kernel, "indices", indices));
    const auto span = [](const void* p, uint64_t bytes) {
      const auto lo = reinterpret_cast<uintptr_t>(p);
      return std::pair<uintptr_t, uintptr_t>{lo, lo + bytes};
    };
    const auto [il, ih] = span(scratch_index, groups * padded * sizeof(uint32_t));
    RAL_ASSIGN_OR_RETURN(bind[3], bindRange(env, kernel, "scratch", il, il, ih, sizeof(uint32_t)));
    const auto [vl, vh] = span(scratch_value, groups * padded * sizeof(T));
    RAL_ASSIGN_OR_RETURN(bind[4], bindRange(env, kernel, "scratch", vl, vl, vh, sizeof(T)));

    OrderPush p{};
    p.rows = static_cast<uint32_t>(rows);
    p.n = static_cast<uint32_t>(n);
    p.padded = static_cast<uint32_t>(padded);
    p.log2_padded = log2_padded;
    p.k = static_cast<uint32_t>(k);
    p.descending = descending ? 1 : 0;
    p.lead_rank = N - 1;
    p.x_base = bind[0].base;
    p.values_base = bind[1].base;
    p.indices_base = bind[2].base;
    p.s_index_base = bind[3].base;
    p.s_value_base = bind[4].base;
    RAL_RETURN_IF_ERROR(toInt32(kernel, in.strides[N - 1], &p.x_step));
    RAL_RETURN_IF_ERROR(toInt32(kernel, values.strides[N - 1], &p.values_step));
    RAL_RETURN_IF_ERROR(toInt32(kernel, indices.strides[N - 1], &p.indices_step));
    for (int d = 0; d < N - 1; ++d) {
      RAL_RETURN_IF_ERROR(toInt32(kernel, in.sizes[d], &p.sizes[d]));
      RAL_RETURN_IF_ERROR(toInt32(kernel, in.strides[d], &p.x_strides[d]));
      RAL_RETURN_IF_ERROR(toInt32(kernel, values.strides[d], &p.values_strides[d]));
      RAL_RETURN_IF_ERROR(toInt32(kernel, indices.strides[d], &p.indices_strides[d]));
    }
    RAL_ASSIGN_OR_RETURN(Executable * exe, executable(env, orderShader<T>()));
    return launch(env, exe, Dim3{static_cast<uint32_t>(groups), 1, 1}, bind, 5, &p, sizeof(p));
  }
};

constexpr char kDevice[] = "vulkan";
RAL_REGISTER_TOPK_SORT()

}  // namespace
}  // namespace ral::kernels::vulkan

RAL_REGISTRATION_ANCHOR(kernels_topk_sort_vulkan);
