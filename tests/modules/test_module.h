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

/* Import-table entries for the host calls every module makes (device "cpu"); `code` is a memref
 * type code such as "m2df32". */
#define RAL_IMPORT_RECV_INPUT(code) \
  { "ral_recv_input___cpu___pvoid_i64___" code, 0 }
#define RAL_IMPORT_SEND_OUTPUT(code) \
  { "ral_send_output___cpu___pvoid_i64_" code "___void", 0 }
#define RAL_IMPORT_ALLOC \
  { "ral_alloc___cpu___pvoid_i64___pvoid", 0 }
#define RAL_IMPORT_SIGNAL_ERROR \
  { "ral_signal_error___cpu___pvoid_i32_pi8___void", 0 }
/* Exports the import table ral_imports with these entries, and ral_import_count. */
#define RAL_IMPORTS(...)                                      \
  RAL_MODULE_EXPORT ral_import ral_imports[] = {__VA_ARGS__}; \
  RAL_MODULE_EXPORT uint32_t ral_import_count = sizeof(ral_imports) / sizeof(ral_imports[0])

/* Calls import `i` with an int64 value (an input or output index, a byte count) as its first
 * argument. */
#define RAL_CALL_I64(i, value, ...)        \
  do {                                     \
    int64_t ral_value_ = (value);          \
    RAL_CALL(i, &ral_value_, __VA_ARGS__); \
  } while (0)

/* Fails the execution through import `i` (ral_signal_error) with INVALID_ARGUMENT and returns. */
#define RAL_FAIL(i, text)                   \
  do {                                      \
    int32_t ral_code_ = 2;                  \
    const char* ral_message_ = (text);      \
    RAL_CALL(i, &ral_code_, &ral_message_); \
    return;                                 \
  } while (0)

/* Points memref `m` (rank 1 or more, sizes already set) at row-major memory `p`. */
#define RAL_DENSE(m, p, rank)                            \
  do {                                                   \
    (m).allocated = (m).aligned = (p);                   \
    (m).offset = 0;                                      \
    int64_t ral_stride_ = 1;                             \
    for (int ral_d_ = (rank)-1; ral_d_ >= 0; --ral_d_) { \
      (m).strides[ral_d_] = ral_stride_;                 \
      ral_stride_ *= (m).sizes[ral_d_];                  \
    }                                                    \
  } while (0)

#endif /* RAL_TESTS_MODULES_TEST_MODULE_H_ */
