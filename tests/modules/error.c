/* error: i64 scalar x -> i64 scalar x + 1, but for x < 0 it fails mid-run: after allocating a
 * temporary and sending its output, it signals an error (the host must drop the output and free
 * the temporary). Also frees its sent output, which the host must ignore. */
#include "test_module.h"

typedef RAL_MEMREF(int64_t, 0) scalar;

RAL_IMPORTS(RAL_IMPORT_RECV_INPUT("m0di64"), RAL_IMPORT_ALLOC,
            {"ral_dealloc___cpu___pvoid_pvoid___void", 0}, RAL_IMPORT_SEND_OUTPUT("m0di64"),
            RAL_IMPORT_SIGNAL_ERROR);

RAL_MODULE_EXPORT void ral_entry(void* ctx) {
  scalar x;
  RAL_CALL_I64(0, 0, &x);
  void* tmp = 0;
  void* p = 0;
  RAL_CALL_I64(1, 8, &tmp);
  RAL_CALL_I64(1, 8, &p);
  const int64_t v = x.aligned[x.offset];
  *(int64_t*)tmp = v;
  *(int64_t*)p = v + 1;
  scalar out;
  out.allocated = out.aligned = (int64_t*)p;
  out.offset = 0;
  RAL_CALL_I64(3, 0, &out);
  if (v < 0) RAL_FAIL(4, "error module: the input is negative");
  RAL_CALL(2, &tmp);
  RAL_CALL(2, &p); /* already an output: the host keeps it */
}
