// NCCL for the CUDA collective kernels: device buffers move between GPUs through NCCL, queued on
// the execution's stream behind its semaphore waits like any other device work, instead of
// through host memory and the host communicator.
//
// The library is loaded with dlopen like cuBLAS ($RAL_NCCL_PATH, else libnccl.so.2, libnccl.so;
// NCCL 2.14 or newer). RAL_CUDA_COLLECTIVES picks the transport of CUDA collectives:
//   auto (default, or unset)  NCCL when the library loads, host staging otherwise
//   nccl                      NCCL, or an error saying why it cannot load
//   host                      host staging (kernels/collective/host_staging.h)
// Every rank of a job must make the same choice.
//
// An NcclCommunicator is made from a Context's host communicator (Context::communicator()) on
// the first CUDA collective of that Context, kept by the Context, and spans the same ranks: rank
// 0 makes NCCL's unique id and broadcasts it through the host communicator. Before each call the
// ranks compare what they are about to do through the host communicator, so ranks that disagree
// fail with both calls named instead of hanging in NCCL. Each call then waits on the host until
// its device work is done, for at most the host communicator's timeout once NCCL has it: a rank
// that dies or never arrives aborts the NCCL communicator, and every later call fails at once
// with that first error (as the host communicators do).
//
// Thread-safety: calls from many threads are serialized; ranks must agree on their order.
#ifndef RAL_KERNELS_COLLECTIVE_NCCL_H_
#define RAL_KERNELS_COLLECTIVE_NCCL_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "ral/communicator.h"
#include "ral/driver.h"
#include "ral/driver_services.h"
#include "ral/dtype.h"
#include "ral/execution_context.h"
#include "ral/status.h"

namespace ral::kernels::cuda {

inline constexpr char kNcclPathEnv[] = "RAL_NCCL_PATH";
inline constexpr char kCudaCollectivesEnv[] = "RAL_CUDA_COLLECTIVES";

struct NcclSymbols;

class NcclLibrary {
 public:
  // Loaded once per process; Unavailable, naming what was tried and how to fix it, when missing.
  static StatusOr<const NcclLibrary*> get();
  const NcclSymbols& symbols() const { return *symbols_; }
  const std::string& path() const { return path_; }
  const std::string& version() const { return version_; }  // "2.28.9"
  // OK for ncclSuccess; otherwise an error naming `call` and NCCL's reason.
  Status check(int result, const char* call) const;

 private:
  NcclLibrary() = default;
  std::string path_;
  std::string version_;
  std::unique_ptr<NcclSymbols> symbols_;
};

class NcclCommunicator {
 public:
  // A collective over `host`'s ranks: every rank must call it. `driver` is the Context's CUDA
  // driver (its device is this rank's GPU); both must outlive the communicator.
  static StatusOr<std::unique_ptr<NcclCommunicator>> create(Communicator& host, Driver& driver);
  ~NcclCommunicator();
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  std::string describe() const;

  // One kernel's calls on `stream`: holds the communicator for their duration, so calls from
  // many threads do not interleave. Buffers are dense device memory of the driver, `count`
  // elements of `dtype` as in ral/communicator.h. Each call returns once it is checked against
  // the other ranks and queued; finish() waits for everything queued on the stream so far.
  class StreamCalls {
   public:
    Status allReduce(const void* in, void* out, int64_t count, DType dtype, ReduceOp op);
    Status allGather(const void* in, void* out, int64_t count, DType dtype);
    Status reduceScatter(const void* in, void* out, int64_t count, DType dtype, ReduceOp op);
    // `out` = root's `in` (`in` is read on the root only; in place when they are equal).
    Status broadcast(const void* in, void* out, int64_t count, DType dtype, int root);
    Status allToAll(const void* in, void* out, int64_t count, DType dtype);
    // NCCL has no tags: the tag is compared with the peer's before anything moves.
    Status send(const void* data, int64_t count, DType dtype, int peer, int tag);
    Status recv(void* data, int64_t count, DType dtype, int peer, int tag);
    // A call NCCL holds longer than the timeout, or an error NCCL reports meanwhile, aborts the
    // communicator.
    Status finish();
    // Whether NCCL can move `ptr` as it is (device memory of the driver); other memory goes
    // through a device copy.
    bool direct(const void* ptr) const;

   private:
    friend class NcclCommunicator;
    StreamCalls(NcclCommunicator& comm, Stream* stream)
        : comm_(comm), stream_(stream), lock_(comm.mutex_) {}
    NcclCommunicator& comm_;
    Stream* const stream_;
    std::unique_lock<std::mutex> lock_;
  };
  StreamCalls calls(Stream* stream) { return StreamCalls(*this, stream); }

  // NCCL calls this communicator queued since it was made (for tests and traces).
  uint64_t callsQueued() const { return calls_queued_.load(); }

 private:
  struct Shared;
  struct Call;
  NcclCommunicator(Communicator& host, Driver& driver, CudaQueueService& queue,
                   const NcclLibrary& lib, std::shared_ptr<Shared> shared);

  // The first error that broke the communicator, or OK.
  Status broken() const;
  // Compares `call` with every rank's through the host communicator (a collective).
  Status agree(const Call& call);
  // Compares a send or receive with the peer's matching receive or send.
  Status agreeWithPeer(const Call& call, bool sending);
  // Checks `call` across ranks, then queues `issue` on `stream` (it gets the CUstream).
  Status queue(const Call& call, Stream* stream, std::function<int(void* cu_stream)> issue);
  Status finish(Stream* stream);

  Communicator& host_;
  Driver& driver_;
  CudaQueueService& queue_;
  const NcclLibrary& lib_;
  const std::shared_ptr<Shared> shared_;  // also held by queued issues
  const int rank_;
  const int size_;
  const std::chrono::milliseconds timeout_;
  std::mutex mutex_;  // serializes calls
  uint64_t collectives_ = 0;
  std::unique_ptr<uint64_t[]> sent_, received_;  // point-to-point calls per peer
  std::shared_ptr<Semaphore> done_;              // signalled on the stream after each call
  uint64_t done_value_ = 0;
  std::atomic<uint64_t> calls_queued_{0};
};

// The NCCL communicator of the execution's Context for its CUDA collectives over `host`, made on
// first use; nullptr where host staging serves them (RAL_CUDA_COLLECTIVES=host, or auto without
// an NCCL library).
StatusOr<NcclCommunicator*> ncclCommunicatorOf(ExecutionContext* ctx, Communicator& host);

}  // namespace ral::kernels::cuda

#endif  // RAL_KERNELS_COLLECTIVE_NCCL_H_
