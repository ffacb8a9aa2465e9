// The host functions modules import from the standalone context (names in
// standalone_context.h). recv_input / send_output are instantiated for every element type and
// rank 0..8, so whatever a compiler emits resolves.
#include <cstdint>

#include "contexts/standalone/standalone_context.h"
#include "ral/api.h"
#include "ral/half.h"

namespace ral::standalone {
namespace {

template <typename T, int N>
MemRef<T, N> recvInput(StandaloneExecutionContext* ctx, int64_t index) {
  return ctx->recvInput<T, N>(index);
}

template <typename T, int N>
void sendOutput(StandaloneExecutionContext* ctx, int64_t index, MemRef<T, N> value) {
  ctx->sendOutput<T, N>(index, value);
}

void* alloc(StandaloneExecutionContext* ctx, int64_t bytes) { return ctx->alloc(bytes); }
void dealloc(StandaloneExecutionContext* ctx, void* ptr) { ctx->dealloc(ptr); }

// For generated assertions (shape checks, ...): fails the execution with `message`. Registered
// for every execution context type.
void signalModuleError(ExecutionContext* ctx, int32_t code, const char* message) {
  const bool valid = code > 0 && code <= static_cast<int32_t>(StatusCode::kAborted);
  ctx->signalError(Status(valid ? static_cast<StatusCode>(code) : StatusCode::kInternal,
                          message ? message : "the module signalled an error"));
}

#define RAL_STANDALONE_IO(T, N)                      \
  RAL_API("ral_recv_input", "cpu", recvInput<T, N>); \
  RAL_API("ral_send_output", "cpu", sendOutput<T, N>)
#define RAL_STANDALONE_IO_ALL_RANKS(T) \
  RAL_STANDALONE_IO(T, 0);             \
  RAL_STANDALONE_IO(T, 1);             \
  RAL_STANDALONE_IO(T, 2);             \
  RAL_STANDALONE_IO(T, 3);             \
  RAL_STANDALONE_IO(T, 4);             \
  RAL_STANDALONE_IO(T, 5);             \
  RAL_STANDALONE_IO(T, 6);             \
  RAL_STANDALONE_IO(T, 7);             \
  RAL_STANDALONE_IO(T, 8)

RAL_STANDALONE_IO_ALL_RANKS(bool);
RAL_STANDALONE_IO_ALL_RANKS(int8_t);
RAL_STANDALONE_IO_ALL_RANKS(int16_t);
RAL_STANDALONE_IO_ALL_RANKS(int32_t);
RAL_STANDALONE_IO_ALL_RANKS(int64_t);
RAL_STANDALONE_IO_ALL_RANKS(uint8_t);
RAL_STANDALONE_IO_ALL_RANKS(uint16_t);
RAL_STANDALONE_IO_ALL_RANKS(uint32_t);
RAL_STANDALONE_IO_ALL_RANKS(uint64_t);
RAL_STANDALONE_IO_ALL_RANKS(float16);
RAL_STANDALONE_IO_ALL_RANKS(bfloat16);
RAL_STANDALONE_IO_ALL_RANKS(float);
RAL_STANDALONE_IO_ALL_RANKS(double);

RAL_API("ral_alloc", "cpu", alloc);
RAL_API("ral_dealloc", "cpu", dealloc);
RAL_API("ral_signal_error", "cpu", signalModuleError);

#undef RAL_STANDALONE_IO_ALL_RANKS
#undef RAL_STANDALONE_IO

}  // namespace
}  // namespace ral::standalone
