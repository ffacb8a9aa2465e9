// Communicator: how a module's collective kernels (kernels/collective/) reach the other ranks of
// a job. RAL has no transport of its own: a host context provides the communicator
// (Context::communicator()), built on the engine that host already uses: Gloo for standalone
// processes (ral/gloo_communicator.h), the torch.distributed process group inside PyTorch.
//
// Every call works on contiguous host memory of `count` elements of `dtype` and returns when
// this rank's part is done. Every rank must issue the same collectives in the same order, with
// the same kind, dtype, count, reduction and root; a communicator checks that and fails a call
// whose ranks disagree with an error naming what differs. After a failure involving the other
// ranks (one gone, a timeout, a mismatch), the communicator is broken: every later call fails at
// once with that first error, since the ranks no longer agree on which message is which.
//
// Thread-safety: calls from many threads are serialized in the order they take the
// communicator's lock; ranks must still agree on that order, so a job that runs collectives
// from several threads orders them itself.
#ifndef RAL_COMMUNICATOR_H_
#define RAL_COMMUNICATOR_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "ral/dtype.h"
#include "ral/status.h"

namespace ral {

// The reduction of ral_all_reduce and ral_reduce_scatter. Values are the kernels' i32 argument.
enum class ReduceOp : int32_t { kSum = 0, kProd = 1, kMin = 2, kMax = 3, kAvg = 4 };
// "sum", "prod", ...; "invalid" for any other value.
std::string_view reduceOpName(ReduceOp op);
// The op of a kernel's i32 argument, or an INVALID_ARGUMENT listing the valid ones. kAvg of an
// integer dtype is refused (the mean of integers is not an integer).
StatusOr<ReduceOp> reduceOpFromCode(int32_t code, DType dtype);

// The collectives a communicator offers: DTypes f16, bf16, f32, f64, i32, i64.
class Communicator {
 public:
  virtual ~Communicator();

  virtual int rank() const = 0;
  virtual int size() const = 0;
  // For errors and logs: "gloo (tcp 127.0.0.1:29500), rank 1 of 4".
  virtual std::string describe() const = 0;
  // How long a call may wait for the other ranks before it fails; what a transport built on this
  // communicator (NCCL for CUDA collectives) waits at most too. Gloo's is
  // RAL_COLLECTIVE_TIMEOUT; five minutes unless a communicator says otherwise.
  virtual std::chrono::milliseconds timeout() const { return std::chrono::minutes(5); }

  // out[i] = op over ranks of in[i]; `in` may equal `out`.
  virtual Status allReduce(const void* in, void* out, int64_t count, DType dtype, ReduceOp op) = 0;
  // out (size() * count elements) = every rank's `in` (count elements), in rank order.
  virtual Status allGather(const void* in, void* out, int64_t count, DType dtype) = 0;
  // out (count elements) = block rank() of the element-wise reduction of every rank's `in`
  // (size() * count elements).
  virtual Status reduceScatter(const void* in, void* out, int64_t count, DType dtype,
                               ReduceOp op) = 0;
  // Every rank's `data` (count elements) = root's.
  virtual Status broadcast(void* data, int64_t count, DType dtype, int root) = 0;
  // Block j of out = block rank() of rank j's `in`; blocks of `count` elements, size() of them.
  virtual Status allToAll(const void* in, void* out, int64_t count, DType dtype) = 0;
  // Point to point: a send to `peer` with `tag` matches that peer's recv from this rank with the
  // same tag, count and dtype.
  virtual Status send(const void* data, int64_t count, DType dtype, int peer, int tag) = 0;
  virtual Status recv(void* data, int64_t count, DType dtype, int peer, int tag) = 0;
};

// A communicator of one rank: every collective is a copy (a broadcast's root must be 0); send and
// recv have no peer and fail. What a job of world size 1 runs with.
std::shared_ptr<Communicator> singleRankCommunicator();

// Whether communicators carry `dtype` (f16, bf16, f32, f64, i32, i64).
bool isCollectiveDType(DType dtype);

// dst[i] = dst[i] op src[i] for `count` elements (kAvg sums; see finishAverage). f16 and bf16 are
// combined in f32 and rounded once per step. For communicator implementations.
void reduceInto(void* dst, const void* src, int64_t count, DType dtype, ReduceOp op);
// data[i] /= ranks, after a sum, for kAvg (floating-point dtypes only).
void finishAverage(void* data, int64_t count, DType dtype, int ranks);

}  // namespace ral

#endif  // RAL_COMMUNICATOR_H_
