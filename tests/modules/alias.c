/* alias: ?xf32 -> (?xf32, ?xf32). Output 0 is the input itself and output 1 a strided view of
 * it (every second element): memory RAL does not own, which the host must copy. */
#include "test_module.h"

typedef RAL_MEMREF(float, 1) memref1;

RAL_MODULE_EXPORT ral_import ral_imports[] = {
    {"ral_recv_input___cpu___pvoid_i64___m1df32", 0},
    {"ral_send_output___cpu___pvoid_i64_m1df32___void", 0},
};
RAL_MODULE_EXPORT uint32_t ral_import_count = 2;

RAL_MODULE_EXPORT void ral_entry(void* ctx) {
  int64_t i0 = 0, i1 = 1;
  memref1 in;
  RAL_CALL(0, &i0, &in);
  RAL_CALL(1, &i0, &in);
  memref1 odd = in;
  odd.sizes[0] = (in.sizes[0] + 1) / 2;
  odd.strides[0] = 2 * in.strides[0];
  RAL_CALL(1, &i1, &odd);
}
