/* by_name: ?xf32 -> ?xf32 doubled, calling RAL only through ral_api_call by name (no import
 * table). The symbol ral_api_call is left undefined and found in libral when loaded. */
#include "test_module.h"

typedef RAL_MEMREF(float, 1) memref1;

RAL_MODULE_EXPORT uint32_t ral_import_count = 0;

#define CALL(name, ...)                  \
  do {                                   \
    void* args_[] = {&ctx, __VA_ARGS__}; \
    ral_api_call(ctx, name, args_);      \
    if (ral_failed(ctx)) return;         \
  } while (0)

RAL_MODULE_EXPORT void ral_entry(void* ctx) {
  int64_t i0 = 0;
  memref1 in;
  CALL("ral_recv_input___cpu___pvoid_i64___m1df32", &i0, &in);
  int64_t bytes = in.sizes[0] * (int64_t)sizeof(float);
  void* p = 0;
  CALL("ral_alloc___cpu___pvoid_i64___pvoid", &bytes, &p);
  memref1 out = {(float*)p, (float*)p, 0, {in.sizes[0]}, {1}};
  for (int64_t i = 0; i < in.sizes[0]; ++i)
    out.aligned[i] = 2.0f * in.aligned[in.offset + i * in.strides[0]];
  CALL("ral_send_output___cpu___pvoid_i64_m1df32___void", &i0, &out);
}
