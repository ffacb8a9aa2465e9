// An out-of-tree program that registers a RAL function and calls it by name through an
// installed libral.
#include <ral/api.h>
#include <ral/context.h>

#include <cstdio>

namespace {
float axpy(ral::ExecutionContext*, float a, float x, float y) { return a * x + y; }
RAL_API("consumer_axpy", "cpu", axpy);
}  // namespace

int main() {
  ral::Context context;
  auto exec = context.acquireExecution();
  void* ctx = exec->abi();
  float a = 2, x = 3, y = 1, r = 0;
  void* args[] = {&ctx, &a, &x, &y, &r};
  ral_api_call(ctx, "consumer_axpy___cpu___pvoid_f32_f32_f32___f32", args);
  if (exec->failed() || r != 7.0f) {
    std::fprintf(stderr, "consumer: wrong result %g (%s)\n", r, exec->status().toString().c_str());
    return 1;
  }
  std::printf("consumer: ok\n");
  return 0;
}
