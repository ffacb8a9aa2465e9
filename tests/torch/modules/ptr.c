/* ptr: ?x?xf32 -> i64 scalar: the address of the first element the module received (aligned +
 * offset). A host that binds inputs without copying reports the tensor's own data pointer. */
#include "tests/modules/test_module.h"

typedef RAL_MEMREF(float, 2) memref2;
typedef RAL_MEMREF(int64_t, 0) scalar;

RAL_IMPORTS(RAL_IMPORT_RECV_INPUT("m2df32"), RAL_IMPORT_ALLOC, RAL_IMPORT_SEND_OUTPUT("m0di64"));

RAL_MODULE_EXPORT void ral_entry(void* ctx) {
  memref2 x;
  RAL_CALL_I64(0, 0, &x);
  void* p = 0;
  RAL_CALL_I64(1, 8, &p);
  *(int64_t*)p = (int64_t)(intptr_t)(x.aligned + x.offset);
  scalar out;
  out.allocated = out.aligned = (int64_t*)p;
  out.offset = 0;
  RAL_CALL_I64(2, 0, &out);
}
