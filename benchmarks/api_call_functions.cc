#include "api_call_functions.h"

#include "ral/api.h"

namespace ral::bench {
float axpy(ExecutionContext*, float a, float x, float y) { return a * x + y; }
RAL_API("bench_axpy", "cpu", axpy);
const char* const kAxpyName = "bench_axpy___cpu___pvoid_f32_f32_f32___f32";
}  // namespace ral::bench
