/* inplace: ?xf32 -> ?xf32. Doubles every element of its input in place (through its stride) and
 * sends the input itself as the output, as an in-place op does. */
#include "tests/modules/test_module.h"

typedef RAL_MEMREF(float, 1) memref1;

RAL_IMPORTS(RAL_IMPORT_RECV_INPUT("m1df32"), RAL_IMPORT_SEND_OUTPUT("m1df32"));

RAL_MODULE_EXPORT void ral_entry(void* ctx) {
  memref1 x;
  RAL_CALL_I64(0, 0, &x);
  for (int64_t i = 0; i < x.sizes[0]; ++i) x.aligned[x.offset + i * x.strides[0]] *= 2.0f;
  RAL_CALL_I64(1, 0, &x);
}
