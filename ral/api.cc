#include "ral/api.h"

#include <string>

namespace ral {
namespace internal {

void signalException(void* ctx, const char* what) {
  if (ctx == nullptr) return;
  ExecutionContext::fromAbi(ctx)->signalError(
      internalError("RAL function threw an exception: ", what));
}

ApiRegistrar::ApiRegistrar(std::string_view target, std::string_view device,
                           std::string_view signature, ral_fn fn, const ContextType* type,
                           const char* file, int line) {
  ApiRegistration reg;
  reg.name = encodeApiName(target, device, signature);
  reg.fn = fn;
  reg.context_type = type;
  reg.location = std::string(file) + ":" + std::to_string(line);
  status = Registry::global().add(std::move(reg));
}

}  // namespace internal
}  // namespace ral
