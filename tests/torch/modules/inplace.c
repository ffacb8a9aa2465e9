/* inplace: ?xf32 -> ?xf32. Doubles every element of its input in place (through its stride) and
 * sends the input itself as the output, as an in-place op does. */
#include "tests/modules/test_module.h"

typedef RAL_MEMREF(float, 1) memref1;

RAL_MODULE_EXPORT ral_import ral_imports[] = {
    {"ral_recv_input___cpu___pvoid_i64___m1df32", 0},
    {"ral_send_output___cpu___pvoid_i64_m1df32___void", 0},
};
RAL_MODULE_EXPORT uint32_t ral_import_count = 2;

RAL_MODULE_EXPORT void ral_entry(void* ctx) {
  int64_t i0 = 0;
  memref1 x;
  RAL_CALL(0, &i0, &x);
  for (int64_t i = 0; i < x.sizes[0]; ++i) x.aligned[x.offset + i * x.strides[0]] *= 2.0f;
  RAL_CALL(1, &i0, &x);
}
