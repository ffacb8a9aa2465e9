/* alias: ?xf32 -> (?xf32, ?xf32). Output 0 is the input itself and output 1 a strided view of
 * it (every second element): memory RAL does not own, which the host must copy. */
#include "test_module.h"

typedef RAL_MEMREF(float, 1) memref1;

RAL_IMPORTS(RAL_IMPORT_RECV_INPUT("m1df32"), RAL_IMPORT_SEND_OUTPUT("m1df32"));

RAL_MODULE_EXPORT void ral_entry(void* ctx) {
  memref1 in;
  RAL_CALL_I64(0, 0, &in);
  RAL_CALL_I64(1, 0, &in);
  memref1 odd = in;
  odd.sizes[0] = (in.sizes[0] + 1) / 2;
  odd.strides[0] = 2 * in.strides[0];
  RAL_CALL_I64(1, 1, &odd);
}
