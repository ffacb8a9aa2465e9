// libral_sim_nccl.so: a simulated NCCL, so RAL's NCCL transport for CUDA collectives
// (kernels/collective/nccl.h) runs in CI without GPUs (RAL_NCCL_PATH points at it). It exports,
// with NCCL's C signatures, exactly the functions RAL loads, for ranks that are threads of one
// process on the simulated CUDA driver (libral_sim_cuda.so, whose device memory is host memory):
//  - ncclGetUniqueId makes a fresh id; ncclCommInitRankConfig joins the job of that id. A
//    non-blocking communicator is in progress (ncclCommGetAsyncError) until every rank joined;
//  - each call is queued on its stream as a host function (cuLaunchHostFunc of the CUDA driver
//    library RAL_CUDA_DRIVER_PATH names) that meets the other ranks' matching call, moves the
//    data with every rank's buffers in hand, and returns. Calls between ncclGroupStart and
//    ncclGroupEnd (sends and receives) are one host function, so they cannot deadlock;
//  - ncclCommAbort ends the calls its communicator has waiting, as NCCL's kernels end, and a call
//    whose ranks did not all arrive never touches the buffers of the ones that left;
//  - ncclGetLastError gives the reason of the calling thread's last refusal (for debugging);
//    ral_sim_nccl_calls() counts the calls queued; RAL_SIM_NCCL_VERSION sets the version it
//    reports (default 2.28.9).
// Thread-safety: every entry point may be called from any thread; one mutex guards all state.
#include <dlfcn.h>

#include <atomic>
#include <climits>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ral/half.h"

