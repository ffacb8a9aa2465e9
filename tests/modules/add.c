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
RAL_IMPORTS(RAL_IMPORT_RECV_INPUT(MEMREF_CODE), RAL_IMPORT_ALLOC,
            RAL_IMPORT_SEND_OUTPUT(MEMREF_CODE), RAL_IMPORT_SIGNAL_ERROR);

RAL_MODULE_EXPORT void ral_entry(void* ctx) {
  memref a, b, out;
  RAL_CALL_I64(0, 0, &a);
  RAL_CALL_I64(0, 1, &b);
  int64_t numel = 1;
  for (int d = 0; d < RANK; ++d) {
    if (a.sizes[d] != b.sizes[d]) RAL_FAIL(3, "add: the inputs have different shapes");
    numel *= a.sizes[d];
    out.sizes[d] = a.sizes[d];
  }
  void* p = 0;
  RAL_CALL_I64(1, numel * (int64_t)sizeof(float), &p);
  RAL_DENSE(out, (float*)p, RANK);
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
  RAL_CALL_I64(2, 0, &out);
}
