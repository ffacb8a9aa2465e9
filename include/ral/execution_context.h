// ExecutionContext: the per-execution state a compiled module's entry receives.
//
// The pointer a module sees ("ctx") is the address of the ral_exec_header base, so generated
// code can test `error` at offset 0 without knowing anything else about the object.
// fromAbi()/abi() convert between the two views.
#ifndef RAL_EXECUTION_CONTEXT_H_
#define RAL_EXECUTION_CONTEXT_H_

#include <cstdint>

#include "ral/abi.h"
#include "ral/context_type.h"
#include "ral/status.h"

namespace ral {

class Context;
class Stream;

class ExecutionContext : public ral_exec_header {
 public:
  static const ContextType kType;

  explicit ExecutionContext(Context* context, const ContextType* type = &kType);
  virtual ~ExecutionContext();
  ExecutionContext(const ExecutionContext&) = delete;
  ExecutionContext& operator=(const ExecutionContext&) = delete;

  static ExecutionContext* fromAbi(void* ctx) {
    return static_cast<ExecutionContext*>(static_cast<ral_exec_header*>(ctx));
  }
  void* abi() { return static_cast<ral_exec_header*>(this); }

  Context* context() const { return context_; }
  const ContextType* type() const { return type_; }

  // Records a failure. The first error wins and is kept with its message; later ones are
  // dropped. Safe to call from worker threads of a kernel running for this execution.
  void signalError(Status status);
  bool failed() const { return __atomic_load_n(&error, __ATOMIC_ACQUIRE) != 0; }
  // The first error signalled, or OK.
  const Status& status() const { return status_; }

  // Clears per-execution state so the object can serve the next execution (pooling). Hosts
  // extend it to drop their bindings.
  virtual void reset();

  // The stream the execution's device work is queued on, a Stream of the device's driver chosen
  // by the host (nullptr: the driver's default stream). Not owned; the host keeps it alive for
  // the execution. A host with its own native streams wraps them (Driver::wrapNativeStream).
  Stream* stream() const { return stream_; }
  void setStream(Stream* stream) { stream_ = stream; }

 private:
  Context* context_;
  const ContextType* type_;
  Stream* stream_ = nullptr;
  Status status_;
};

}  // namespace ral

// Inside a RAL function returning void: signal and return when `expr` (a Status) fails.
#define RAL_SIGNAL_IF_ERROR(ctx, expr)                   \
  do {                                                   \
    ::ral::Status ral_signal_status_ = (expr);           \
    if (!ral_signal_status_.ok()) {                      \
      (ctx)->signalError(std::move(ral_signal_status_)); \
      return;                                            \
    }                                                    \
  } while (0)

#endif  // RAL_EXECUTION_CONTEXT_H_
