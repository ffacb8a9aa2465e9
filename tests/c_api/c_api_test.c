/* The C API from C: load, create a context, run with DLPack tensors, read errors, free.
 * Usage: c_api_test <dir with the test modules> */
#include "ral/c_api.h"

#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

static int failures = 0;
#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

static DLManagedTensor tensor(float* data, int64_t* shape, int32_t ndim) {
  DLManagedTensor t;
  memset(&t, 0, sizeof(t));
  t.dl_tensor.data = data;
  t.dl_tensor.device.device_type = kDLCPU;
  t.dl_tensor.ndim = ndim;
  t.dl_tensor.dtype.code = kDLFloat;
  t.dl_tensor.dtype.bits = 32;
  t.dl_tensor.dtype.lanes = 1;
  t.dl_tensor.shape = shape;
  return t;
}

static char* path(const char* dir, const char* name) {
  static char buf[4096];
  snprintf(buf, sizeof(buf), "%s/%s.ralm", dir, name);
  return buf;
}

static void good_run(ral_context* ctx, float base) {
  float a[3] = {base, base + 1, base + 2}, b[3] = {10, 20, 30};
  int64_t shape[1] = {3};
  DLManagedTensor ta = tensor(a, shape, 1), tb = tensor(b, shape, 1);
  DLManagedTensor* inputs[2] = {&ta, &tb};
  DLManagedTensor* outputs[1] = {NULL};
  int rc = ral_context_run(ctx, inputs, 2, outputs, 1);
  CHECK(rc == RAL_OK);
  if (rc != RAL_OK) {
    fprintf(stderr, "run failed: %s\n", ral_last_error());
    return;
  }
  const DLTensor* y = &outputs[0]->dl_tensor;
  CHECK(y->ndim == 1 && y->shape[0] == 3);
  CHECK(y->dtype.code == kDLFloat && y->dtype.bits == 32 && y->device.device_type == kDLCPU);
  const float* v = (const float*)y->data;
  for (int i = 0; i < 3; ++i) CHECK(v[i] == a[i] + b[i]);
  outputs[0]->deleter(outputs[0]);
}

/* Asynchronous executions of add_r1: a chain of three submissions linked by a semaphore and by
 * outputs, held back until the host signals; a failing one in the middle fails the rest of its
 * chain and the semaphore; timeouts; bad calls; handles freed with work in flight. */