namespace {

using Result = int;
constexpr Result kSuccess = 0, kSystemError = 2, kInternalError = 3, kInvalidArgument = 4,
                 kInvalidUsage = 5, kRemoteError = 6, kInProgress = 7;

struct UniqueId {
  char internal[128];
};
struct Config {  // the prefix every NCCL version since 2.14 has
  size_t size;
  unsigned int magic;
  unsigned int version;
  int blocking;
};

enum Kind { kAllReduce, kAllGather, kReduceScatter, kBroadcast, kSend, kRecv };

struct Op {
  Kind kind;
  const void* send = nullptr;
  void* recv = nullptr;
  size_t count = 0;
  int dtype = 0;
  int redop = 0;
  int root_or_peer = 0;
};

size_t typeSize(int dtype) {
  switch (dtype) {
    case 0:
    case 1:
      return 1;
    case 2:
    case 3:
    case 7:
      return 4;
    case 4:
    case 5:
    case 8:
      return 8;
    case 6:
    case 9:
      return 2;
    default:
      return 0;
  }
}

struct Job;

struct Comm {
  std::shared_ptr<Job> job;
  int rank = 0;
  int nranks = 0;
  bool aborted = false;  // guarded by the global mutex
  Result error = kSuccess;
  uint64_t collectives = 0;  // sequence number of the next collective
};

struct PendingSend {
  const void* data;
  size_t bytes;
  bool taken = false;
  bool cancelled = false;
};

struct Slot {
  std::vector<Op> ops;
  int arrived = 0;
  int left = 0;
  bool done = false;
  bool poisoned = false;  // a rank left without its data moving: nobody touches buffers
};

struct Job {
  int nranks = 0;
  int joined = 0;
  std::map<uint64_t, Slot> slots;
  std::map<std::pair<int, int>, std::deque<std::shared_ptr<PendingSend>>> channels;
};

struct Sim {
  std::mutex mutex;
  std::condition_variable cv;
  std::map<std::string, std::shared_ptr<Job>> jobs;
  std::map<const void*, std::shared_ptr<Comm>> comms;  // by handle
  uint64_t next_id = 1;
  std::atomic<uint64_t> calls{0};
};

Sim& sim() {
  static Sim* s = new Sim();  // never destroyed: host functions may outlive static destructors
  return *s;
}

thread_local std::string last_error;
Result fail(Result r, const std::string& why) {
  last_error = "sim nccl: " + why;
  return r;
}

std::shared_ptr<Comm> commOf(void* handle) {
  std::lock_guard<std::mutex> lock(sim().mutex);
  auto it = sim().comms.find(handle);
  return it == sim().comms.end() ? nullptr : it->second;
}

// ---- arithmetic

template <typename T>
double load(const void* p, size_t i) {
  T v;
  std::memcpy(&v, static_cast<const char*>(p) + i * sizeof(T), sizeof(T));
  return static_cast<double>(v);
}

double loadAny(int dtype, const void* p, size_t i) {
  switch (dtype) {
    case 2:
      return load<int32_t>(p, i);
    case 4:
      return load<int64_t>(p, i);
    case 6: {
      uint16_t b;
      std::memcpy(&b, static_cast<const char*>(p) + 2 * i, 2);
      return ral::halfBitsToFloat(b);
    }
    case 7:
      return load<float>(p, i);
    case 8:
      return load<double>(p, i);
    case 9: {
      uint16_t b;
      std::memcpy(&b, static_cast<const char*>(p) + 2 * i, 2);
      return ral::bfloat16BitsToFloat(b);
    }
    default:
      return 0;
  }
}

void storeAny(int dtype, void* p, size_t i, double v) {
  char* at = static_cast<char*>(p) + i * typeSize(dtype);
  switch (dtype) {
    case 2: {
      const int32_t x = static_cast<int32_t>(v);
      std::memcpy(at, &x, 4);
      break;
    }
    case 4: {
      const int64_t x = static_cast<int64_t>(v);
      std::memcpy(at, &x, 8);
      break;
    }
    case 6: {
      const uint16_t b = ral::floatToHalfBits(static_cast<float>(v));
      std::memcpy(at, &b, 2);
      break;
    }
    case 7: {
      const float x = static_cast<float>(v);
      std::memcpy(at, &x, 4);
      break;
    }
    case 8:
      std::memcpy(at, &v, 8);
      break;
    case 9: {
      const uint16_t b = ral::floatToBFloat16Bits(static_cast<float>(v));
      std::memcpy(at, &b, 2);
      break;
    }
    default:
      break;
  }
}

// The reduction over ranks of element `i` of every rank's send buffer at element `offset`.
// Integers are combined in int64 arithmetic, floating point in double and rounded once.
std::vector<unsigned char> reduceAll(const std::vector<Op>& ops, size_t offset, size_t count) {
  const int dtype = ops[0].dtype;
  const int op = ops[0].redop;
  const bool integral = dtype == 2 || dtype == 4;
  std::vector<unsigned char> out(count * typeSize(dtype));
  for (size_t i = 0; i < count; ++i) {
    if (integral) {
      auto at = [&](size_t r) {
        return dtype == 2 ? static_cast<int64_t>(load<int32_t>(ops[r].send, offset + i)) : [&] {
          int64_t v;
          std::memcpy(&v, static_cast<const char*>(ops[r].send) + (offset + i) * 8, 8);
          return v;
        }();
      };
      int64_t acc = at(0);
      for (size_t r = 1; r < ops.size(); ++r) {
        const int64_t v = at(r);
        acc = op == 1 ? acc * v : op == 2 ? std::max(acc, v) : op == 3 ? std::min(acc, v) : acc + v;
      }
      if (dtype == 2) {
        const int32_t x = static_cast<int32_t>(acc);
        std::memcpy(out.data() + i * 4, &x, 4);
      } else {
        std::memcpy(out.data() + i * 8, &acc, 8);
      }
    } else {
      double acc = loadAny(dtype, ops[0].send, offset + i);
      for (size_t r = 1; r < ops.size(); ++r) {
        const double v = loadAny(dtype, ops[r].send, offset + i);
        acc = op == 1 ? acc * v : op == 2 ? std::max(acc, v) : op == 3 ? std::min(acc, v) : acc + v;
      }
      if (op == 4) acc /= static_cast<double>(ops.size());
      storeAny(dtype, out.data(), i, acc);
    }
  }
  return out;
}

// Moves the data of a collective every rank arrived at; results are computed before any
// buffer is written, so in-place calls read their inputs intact.
void perform(const std::vector<Op>& ops) {
  const size_t n = ops.size();
  const Op& first = ops[0];
  const size_t esize = typeSize(first.dtype);
  std::vector<std::vector<unsigned char>> results(n);
  switch (first.kind) {
    case kAllReduce: {
      auto all = reduceAll(ops, 0, first.count);
      for (auto& r : results) r = all;
      break;
    }
    case kReduceScatter:
      for (size_t r = 0; r < n; ++r) results[r] = reduceAll(ops, r * first.count, first.count);
      break;
    case kAllGather:
      for (size_t r = 0; r < n; ++r) {
        results[r].resize(n * first.count * esize);
        for (size_t k = 0; k < n; ++k)
          std::memcpy(results[r].data() + k * first.count * esize, ops[k].send,
                      first.count * esize);
      }
      break;
    case kBroadcast: {
      const Op& root = ops[static_cast<size_t>(first.root_or_peer)];
      std::vector<unsigned char> data(
          static_cast<const unsigned char*>(root.send),
          static_cast<const unsigned char*>(root.send) + first.count * esize);
      for (auto& r : results) r = data;
      break;
    }
    default:
      return;
  }
  for (size_t r = 0; r < n; ++r)
    if (!results[r].empty()) std::memcpy(ops[r].recv, results[r].data(), results[r].size());
}

bool sameCall(const Op& a, const Op& b) {
  return a.kind == b.kind && a.count == b.count && a.dtype == b.dtype && a.redop == b.redop &&
         a.root_or_peer == b.root_or_peer;
}

// ---- what runs on the streams

struct Work {
  std::shared_ptr<Comm> comm;
  uint64_t seq = 0;     // collectives
  std::vector<Op> ops;  // one collective, or point-to-point calls
};

void runCollective(Work& w) {
  Sim& s = sim();
  std::unique_lock<std::mutex> lock(s.mutex);
  Comm& c = *w.comm;
  if (c.aborted) return;
  Job& job = *c.job;
  Slot& slot = job.slots[w.seq];
  if (slot.ops.empty()) slot.ops.resize(static_cast<size_t>(job.nranks));
  slot.ops[static_cast<size_t>(c.rank)] = w.ops[0];
  if (++slot.arrived == job.nranks && !slot.poisoned) {
    bool agree = true;
    for (const Op& op : slot.ops) agree = agree && sameCall(op, slot.ops[0]);
    if (agree) {
      perform(slot.ops);
    } else {
      // NCCL's behaviour is undefined here; the simulation reports it on every rank.
      for (auto& [handle, other] : s.comms)
        if (other->job == c.job) other->error = kInvalidUsage;
    }
    slot.done = true;
    s.cv.notify_all();
  }
  s.cv.wait(lock, [&] { return slot.done || slot.poisoned || c.aborted; });
  if (!slot.done) {
    // A rank left (aborted) before everyone arrived: nobody touches the buffers, and the ranks
    // still here see their peer gone, as NCCL reports a remote error.
    slot.poisoned = true;
    if (!c.aborted) c.error = kRemoteError;
    s.cv.notify_all();
  }
  if (++slot.left == job.nranks) job.slots.erase(w.seq);
}

void runPointToPoint(Work& w) {
  Sim& s = sim();
  std::unique_lock<std::mutex> lock(s.mutex);
  Comm& c = *w.comm;
  if (c.aborted) return;
  Job& job = *c.job;
  std::vector<std::shared_ptr<PendingSend>> mine;
  for (const Op& op : w.ops) {
    if (op.kind != kSend) continue;
    auto p = std::make_shared<PendingSend>();
    p->data = op.send;
    p->bytes = op.count * typeSize(op.dtype);
    job.channels[{c.rank, op.root_or_peer}].push_back(p);
    mine.push_back(p);
  }
  s.cv.notify_all();
  for (const Op& op : w.ops) {
    if (op.kind != kRecv) continue;
    auto& channel = job.channels[{op.root_or_peer, c.rank}];
    s.cv.wait(lock, [&] { return !channel.empty() || c.aborted; });
    if (c.aborted) break;
    std::shared_ptr<PendingSend> p = channel.front();
    channel.pop_front();
    const size_t bytes = op.count * typeSize(op.dtype);
    if (p->bytes != bytes) c.error = kInvalidUsage;
    std::memcpy(op.recv, p->data, std::min(bytes, p->bytes));
    p->taken = true;
    s.cv.notify_all();
  }
  s.cv.wait(lock, [&] {
    for (auto& p : mine)
      if (!p->taken) return c.aborted;
    return true;
  });
  if (c.aborted) {
    // Sends nobody took stay out of reach: their buffers may go once this returns.
    for (auto& [key, channel] : job.channels)
      for (auto it = channel.begin(); it != channel.end();)
        it = (key.first == c.rank && !(*it)->taken) ? channel.erase(it) : std::next(it);
  }
}

void hostFunction(void* user) {
  std::unique_ptr<Work> w(static_cast<Work*>(user));
  if (w->ops.size() == 1 && w->ops[0].kind != kSend && w->ops[0].kind != kRecv)
    runCollective(*w);
  else
    runPointToPoint(*w);
}

using LaunchHostFunc = int (*)(void* stream, void (*fn)(void*), void* user);

LaunchHostFunc launchHostFunc() {
  static LaunchHostFunc fn = []() -> LaunchHostFunc {
    const char* path = std::getenv("RAL_CUDA_DRIVER_PATH");
    void* handle = dlopen(path != nullptr ? path : "libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    return handle != nullptr ? reinterpret_cast<LaunchHostFunc>(dlsym(handle, "cuLaunchHostFunc"))
                             : nullptr;
  }();
  return fn;
}

Result enqueue(void* stream, std::unique_ptr<Work> w) {
  LaunchHostFunc launch = launchHostFunc();
  if (launch == nullptr)
    return fail(kSystemError, "the simulated CUDA driver (RAL_CUDA_DRIVER_PATH) is not loaded");
  sim().calls.fetch_add(1);
  Work* raw = w.release();
  if (launch(stream, hostFunction, raw) != 0) {
    delete raw;
    return fail(kSystemError, "cuLaunchHostFunc failed");
  }
  return kSuccess;
}

// Calls between ncclGroupStart and ncclGroupEnd, per communicator and stream.
struct Grouped {
  std::shared_ptr<Comm> comm;
  void* stream;
  std::vector<Op> ops;
};
thread_local int group_depth = 0;
thread_local std::vector<Grouped> grouped;

Result submit(void* handle, const Op& op, void* stream) {
  std::shared_ptr<Comm> comm = commOf(handle);
  if (comm == nullptr) return fail(kInvalidArgument, "unknown communicator");
  if (typeSize(op.dtype) == 0) return fail(kInvalidArgument, "unknown data type");
  const bool p2p = op.kind == kSend || op.kind == kRecv;
  if (p2p && (op.root_or_peer < 0 || op.root_or_peer >= comm->nranks))
    return fail(kInvalidArgument, "peer out of range");
  if (group_depth > 0) {
    if (!p2p) return fail(kInvalidUsage, "collectives inside a group are not simulated");
    for (Grouped& g : grouped)
      if (g.comm == comm && g.stream == stream) {
        g.ops.push_back(op);
        return kSuccess;
      }
    grouped.push_back(Grouped{comm, stream, {op}});
    return kSuccess;
  }
  auto w = std::make_unique<Work>();
  w->comm = comm;
  w->ops.push_back(op);
  if (!p2p) {
    std::lock_guard<std::mutex> lock(sim().mutex);
    if (comm->aborted) return fail(kInvalidUsage, "communicator aborted");
    w->seq = comm->collectives++;
  }
  return enqueue(stream, std::move(w));
}

}  // namespace

extern "C" {

uint64_t ral_sim_nccl_calls(void) { return sim().calls.load(); }

Result ncclGetVersion(int* version) {
  const char* v = std::getenv("RAL_SIM_NCCL_VERSION");
  *version = v != nullptr ? std::atoi(v) : 22809;
  return kSuccess;
}

const char* ncclGetErrorString(Result r) {
  switch (r) {
    case kSuccess:
      return "no error";
    case kSystemError:
      return "unhandled system error";
    case kInternalError:
      return "internal error";
    case kInvalidArgument:
      return "invalid argument";
    case kInvalidUsage:
      return "invalid usage";
    case kRemoteError:
      return "remote process exited or there was a network error";
    case kInProgress:
      return "operation in progress";
    default:
      return "unknown result code";
  }
}

const char* ncclGetLastError(void*) { return last_error.c_str(); }

Result ncclGetUniqueId(UniqueId* id) {
  std::memset(id, 0, sizeof *id);
  std::lock_guard<std::mutex> lock(sim().mutex);
  const uint64_t n = sim().next_id++;
  std::memcpy(id->internal, "ralsim", 6);
  std::memcpy(id->internal + 8, &n, sizeof n);
  return kSuccess;
}

Result ncclCommInitRankConfig(void** out, int nranks, UniqueId id, int rank, Config* config) {
  *out = nullptr;
  if (nranks < 1 || rank < 0 || rank >= nranks)
    return fail(kInvalidArgument, "rank or rank count out of range");
  if (std::memcmp(id.internal, "ralsim", 6) != 0)
    return fail(kInvalidArgument, "not an id of this simulation");
  if (config != nullptr && config->magic != 0xcafebeef)
    return fail(kInvalidArgument, "config not initialized");
  const bool blocking = config == nullptr || config->blocking != 0;
  Sim& s = sim();
  std::unique_lock<std::mutex> lock(s.mutex);
  std::shared_ptr<Job>& job = s.jobs[std::string(id.internal, sizeof id.internal)];
  if (job == nullptr) {
    job = std::make_shared<Job>();
    job->nranks = nranks;
  }
  if (job->nranks != nranks) return fail(kInvalidUsage, "ranks disagree on the rank count");
  auto comm = std::make_shared<Comm>();
  comm->job = job;
  comm->rank = rank;
  comm->nranks = nranks;
  ++job->joined;
  s.comms[comm.get()] = comm;
  *out = comm.get();
  s.cv.notify_all();
  if (!blocking) return job->joined == nranks ? kSuccess : kInProgress;
  std::shared_ptr<Job> held = job;
  s.cv.wait(lock, [&] { return held->joined >= nranks || comm->aborted; });
  return kSuccess;
}

Result ncclCommGetAsyncError(void* handle, Result* state) {
  std::shared_ptr<Comm> comm = commOf(handle);
  if (comm == nullptr) return fail(kInvalidArgument, "unknown communicator");
  std::lock_guard<std::mutex> lock(sim().mutex);
  *state = comm->error != kSuccess                 ? comm->error
           : comm->job->joined < comm->job->nranks ? kInProgress
                                                   : kSuccess;
  return kSuccess;
}

Result ncclCommAbort(void* handle) {
  Sim& s = sim();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto it = s.comms.find(handle);
  if (it == s.comms.end()) return fail(kInvalidArgument, "unknown communicator");
  it->second->aborted = true;
  s.comms.erase(it);
  s.cv.notify_all();
  return kSuccess;
}

Result ncclCommDestroy(void* handle) {
  std::lock_guard<std::mutex> lock(sim().mutex);
  return sim().comms.erase(handle) == 1 ? kSuccess : fail(kInvalidArgument, "unknown communicator");
}

Result ncclAllReduce(const void* send, void* recv, size_t count, int dtype, int op, void* comm,
                     void* stream) {
  if (op < 0 || op > 4) return fail(kInvalidArgument, "unknown reduction");
  return submit(comm, Op{kAllReduce, send, recv, count, dtype, op, 0}, stream);
}

Result ncclAllGather(const void* send, void* recv, size_t count, int dtype, void* comm,
                     void* stream) {
  return submit(comm, Op{kAllGather, send, recv, count, dtype, 0, 0}, stream);
}

Result ncclReduceScatter(const void* send, void* recv, size_t count, int dtype, int op, void* comm,
                         void* stream) {
  if (op < 0 || op > 4) return fail(kInvalidArgument, "unknown reduction");
  return submit(comm, Op{kReduceScatter, send, recv, count, dtype, op, 0}, stream);
}

Result ncclBroadcast(const void* send, void* recv, size_t count, int dtype, int root, void* comm,
                     void* stream) {
  std::shared_ptr<Comm> c = commOf(comm);
  if (c != nullptr && (root < 0 || root >= c->nranks))
    return fail(kInvalidArgument, "root out of range");
  return submit(comm, Op{kBroadcast, send, recv, count, dtype, 0, root}, stream);
}

Result ncclSend(const void* send, size_t count, int dtype, int peer, void* comm, void* stream) {
  return submit(comm, Op{kSend, send, nullptr, count, dtype, 0, peer}, stream);
}

Result ncclRecv(void* recv, size_t count, int dtype, int peer, void* comm, void* stream) {
  return submit(comm, Op{kRecv, nullptr, recv, count, dtype, 0, peer}, stream);
}

Result ncclGroupStart() {
  ++group_depth;
  return kSuccess;
}

Result ncclGroupEnd() {
  if (group_depth == 0) return fail(kInvalidUsage, "ncclGroupEnd without ncclGroupStart");
  if (--group_depth > 0) return kSuccess;
  std::vector<Grouped> calls;
  calls.swap(grouped);
  Result result = kSuccess;
  for (Grouped& g : calls) {
    auto w = std::make_unique<Work>();
    w->comm = g.comm;
    w->ops = std::move(g.ops);
    const Result r = enqueue(g.stream, std::move(w));
    if (result == kSuccess) result = r;
  }
  return result;
}

}  // extern "C"
