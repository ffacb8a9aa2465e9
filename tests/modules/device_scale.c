/* hsa_scale, cuda_scale: ?xf32 -> ?xf32 on device DEVICE (hsa or cuda), y[i] = 2 * x[i] + 1,
 * computed by kernel 0 of the module's executable 0 launched through ral_kernel_launch___DEVICE
 * (64 work-items per workgroup). With tests/modules/DEVICE_scale.sim the executable is a code
 * object of the simulated runtime naming a host function of the test binary; the host code is
 * what a compiled module does. */
#include "test_module.h"

#define RAL_STR_(x) #x
#define RAL_STR(x) RAL_STR_(x)
#define LAUNCH_SIGNATURE "pvoid_i64_i64_i64_i64_i64_i64_i64_i64_i64_ppvoid_pi64_i64___void"

typedef RAL_MEMREF(float, 1) memref1;

RAL_IMPORTS(RAL_IMPORT_RECV_INPUT("m1df32"), RAL_IMPORT_ALLOC,
            {"ral_kernel_launch___" RAL_STR(DEVICE) "___" LAUNCH_SIGNATURE, 0},
            RAL_IMPORT_SEND_OUTPUT("m1df32"));

RAL_MODULE_EXPORT void ral_entry(void* ctx) {
  memref1 in;
  RAL_CALL_I64(0, 0, &in);
  int64_t n = in.sizes[0];
  void* p = 0;
  RAL_CALL_I64(1, n * (int64_t)sizeof(float), &p);
  float* src = in.aligned + in.offset;
  int64_t stride = in.strides[0];
  float* dst = (float*)p;
  void* args[] = {&src, &dst, &n, &stride};
  int64_t sizes[] = {8, 8, 8, 8};
  int64_t executable = 0, entry = 0, gx = (n + 63) / 64, one = 1, block = 64, shared = 0, count = 4;
  void** args_ptr = args;
  int64_t* sizes_ptr = sizes;
  RAL_CALL(2, &executable, &entry, &gx, &one, &one, &block, &one, &one, &shared, &args_ptr,
           &sizes_ptr, &count);
  memref1 out = {dst, dst, 0, {n}, {1}};
  RAL_CALL_I64(3, 0, &out);
}
