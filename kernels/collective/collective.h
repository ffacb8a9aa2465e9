// The collective kernels: a module's messages to the other ranks of its job, through the
// communicator its host context provides (ral/communicator.h; Gloo in standalone processes).
// The argument checks, entry points and registration table, written once; how an operand
// reaches the transport is `Impl`: host memory and the host communicator (host_staging.h, every
// device), or device memory and a communicator of the device's own (nccl_staging.h, CUDA with
// NCCL). kernels/generic_ops.h registers them.
//
//   void allReduce(ExecutionContext*, MemRef<T, N> in, MemRef<T, N> out, int32_t op)
//     ral_all_reduce___<dev>___pvoid_m<N>d<T>_m<N>d<T>_i32___void     out = op over ranks of in
//   void allGather(ExecutionContext*, MemRef<T, N> in, MemRef<T, N> out)
//     ral_all_gather___<dev>___pvoid_m<N>d<T>_m<N>d<T>___void          out = every rank's in,
//                                                   concatenated along dim 0 in rank order
//   void reduceScatter(ExecutionContext*, MemRef<T, N> in, MemRef<T, N> out, int32_t op)
//     ral_reduce_scatter___<dev>___pvoid_m<N>d<T>_m<N>d<T>_i32___void  out = block rank (along
//                                                   dim 0) of op over ranks of in
//   void broadcast(ExecutionContext*, MemRef<T, N> in, MemRef<T, N> out, int32_t root)
//     ral_broadcast___<dev>___pvoid_m<N>d<T>_m<N>d<T>_i32___void       out = root's in
//   void allToAll(ExecutionContext*, MemRef<T, N> in, MemRef<T, N> out)
//     ral_all_to_all___<dev>___pvoid_m<N>d<T>_m<N>d<T>___void          block j of out (along
//                                                   dim 0) = block rank() of rank j's in
//   void send(ExecutionContext*, MemRef<T, N> in, int32_t peer, int32_t tag)
//     ral_send___<dev>___pvoid_m<N>d<T>_i32_i32___void
//   void recv(ExecutionContext*, MemRef<T, N> out, int32_t peer, int32_t tag)
//     ral_recv___<dev>___pvoid_m<N>d<T>_i32_i32___void
//   int64_t rank(ExecutionContext*), size(ExecutionContext*)
//     ral_comm_rank___<dev>___pvoid___i64, ral_comm_size___<dev>___pvoid___i64
//   T in f16 bf16 f32 f64 i32 i64; N in 0..4 (all_reduce, broadcast, send, recv), 1..4 (those
//   that split dim 0); op: 0 sum, 1 prod, 2 min, 3 max, 4 avg (floating point only).
//
// Operands may have any strides; `in` and `out` may be the same view (in place) but must not
// otherwise overlap. Shapes are checked on each rank (all_gather's out dim 0 is world size times
// in's, reduce_scatter's in dim 0 world size times out's, all_to_all's dim 0 a multiple of the
// world size), and across ranks by the communicator: ranks whose dtypes or counts differ fail
// with an error naming both.
#ifndef RAL_KERNELS_COLLECTIVE_COLLECTIVE_H_
#define RAL_KERNELS_COLLECTIVE_COLLECTIVE_H_

#include <cstdint>

#include "kernels/common/kernel_types.h"
#include "kernels/common/kernel_util.h"
#include "ral/api.h"
#include "ral/communicator.h"
#include "ral/context.h"
#include "ral/dtype.h"
#include "ral/memref.h"

