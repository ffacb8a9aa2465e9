/* matmul: ?x?xf32 @ ?x?xf32 -> ?x?xf32 through the ral_gemm kernel (the same kernel binary every
 * host context runs), into a buffer from ral_alloc. */
#include <stdbool.h>

#include "tests/modules/test_module.h"

typedef RAL_MEMREF(float, 2) memref2;

RAL_MODULE_EXPORT ral_import ral_imports[] = {
    {"ral_recv_input___cpu___pvoid_i64___m2df32", 0},
    {"ral_alloc___cpu___pvoid_i64___pvoid", 0},
    {"ral_gemm___cpu___pvoid_m2df32_m2df32_m2df32_i1_i1___void", 0},
    {"ral_send_output___cpu___pvoid_i64_m2df32___void", 0},
};
RAL_MODULE_EXPORT uint32_t ral_import_count = 4;

RAL_MODULE_EXPORT void ral_entry(void* ctx) {
  int64_t i0 = 0, i1 = 1;
  memref2 a, b;
  RAL_CALL(0, &i0, &a);
  RAL_CALL(0, &i1, &b);
  int64_t bytes = a.sizes[0] * b.sizes[1] * (int64_t)sizeof(float);
  void* p = 0;
  RAL_CALL(1, &bytes, &p);
  memref2 c = {(float*)p, (float*)p, 0, {a.sizes[0], b.sizes[1]}, {b.sizes[1], 1}};
  bool no = false;
  RAL_CALL(2, &a, &b, &c, &no, &no);
  RAL_CALL(3, &i0, &c);
}
