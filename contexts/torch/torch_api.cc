// The host functions modules import, registered for torch executions under the standalone
// context's names (see contexts/standalone/standalone_context.h): the registry prefers these for
// TorchExecutionContext, so one process runs both contexts. recv_input / send_output are
// instantiated for every element type and rank 0..8. ral_signal_error is registered once for
// every context type by the standalone context.
#include <cstdint>

#include "contexts/torch/torch_context.h"
#include "ral/api.h"
#include "ral/half.h"

namespace ral::torch_host {
namespace {

template <typename T, int N>
MemRef<T, N> recvInput(TorchExecutionContext* ctx, int64_t index) {
  return ctx->recvInput<T, N>(index);
}

template <typename T, int N>
void sendOutput(TorchExecutionContext* ctx, int64_t index, MemRef<T, N> value) {
  ctx->sendOutput<T, N>(index, value);
}

void* alloc(TorchExecutionContext* ctx, int64_t bytes) { return ctx->alloc(bytes); }
void dealloc(TorchExecutionContext* ctx, void* ptr) { ctx->dealloc(ptr); }

#define RAL_TORCH_IO(T, N)                           \
  RAL_API("ral_recv_input", "cpu", recvInput<T, N>); \
  RAL_API("ral_send_output", "cpu", sendOutput<T, N>)
#define RAL_TORCH_IO_ALL_RANKS(T) \
  RAL_TORCH_IO(T, 0);             \
  RAL_TORCH_IO(T, 1);             \
  RAL_TORCH_IO(T, 2);             \
  RAL_TORCH_IO(T, 3);             \
  RAL_TORCH_IO(T, 4);             \
  RAL_TORCH_IO(T, 5);             \
  RAL_TORCH_IO(T, 6);             \
  RAL_TORCH_IO(T, 7);             \
  RAL_TORCH_IO(T, 8)

RAL_TORCH_IO_ALL_RANKS(bool);
RAL_TORCH_IO_ALL_RANKS(int8_t);
RAL_TORCH_IO_ALL_RANKS(int16_t);
RAL_TORCH_IO_ALL_RANKS(int32_t);
RAL_TORCH_IO_ALL_RANKS(int64_t);
RAL_TORCH_IO_ALL_RANKS(uint8_t);
RAL_TORCH_IO_ALL_RANKS(uint16_t);
RAL_TORCH_IO_ALL_RANKS(uint32_t);
RAL_TORCH_IO_ALL_RANKS(uint64_t);
RAL_TORCH_IO_ALL_RANKS(float16);
RAL_TORCH_IO_ALL_RANKS(bfloat16);
RAL_TORCH_IO_ALL_RANKS(float);
RAL_TORCH_IO_ALL_RANKS(double);

RAL_API("ral_alloc", "cpu", alloc);
RAL_API("ral_dealloc", "cpu", dealloc);

#undef RAL_TORCH_IO_ALL_RANKS
#undef RAL_TORCH_IO

}  // namespace
}  // namespace ral::torch_host