namespace ral::kernels {

// The communicator of the execution's host context.
inline StatusOr<Communicator*> communicatorOf(ExecutionContext* ctx, const char* kernel) {
  if (ctx == nullptr || ctx->context() == nullptr)
    return failedPrecondition(kernel, ": the execution context has no Context");
  StatusOr<Communicator*> comm = ctx->context()->communicator();
  if (!comm.ok()) return comm.status().withContext(kernel);
  if ((*comm)->size() < 1)
    return failedPrecondition(kernel, ": the job has no ranks: ", (*comm)->describe());
  return comm;
}

template <typename T, int N>
Status checkOperands(const char* kernel, const MemRef<T, N>& in, const MemRef<T, N>& out) {
  RAL_RETURN_IF_ERROR(checkMemRef(in, kernel, "input"));
  RAL_RETURN_IF_ERROR(checkMemRef(out, kernel, "output"));
  bool same_view = in.data() == out.data();
  for (int d = 0; d < N; ++d) same_view = same_view && in.strides[d] == out.strides[d];
  if (!same_view && overlaps(in, out))
    return invalidArgument(kernel, ": input ", shapeString(in), " and output ", shapeString(out),
                           " overlap without being the same view");
  if (!nonOverlapping(out) && out.numel() > 1)
    return invalidArgument(kernel, ": output ", shapeString(out),
                           " has elements sharing memory (a broadcast view)");
  return Status();
}

// Dims 1.. of a and b are equal, and a's dim 0 is `factor` times b's.
template <typename T, int N>
Status checkDim0Multiple(const char* kernel, const MemRef<T, N>& a, const char* a_what,
                         const MemRef<T, N>& b, const char* b_what, int64_t factor) {
  // Divides rather than multiplies: a hostile size times the world size could overflow.
  bool ok = factor > 0 && a.sizes[0] % factor == 0 && a.sizes[0] / factor == b.sizes[0];
  for (int d = 1; d < N; ++d) ok = ok && a.sizes[d] == b.sizes[d];
  if (!ok)
    return invalidArgument(kernel, ": ", a_what, " ", shapeString(a), " must be ", b_what, " ",
                           shapeString(b), " with dim 0 times the world size ", factor);
  return Status();
}

template <class Impl, typename T, int N>
Status allReduceOn(ExecutionContext* ctx, const MemRef<T, N>& in, const MemRef<T, N>& out,
                   int32_t op_code) {
  constexpr const char* kKernel = "ral_all_reduce";
  RAL_RETURN_IF_ERROR(checkOperands(kKernel, in, out));
  if (!sameSizes(in, out))
    return invalidArgument(kKernel, ": input ", shapeString(in), " and output ", shapeString(out),
                           " differ in shape");
  StatusOr<ReduceOp> op = reduceOpFromCode(op_code, DTypeOf<T>::value);
  if (!op.ok()) return op.status().withContext(kKernel);
  RAL_ASSIGN_OR_RETURN(Communicator * comm, communicatorOf(ctx, kKernel));
  return Impl::template run<T, N>(
      ctx, kKernel, *comm, in, out, [&](auto& calls, const void* src, void* dst) {
        return calls.allReduce(src, dst, out.numel(), DTypeOf<T>::value, *op);
      });
}

template <class Impl, typename T, int N>
Status allGatherOn(ExecutionContext* ctx, const MemRef<T, N>& in, const MemRef<T, N>& out) {
  constexpr const char* kKernel = "ral_all_gather";
  RAL_RETURN_IF_ERROR(checkOperands(kKernel, in, out));
  RAL_ASSIGN_OR_RETURN(Communicator * comm, communicatorOf(ctx, kKernel));
  RAL_RETURN_IF_ERROR(checkDim0Multiple(kKernel, out, "output", in, "input", comm->size()));
  return Impl::template run<T, N>(ctx, kKernel, *comm, in, out,
                                  [&](auto& calls, const void* src, void* dst) {
                                    return calls.allGather(src, dst, in.numel(), DTypeOf<T>::value);
                                  });
}

template <class Impl, typename T, int N>
Status reduceScatterOn(ExecutionContext* ctx, const MemRef<T, N>& in, const MemRef<T, N>& out,
                       int32_t op_code) {
  constexpr const char* kKernel = "ral_reduce_scatter";
  RAL_RETURN_IF_ERROR(checkOperands(kKernel, in, out));
  StatusOr<ReduceOp> op = reduceOpFromCode(op_code, DTypeOf<T>::value);
  if (!op.ok()) return op.status().withContext(kKernel);
  RAL_ASSIGN_OR_RETURN(Communicator * comm, communicatorOf(ctx, kKernel));
  RAL_RETURN_IF_ERROR(checkDim0Multiple(kKernel, in, "input", out, "output", comm->size()));
  return Impl::template run<T, N>(
      ctx, kKernel, *comm, in, out, [&](auto& calls, const void* src, void* dst) {
        return calls.reduceScatter(src, dst, out.numel(), DTypeOf<T>::value, *op);
      });
}

template <class Impl, typename T, int N>
Status broadcastOn(ExecutionContext* ctx, const MemRef<T, N>& in, const MemRef<T, N>& out,
                   int32_t root) {
  constexpr const char* kKernel = "ral_broadcast";
  RAL_RETURN_IF_ERROR(checkOperands(kKernel, in, out));
  if (!sameSizes(in, out))
    return invalidArgument(kKernel, ": input ", shapeString(in), " and output ", shapeString(out),
                           " differ in shape");
  RAL_ASSIGN_OR_RETURN(Communicator * comm, communicatorOf(ctx, kKernel));
  return Impl::template run<T, N>(
      ctx, kKernel, *comm, in, out, [&](auto& calls, const void* src, void* dst) {
        return calls.broadcast(src, dst, out.numel(), DTypeOf<T>::value, root);
      });
}

template <class Impl, typename T, int N>
Status allToAllOn(ExecutionContext* ctx, const MemRef<T, N>& in, const MemRef<T, N>& out) {
  constexpr const char* kKernel = "ral_all_to_all";
  RAL_RETURN_IF_ERROR(checkOperands(kKernel, in, out));
  if (!sameSizes(in, out))
    return invalidArgument(kKernel, ": input ", shapeString(in), " and output ", shapeString(out),
                           " differ in shape");
  RAL_ASSIGN_OR_RETURN(Communicator * comm, communicatorOf(ctx, kKernel));
  if (in.sizes[0] % comm->size() != 0)
    return invalidArgument(kKernel, ": dim 0 of ", shapeString(in),
                           " is not a multiple of the world size ", comm->size());
  if (in.data() == out.data() && in.numel() > 0)
    return invalidArgument(kKernel, ": runs out of place only (input and output are one view)");
  return Impl::template run<T, N>(
      ctx, kKernel, *comm, in, out, [&](auto& calls, const void* src, void* dst) {
        return calls.allToAll(src, dst, in.numel() / comm->size(), DTypeOf<T>::value);
      });
}

template <class Impl, typename T, int N>
Status sendOn(ExecutionContext* ctx, const MemRef<T, N>& in, int32_t peer, int32_t tag) {
  constexpr const char* kKernel = "ral_send";
  RAL_RETURN_IF_ERROR(checkMemRef(in, kKernel, "input"));
  RAL_ASSIGN_OR_RETURN(Communicator * comm, communicatorOf(ctx, kKernel));
  return Impl::template read<T, N>(ctx, kKernel, *comm, in, [&](auto& calls, const void* src) {
    return calls.send(src, in.numel(), DTypeOf<T>::value, peer, tag);
  });
}

template <class Impl, typename T, int N>
Status recvOn(ExecutionContext* ctx, const MemRef<T, N>& out, int32_t peer, int32_t tag) {
  constexpr const char* kKernel = "ral_recv";
  RAL_RETURN_IF_ERROR(checkMemRef(out, kKernel, "output"));
  if (!nonOverlapping(out) && out.numel() > 1)
    return invalidArgument(kKernel, ": output ", shapeString(out),
                           " has elements sharing memory (a broadcast view)");
  RAL_ASSIGN_OR_RETURN(Communicator * comm, communicatorOf(ctx, kKernel));
  return Impl::template write<T, N>(ctx, kKernel, *comm, out, [&](auto& calls, void* dst) {
    return calls.recv(dst, out.numel(), DTypeOf<T>::value, peer, tag);
  });
}

// A scalar as a one-element vector: what the checks and copies above walk.
template <typename T, int N>
auto asRank1(const MemRef<T, N>& m) {
  if constexpr (N == 0) {
    return MemRef<T, 1>{m.allocated, m.aligned, m.offset, {1}, {1}};
  } else {
    return m;
  }
}

template <class Impl, typename T, int N>
void allReduceKernel(ExecutionContext* ctx, MemRef<T, N> in, MemRef<T, N> out, int32_t op) {
  constexpr int R = N == 0 ? 1 : N;
  RAL_SIGNAL_IF_ERROR(ctx, (allReduceOn<Impl, T, R>(ctx, asRank1(in), asRank1(out), op)));
}
template <class Impl, typename T, int N>
void allGatherKernel(ExecutionContext* ctx, MemRef<T, N> in, MemRef<T, N> out) {
  RAL_SIGNAL_IF_ERROR(ctx, (allGatherOn<Impl, T, N>(ctx, in, out)));
}
template <class Impl, typename T, int N>
void reduceScatterKernel(ExecutionContext* ctx, MemRef<T, N> in, MemRef<T, N> out, int32_t op) {
  RAL_SIGNAL_IF_ERROR(ctx, (reduceScatterOn<Impl, T, N>(ctx, in, out, op)));
}
template <class Impl, typename T, int N>
void broadcastKernel(ExecutionContext* ctx, MemRef<T, N> in, MemRef<T, N> out, int32_t root) {
  constexpr int R = N == 0 ? 1 : N;
  RAL_SIGNAL_IF_ERROR(ctx, (broadcastOn<Impl, T, R>(ctx, asRank1(in), asRank1(out), root)));
}
template <class Impl, typename T, int N>
void allToAllKernel(ExecutionContext* ctx, MemRef<T, N> in, MemRef<T, N> out) {
  RAL_SIGNAL_IF_ERROR(ctx, (allToAllOn<Impl, T, N>(ctx, in, out)));
}
template <class Impl, typename T, int N>
void sendKernel(ExecutionContext* ctx, MemRef<T, N> in, int32_t peer, int32_t tag) {
  constexpr int R = N == 0 ? 1 : N;
  RAL_SIGNAL_IF_ERROR(ctx, (sendOn<Impl, T, R>(ctx, asRank1(in), peer, tag)));
}
template <class Impl, typename T, int N>
void recvKernel(ExecutionContext* ctx, MemRef<T, N> out, int32_t peer, int32_t tag) {
  constexpr int R = N == 0 ? 1 : N;
  RAL_SIGNAL_IF_ERROR(ctx, (recvOn<Impl, T, R>(ctx, asRank1(out), peer, tag)));
}

// ral_comm_rank / ral_comm_size: what a module asks to pick its shard.
inline int64_t commRankKernel(ExecutionContext* ctx) {
  StatusOr<Communicator*> comm = communicatorOf(ctx, "ral_comm_rank");
  if (!comm.ok()) {
    ctx->signalError(comm.status());
    return 0;
  }
  return (*comm)->rank();
}
inline int64_t commSizeKernel(ExecutionContext* ctx) {
  StatusOr<Communicator*> comm = communicatorOf(ctx, "ral_comm_size");
  if (!comm.ok()) {
    ctx->signalError(comm.status());
    return 1;
  }
  return (*comm)->size();
}

}  // namespace ral::kernels

