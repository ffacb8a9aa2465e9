/* matmul: ?x?xf32 @ ?x?xf32 -> ?x?xf32 through the ral_gemm kernel (the same kernel binary every
 * host context runs), into a buffer from ral_alloc. */
#include <stdbool.h>

#include "tests/modules/test_module.h"

typedef RAL_MEMREF(float, 2) memref2;

RAL_IMPORTS(RAL_IMPORT_RECV_INPUT("m2df32"), RAL_IMPORT_ALLOC,
            {"ral_gemm___cpu___pvoid_m2df32_m2df32_m2df32_i1_i1___void", 0},
            RAL_IMPORT_SEND_OUTPUT("m2df32"));

RAL_MODULE_EXPORT void ral_entry(void* ctx) {
  memref2 a, b;
  RAL_CALL_I64(0, 0, &a);
  RAL_CALL_I64(0, 1, &b);
  void* p = 0;
  RAL_CALL_I64(1, a.sizes[0] * b.sizes[1] * (int64_t)sizeof(float), &p);
  memref2 c = {(float*)p, (float*)p, 0, {a.sizes[0], b.sizes[1]}, {b.sizes[1], 1}};
  bool no = false;
  RAL_CALL(2, &a, &b, &c, &no, &no);
  RAL_CALL_I64(3, 0, &c);
}
