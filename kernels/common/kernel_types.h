// The element types and ranks each kernel family is registered for, written once so that every
// device registers the same set. X-macros: `RAL_KERNEL_DATA_TYPES(X)` expands to X(bool)
// X(int8_t) ...; `RAL_KERNEL_RANKS_1_TO_6(X, T)` to X(T, 1) ... X(T, 6). The X given must expand
// to complete declarations (each RAL_API followed by its semicolon).
#ifndef RAL_KERNELS_COMMON_KERNEL_TYPES_H_
#define RAL_KERNELS_COMMON_KERNEL_TYPES_H_

#include <cstdint>
#include <type_traits>

#include "ral/half.h"

// ral_memcpy, ral_memset, ral_transpose.
#define RAL_KERNEL_DATA_TYPES(X) \
  X(bool)                        \
  X(int8_t)                      \
  X(uint8_t)                     \
  X(int16_t)                     \
  X(int32_t)                     \
  X(int64_t)                     \
  X(float16)                     \
  X(bfloat16)                    \
  X(float)                       \
  X(double)

// ral_gemm, ral_batch_gemm, ral_rng_*.
#define RAL_KERNEL_FLOAT_TYPES(X) X(float) X(double) X(float16) X(bfloat16)

namespace ral::kernels {

// T's position in RAL_KERNEL_FLOAT_TYPES (f32 0, f64 1, f16 2, bf16 3): device kernel tables list
// an op's float variants in this order, so variant = first + floatTypeIndex<T>().
template <typename T>
constexpr uint32_t floatTypeIndex() {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double> ||
                    std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>,
                "not one of RAL_KERNEL_FLOAT_TYPES");
  if constexpr (std::is_same_v<T, float>) return 0;
  if constexpr (std::is_same_v<T, double>) return 1;
  if constexpr (std::is_same_v<T, float16>) return 2;
  return 3;
}

// T's position in RAL_KERNEL_ORDERED_TYPES (f32 0, f64 1, i32 2, i64 3), as floatTypeIndex.
template <typename T>
constexpr uint32_t orderedTypeIndex() {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double> ||
                    std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>,
                "not one of RAL_KERNEL_ORDERED_TYPES");
  if constexpr (std::is_same_v<T, float>) return 0;
  if constexpr (std::is_same_v<T, double>) return 1;
  if constexpr (std::is_same_v<T, int32_t>) return 2;
  return 3;
}

}  // namespace ral::kernels

// ral_topk, ral_sort.
#define RAL_KERNEL_ORDERED_TYPES(X) X(float) X(double) X(int32_t) X(int64_t)

#define RAL_KERNEL_RANKS_1_TO_4(X, T) X(T, 1) X(T, 2) X(T, 3) X(T, 4)
#define RAL_KERNEL_RANKS_1_TO_6(X, T) RAL_KERNEL_RANKS_1_TO_4(X, T) X(T, 5) X(T, 6)

// The (a, b, c) ranks of ral_batch_gemm: equal ranks 3 and 4, or a rank-2 operand broadcast.
#define RAL_KERNEL_BATCH_GEMM_RANKS(X, T) \
  X(T, 3, 3, 3) X(T, 4, 4, 4) X(T, 2, 3, 3) X(T, 3, 2, 3) X(T, 2, 4, 4) X(T, 4, 2, 4)

#endif  // RAL_KERNELS_COMMON_KERNEL_TYPES_H_
