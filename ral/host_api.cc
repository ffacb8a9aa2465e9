// The host functions every compiled module imports, registered once for HostExecutionContext (so
// every host derived from it answers them) and, for ral_signal_error, for every execution context.
// recv_input / send_output are instantiated for every element type and rank 0..8, so whatever a
// compiler emits resolves. Names and signatures:
//
//   MemRef<T,N> ral_recv_input(ctx, int64_t index)
//       ral_recv_input___cpu___pvoid_i64___m<N>d<T>          e.g. ..._m2df32
//   void ral_send_output(ctx, int64_t index, MemRef<T,N> value)
//       ral_send_output___cpu___pvoid_i64_m<N>d<T>___void    e.g. ..._m2df32___void
//   void* ral_alloc(ctx, int64_t bytes)                  ral_alloc___cpu___pvoid_i64___pvoid
//   void ral_dealloc(ctx, void* ptr)                     ral_dealloc___cpu___pvoid_pvoid___void
//   void ral_signal_error(ctx, int32_t code, const char* message)
//       ral_signal_error___cpu___pvoid_i32_pi8___void
#include <cstdint>

#include "ral/api.h"
#include "ral/half.h"
#include "ral/host_execution_context.h"
#include "ral/registration.h"

namespace ral {
namespace {

template <typename T, int N>
MemRef<T, N> recvInput(HostExecutionContext* ctx, int64_t index) {
  return ctx->recvInput<T, N>(index);
}

template <typename T, int N>
void sendOutput(HostExecutionContext* ctx, int64_t index, MemRef<T, N> value) {
  ctx->sendOutput<T, N>(index, value);
}

void* alloc(HostExecutionContext* ctx, int64_t bytes) { return ctx->alloc(bytes); }
void dealloc(HostExecutionContext* ctx, void* ptr) { ctx->dealloc(ptr); }

// For generated assertions (shape checks, ...): fails the execution with `message`. An unknown
// status code becomes kInternal rather than an out-of-range enum value.
void signalModuleError(ExecutionContext* ctx, int32_t code, const char* message) {
  const bool valid = code > 0 && code <= static_cast<int32_t>(StatusCode::kAborted);
  ctx->signalError(Status(valid ? static_cast<StatusCode>(code) : StatusCode::kInternal,
                          message ? message : "the module signalled an error"));
}

#define RAL_HOST_IO(T, N)                            \
  RAL_API("ral_recv_input", "cpu", recvInput<T, N>); \
  RAL_API("ral_send_output", "cpu", sendOutput<T, N>)
#define RAL_HOST_IO_ALL_RANKS(T) \
  RAL_HOST_IO(T, 0);             \
  RAL_HOST_IO(T, 1);             \
  RAL_HOST_IO(T, 2);             \
  RAL_HOST_IO(T, 3);             \
  RAL_HOST_IO(T, 4);             \
  RAL_HOST_IO(T, 5);             \
  RAL_HOST_IO(T, 6);             \
  RAL_HOST_IO(T, 7);             \
  RAL_HOST_IO(T, 8)

RAL_HOST_IO_ALL_RANKS(bool);
RAL_HOST_IO_ALL_RANKS(int8_t);
RAL_HOST_IO_ALL_RANKS(int16_t);
RAL_HOST_IO_ALL_RANKS(int32_t);
RAL_HOST_IO_ALL_RANKS(int64_t);
RAL_HOST_IO_ALL_RANKS(uint8_t);
RAL_HOST_IO_ALL_RANKS(uint16_t);
RAL_HOST_IO_ALL_RANKS(uint32_t);
RAL_HOST_IO_ALL_RANKS(uint64_t);
RAL_HOST_IO_ALL_RANKS(float16);
RAL_HOST_IO_ALL_RANKS(bfloat16);
RAL_HOST_IO_ALL_RANKS(float);
RAL_HOST_IO_ALL_RANKS(double);

RAL_API("ral_alloc", "cpu", alloc);
RAL_API("ral_dealloc", "cpu", dealloc);
RAL_API("ral_signal_error", "cpu", signalModuleError);

#undef RAL_HOST_IO_ALL_RANKS
#undef RAL_HOST_IO

}  // namespace
// Defined beside the registrations above, so naming it links them.
Status registerHostApi() { return internal::registrationHealth(); }

}  // namespace ral
