/* ptr: ?x?xf32 -> i64 scalar: the address of the first element the module received (aligned +
 * offset). A host that binds inputs without copying reports the tensor's own data pointer. */
#include "tests/modules/test_module.h"

typedef RAL_MEMREF(float, 2) memref2;
typedef RAL_MEMREF(int64_t, 0) scalar;

RAL_MODULE_EXPORT ral_import ral_imports[] = {
    {"ral_recv_input___cpu___pvoid_i64___m2df32", 0},
    {"ral_alloc___cpu___pvoid_i64___pvoid", 0},
    {"ral_send_output___cpu___pvoid_i64_m0di64___void", 0},
};
RAL_MODULE_EXPORT uint32_t ral_import_count = 3;

RAL_MODULE_EXPORT void ral_entry(void* ctx) {
  int64_t i0 = 0, eight = 8;
  memref2 x;
  RAL_CALL(0, &i0, &x);
  void* p = 0;
  RAL_CALL(1, &eight, &p);
  *(int64_t*)p = (int64_t)(intptr_t)(x.aligned + x.offset);
  scalar out;
  out.allocated = out.aligned = (int64_t*)p;
  out.offset = 0;
  RAL_CALL(2, &i0, &out);
}