static void submissions(const char* dir) {
  ral_module* module = NULL;
  ral_context* ctx = NULL;
  CHECK(ral_module_load(path(dir, "add_r1"), &module) == RAL_OK);
  CHECK(ral_context_create(module, &ctx) == RAL_OK);
  ral_module_free(module);
  if (ctx == NULL) return;
  ral_semaphore* s = NULL;
  CHECK(ral_semaphore_create(ctx, 0, &s) == RAL_OK);
  float a[3] = {1, 2, 3}, b[3] = {10, 20, 30};
  int64_t shape[1] = {3};
  DLManagedTensor ta = tensor(a, shape, 1), tb = tensor(b, shape, 1);

  ral_input first_in[2] = {{&ta, NULL, 0, {NULL, 0}}, {&tb, NULL, 0, {NULL, 0}}};
  ral_semaphore_value start = {s, 1}, v2 = {s, 2}, v3 = {s, 3}, v4 = {s, 4};
  ral_submission *first = NULL, *second = NULL, *third = NULL;
  CHECK(ral_context_submit(ctx, first_in, 2, &start, 1, &v2, 1, NULL, 0, &first) == RAL_OK);
  ral_input second_in[2] = {{NULL, first, 0, {NULL, 0}}, {&tb, NULL, 0, {NULL, 0}}};
  CHECK(ral_context_submit(ctx, second_in, 2, &v2, 1, &v3, 1, NULL, 0, &second) == RAL_OK);
  ral_input third_in[2] = {{NULL, second, 0, {NULL, 0}}, {NULL, first, 0, {NULL, 0}}};
  CHECK(ral_context_submit(ctx, third_in, 2, &v3, 1, &v4, 1, NULL, 0, &third) == RAL_OK);
  /* Held back by the first wait. */
  CHECK(ral_submission_wait(third, 10 * 1000 * 1000) == RAL_DEADLINE_EXCEEDED);
  uint64_t value = 99;
  CHECK(ral_semaphore_query(s, &value) == RAL_OK && value == 0);
  CHECK(ral_semaphore_signal(s, 1) == RAL_OK);
  CHECK(ral_semaphore_wait(s, 4, RAL_INFINITE_TIMEOUT) == RAL_OK);
  DLManagedTensor* out[1] = {NULL};
  CHECK(ral_submission_outputs(third, out, 1) == RAL_OK);
  if (out[0] != NULL) {
    /* ((a + b) + b) + (a + b) */
    const float* y = (const float*)out[0]->dl_tensor.data;
    for (int i = 0; i < 3; ++i) CHECK(y[i] == 2 * a[i] + 3 * b[i]);
    out[0]->deleter(out[0]);
  }
  DLManagedTensor* two[2] = {NULL, NULL};
  CHECK(ral_submission_outputs(third, two, 2) == 2 /* INVALID_ARGUMENT */);
  CHECK(strstr(ral_last_error(), "room was given for 2") != NULL);
  ral_submission_free(first);
  ral_submission_free(second);
  ral_submission_free(third);

  /* The middle one gets a rank-2 input: its error reaches the end of the chain. */
  int64_t shape2[2] = {1, 3};
  DLManagedTensor bad = tensor(a, shape2, 2);
  ral_input bad_in[2] = {{&bad, NULL, 0, {NULL, 0}}, {&tb, NULL, 0, {NULL, 0}}};
  ral_semaphore_value v5 = {s, 5}, v6 = {s, 6};
  CHECK(ral_context_submit(ctx, first_in, 2, NULL, 0, &v5, 1, NULL, 0, &first) == RAL_OK);
  CHECK(ral_context_submit(ctx, bad_in, 2, &v5, 1, &v6, 1, NULL, 0, &second) == RAL_OK);
  ral_input after_in[2] = {{NULL, second, 0, {NULL, 0}}, {&tb, NULL, 0, {NULL, 0}}};
  CHECK(ral_context_submit(ctx, after_in, 2, &v6, 1, NULL, 0, NULL, 0, &third) == RAL_OK);
  CHECK(ral_submission_wait(third, RAL_INFINITE_TIMEOUT) == 2 /* INVALID_ARGUMENT */);
  CHECK(strstr(ral_last_error(), "expected rank 1") != NULL);
  CHECK(ral_semaphore_wait(s, 6, RAL_INFINITE_TIMEOUT) == 2);
  CHECK(ral_submission_outputs(third, out, 1) == 2 && out[0] == NULL);
  CHECK(ral_submission_wait(first, 0) == RAL_OK);
  ral_submission_free(first);
  ral_submission_free(second);
  ral_submission_free(third);

  /* Bad calls queue nothing. */
  ral_submission* none = NULL;
  CHECK(ral_context_submit(ctx, first_in, 1, NULL, 0, NULL, 0, NULL, 0, &none) == 2);
  CHECK(strstr(ral_last_error(), "takes 2 input(s), got 1") != NULL && none == NULL);
  ral_input neither[2] = {{NULL, NULL, 0, {NULL, 0}}, {&tb, NULL, 0, {NULL, 0}}};
  CHECK(ral_context_submit(ctx, neither, 2, NULL, 0, NULL, 0, NULL, 0, &none) == 2);
  CHECK(strstr(ral_last_error(), "input 0 is NULL") != NULL);
  ral_semaphore_value null_sem = {NULL, 1};
  CHECK(ral_context_submit(ctx, first_in, 2, &null_sem, 1, NULL, 0, NULL, 0, &none) == 2);
  CHECK(strstr(ral_last_error(), "waits[0].semaphore is NULL") != NULL);
  CHECK(ral_context_submit(NULL, first_in, 2, NULL, 0, NULL, 0, NULL, 0, &none) != RAL_OK);
  CHECK(ral_semaphore_create(ctx, 0, NULL) != RAL_OK);
  CHECK(ral_semaphore_wait(NULL, 1, 0) != RAL_OK);

  /* Handles freed with a submission waiting: it runs when the semaphore is signalled. */
  ral_semaphore* gate = NULL;
  CHECK(ral_semaphore_create(ctx, 0, &gate) == RAL_OK);
  /* (`s` failed with the chain above: a failed semaphore stays failed.) */
  ral_semaphore_value open = {gate, 1}, ran = {gate, 2};
  CHECK(ral_context_submit(ctx, first_in, 2, &open, 1, &ran, 1, NULL, 0, &first) == RAL_OK);
  ral_submission_free(first);
  ral_context_free(ctx);
  CHECK(ral_semaphore_signal(gate, 1) == RAL_OK);
  CHECK(ral_semaphore_wait(gate, 2, RAL_INFINITE_TIMEOUT) == RAL_OK);
  /* A failed semaphore reports its failure. */
  CHECK(ral_semaphore_fail(gate, "given up") == RAL_OK);
  CHECK(ral_semaphore_wait(gate, 3, 0) == 13 /* ABORTED */);
  CHECK(strstr(ral_last_error(), "given up") != NULL);
  ral_semaphore_free(gate);
  ral_semaphore_free(s);
}

