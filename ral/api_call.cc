// ral_api_call: the uniform by-name entry of the RAL ABI.
#include "ral/abi.h"
#include "ral/context.h"
#include "ral/execution_context.h"
#include "ral/trace.h"

extern "C" void ral_api_call(void* ctx, const char* api_name, void** args) {
  if (ctx == nullptr) return;  // no execution to report to
  ral::ExecutionContext* exec = ral::ExecutionContext::fromAbi(ctx);
  ral::Status error;
  ral_fn fn = exec->context()->lookupApi(api_name, &error);
  if (__builtin_expect(fn != nullptr, 1)) {
    if (__builtin_expect(ral::trace::active(), 0)) {
      ral::trace::Scope scope("ral", std::string(api_name));  // the module may go first
      fn(ctx, args);
    } else {
      fn(ctx, args);
    }
    return;
  }
  exec->signalError(std::move(error));
}
