/* empty: two ?xf32 inputs, one 1xf32 output, no computation: what the call-overhead benchmark
 * measures (receive, allocate, send). */
#include "test_module.h"

typedef RAL_MEMREF(float, 1) memref1;

RAL_MODULE_EXPORT ral_import ral_imports[] = {
    {"ral_recv_input___cpu___pvoid_i64___m1df32", 0},
    {"ral_alloc___cpu___pvoid_i64___pvoid", 0},
    {"ral_send_output___cpu___pvoid_i64_m1df32___void", 0},
};
RAL_MODULE_EXPORT uint32_t ral_import_count = 3;

RAL_MODULE_EXPORT void ral_entry(void* ctx) {
  int64_t i0 = 0, i1 = 1, bytes = 4;
  memref1 a, b;
  RAL_CALL(0, &i0, &a);
  RAL_CALL(0, &i1, &b);
  void* p = 0;
  RAL_CALL(1, &bytes, &p);
  *(float*)p = 0.0f;
  memref1 out = {(float*)p, (float*)p, 0, {1}, {1}};
  RAL_CALL(2, &i0, &out);
}
