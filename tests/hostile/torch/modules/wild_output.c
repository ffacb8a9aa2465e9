/* wild_output: ?xf32 -> ?xf32. Sends its input back described as a buggy or hostile module might,
 * chosen by x[0]: 0 as it is (an aliasing output), 1 with a stride of 2^62, 2 with a size of 2^62,
 * 3 with a negative stride. The host must refuse 1-3 before making a tensor of them. */
#include "tests/modules/test_module.h"

typedef RAL_MEMREF(float, 1) memref1;

RAL_IMPORTS(RAL_IMPORT_RECV_INPUT("m1df32"), RAL_IMPORT_SEND_OUTPUT("m1df32"));

RAL_MODULE_EXPORT void ral_entry(void* ctx) {
  memref1 x;
  RAL_CALL_I64(0, 0, &x);
  memref1 out = x;
  const int mode = x.sizes[0] > 0 ? (int)x.aligned[x.offset] : 0;
  if (mode == 1) {
    out.sizes[0] = 2;
    out.strides[0] = (int64_t)1 << 62;
  } else if (mode == 2) {
    out.sizes[0] = (int64_t)1 << 62;
  } else if (mode == 3) {
    out.offset = x.offset + (x.sizes[0] - 1) * x.strides[0];
    out.strides[0] = -x.strides[0];
  }
  RAL_CALL_I64(1, 0, &out);
}
