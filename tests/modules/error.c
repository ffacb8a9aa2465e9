/* error: i64 scalar x -> i64 scalar x + 1, but for x < 0 it fails mid-run: after allocating a
 * temporary and sending its output, it signals an error (the host must drop the output and free
 * the temporary). Also frees its sent output, which the host must ignore. */
#include "test_module.h"

typedef RAL_MEMREF(int64_t, 0) scalar;

RAL_MODULE_EXPORT ral_import ral_imports[] = {
    {"ral_recv_input___cpu___pvoid_i64___m0di64", 0},
    {"ral_alloc___cpu___pvoid_i64___pvoid", 0},
    {"ral_dealloc___cpu___pvoid_pvoid___void", 0},
    {"ral_send_output___cpu___pvoid_i64_m0di64___void", 0},
    {"ral_signal_error___cpu___pvoid_i32_pi8___void", 0},
};
RAL_MODULE_EXPORT uint32_t ral_import_count = 5;

RAL_MODULE_EXPORT void ral_entry(void* ctx) {
  int64_t i0 = 0, eight = 8;
  scalar x;
  RAL_CALL(0, &i0, &x);
  void* tmp = 0;
  void* p = 0;
  RAL_CALL(1, &eight, &tmp);
  RAL_CALL(1, &eight, &p);
  const int64_t v = x.aligned[x.offset];
  *(int64_t*)tmp = v;
  *(int64_t*)p = v + 1;
  scalar out;
  out.allocated = out.aligned = (int64_t*)p;
  out.offset = 0;
  RAL_CALL(3, &i0, &out);
  if (v < 0) {
    int32_t code = 2; /* INVALID_ARGUMENT */
    const char* message = "error module: the input is negative";
    RAL_CALL(4, &code, &message);
    return; /* not reached: RAL_CALL returns once the error flag is set */
  }
  RAL_CALL(2, &tmp);
  RAL_CALL(2, &p); /* already an output: the host keeps it */
}
