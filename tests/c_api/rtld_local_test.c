/* A host that opens libral with RTLD_LOCAL (as Python extensions are loaded) can still run a
 * module that calls ral_api_call by name: the loader makes libral's symbols global first.
 * Usage: rtld_local_test <path to libral.so> <dir with the test modules> */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "ral/c_api.h"

typedef int (*load_fn)(const char*, ral_module**);
typedef int (*create_fn)(ral_module*, ral_context**);
typedef int (*run_fn)(ral_context*, DLManagedTensor* const*, size_t, DLManagedTensor**, size_t);
typedef const char* (*error_fn)(void);
typedef void (*free_module_fn)(ral_module*);
typedef void (*free_context_fn)(ral_context*);

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: rtld_local_test <libral.so> <module dir>\n");
    return 2;
  }
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 1;
  }
  if (dlsym(RTLD_DEFAULT, "ral_api_call") != NULL) {
    fprintf(stderr, "ral_api_call is already global: the test proves nothing\n");
    return 1;
  }
  load_fn load = (load_fn)dlsym(lib, "ral_module_load");
  create_fn create = (create_fn)dlsym(lib, "ral_context_create");
  run_fn run = (run_fn)dlsym(lib, "ral_context_run");
  error_fn last_error = (error_fn)dlsym(lib, "ral_last_error");
  free_module_fn free_module = (free_module_fn)dlsym(lib, "ral_module_free");
  free_context_fn free_context = (free_context_fn)dlsym(lib, "ral_context_free");
  if (!load || !create || !run || !last_error || !free_module || !free_context) {
    fprintf(stderr, "missing C API symbols\n");
    return 1;
  }
  char path[4096];
  snprintf(path, sizeof(path), "%s/by_name.ralm", argv[2]);
  ral_module* module = NULL;
  ral_context* ctx = NULL;
  if (load(path, &module) != RAL_OK || create(module, &ctx) != RAL_OK) {
    fprintf(stderr, "load: %s\n", last_error());
    return 1;
  }
  float x[4] = {1, 2, 3, 4};
  int64_t shape[1] = {4};
  DLManagedTensor in;
  memset(&in, 0, sizeof(in));
  in.dl_tensor.data = x;
  in.dl_tensor.device.device_type = kDLCPU;
  in.dl_tensor.ndim = 1;
  in.dl_tensor.dtype.code = kDLFloat;
  in.dl_tensor.dtype.bits = 32;
  in.dl_tensor.dtype.lanes = 1;
  in.dl_tensor.shape = shape;
  DLManagedTensor* inputs[1] = {&in};
  DLManagedTensor* outputs[1] = {NULL};
  if (run(ctx, inputs, 1, outputs, 1) != RAL_OK) {
    fprintf(stderr, "run: %s\n", last_error());
    return 1;
  }
  const float* y = (const float*)outputs[0]->dl_tensor.data;
  int ok = y[0] == 2 && y[1] == 4 && y[2] == 6 && y[3] == 8;
  outputs[0]->deleter(outputs[0]);
  free_context(ctx);
  free_module(module);
  printf("rtld_local_test: %s\n", ok ? "ok" : "WRONG RESULT");
  return ok ? 0 : 1;
}
