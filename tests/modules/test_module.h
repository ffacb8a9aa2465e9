/* Helpers for the hand-written test modules: what a compiler emits, written in C. A module has no
 * link-time dependency on RAL; it only uses the plain-C ABI header. */
#ifndef RAL_TESTS_MODULES_TEST_MODULE_H_
#define RAL_TESTS_MODULES_TEST_MODULE_H_

#include <stdint.h>

#include "ral/abi.h"

#define RAL_MODULE_EXPORT __attribute__((visibility("default")))
#define RAL_STR_(x) #x
#define RAL_STR(x) RAL_STR_(x)

/* MLIR ranked memref descriptors. Rank 0 has no size/stride arrays (zero-length arrays are a GNU
 * extension with size 0, which gives exactly that layout). */
#define RAL_MEMREF(T, N) \
  struct {               \
    T* allocated;        \
    T* aligned;          \
    int64_t offset;      \
    int64_t sizes[N];    \
    int64_t strides[N];  \
  }

static inline int ral_failed(void* ctx) { return ((const ral_exec_header*)ctx)->error != 0; }

/* Calls import `i` and returns from the entry when the execution failed. */
#define RAL_CALL(i, ...)                     \
  do {                                       \
    void* ral_args_[] = {&ctx, __VA_ARGS__}; \
    ral_imports[i].fn(ctx, ral_args_);       \
    if (ral_failed(ctx)) return;             \
  } while (0)

#endif /* RAL_TESTS_MODULES_TEST_MODULE_H_ */
