/* RAL module ABI, version 1.
 *
 * This header is plain C so that hand-written modules, generated code and other languages can use
 * it without a C++ toolchain. A compiled module has no link-time dependency on RAL: it exports
 * `ral_entry`, `ral_imports` and `ral_import_count`, and the loader fills `ral_imports[i].fn`.
 */
#ifndef RAL_ABI_H_
#define RAL_ABI_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RAL_ABI_VERSION 1u

/* Uniform type-erased calling convention of every RAL function. `args[k]` points to the storage
 * of argument k (args[0] to the context pointer); results follow the arguments, one slot each. */
typedef void (*ral_fn)(void* ctx, void** args);

/* One entry of a module's import table: the encoded full name, and the function the loader
 * resolved it to. */
typedef struct ral_import {
  const char* name;
  ral_fn fn;
} ral_import;

/* The ABI-visible head of every execution context. Generated code tests `error` after each
 * import call and returns early when it is non-zero. Fields are only ever appended. */
typedef struct ral_exec_header {
  uint32_t error;       /* 0 while the execution is healthy; set once by the first failure */
  uint32_t abi_version; /* RAL_ABI_VERSION of the runtime that created the context */
} ral_exec_header;

/* Calls a RAL function by its encoded full name. Unknown names set the error flag and record a
 * NotFound status on the execution context; nothing aborts. */
void ral_api_call(void* ctx, const char* api_name, void** args);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* RAL_ABI_H_ */