/* Partial execution through the C API (compiled_partial: out0 = x + 1, out1 = 2 * y, built
 * with the compiler only): y is made ready after output 0 was read. */
static void partial_execution(const char* dir) {
  ral_module* module = NULL;
  if (ral_module_load(path(dir, "compiled_partial"), &module) != RAL_OK) {
    printf("c_api_test: no compiled_partial module (built without the compiler), skipped\n");
    return;
  }
  ral_context* ctx = NULL;
  CHECK(ral_context_create(module, &ctx) == RAL_OK);
  ral_module_free(module);
  if (ctx == NULL) return;
  ral_semaphore *ready = NULL, *out0 = NULL;
  CHECK(ral_semaphore_create(ctx, 0, &ready) == RAL_OK);
  CHECK(ral_semaphore_create(ctx, 0, &out0) == RAL_OK);
  float x[3] = {1, 2, 3}, y[3] = {0, 0, 0};
  int64_t shape[1] = {3};
  DLManagedTensor tx = tensor(x, shape, 1), ty = tensor(y, shape, 1);
  ral_input in[2] = {{&tx, NULL, 0, {NULL, 0}}, {&ty, NULL, 0, {ready, 1}}};
  ral_semaphore_value outs[2] = {{out0, 1}, {NULL, 0}};
  ral_submission* sub = NULL;
  CHECK(ral_context_submit(ctx, in, 2, NULL, 0, NULL, 0, outs, 2, &sub) == RAL_OK);
  CHECK(ral_semaphore_wait(out0, 1, RAL_INFINITE_TIMEOUT) == RAL_OK);
  CHECK(ral_submission_wait(sub, 1000 * 1000) == RAL_DEADLINE_EXCEEDED); /* waits for y */
  DLManagedTensor* a = NULL;
  CHECK(ral_submission_output(sub, 0, &a) == RAL_OK);
  if (a != NULL) {
    for (int i = 0; i < 3; ++i) {
      CHECK(((const float*)a->dl_tensor.data)[i] == x[i] + 1);
      y[i] = 3 * ((const float*)a->dl_tensor.data)[i];
    }
    a->deleter(a);
  }
  CHECK(ral_semaphore_signal(ready, 1) == RAL_OK);
  DLManagedTensor* b = NULL;
  CHECK(ral_submission_output(sub, 1, &b) == RAL_OK);
  if (b != NULL) {
    for (int i = 0; i < 3; ++i) CHECK(((const float*)b->dl_tensor.data)[i] == 6 * (x[i] + 1));
    b->deleter(b);
  }
  CHECK(ral_submission_output(sub, 2, &b) == 7 /* OUT_OF_RANGE */ && b == NULL);
  ral_submission* refused = NULL;
  CHECK(ral_context_submit(ctx, in, 2, NULL, 0, NULL, 0, outs, 1, &refused) == 2);
  CHECK(strstr(ral_last_error(), "got 1 output semaphores") != NULL && refused == NULL);
  ral_submission_free(sub);
  ral_semaphore_free(ready);
  ral_semaphore_free(out0);
  ral_context_free(ctx);
}

/* A one-rank transport of the caller's: all_reduce copies (counting its calls) or fails when
 * told to; every other collective is left NULL. */
struct one_rank {
  int calls;
  int fail;
  int released;
};
static int one_rank_rank(void* self) {
  (void)self;
  return 0;
}
static int one_rank_size(void* self) {
  (void)self;
  return 1;
}
static int one_rank_all_reduce(void* self, const void* in, void* out, int64_t count,
                               DLDataType dtype, int op, char* error, size_t error_size) {
  struct one_rank* r = (struct one_rank*)self;
  ++r->calls;
  if (r->fail) {
    snprintf(error, error_size, "link down (op %d)", op);
    return -1;
  }
  if (in != out) memcpy(out, in, (size_t)count * dtype.bits / 8);
  return 0;
}
static void one_rank_release(void* self) { ((struct one_rank*)self)->released = 1; }

