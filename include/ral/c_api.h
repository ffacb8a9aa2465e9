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
 * threads at once; a module may be shared by contexts on different threads.
 *
 * Asynchronous executions (ral_context_submit; include/ral/submission.h has the whole contract):
 *
 *   ral_semaphore* s; ral_semaphore_create(c, 0, &s);
 *   ral_input in[2] = {{x}, {y}};
 *   ral_semaphore_value done = {s, 1};
 *   ral_submission* sub;
 *   ral_context_submit(c, in, 2, NULL, 0, &done, 1, NULL, 0, &sub);  // returns at once
 *   ral_input next[1] = {{NULL, sub, 0}};                   // output 0 of `sub`, once ready
 *   ral_context_submit(c2, next, 1, &done, 1, NULL, 0, NULL, 0, &sub2);
 *   ral_submission_outputs(sub2, out, 1);                     // waits; owned outputs
 *   ral_submission_free(sub); ral_submission_free(sub2); ral_semaphore_free(s);
 *
 * A context runs its submissions one after another on a thread of its own, in submission order;
 * each starts once its wait semaphores reached their values and the submissions it takes outputs
 * from are done, and sets its signal semaphores when its outputs are ready. Its failure (or a
 * failed wait) fails its signal semaphores with its error, so whoever waits at the end of a chain
 * sees the first error. Input tensors are borrowed until the submission is done. Handles of
 * semaphores and submissions may be freed at any time: the work goes on, and a context lives
 * until its pending submissions are done. */
#ifndef RAL_C_API_H_
#define RAL_C_API_H_

#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RAL_OK 0
/* What a wait that timed out returns (ral::StatusCode::kDeadlineExceeded). */
#define RAL_DEADLINE_EXCEEDED 3
/* A timeout that never expires. */
#define RAL_INFINITE_TIMEOUT UINT64_MAX

typedef struct ral_module ral_module;
typedef struct ral_context ral_context;
typedef struct ral_semaphore ral_semaphore;
typedef struct ral_submission ral_submission;
typedef struct ral_communicator ral_communicator;

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
  /* The communicator of the module's collectives (ral_communicator_create*; the context keeps it
   * alive). NULL: this process's rank from its environment (RAL_RANK, RAL_WORLD_SIZE, ...;
   * docs/collectives.md), made at the first collective. */
  ral_communicator* communicator;
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

/* ---- Timeline semaphores: a 64-bit value that only grows. */

/* A host timeline semaphore starting at `initial_value`; usable with any context. */
int ral_semaphore_create(ral_context* context, uint64_t initial_value, ral_semaphore** out);
/* Safe with NULL; submissions that use the semaphore keep it alive. */
void ral_semaphore_free(ral_semaphore* semaphore);
/* The current value; a failed semaphore returns its failure. */
int ral_semaphore_query(ral_semaphore* semaphore, uint64_t* value);
/* Sets the value (it must not decrease). */
int ral_semaphore_signal(ral_semaphore* semaphore, uint64_t value);
/* Until the value is >= `value` (RAL_OK), the semaphore fails (its failure), or `timeout_ns`
 * passes (RAL_DEADLINE_EXCEEDED; RAL_INFINITE_TIMEOUT waits for ever). */
int ral_semaphore_wait(ral_semaphore* semaphore, uint64_t value, uint64_t timeout_ns);
/* Fails the semaphore: every current and later wait returns an ABORTED error with `message`. */
int ral_semaphore_fail(ral_semaphore* semaphore, const char* message);

/* ---- Asynchronous executions */

typedef struct ral_semaphore_value {
  ral_semaphore* semaphore;
  uint64_t value;
} ral_semaphore_value;

/* One input of ral_context_submit: `tensor` (borrowed until the submission is done), or, with
 * `tensor` NULL, output `output` of the earlier submission `from`.
 * Partial execution: a tensor with a `ready` semaphore, or an output of an earlier submission, is
 * bound only when the module first receives it (compiled modules receive each input right before
 * its first use), once `ready` is reached or that output is ready; the module runs until then. */
typedef struct ral_input {
  DLManagedTensor* tensor;
  ral_submission* from;
  size_t output;
  ral_semaphore_value ready; /* {NULL, 0}: ready now */
} ral_input;

/* Queues one execution and returns at once with its handle in `*out`. Wrong counts and NULL
 * tensors or semaphores are returned here and queue nothing; every other error arrives through
 * ral_submission_wait / ral_submission_outputs and the signal semaphores. */
