/* The RAL C API: load a module, create a standalone context, run it with DLPack tensors.
 *
 *   ral_module* m; ral_context* c;
 *   if (ral_module_load("add.ralm", &m) != RAL_OK) fprintf(stderr, "%s\n", ral_last_error());
 *   ral_context_create(m, &c);
 *   DLManagedTensor* out[1];
 *   ral_context_run(c, inputs, 2, out, 1);   // inputs are borrowed; outputs are owned
 *   out[0]->deleter(out[0]);
 *   ral_context_free(c); ral_module_free(m);
 *
 * Every function returns RAL_OK (0) or a ral::StatusCode value; ral_last_error() then describes
 * the failure (per thread, until the next failing call on that thread).
 *
 * Ownership and lifetime:
 *   - ral_module_load* and ral_context_create* give the caller one handle each; the caller frees
 *     it exactly once with ral_module_free / ral_context_free. A context keeps its module alive,
 *     so the module handle may be freed first.
 *   - Inputs are borrowed for the duration of ral_context_run only; outputs are owned by the
 *     caller (release each with its deleter, once) and outlive the context and the module.
 *   - NULL handles, NULL out-pointers, wrong counts, tensors of the wrong dtype/shape/device and
 *     corrupt files are reported as errors. What cannot be detected is undefined behaviour:
 *     freeing a handle twice, using a handle after freeing it, freeing a context while another
 *     thread runs it, calling a tensor's deleter twice, or passing a pointer that is not a handle
 *     from this API.
 *
 * Thread safety: every function may be called from any thread. A context may be run from many
 * threads at once; a module may be shared by contexts on different threads. */
#ifndef RAL_C_API_H_
#define RAL_C_API_H_

#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RAL_OK 0

typedef struct ral_module ral_module;
typedef struct ral_context ral_context;

int ral_module_load(const char* path, ral_module** out);
int ral_module_load_bytes(const void* data, size_t size, ral_module** out);
/* Safe with NULL. A module lives on while a context created from it does. */
void ral_module_free(ral_module* module);
size_t ral_module_num_inputs(const ral_module* module);
size_t ral_module_num_outputs(const ral_module* module);
/* The module's name; valid while the module lives. */
const char* ral_module_name(const ral_module* module);

/* A standalone context on the CPU driver built into libral. */
int ral_context_create(ral_module* module, ral_context** out);

/* Options of ral_context_create_with_options. Zero-initialise, set struct_size to
 * sizeof(ral_context_options), then the fields wanted; fields added later keep their zero
 * defaults for callers built against this version. */
typedef struct ral_context_options {
  size_t struct_size;
  /* Non-zero: an input whose strides the module's compiled layout does not accept is an error
   * naming the input and both layouts. Zero (default): it is copied into that layout. */
  int strict_zero_copy;
  /* The device to run on, as a device URI ("vulkan:1", "cuda://GPU-<uuid>", "hsa"; see
   * include/ral/device_uri.h), of the kind the module was compiled for. NULL or "": that kind's
   * default device. An unknown device is an error listing the devices there are. */
  const char* device;
} ral_context_options;

/* ral_context_create with options; `options` may be NULL (all defaults). */
int ral_context_create_with_options(ral_module* module, const ral_context_options* options,
                                    ral_context** out);
/* Safe with NULL. Output tensors stay valid after their context is freed. */
void ral_context_free(ral_context* context);

/* Runs one execution. `inputs` are borrowed (never deleted); on success `outputs[i]` receive
 * owned tensors the caller releases with their deleter; on failure they are set to NULL.
 * num_inputs and num_outputs must equal the module's counts. */
int ral_context_run(ral_context* context, DLManagedTensor* const* inputs, size_t num_inputs,
                    DLManagedTensor** outputs, size_t num_outputs);

/* The message of the last failure on this thread ("" if none). */
const char* ral_last_error(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* RAL_C_API_H_ */
