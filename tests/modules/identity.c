/* identity: 2x3xf32 (static) -> 2x3xf32, copied into memory from ral_alloc (a zero-copy output).
 * Reads the input through its strides, so non-contiguous inputs work. */
#include "test_module.h"

typedef RAL_MEMREF(float, 2) memref2;

RAL_MODULE_EXPORT ral_import ral_imports[] = {
    {"ral_recv_input___cpu___pvoid_i64___m2df32", 0},
    {"ral_alloc___cpu___pvoid_i64___pvoid", 0},
    {"ral_send_output___cpu___pvoid_i64_m2df32___void", 0},
};
RAL_MODULE_EXPORT uint32_t ral_import_count = 3;

RAL_MODULE_EXPORT void ral_entry(void* ctx) {
  int64_t index = 0;
  memref2 in;
  RAL_CALL(0, &index, &in);
  int64_t bytes = in.sizes[0] * in.sizes[1] * (int64_t)sizeof(float);
  void* p = 0;
  RAL_CALL(1, &bytes, &p);
  memref2 out = {(float*)p, (float*)p, 0, {in.sizes[0], in.sizes[1]}, {in.sizes[1], 1}};
  for (int64_t i = 0; i < in.sizes[0]; ++i)
    for (int64_t j = 0; j < in.sizes[1]; ++j)
      out.aligned[i * out.strides[0] + j] =
          in.aligned[in.offset + i * in.strides[0] + j * in.strides[1]];
  RAL_CALL(2, &index, &out);
}
