/* matmul_vulkan: c = a * b on the Vulkan device, the way compiled code would call it: inputs from
 * ral_recv_input, the result buffer from ral_alloc, ral_gemm for device "vulkan", then
 * ral_send_output. */
#include <stddef.h>

#include "tests/modules/test_module.h"

typedef RAL_MEMREF(float, 2) memref;

RAL_IMPORTS(RAL_IMPORT_RECV_INPUT("m2df32"), RAL_IMPORT_ALLOC,
            {"ral_gemm___vulkan___pvoid_m2df32_m2df32_m2df32_i1_i1___void", 0},
            RAL_IMPORT_SEND_OUTPUT("m2df32"));

RAL_MODULE_EXPORT void ral_entry(void* ctx) {
  memref a, b, c;
  RAL_CALL_I64(0, 0, &a);
  RAL_CALL_I64(0, 1, &b);
  void* p = 0;
  RAL_CALL_I64(1, a.sizes[0] * b.sizes[1] * (int64_t)sizeof(float), &p);
  c.sizes[0] = a.sizes[0];
  c.sizes[1] = b.sizes[1];
  RAL_DENSE(c, (float*)p, 2);
  _Bool no = 0;
  RAL_CALL(2, &a, &b, &c, &no, &no);
  RAL_CALL_I64(3, 0, &c);
}
