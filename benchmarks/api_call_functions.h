// The function every api_call_benchmark variant calls. It lives in its own translation unit so
// that a "direct" call is a real call, as it is from a compiled module.
#ifndef RAL_BENCHMARKS_API_CALL_FUNCTIONS_H_
#define RAL_BENCHMARKS_API_CALL_FUNCTIONS_H_

#include "ral/execution_context.h"

namespace ral::bench {
float axpy(ExecutionContext* ctx, float a, float x, float y);
extern const char* const kAxpyName;
}  // namespace ral::bench

#endif  // RAL_BENCHMARKS_API_CALL_FUNCTIONS_H_
