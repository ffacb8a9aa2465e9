/* typed: two rank-2 tensors of element type T (C type T, encoding CODE, both compile-time macros)
 * with dynamic dims -> one dense T tensor from ral_alloc: a + b, or with -DCOPY a copy of a (for
 * types C has no arithmetic for: f16, bf16, bool bits). Inputs may have any strides. */
#include "tests/modules/test_module.h"

#if !defined(T) || !defined(CODE)
#error "define T and CODE"
#endif

typedef RAL_MEMREF(T, 2) memref2;

#define MEMREF_CODE "m2d" CODE
RAL_MODULE_EXPORT ral_import ral_imports[] = {
    {"ral_recv_input___cpu___pvoid_i64___" MEMREF_CODE, 0},
    {"ral_alloc___cpu___pvoid_i64___pvoid", 0},
    {"ral_send_output___cpu___pvoid_i64_" MEMREF_CODE "___void", 0},
    {"ral_signal_error___cpu___pvoid_i32_pi8___void", 0},
};
RAL_MODULE_EXPORT uint32_t ral_import_count = 4;

RAL_MODULE_EXPORT void ral_entry(void* ctx) {
  int64_t i0 = 0, i1 = 1;
  memref2 a, b;
  RAL_CALL(0, &i0, &a);
  RAL_CALL(0, &i1, &b);
  if (a.sizes[0] != b.sizes[0] || a.sizes[1] != b.sizes[1]) {
    int32_t code = 2; /* INVALID_ARGUMENT */
    const char* message = "typed: the inputs have different shapes";
    RAL_CALL(3, &code, &message);
  }
  int64_t bytes = a.sizes[0] * a.sizes[1] * (int64_t)sizeof(T);
  void* p = 0;
  RAL_CALL(1, &bytes, &p);
  memref2 out = {(T*)p, (T*)p, 0, {a.sizes[0], a.sizes[1]}, {a.sizes[1], 1}};
  for (int64_t i = 0; i < a.sizes[0]; ++i)
    for (int64_t j = 0; j < a.sizes[1]; ++j) {
      const T x = a.aligned[a.offset + i * a.strides[0] + j * a.strides[1]];
#ifdef COPY
      out.aligned[i * out.strides[0] + j] = x;
#else
      const T y = b.aligned[b.offset + i * b.strides[0] + j * b.strides[1]];
      out.aligned[i * out.strides[0] + j] = (T)(x + y);
#endif
    }
  RAL_CALL(2, &i0, &out);
}