/* The tensor-parallel MLP (compiled_tensor_parallel_mlp, built with the compiler) on a
 * communicator from C: its all-reduce reaches the caller's function; the caller's failure is the
 * run's error, and the next run works. Gloo communicators' argument errors and a rendezvous
 * nobody joins. */
static void collectives(const char* dir) {
  ral_communicator* comm = NULL;
  ral_communicator_ops ops;
  memset(&ops, 0, sizeof(ops));
  struct one_rank state = {0, 0, 0};
  CHECK(ral_communicator_create(&ops, &state, &comm) == 2 /* INVALID_ARGUMENT */);
  CHECK(strstr(ral_last_error(), "struct_size") != NULL);
  ops.struct_size = sizeof(ops);
  CHECK(ral_communicator_create(&ops, &state, &comm) == 2);
  CHECK(strstr(ral_last_error(), "rank and size") != NULL);
  ops.rank = one_rank_rank;
  ops.size = one_rank_size;
  ops.all_reduce = one_rank_all_reduce;
  ops.release = one_rank_release;
  CHECK(ral_communicator_create(&ops, &state, &comm) == RAL_OK);
  ral_communicator* gloo = NULL;
  CHECK(ral_communicator_create_gloo(0, 2, NULL, 1, 100, &gloo) == 2);
  CHECK(ral_communicator_create_gloo(0, 2, "127.0.0.1", 1, 0, &gloo) == 2);
  CHECK(ral_communicator_create_gloo(3, 2, "127.0.0.1", 1, 100, &gloo) != RAL_OK);
  CHECK(gloo == NULL);

  ral_module* module = NULL;
  FILE* f = fopen(path(dir, "compiled_tensor_parallel_mlp"), "rb");
  if (f == NULL) { /* built without the compiler */
    ral_communicator_free(comm);
    CHECK(state.released == 1);
    return;
  }
  fclose(f);
  CHECK(ral_module_load(path(dir, "compiled_tensor_parallel_mlp"), &module) == RAL_OK);
  ral_context_options options;
  memset(&options, 0, sizeof(options));
  options.struct_size = sizeof(options);
  options.communicator = comm;
  ral_context* ctx = NULL;
  CHECK(ral_context_create_with_options(module, &options, &ctx) == RAL_OK);
  ral_communicator_free(comm); /* the context keeps it */
  CHECK(state.released == 0);

  enum { kBatch = 2, kIn = 128, kHidden = 4, kOut = 10 };
  static float x[kBatch * kIn], w1[kIn * kHidden], b1[kHidden], w2[kHidden * kOut], b2[kOut];
  for (int i = 0; i < kBatch * kIn; ++i) x[i] = (float)(i % 7) - 3;
  for (int i = 0; i < kIn * kHidden; ++i) w1[i] = (float)(i % 5) * 0.25f - 0.5f;
  for (int i = 0; i < kHidden; ++i) b1[i] = 1;
  for (int i = 0; i < kHidden * kOut; ++i) w2[i] = (float)(i % 3) - 1;
  for (int i = 0; i < kOut; ++i) b2[i] = (float)i;
  int64_t sx[2] = {kBatch, kIn}, sw1[2] = {kIn, kHidden}, sb1[1] = {kHidden},
          sw2[2] = {kHidden, kOut}, sb2[1] = {kOut};
  DLManagedTensor tx = tensor(x, sx, 2), tw1 = tensor(w1, sw1, 2), tb1 = tensor(b1, sb1, 1),
                  tw2 = tensor(w2, sw2, 2), tb2 = tensor(b2, sb2, 1);
  DLManagedTensor* in[5] = {&tx, &tw1, &tb1, &tw2, &tb2};
  for (int attempt = 0; attempt < 3; ++attempt) {
    state.fail = attempt == 1;
    DLManagedTensor* out[1] = {NULL};
    const int rc = ral_context_run(ctx, in, 5, out, 1);
    CHECK(state.calls == attempt + 1);
    if (attempt == 1) {
      CHECK(rc == 10 /* UNAVAILABLE */);
      CHECK(strstr(ral_last_error(), "all_reduce failed in the caller's communicator") != NULL);
      CHECK(strstr(ral_last_error(), "link down (op 0)") != NULL);
      continue;
    }
    CHECK(rc == RAL_OK);
    if (rc != RAL_OK) continue;
    /* y = relu(x w1 + b1) w2 + b2, in the same float order as no reduction was needed. */
    const float* y = (const float*)out[0]->dl_tensor.data;
    for (int b = 0; b < kBatch; ++b) {
      double h[kHidden];
      for (int j = 0; j < kHidden; ++j) {
        double s = b1[j];
        for (int c = 0; c < kIn; ++c) s += (double)x[b * kIn + c] * w1[c * kHidden + j];
        h[j] = s > 0 ? s : 0;
      }
      for (int o = 0; o < kOut; ++o) {
        double want = b2[o];
        for (int j = 0; j < kHidden; ++j) want += h[j] * w2[j * kOut + o];
        const double diff = y[b * kOut + o] - want;
        CHECK(diff < 1e-3 && diff > -1e-3);
      }
    }
    out[0]->deleter(out[0]);
  }
  ral_context_free(ctx);
  CHECK(state.released == 1);
  ral_module_free(module);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: c_api_test <module dir>\n");
    return 2;
  }
  const char* dir = argv[1];
  ral_module* module = NULL;
  ral_context* ctx = NULL;

  /* Errors: each leaves a message and changes nothing. */
  CHECK(ral_module_load("/nonexistent.ralm", &module) == 4 /* NOT_FOUND */);
  CHECK(module == NULL);
  CHECK(strstr(ral_last_error(), "/nonexistent.ralm") != NULL);
  CHECK(ral_module_load_bytes("garbage!garbage!", 16, &module) != RAL_OK);
  CHECK(strstr(ral_last_error(), "not a RAL module") != NULL);
  CHECK(ral_module_load(path(dir, "missing_import"), &module) == RAL_OK);
  CHECK(ral_context_create(module, &ctx) == 4 /* NOT_FOUND */);
  CHECK(ctx == NULL);
  CHECK(strstr(ral_last_error(), "ral_no_such_function") != NULL);
  ral_module_free(module);
  CHECK(ral_context_create(NULL, &ctx) != RAL_OK);
  ral_module_free(NULL);
  ral_context_free(NULL);

  /* Load, inspect, create, run. */
  CHECK(ral_module_load(path(dir, "add_r1"), &module) == RAL_OK);
  CHECK(strcmp(ral_module_name(module), "add_r1") == 0);
  CHECK(ral_module_num_inputs(module) == 2 && ral_module_num_outputs(module) == 1);
  CHECK(ral_context_create(module, &ctx) == RAL_OK);
  ral_module_free(module); /* the context keeps what it needs */
  good_run(ctx, 1);

  /* Bad runs, each followed by a correct one. */
  float a[3] = {1, 2, 3};
  int64_t shape[1] = {3}, shape2[2] = {1, 3};
  DLManagedTensor ta = tensor(a, shape, 1), t2 = tensor(a, shape2, 2);
  DLManagedTensor* one[1] = {&ta};
  DLManagedTensor* out[1] = {NULL};
  CHECK(ral_context_run(ctx, one, 1, out, 1) == 2 /* INVALID_ARGUMENT */);
  CHECK(strstr(ral_last_error(), "takes 2 input(s), got 1") != NULL);
  CHECK(out[0] == NULL);
  good_run(ctx, 2);
  DLManagedTensor* rank2[2] = {&ta, &t2};
  CHECK(ral_context_run(ctx, rank2, 2, out, 1) == 2);
  CHECK(strstr(ral_last_error(), "input 1: expected rank 1") != NULL);
  good_run(ctx, 3);
  DLManagedTensor tn = tensor(NULL, shape, 1);
  DLManagedTensor* nulls[2] = {&ta, &tn};
  CHECK(ral_context_run(ctx, nulls, 2, out, 1) == 2);
  CHECK(strstr(ral_last_error(), "null data") != NULL);
  DLManagedTensor* missing[2] = {&ta, NULL};
  CHECK(ral_context_run(ctx, missing, 2, out, 1) == 2);
  CHECK(ral_context_run(ctx, rank2, 2, out, 0) == 2);
  CHECK(strstr(ral_last_error(), "room was given for 0") != NULL);
  good_run(ctx, 4);

  /* An output outlives its context. */
  float b[3] = {1, 1, 1};
  DLManagedTensor tb = tensor(b, shape, 1);
  DLManagedTensor* both[2] = {&ta, &tb};
  CHECK(ral_context_run(ctx, both, 2, out, 1) == RAL_OK);
  ral_context_free(ctx);
  CHECK(((const float*)out[0]->dl_tensor.data)[2] == 4.0f);
  out[0]->deleter(out[0]);

  /* The layout contract: add_r2_rowmajor's input 0 is row-major. A column-major view is copied
   * into that layout by default, refused with strict zero-copy. */
  float cols[6] = {1, 4, 2, 5, 3, 6}, rows[6] = {10, 20, 30, 40, 50, 60};
  int64_t shape23[2] = {2, 3}, col_major[2] = {1, 2};
  DLManagedTensor tc = tensor(cols, shape23, 2), tr = tensor(rows, shape23, 2);
  tc.dl_tensor.strides = col_major;
  DLManagedTensor* mixed[2] = {&tc, &tr};
  CHECK(ral_module_load(path(dir, "add_r2_rowmajor"), &module) == RAL_OK);
  ral_context_options options;
  memset(&options, 0, sizeof(options));
  options.struct_size = 4; /* too small for any version: an error, not a guess */
  CHECK(ral_context_create_with_options(module, &options, &ctx) == 2);
  CHECK(strstr(ral_last_error(), "struct_size") != NULL);
  CHECK(ral_context_create_with_options(module, NULL, &ctx) == RAL_OK);
  CHECK(ral_context_run(ctx, mixed, 2, out, 1) == RAL_OK);
  if (out[0] != NULL) {
    const float* v = (const float*)out[0]->dl_tensor.data;
    for (int i = 0; i < 6; ++i) CHECK(v[i] == (float)(11 * (i + 1)));
    out[0]->deleter(out[0]);
  }
  ral_context_free(ctx);
  options.struct_size = sizeof(options);
  options.strict_zero_copy = 1;
  CHECK(ral_context_create_with_options(module, &options, &ctx) == RAL_OK);
  CHECK(ral_context_run(ctx, mixed, 2, out, 1) == 2 /* INVALID_ARGUMENT */);
  CHECK(strstr(ral_last_error(), "input 0 (2x3xf32) has strides [1,2]") != NULL);
  CHECK(strstr(ral_last_error(), "strict zero-copy") != NULL);
  CHECK(out[0] == NULL);
  tc.dl_tensor.strides = NULL; /* the same buffer read row-major now: bound as it is */
  CHECK(ral_context_run(ctx, mixed, 2, out, 1) == RAL_OK);
  if (out[0] != NULL) {
    CHECK(((const float*)out[0]->dl_tensor.data)[1] == 24.0f);
    out[0]->deleter(out[0]);
  }
  ral_context_free(ctx);

  /* Device URIs: the module's own kind by ordinal runs; a device that does not exist or of
   * another kind is an error naming it (and listing the devices), with no context made. */
  options.strict_zero_copy = 0;
  options.device = "cpu:0";
  CHECK(ral_context_create_with_options(module, &options, &ctx) == RAL_OK);
  ral_context_free(ctx);
  ctx = NULL;
  options.device = "cpu:7";
  CHECK(ral_context_create_with_options(module, &options, &ctx) != RAL_OK);
  CHECK(ctx == NULL);
  CHECK(strstr(ral_last_error(), "no cpu device matches 'cpu:7'") != NULL);
  CHECK(strstr(ral_last_error(), "cpu:0") != NULL);
  options.device = "vulkan:0";
  CHECK(ral_context_create_with_options(module, &options, &ctx) != RAL_OK);
  CHECK(strstr(ral_last_error(), "runs on cpu") != NULL);
  options.device = "tpu:0";
  CHECK(ral_context_create_with_options(module, &options, &ctx) == 2 /* INVALID_ARGUMENT */);
  CHECK(strstr(ral_last_error(), "bad device 'tpu:0'") != NULL);
  /* A caller built before `device` existed: the field is not read. */
  options.struct_size = offsetof(ral_context_options, device);
  CHECK(ral_context_create_with_options(module, &options, &ctx) == RAL_OK);
  ral_context_free(ctx);
  ral_module_free(module);

  submissions(dir);
  partial_execution(dir);
  collectives(dir);

  if (failures == 0) printf("c_api_test: ok\n");
  return failures == 0 ? 0 : 1;
}
