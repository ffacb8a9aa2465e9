/* matmul_vulkan: c = a * b on the Vulkan device, the way compiled code would call it: inputs from
 * ral_recv_input, the result buffer from ral_alloc, ral_gemm for device "vulkan", then
 * ral_send_output. */
#include <stddef.h>

#include "tests/modules/test_module.h"

typedef RAL_MEMREF(float, 2) memref;

RAL_MODULE_EXPORT ral_import ral_imports[] = {
    {"ral_recv_input___cpu___pvoid_i64___m2df32", 0},
    {"ral_alloc___cpu___pvoid_i64___pvoid", 0},
    {"ral_gemm___vulkan___pvoid_m2df32_m2df32_m2df32_i1_i1___void", 0},
    {"ral_send_output___cpu___pvoid_i64_m2df32___void", 0},
};
RAL_MODULE_EXPORT uint32_t ral_import_count = 4;

RAL_MODULE_EXPORT void ral_entry(void* ctx) {
  int64_t i0 = 0, i1 = 1;
  memref a, b;
  RAL_CALL(0, &i0, &a);
  RAL_CALL(0, &i1, &b);
  int64_t bytes = a.sizes[0] * b.sizes[1] * (int64_t)sizeof(float);
  void* p = 0;
  RAL_CALL(1, &bytes, &p);
  memref c;
  c.allocated = c.aligned = (float*)p;
  c.offset = 0;
  c.sizes[0] = a.sizes[0];
  c.sizes[1] = b.sizes[1];
  c.strides[0] = b.sizes[1];
  c.strides[1] = 1;
  _Bool no = 0;
  RAL_CALL(2, &a, &b, &c, &no, &no);
  int64_t o0 = 0;
  RAL_CALL(3, &o0, &c);
}
