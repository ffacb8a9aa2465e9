// The kernels every GPU kernel library has, by launch name: strided copy and fill per element
// size, Philox uniform numbers per float type, and the row ordering behind ral_topk / ral_sort.
// An X-macro, so a device's Entry enum and its entry-name table come from one list and cannot
// disagree: X(enumerator, "kernel name").
#ifndef RAL_KERNELS_COMMON_LIBRARY_ENTRIES_H_
#define RAL_KERNELS_COMMON_LIBRARY_ENTRIES_H_

#define RAL_GPU_LIBRARY_ENTRIES(X)          \
  X(kCopy1, "ral_strided_copy_1")           \
  X(kCopy2, "ral_strided_copy_2")           \
  X(kCopy4, "ral_strided_copy_4")           \
  X(kCopy8, "ral_strided_copy_8")           \
  X(kFill1, "ral_strided_fill_1")           \
  X(kFill2, "ral_strided_fill_2")           \
  X(kFill4, "ral_strided_fill_4")           \
  X(kFill8, "ral_strided_fill_8")           \
  X(kRngF32, "ral_rng_uniform_f32")         \
  X(kRngF64, "ral_rng_uniform_f64")         \
  X(kRngF16, "ral_rng_uniform_f16")         \
  X(kRngBF16, "ral_rng_uniform_bf16")       \
  X(kOrderF32, "ral_order_rows_f32")        \
  X(kOrderF64, "ral_order_rows_f64")        \
  X(kOrderI32, "ral_order_rows_i32")        \
  X(kOrderI64, "ral_order_rows_i64")

#define RAL_GPU_LIBRARY_ENUMERATOR(name, kernel) name,
#define RAL_GPU_LIBRARY_NAME(name, kernel) kernel,

#endif  // RAL_KERNELS_COMMON_LIBRARY_ENTRIES_H_
