/* identity: 2x3xf32 (static) -> 2x3xf32, copied into memory from ral_alloc (a zero-copy output).
 * Reads the input through its strides, so non-contiguous inputs work. */
#include "test_module.h"

typedef RAL_MEMREF(float, 2) memref2;

RAL_IMPORTS(RAL_IMPORT_RECV_INPUT("m2df32"), RAL_IMPORT_ALLOC, RAL_IMPORT_SEND_OUTPUT("m2df32"));

RAL_MODULE_EXPORT void ral_entry(void* ctx) {
  memref2 in, out;
  RAL_CALL_I64(0, 0, &in);
  void* p = 0;
  RAL_CALL_I64(1, in.sizes[0] * in.sizes[1] * (int64_t)sizeof(float), &p);
  out.sizes[0] = in.sizes[0];
  out.sizes[1] = in.sizes[1];
  RAL_DENSE(out, (float*)p, 2);
  for (int64_t i = 0; i < in.sizes[0]; ++i)
    for (int64_t j = 0; j < in.sizes[1]; ++j)
      out.aligned[i * out.strides[0] + j] =
          in.aligned[in.offset + i * in.strides[0] + j * in.strides[1]];
  RAL_CALL_I64(2, 0, &out);
}
