#include "kernels/collective/nccl.h"

#include <dlfcn.h>

#include <climits>
#include <cstring>
#include <thread>
#include <vector>

#include "drivers/common/dynamic_library.h"
#include "ral/context.h"

namespace ral::kernels::cuda {

// NCCL's C ABI, declared here so the build needs no NCCL headers (values as in nccl.h).
namespace nccl {
using Result = int;
using Comm = struct ncclComm*;
struct UniqueId {
  char internal[128];
};
constexpr Result kSuccess = 0;
constexpr Result kInProgress = 7;
// ncclConfig_t as NCCL 2.14 laid it out. NCCL reads `size` bytes of it and gives the fields
// added after `version` their defaults.
struct Config {
  size_t size = sizeof(Config);
  unsigned int magic = 0xcafebeef;
  unsigned int version = 21400;  // NCCL_VERSION(2, 14, 0)
  int blocking = INT_MIN;        // NCCL_CONFIG_UNDEF_INT
};
}  // namespace nccl

#define RAL_NCCL_SYMBOLS(X) \
  X(ncclGetVersion)         \
  X(ncclGetErrorString)     \
  X(ncclGetUniqueId)        \
  X(ncclCommInitRankConfig) \
  X(ncclCommDestroy)        \
  X(ncclCommAbort)          \
  X(ncclCommGetAsyncError)  \
  X(ncclAllReduce)          \
  X(ncclAllGather)          \
  X(ncclReduceScatter)      \
  X(ncclBroadcast)          \
  X(ncclSend)               \
  X(ncclRecv)               \
  X(ncclGroupStart)         \
  X(ncclGroupEnd)

struct NcclSymbols {
  using R = nccl::Result;
  using C = nccl::Comm;
  R (*ncclGetVersion)(int*) = nullptr;
  const char* (*ncclGetErrorString)(R) = nullptr;
  R (*ncclGetUniqueId)(nccl::UniqueId*) = nullptr;
  R (*ncclCommInitRankConfig)(C*, int, nccl::UniqueId, int, nccl::Config*) = nullptr;
  R (*ncclCommDestroy)(C) = nullptr;
  R (*ncclCommAbort)(C) = nullptr;
  R (*ncclCommGetAsyncError)(C, R*) = nullptr;
  R (*ncclAllReduce)(const void*, void*, size_t, int, int, C, void*) = nullptr;
  R (*ncclAllGather)(const void*, void*, size_t, int, C, void*) = nullptr;
  R (*ncclReduceScatter)(const void*, void*, size_t, int, int, C, void*) = nullptr;
  R (*ncclBroadcast)(const void*, void*, size_t, int, int, C, void*) = nullptr;
  R (*ncclSend)(const void*, size_t, int, int, C, void*) = nullptr;
  R (*ncclRecv)(void*, size_t, int, int, C, void*) = nullptr;
  R (*ncclGroupStart)() = nullptr;
  R (*ncclGroupEnd)() = nullptr;
};

namespace {

constexpr int kMinVersion = 21400;  // non-blocking communicators (ncclConfig_t.blocking)
// The host communicator's tag of point-to-point call descriptions; a module's own sends and
// receives on the host communicator use smaller tags.
constexpr int kDescriptionTag = 0x7fffffff;

// ncclDataType_t of a collective dtype (ral/communicator.h's list).
int ncclType(DType dtype) {
  switch (dtype) {
    case DType::kI32:
      return 2;
    case DType::kI64:
      return 4;
    case DType::kF16:
      return 6;
    case DType::kF32:
      return 7;
    case DType::kF64:
      return 8;
    case DType::kBF16:
      return 9;
    default:
      return -1;
  }
}

// ncclRedOp_t of a reduction (NCCL orders max before min).
int ncclOp(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return 0;
    case ReduceOp::kProd:
      return 1;
    case ReduceOp::kMax:
      return 2;
    case ReduceOp::kMin:
      return 3;
    case ReduceOp::kAvg:
      return 4;
  }
  return -1;
}

std::string describeNccl(const NcclLibrary& lib, int rank, int size) {
  return internal::strCat("nccl ", lib.version(), ", rank ", rank, " of ", size);
}

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

StatusOr<const NcclLibrary*> NcclLibrary::get() {
  static const StatusOr<const NcclLibrary*>* const loaded = []() -> StatusOr<const NcclLibrary*>* {
    StatusOr<drivers::DynamicLibrary> opened =
        drivers::openDynamicLibrary("cuda: cannot load NCCL (libnccl)", kNcclPathEnv,
                                    {"libnccl.so.2", "libnccl.so"}, "NCCL 2.14 or newer");
    if (!opened.ok()) return new StatusOr<const NcclLibrary*>(opened.status());
    void* handle = opened->handle;
    auto fail = [handle](Status s) {
      dlclose(handle);
      return new StatusOr<const NcclLibrary*>(std::move(s));
    };
    const std::string& path = opened->path;
    std::unique_ptr<NcclLibrary> lib(new NcclLibrary());
    lib->path_ = path;
    lib->symbols_ = std::make_unique<NcclSymbols>();
    NcclSymbols& s = *lib->symbols_;
#define RAL_NCCL_LOAD(name)                                                                  \
  s.name = reinterpret_cast<decltype(s.name)>(dlsym(handle, #name));                         \
  if (s.name == nullptr)                                                                     \
    return fail(unavailable("cuda: NCCL library '", path, "' has no symbol '", #name, "' (", \
                            kNcclPathEnv, " names the NCCL to use)"));
    RAL_NCCL_SYMBOLS(RAL_NCCL_LOAD)
#undef RAL_NCCL_LOAD
    int version = 0;
    if (s.ncclGetVersion(&version) != nccl::kSuccess)
      return fail(unavailable("cuda: NCCL library '", path, "' does not report its version"));
    lib->version_ = internal::strCat(version / 10000, ".", version / 100 % 100, ".", version % 100);
    if (version < kMinVersion)
      return fail(unavailable("cuda: NCCL library '", path, "' is version ", lib->version_,
                              "; RAL needs NCCL 2.14 or newer (", kNcclPathEnv,
                              " names the NCCL to use)"));
    return new StatusOr<const NcclLibrary*>(lib.release());
  }();
  return *loaded;
}

Status NcclLibrary::check(int result, const char* call) const {
  if (result == nccl::kSuccess) return Status();
  StatusCode code = StatusCode::kInternal;
  if (result == 2 || result == 6) code = StatusCode::kUnavailable;  // system, remote error
  if (result == 4 || result == 5) code = StatusCode::kInvalidArgument;
  // Not ncclGetLastError: it returns one process-wide buffer that NCCL's threads rewrite while
  // another reads it. NCCL's own text says to run with NCCL_DEBUG=INFO for the details.
  const char* text = symbols_->ncclGetErrorString(result);
  return Status(code, internal::strCat("cuda: ", call,
                                       " failed: ", text != nullptr ? text : "unknown NCCL result",
                                       " (", result, ")"));
}

// What queued issues share with the communicator: they may run later on another thread.
struct NcclCommunicator::Shared {
  const NcclLibrary* lib = nullptr;
  nccl::Comm comm = nullptr;
  std::string name;  // NcclCommunicator::describe(), for errors found here
  std::chrono::milliseconds timeout{0};
  std::mutex mutex;  // guards every NCCL call on `comm` and the fields below
  bool aborted = false;
  Status broken;          // the first error that broke the communicator
  uint64_t issued = 0;    // calls handed to NCCL
  int64_t issued_ns = 0;  // when the latest was

  // The communicator is aborted with `error` unless it already was; returns the first error.
  Status abortLocked(Status error) {
    if (!aborted) {
      aborted = true;
      broken = std::move(error);
      if (comm != nullptr) (void)lib->symbols().ncclCommAbort(comm);
    }
    return broken;
  }
  // NCCL's asynchronous state: OK, kInProgress as `*in_progress`, or its error (the
  // communicator is then aborted).
  Status pollLocked(bool* in_progress) {
    *in_progress = false;
    if (aborted) return broken;
    nccl::Result state = nccl::kSuccess;
    const nccl::Result r = lib->symbols().ncclCommGetAsyncError(comm, &state);
    if (r != nccl::kSuccess)
      return abortLocked(lib->check(r, "ncclCommGetAsyncError").withContext(name));
    if (state == nccl::kInProgress) {
      *in_progress = true;
      return Status();
    }
    if (state != nccl::kSuccess)
      return abortLocked(lib->check(state, "an NCCL operation").withContext(name));
    return Status();
  }
  // Waits until NCCL finished what a non-blocking call started, for at most the timeout.
  Status settle(nccl::Result r, const char* call) {
    if (r != nccl::kSuccess && r != nccl::kInProgress) {
      std::lock_guard<std::mutex> lock(mutex);
      return abortLocked(lib->check(r, call).withContext(name));
    }
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      {
        std::lock_guard<std::mutex> lock(mutex);
        bool in_progress = false;
        RAL_RETURN_IF_ERROR(pollLocked(&in_progress));
        if (!in_progress) return Status();
        if (std::chrono::steady_clock::now() > deadline)
          return abortLocked(deadlineExceeded(name, ": ", call, " did not complete within ",
                                              timeout.count(),
                                              " ms (a rank gone or late; RAL_COLLECTIVE_TIMEOUT)"));
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
};

struct NcclCommunicator::Call {
  enum Kind : int64_t {
    kAllReduce,
    kAllGather,
    kReduceScatter,
    kBroadcast,
    kAllToAll,
    kSend,
    kRecv
  };
  Kind kind;
  DType dtype;
  int64_t count;
  int64_t arg;  // reduction, root, or tag
  int peer = -1;
  int64_t seq = 0;  // filled in by agree()

  static constexpr int kWords = 5;
  void encode(int64_t* w) const {
    w[0] = kind;
    w[1] = static_cast<int64_t>(dtype);
    w[2] = count;
    w[3] = arg;
    w[4] = seq;
  }
  static std::string describe(const int64_t* w, int rank, int peer) {
    static constexpr const char* kNames[] = {
        "all_reduce", "all_gather", "reduce_scatter", "broadcast", "all_to_all", "send", "recv"};
    const int64_t kind = w[0];
    const bool known = kind >= 0 && kind <= kRecv;
    std::string s = internal::strCat("rank ", rank, " calls ", known ? kNames[kind] : "unknown",
                                     " of ", w[2], " ", dtypeName(static_cast<DType>(w[1])));
    if (kind == kAllReduce || kind == kReduceScatter)
      s += internal::strCat(" (", reduceOpName(static_cast<ReduceOp>(w[3])), ")");
    if (kind == kBroadcast) s += internal::strCat(" from root ", w[3]);
    if (kind == kSend || kind == kRecv)
      s += internal::strCat(kind == kSend ? " to rank " : " from rank ", peer, " (tag ", w[3],
                            ") as its call #", w[4] + 1, " with that rank");
    else
      s += internal::strCat(" as NCCL collective #", w[4] + 1);
    return s;
  }
};

NcclCommunicator::NcclCommunicator(Communicator& host, Driver& driver, CudaQueueService& queue,
                                   const NcclLibrary& lib, std::shared_ptr<Shared> shared)
    : host_(host),
      driver_(driver),
      queue_(queue),
      lib_(lib),
      shared_(std::move(shared)),
      rank_(host.rank()),
      size_(host.size()),
      timeout_(host.timeout()),
      sent_(new uint64_t[static_cast<size_t>(host.size())]()),
      received_(new uint64_t[static_cast<size_t>(host.size())]()) {}

StatusOr<std::unique_ptr<NcclCommunicator>> NcclCommunicator::create(Communicator& host,
                                                                     Driver& driver) {
  RAL_ASSIGN_OR_RETURN(const NcclLibrary* lib, NcclLibrary::get());
  auto* queue = driver.service<CudaQueueService>();
  if (queue == nullptr || driver.kind() != DeviceKind::kCuda)
    return invalidArgument("NCCL needs a CUDA driver, not ", driver.deviceName());
  const int rank = host.rank(), size = host.size();

  // Rank 0 makes the id and broadcasts it with whether that worked, so no rank waits for an
  // id that will never come.
  int64_t id_words[1 + sizeof(nccl::UniqueId) / sizeof(int64_t)] = {};
  nccl::UniqueId id{};
  Status made;
  if (rank == 0) {
    made = queue->makeCurrent();
    if (made.ok()) made = lib->check(lib->symbols().ncclGetUniqueId(&id), "ncclGetUniqueId");
    id_words[0] = made.ok() ? 1 : 0;
    std::memcpy(&id_words[1], &id, sizeof id);
  }
  const int64_t words = sizeof id_words / sizeof(int64_t);
  Status sent = host.broadcast(id_words, words, DType::kI64, 0);
  if (!sent.ok()) return sent.withContext("cuda: sharing the NCCL id through " + host.describe());
  if (!made.ok()) return made.withContext("cuda: NCCL id on rank 0");
  if (id_words[0] != 1)
    return unavailable("cuda: rank 0 of ", host.describe(), " could not make an NCCL id");
  std::memcpy(&id, &id_words[1], sizeof id);

  auto shared = std::make_shared<Shared>();
  shared->lib = lib;
  shared->timeout = host.timeout();
  shared->name = describeNccl(*lib, rank, size);
  RAL_RETURN_IF_ERROR(queue->makeCurrent());
  nccl::Config config;
  config.blocking = 0;  // so a rank that never joins is a timeout, not a hang
  const nccl::Result r =
      lib->symbols().ncclCommInitRankConfig(&shared->comm, size, id, rank, &config);
  Status joined = shared->comm == nullptr
                      ? lib->check(r == nccl::kSuccess ? 3 : r, "ncclCommInitRankConfig")
                      : shared->settle(r, "ncclCommInitRankConfig");
  // Every rank learns whether every rank joined: one that failed must not leave the others
  // waiting in their first collective.
  int64_t ok = joined.ok() ? 1 : 0;
  Status agreed = host.allReduce(&ok, &ok, 1, DType::kI64, ReduceOp::kMin);
  if (joined.ok() && !agreed.ok()) joined = agreed;
  if (joined.ok() && ok != 1)
    joined = unavailable("cuda: another rank of ", host.describe(), " could not join NCCL");
  if (!joined.ok()) {
    {
      std::lock_guard<std::mutex> lock(shared->mutex);
      (void)shared->abortLocked(joined);
    }
    return joined.withContext(
        internal::strCat("NCCL ", lib->version(), " from '", lib->path(), "', ", host.describe()));
  }
  std::unique_ptr<NcclCommunicator> comm(
      new NcclCommunicator(host, driver, *queue, *lib, std::move(shared)));
  RAL_ASSIGN_OR_RETURN(comm->done_, driver.createSemaphore(0));
  return comm;
}

NcclCommunicator::~NcclCommunicator() {
  std::lock_guard<std::mutex> lock(shared_->mutex);
  if (shared_->aborted) return;
  if (queue_.makeCurrent().ok()) (void)lib_.symbols().ncclCommDestroy(shared_->comm);
  // An issue still held back on a stream must not reach the destroyed communicator.
  shared_->aborted = true;
  shared_->broken = failedPrecondition(describe(), " was destroyed");
}

std::string NcclCommunicator::describe() const { return shared_->name; }

Status NcclCommunicator::broken() const {
  std::lock_guard<std::mutex> lock(shared_->mutex);
  if (!shared_->aborted) return Status();
  return Status(shared_->broken.code(),
                internal::strCat(describe(), " is unusable after an earlier failure: ",
                                 shared_->broken.message()));
}

Status NcclCommunicator::agree(const Call& call) {
  std::vector<int64_t> all(static_cast<size_t>(size_) * Call::kWords);
  int64_t mine[Call::kWords];
  call.encode(mine);
  Status s = host_.allGather(mine, all.data(), Call::kWords, DType::kI64);
  if (!s.ok()) return s.withContext(describe() + ": comparing calls through " + host_.describe());
  for (int r = 0; r < size_; ++r) {
    const int64_t* theirs = &all[static_cast<size_t>(r) * Call::kWords];
    if (std::memcmp(theirs, mine, sizeof mine) != 0)
      return invalidArgument(describe(), ": the ranks disagree: ", Call::describe(theirs, r, -1),
                             ", ", Call::describe(mine, rank_, -1));
  }
  return Status();
}

Status NcclCommunicator::agreeWithPeer(const Call& call, bool sending) {
  // A send is described as the receive it expects, so matching calls encode alike.
  Call expected = call;
  expected.kind = Call::kSend;
  int64_t mine[Call::kWords], theirs[Call::kWords];
  expected.encode(mine);
  // One tag for every description: the calls' own tags are what is being compared.
  constexpr int tag = kDescriptionTag;
  Status s = sending ? host_.send(mine, Call::kWords, DType::kI64, call.peer, tag)
                     : host_.recv(theirs, Call::kWords, DType::kI64, call.peer, tag);
  if (s.ok())
    s = sending ? host_.recv(theirs, Call::kWords, DType::kI64, call.peer, tag)
                : host_.send(mine, Call::kWords, DType::kI64, call.peer, tag);
  if (!s.ok())
    return s.withContext(internal::strCat(describe(), ": comparing a ",
                                          sending ? "send to" : "receive from", " rank ", call.peer,
                                          " through ", host_.describe()));
  if (std::memcmp(theirs, mine, sizeof mine) != 0) {
    call.encode(mine);
    theirs[0] = sending ? Call::kRecv : Call::kSend;
    return invalidArgument(describe(),
                           ": the ranks disagree: ", Call::describe(mine, rank_, call.peer), ", ",
                           Call::describe(theirs, call.peer, rank_));
  }
  return Status();
}

Status NcclCommunicator::queue(const Call& checked, Stream* stream,
                               std::function<int(void* cu_stream)> issue) {
  RAL_RETURN_IF_ERROR(broken());
  if (ncclType(checked.dtype) < 0)
    return invalidArgument(describe(), ": NCCL does not carry ", dtypeName(checked.dtype));
  if (checked.count < 0)
    return invalidArgument(describe(), ": negative element count ", checked.count);
  Call call = checked;
  const bool p2p = call.kind == Call::kSend || call.kind == Call::kRecv;
  if (p2p) {
    if (call.peer < 0 || call.peer >= size_)
      return invalidArgument(describe(), ": peer ", call.peer, " is not a rank");
    uint64_t& n = (call.kind == Call::kSend ? sent_ : received_)[call.peer];
    call.seq = static_cast<int64_t>(n);
    RAL_RETURN_IF_ERROR(agreeWithPeer(call, call.kind == Call::kSend));
    ++n;
  } else {
    call.seq = static_cast<int64_t>(collectives_);
    RAL_RETURN_IF_ERROR(agree(call));
    ++collectives_;
  }
  // Every rank agreed; nothing to move is a call NCCL need not see.
  if (call.count == 0) return Status();
  const char* const what = p2p ? (call.kind == Call::kSend ? "ncclSend" : "ncclRecv")
                           : call.kind == Call::kAllToAll ? "ncclGroupEnd (all_to_all)"
                                                          : "an NCCL collective";
  std::shared_ptr<Shared> shared = shared_;
  CudaQueueService* queue = &queue_;
  ++calls_queued_;
  return queue_.enqueue(stream, [shared, queue, what, fn = std::move(issue)](void* cu_stream) {
    RAL_RETURN_IF_ERROR(queue->makeCurrent());
    nccl::Result r;
    {
      std::lock_guard<std::mutex> lock(shared->mutex);
      if (shared->aborted) return shared->broken;
      r = fn(cu_stream);
      ++shared->issued;
      shared->issued_ns = nowNs();
    }
    return shared->settle(r, what);
  });
}

Status NcclCommunicator::finish(Stream* stream) {
  RAL_RETURN_IF_ERROR(driver_.queueSignal(stream, done_.get(), ++done_value_));
  const uint64_t target = done_value_;
  const uint64_t queued = calls_queued_.load();
  const auto slice = std::chrono::milliseconds(20);
  for (;;) {
    const Status waited = done_->wait(target, slice);
    if (waited.ok()) break;
    if (waited.code() != StatusCode::kDeadlineExceeded) return waited;
    std::lock_guard<std::mutex> lock(shared_->mutex);
    bool in_progress = false;
    Status state = shared_->pollLocked(&in_progress);
    // The clock runs from when NCCL got the last call: waits queued before it on the stream
    // (another execution's semaphores) are not the other ranks' lateness.
    if (state.ok() && shared_->issued >= queued &&
        nowNs() - shared_->issued_ns > std::chrono::nanoseconds(timeout_).count())
      state = shared_->abortLocked(
          deadlineExceeded(describe(), ": a collective did not complete within ", timeout_.count(),
                           " ms (a rank gone, failed, or late; RAL_COLLECTIVE_TIMEOUT)"));
    if (!state.ok()) {
      // Aborted NCCL kernels end; let the stream drain before the caller frees the buffers.
      (void)done_->wait(target, std::chrono::seconds(10));
      return state;
    }
  }
  std::lock_guard<std::mutex> lock(shared_->mutex);
  bool in_progress = false;
  return shared_->pollLocked(&in_progress);
}

// ---- StreamCalls

Status NcclCommunicator::StreamCalls::allReduce(const void* in, void* out, int64_t count,
                                                DType dtype, ReduceOp op) {
  const Call call{Call::kAllReduce, dtype, count, static_cast<int64_t>(op)};
  const nccl::Comm c = comm_.shared_->comm;
  const NcclSymbols* s = &comm_.lib_.symbols();
  return comm_.queue(call, stream_, [=](void* cs) {
    return s->ncclAllReduce(in, out, static_cast<size_t>(count), ncclType(dtype), ncclOp(op), c,
                            cs);
  });
}

Status NcclCommunicator::StreamCalls::allGather(const void* in, void* out, int64_t count,
                                                DType dtype) {
  const Call call{Call::kAllGather, dtype, count, 0};
  const nccl::Comm c = comm_.shared_->comm;
  const NcclSymbols* s = &comm_.lib_.symbols();
  return comm_.queue(call, stream_, [=](void* cs) {
    return s->ncclAllGather(in, out, static_cast<size_t>(count), ncclType(dtype), c, cs);
  });
}

Status NcclCommunicator::StreamCalls::reduceScatter(const void* in, void* out, int64_t count,
                                                    DType dtype, ReduceOp op) {
  const Call call{Call::kReduceScatter, dtype, count, static_cast<int64_t>(op)};
  const nccl::Comm c = comm_.shared_->comm;
  const NcclSymbols* s = &comm_.lib_.symbols();
  return comm_.queue(call, stream_, [=](void* cs) {
    return s->ncclReduceScatter(in, out, static_cast<size_t>(count), ncclType(dtype), ncclOp(op), c,
                                cs);
  });
}

Status NcclCommunicator::StreamCalls::broadcast(const void* in, void* out, int64_t count,
                                                DType dtype, int root) {
  if (root < 0 || root >= comm_.size_)
    return invalidArgument("broadcast root ", root, " is not a rank of ", comm_.describe());
  const Call call{Call::kBroadcast, dtype, count, root};
  const nccl::Comm c = comm_.shared_->comm;
  const NcclSymbols* s = &comm_.lib_.symbols();
  return comm_.queue(call, stream_, [=](void* cs) {
    return s->ncclBroadcast(in, out, static_cast<size_t>(count), ncclType(dtype), root, c, cs);
  });
}

Status NcclCommunicator::StreamCalls::allToAll(const void* in, void* out, int64_t count,
                                               DType dtype) {
  const Call call{Call::kAllToAll, dtype, count, 0};
  const nccl::Comm c = comm_.shared_->comm;
  const NcclSymbols* s = &comm_.lib_.symbols();
  const int n = comm_.size_;
  const size_t block = static_cast<size_t>(count) * dtypeSize(dtype);
  return comm_.queue(call, stream_, [=](void* cs) {
    nccl::Result r = s->ncclGroupStart();
    for (int peer = 0; peer < n && r == nccl::kSuccess; ++peer) {
      r = s->ncclSend(static_cast<const char*>(in) + block * peer, static_cast<size_t>(count),
                      ncclType(dtype), peer, c, cs);
      if (r == nccl::kSuccess)
        r = s->ncclRecv(static_cast<char*>(out) + block * peer, static_cast<size_t>(count),
                        ncclType(dtype), peer, c, cs);
    }
    // The group is closed whatever failed inside it.
    const nccl::Result end = s->ncclGroupEnd();
    return r != nccl::kSuccess ? r : end;
  });
}

Status NcclCommunicator::StreamCalls::send(const void* data, int64_t count, DType dtype, int peer,
                                           int tag) {
  Call call{Call::kSend, dtype, count, tag};
  call.peer = peer;
  const nccl::Comm c = comm_.shared_->comm;
  const NcclSymbols* s = &comm_.lib_.symbols();
  return comm_.queue(call, stream_, [=](void* cs) {
    return s->ncclSend(data, static_cast<size_t>(count), ncclType(dtype), peer, c, cs);
  });
}

Status NcclCommunicator::StreamCalls::recv(void* data, int64_t count, DType dtype, int peer,
                                           int tag) {
  Call call{Call::kRecv, dtype, count, tag};
  call.peer = peer;
  const nccl::Comm c = comm_.shared_->comm;
  const NcclSymbols* s = &comm_.lib_.symbols();
  return comm_.queue(call, stream_, [=](void* cs) {
    return s->ncclRecv(data, static_cast<size_t>(count), ncclType(dtype), peer, c, cs);
  });
}

Status NcclCommunicator::StreamCalls::finish() { return comm_.finish(stream_); }

bool NcclCommunicator::StreamCalls::direct(const void* ptr) const {
  StatusOr<bool> device = comm_.queue_.isDevicePointer(ptr);
  return device.ok() && *device;
}

// ---- the Context's communicator

namespace {

enum class Transport { kAuto, kNccl, kHost };

StatusOr<Transport> transportFromEnvironment() {
  const char* v = std::getenv(kCudaCollectivesEnv);
  const std::string value = v != nullptr ? v : "";
  if (value.empty() || value == "auto") return Transport::kAuto;
  if (value == "nccl") return Transport::kNccl;
  if (value == "host") return Transport::kHost;
  return invalidArgument(kCudaCollectivesEnv, "='", value, "' is not auto, nccl or host");
}

// What a Context keeps: its NCCL communicator, or none (host staging), and the host
// communicator it was made over.
struct NcclSlot {
  Communicator* host = nullptr;
  std::unique_ptr<NcclCommunicator> comm;
};
constexpr char kNcclSlotKey = 0;

}  // namespace

StatusOr<NcclCommunicator*> ncclCommunicatorOf(ExecutionContext* ctx, Communicator& host) {
  Context* context = ctx->context();
  RAL_ASSIGN_OR_RETURN(
      NcclSlot * slot,
      context->getOrCreate<NcclSlot>(&kNcclSlotKey, [&]() -> StatusOr<std::unique_ptr<NcclSlot>> {
        auto made = std::make_unique<NcclSlot>();
        made->host = &host;
        RAL_ASSIGN_OR_RETURN(Transport transport, transportFromEnvironment());
        if (transport == Transport::kHost) return made;
        StatusOr<const NcclLibrary*> lib = NcclLibrary::get();
        if (!lib.ok() && transport == Transport::kAuto) return made;
        if (!lib.ok())
          return lib.status().withContext(internal::strCat(kCudaCollectivesEnv,
                                                           "=nccl (auto or host would fall back to "
                                                           "staging through host memory)"));
        RAL_ASSIGN_OR_RETURN(Driver * driver, context->driver(DeviceKind::kCuda));
        RAL_ASSIGN_OR_RETURN(made->comm, NcclCommunicator::create(host, *driver));
        return made;
      }));
  if (slot->host != &host)
    return failedPrecondition(
        "the Context's communicator changed after its CUDA collectives made an NCCL "
        "communicator over the previous one");
  return slot->comm.get();
}

}  // namespace ral::kernels::cuda