// The element types collectives carry.
#define RAL_KERNEL_COLLECTIVE_TYPES(X) \
  X(float) X(double) X(::ral::float16) X(::ral::bfloat16) X(int32_t) X(int64_t)

// The registration table of device `Impl` named `kDevice` (both defined where this is used).
#define RAL_COLLECTIVE_ANY_RANK_(T, N)                                             \
  RAL_API("ral_all_reduce", kDevice, ::ral::kernels::allReduceKernel<Impl, T, N>); \
  RAL_API("ral_broadcast", kDevice, ::ral::kernels::broadcastKernel<Impl, T, N>);  \
  RAL_API("ral_send", kDevice, ::ral::kernels::sendKernel<Impl, T, N>);            \
  RAL_API("ral_recv", kDevice, ::ral::kernels::recvKernel<Impl, T, N>);
#define RAL_COLLECTIVE_SPLIT_RANK_(T, N)                                                   \
  RAL_API("ral_all_gather", kDevice, ::ral::kernels::allGatherKernel<Impl, T, N>);         \
  RAL_API("ral_reduce_scatter", kDevice, ::ral::kernels::reduceScatterKernel<Impl, T, N>); \
  RAL_API("ral_all_to_all", kDevice, ::ral::kernels::allToAllKernel<Impl, T, N>);
#define RAL_COLLECTIVE_TYPE_(T)                        \
  RAL_COLLECTIVE_ANY_RANK_(T, 0)                       \
  RAL_KERNEL_RANKS_1_TO_4(RAL_COLLECTIVE_ANY_RANK_, T) \
  RAL_KERNEL_RANKS_1_TO_4(RAL_COLLECTIVE_SPLIT_RANK_, T)
#define RAL_REGISTER_COLLECTIVES()                                   \
  RAL_KERNEL_COLLECTIVE_TYPES(RAL_COLLECTIVE_TYPE_)                  \
  RAL_API("ral_comm_rank", kDevice, ::ral::kernels::commRankKernel); \
  RAL_API("ral_comm_size", kDevice, ::ral::kernels::commSizeKernel);

#endif  // RAL_KERNELS_COLLECTIVE_COLLECTIVE_H_
