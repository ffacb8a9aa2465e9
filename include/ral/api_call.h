// Calling a registered RAL function from C++ the way a compiled module does: by its encoded name
// through ral_api_call, with each argument passed by address. For tests, benchmarks and hosts
// that drive kernels directly.
#ifndef RAL_API_CALL_H_
#define RAL_API_CALL_H_

#include <string>
#include <string_view>

#include "ral/abi.h"
#include "ral/execution_context.h"
#include "ral/name_encoding.h"

namespace ral {

// The encoded name RAL_API gives `void f(ExecutionContext*, A...)` registered as target/device.
template <typename... A>
std::string apiNameFor(std::string_view target, std::string_view device) {
  return encodeApiName(target, device, kSignatureOf<void (*)(ExecutionContext*, A...)>.view());
}

// ral_api_call(ctx, name, {&ctx, &args...}). Errors land on the execution context `ctx` names.
template <typename... A>
void callApi(void* ctx, const char* name, A&... args) {
  void* slots[] = {&ctx, static_cast<void*>(&args)...};
  ral_api_call(ctx, name, slots);
}

}  // namespace ral

#endif  // RAL_API_CALL_H_
