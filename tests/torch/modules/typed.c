/* typed: two rank-2 tensors of element type T (C type T, encoding CODE, both compile-time macros)
 * with dynamic dims -> one dense T tensor from ral_alloc: a + b, or with -DCOPY a copy of a (for
 * types C has no arithmetic for: f16, bf16, bool bits). Inputs may have any strides. */
#include "tests/modules/test_module.h"

#if !defined(T) || !defined(CODE)
#error "define T and CODE"
#endif

typedef RAL_MEMREF(T, 2) memref2;

#define MEMREF_CODE "m2d" CODE
RAL_IMPORTS(RAL_IMPORT_RECV_INPUT(MEMREF_CODE), RAL_IMPORT_ALLOC,
            RAL_IMPORT_SEND_OUTPUT(MEMREF_CODE), RAL_IMPORT_SIGNAL_ERROR);

RAL_MODULE_EXPORT void ral_entry(void* ctx) {
  memref2 a, b;
  RAL_CALL_I64(0, 0, &a);
  RAL_CALL_I64(0, 1, &b);
  if (a.sizes[0] != b.sizes[0] || a.sizes[1] != b.sizes[1])
    RAL_FAIL(3, "typed: the inputs have different shapes");
  void* p = 0;
  RAL_CALL_I64(1, a.sizes[0] * a.sizes[1] * (int64_t)sizeof(T), &p);
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
  RAL_CALL_I64(2, 0, &out);
}
