/* add: out = a + b for f32 tensors of rank RANK (a compile-time macro; -DRANK=N builds one module
 * per rank), every dimension dynamic, inputs of any strides. Shapes must be equal: a mismatch is
 * reported through ral_signal_error, as a compiler's shape assertion would be. */
#include <stddef.h>

#include "test_module.h"

#ifndef RANK
#error "define RANK"
#endif

typedef RAL_MEMREF(float, RANK) memref;

#define MEMREF_CODE "m" RAL_STR(RANK) "df32"
RAL_MODULE_EXPORT ral_import ral_imports[] = {
    {"ral_recv_input___cpu___pvoid_i64___" MEMREF_CODE, 0},
    {"ral_alloc___cpu___pvoid_i64___pvoid", 0},
    {"ral_send_output___cpu___pvoid_i64_" MEMREF_CODE "___void", 0},
    {"ral_signal_error___cpu___pvoid_i32_pi8___void", 0},
};
RAL_MODULE_EXPORT uint32_t ral_import_count = 4;

RAL_MODULE_EXPORT void ral_entry(void* ctx) {
  int64_t i0 = 0, i1 = 1;
  memref a, b;
  RAL_CALL(0, &i0, &a);
  RAL_CALL(0, &i1, &b);
  int64_t numel = 1;
  for (int d = 0; d < RANK; ++d) {
    if (a.sizes[d] != b.sizes[d]) {
      int32_t code = 2; /* INVALID_ARGUMENT */
      const char* message = "add: the inputs have different shapes";
      RAL_CALL(3, &code, &message);
      return;
    }
    numel *= a.sizes[d];
  }
  int64_t bytes = numel * (int64_t)sizeof(float);
  void* p = 0;
  RAL_CALL(1, &bytes, &p);
  memref out;
  out.allocated = out.aligned = (float*)p;
  out.offset = 0;
  int64_t stride = 1;
  for (int d = RANK - 1; d >= 0; --d) {
    out.sizes[d] = a.sizes[d];
    out.strides[d] = stride;
    stride *= a.sizes[d];
  }
  int64_t idx[RANK > 0 ? RANK : 1] = {0};
  for (int64_t k = 0; k < numel; ++k) {
    int64_t oa = a.offset, ob = b.offset;
    for (int d = 0; d < RANK; ++d) {
      oa += idx[d] * a.strides[d];
      ob += idx[d] * b.strides[d];
    }
    out.aligned[k] = a.aligned[oa] + b.aligned[ob];
    for (int d = RANK - 1; d >= 0; --d) {
      if (++idx[d] < a.sizes[d]) break;
      idx[d] = 0;
    }
  }
  RAL_CALL(2, &i0, &out);
}
