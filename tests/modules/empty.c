/* empty: two ?xf32 inputs, one 1xf32 output, no computation: what the call-overhead benchmark
 * measures (receive, allocate, send). */
#include "test_module.h"

typedef RAL_MEMREF(float, 1) memref1;

RAL_IMPORTS(RAL_IMPORT_RECV_INPUT("m1df32"), RAL_IMPORT_ALLOC, RAL_IMPORT_SEND_OUTPUT("m1df32"));

RAL_MODULE_EXPORT void ral_entry(void* ctx) {
  memref1 a, b;
  RAL_CALL_I64(0, 0, &a);
  RAL_CALL_I64(0, 1, &b);
  void* p = 0;
  RAL_CALL_I64(1, 4, &p);
  *(float*)p = 0.0f;
  memref1 out = {(float*)p, (float*)p, 0, {1}, {1}};
  RAL_CALL_I64(2, 0, &out);
}
