#include "ral/execution_context.h"

#include <utility>

namespace ral {

const ContextType ExecutionContext::kType = {"base", nullptr};

ExecutionContext::ExecutionContext(Context* context, const ContextType* type)
    : ral_exec_header{0u, RAL_ABI_VERSION}, context_(context), type_(type) {}

ExecutionContext::~ExecutionContext() = default;

void ExecutionContext::signalError(Status status) {
  if (status.ok()) return;
  uint32_t expected = 0;
  // Claim with a distinct value so a concurrent reader never sees a half-written status.
  if (!__atomic_compare_exchange_n(&error, &expected, 2u, false, __ATOMIC_ACQ_REL,
                                   __ATOMIC_ACQUIRE)) {
    return;  // an earlier error wins
  }
  status_ = std::move(status);
  __atomic_store_n(&error, 1u, __ATOMIC_RELEASE);
}

void ExecutionContext::reset() {
  status_ = Status();
  stream_ = nullptr;
  __atomic_store_n(&error, 0u, __ATOMIC_RELEASE);
}

}  // namespace ral