int ral_context_submit(ral_context* context, const ral_input* inputs, size_t num_inputs,
                       const ral_semaphore_value* waits, size_t num_waits,
                       const ral_semaphore_value* signals, size_t num_signals,
                       const ral_semaphore_value* output_signals, size_t num_output_signals,
                       ral_submission** out);
/* (ral_context_submit) `output_signals`: none (0), or one per output of the module, each set as
 * soon as the module sent that output (its `semaphore` NULL: none), so a consumer can start on
 * output 0 while output 1 is being computed; see ral_submission_output. */
/* Until the submission is done: its status; RAL_DEADLINE_EXCEEDED when `timeout_ns` passes
 * first (the execution goes on). */
int ral_submission_wait(ral_submission* submission, uint64_t timeout_ns);
/* Waits until done, then gives the caller a reference to each output (release each with its
 * deleter, once); may be called again for more references. num_outputs must equal the
 * module's count. On failure `outputs[i]` are set to NULL. */
int ral_submission_outputs(ral_submission* submission, DLManagedTensor** outputs,
                           size_t num_outputs);
/* Waits until output `index` is ready (sent by the module) or the submission failed first; gives
 * the caller one owned reference to it. An output handed out stays valid if the execution fails
 * later. */
int ral_submission_output(ral_submission* submission, size_t index, DLManagedTensor** output);
/* Safe with NULL and while the execution runs (it goes on). */
void ral_submission_free(ral_submission* submission);

/* ---- Collectives: how a module that calls ral_all_reduce & co. reaches the other ranks of its
 * job (docs/collectives.md; include/ral/communicator.h has the semantics). */

/* A transport the caller brings (MPI, its own fabric, ...). RAL calls these from the threads
 * that run executions, one call at a time per communicator; buffers are contiguous host memory
 * of `count` elements of `dtype` (f16, bf16, f32, f64, i32, i64). Each returns 0, or a non-zero
 * value after writing a message into `error` (at most `error_size` bytes, NUL-terminated). `op`:
 * 0 sum, 1 prod, 2 min, 3 max, 4 avg. A NULL function: the collective is unsupported.
 * Zero-initialise, set struct_size to sizeof(ral_communicator_ops), then the functions. */
typedef struct ral_communicator_ops {
  size_t struct_size;
  int (*rank)(void* self);
  int (*size)(void* self);
  int (*all_reduce)(void* self, const void* in, void* out, int64_t count, DLDataType dtype, int op,
                    char* error, size_t error_size);
  /* out: size() * count elements, every rank's `in` in rank order. */
  int (*all_gather)(void* self, const void* in, void* out, int64_t count, DLDataType dtype,
                    char* error, size_t error_size);
  /* in: size() * count elements; out: block rank() of their reduction. */
  int (*reduce_scatter)(void* self, const void* in, void* out, int64_t count, DLDataType dtype,
                        int op, char* error, size_t error_size);
  int (*broadcast)(void* self, void* data, int64_t count, DLDataType dtype, int root, char* error,
                   size_t error_size);
  /* in and out: size() blocks of `count` elements; block j of out is rank j's block rank(). */
  int (*all_to_all)(void* self, const void* in, void* out, int64_t count, DLDataType dtype,
                    char* error, size_t error_size);
  int (*send)(void* self, const void* data, int64_t count, DLDataType dtype, int peer, int tag,
              char* error, size_t error_size);
  int (*recv)(void* self, void* data, int64_t count, DLDataType dtype, int peer, int tag,
              char* error, size_t error_size);
  /* Called once, when nothing uses the communicator any more; may be NULL. */
  void (*release)(void* self);
} ral_communicator_ops;

/* A communicator over the caller's transport: `ops` is copied, `self` passed to each call. */
int ral_communicator_create(const ral_communicator_ops* ops, void* self, ral_communicator** out);
/* A Gloo communicator: rank `rank` of `size`, meeting through the TCP store at
 * store_host:store_port, which rank 0 serves. Returns once every rank joined, or fails after
 * `timeout_ms` (also the limit of each collective). */
int ral_communicator_create_gloo(int rank, int size, const char* store_host, int store_port,
                                 uint64_t timeout_ms, ral_communicator** out);
/* Safe with NULL; contexts using the communicator keep it alive. */
void ral_communicator_free(ral_communicator* communicator);

/* The message of the last failure on this thread ("" if none). */
const char* ral_last_error(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* RAL_C_API_H_ */
