// createGlooCommunicator (ral/gloo_communicator.h): a Communicator over a connected
// gloo::Context.
//
// Every collective first sends a description of itself (kind, dtype, count, reduction or root,
// sequence number) to the next rank, which compares it with its own: around the ring, every rank
// then agrees with every other before any data moves. Gloo must never see ranks that disagree:
// a message longer than the one its peer expects ends the process (an exception in Gloo's own
// thread). The check costs one small message per rank, sent to the next rank in parallel.
#include "ral/gloo_communicator.h"

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/broadcast.h>
#include <gloo/common/error.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/types.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <iterator>
#include <mutex>
#include <vector>

#include "contexts/standalone/gloo/tcp_store.h"

namespace ral {
namespace {

// Slot prefixes of RAL's own messages, after Gloo's (0x01-0x08 in gloo/types.h).
constexpr uint8_t kCheckSlot = 0x70;      // a collective's description, to the next rank
constexpr uint8_t kPeerCheckSlot = 0x71;  // a send's description, before its data
constexpr uint8_t kPeerDataSlot = 0x72;

enum class Kind : uint32_t {
  kAllReduce = 1,
  kAllGather,
  kReduceScatter,
  kBroadcast,
  kAllToAll,
  kSend
};

const char* kindName(uint32_t kind) {
  static constexpr const char* kNames[] = {"all_reduce", "all_gather", "reduce_scatter",
                                           "broadcast",  "all_to_all", "send"};
  return kind >= 1 && kind <= std::size(kNames) ? kNames[kind - 1] : "nothing RAL sends";
}

// What a rank is about to do; the ranks of one collective must agree on all but `rank`.
struct Call {
  Call() = default;
  Call(Kind k, DType d, int64_t n, int32_t a, uint64_t s, int32_t r)
      : seq(s),
        kind(static_cast<uint32_t>(k)),
        dtype(static_cast<uint32_t>(d)),
        count(n),
        arg(a),
        rank(r) {}
  uint64_t seq = 0;
  uint32_t kind = 0;
  uint32_t dtype = 0;
  int64_t count = 0;
  int32_t arg = 0;  // the reduction, the root or the tag
  int32_t rank = -1;
  bool sameAs(const Call& o) const {
    return seq == o.seq && kind == o.kind && dtype == o.dtype && count == o.count && arg == o.arg;
  }
};

std::string describeCall(const Call& c) {
  std::string s = internal::strCat(kindName(c.kind), " of ", c.count, " ",
                                   dtypeName(static_cast<DType>(c.dtype)));
  switch (static_cast<Kind>(c.kind)) {
    case Kind::kAllReduce:
    case Kind::kReduceScatter:
      s += internal::strCat(" (", reduceOpName(static_cast<ReduceOp>(c.arg)), ")");
      break;
    case Kind::kBroadcast:
      s += internal::strCat(" from root ", c.arg);
      break;
    case Kind::kSend:
      s += internal::strCat(" with tag ", c.arg);
      break;
    default:
      break;
  }
  if (static_cast<Kind>(c.kind) != Kind::kSend) s += internal::strCat(" as collective #", c.seq);
  return s;
}

// Calls fn with a null pointer to an unsigned type of `size` bytes: Gloo only needs the width.
template <typename Fn>
void withWidth(size_t size, Fn&& fn) {
  switch (size) {
    case 2:
      return fn(static_cast<uint16_t*>(nullptr));
    case 4:
      return fn(static_cast<uint32_t*>(nullptr));
    default:
      return fn(static_cast<uint64_t*>(nullptr));
  }
}

// Gloo writes to its sockets with writev, which raises SIGPIPE when the peer is gone, and
// SIGPIPE's default action ends the process (Python ignores it, so PyTorch's Gloo users never
// see this; a C++ host does). Blocks SIGPIPE on this thread while Gloo runs here (the write then
// fails with EPIPE, which Gloo reports as an error), drops one that became pending, and restores
// the mask. Threads Gloo starts while it is blocked (its event loop) inherit the blocked mask.
class SigpipeBlocked {
 public:
  SigpipeBlocked() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~SigpipeBlocked() {
    if (!sigismember(&old_, SIGPIPE)) {
      sigset_t pending;
      sigemptyset(&pending);
      if (sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE)) {
        const timespec now{0, 0};
        sigtimedwait(&pipe_, nullptr, &now);
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeBlocked(const SigpipeBlocked&) = delete;
  SigpipeBlocked& operator=(const SigpipeBlocked&) = delete;

 private:
  sigset_t pipe_, old_;
};

class GlooCommunicator final : public Communicator {
 public:
  GlooCommunicator(std::unique_ptr<standalone::TcpStoreServer> server,
                   std::shared_ptr<gloo::Context> context, std::string where,
                   std::chrono::milliseconds timeout)
      : server_(std::move(server)),
        context_(std::move(context)),
        where_(std::move(where)),
        timeout_(timeout) {
    check_out_ = context_->createUnboundBuffer(&mine_, sizeof(mine_));
    check_in_ = context_->createUnboundBuffer(&theirs_, sizeof(theirs_));
  }

  int rank() const override { return context_->rank; }
  int size() const override { return context_->size; }
  std::string describe() const override {
    return internal::strCat("gloo (", where_, "), rank ", rank(), " of ", size());
  }
  std::chrono::milliseconds timeout() const override { return timeout_; }

  Status allReduce(const void* in, void* out, int64_t count, DType dtype, ReduceOp op) override {
    RAL_RETURN_IF_ERROR(checkDType(dtype));
    return collective(Kind::kAllReduce, dtype, count, static_cast<int32_t>(op), [&](uint32_t tag) {
      gloo::AllreduceOptions opts(context_);
      withWidth(dtypeSize(dtype), [&](auto* w) {
        using W = std::remove_pointer_t<decltype(w)>;
        // In place: Gloo reduces the output's own contents when no input is given.
        if (in != out) opts.setInput(static_cast<W*>(const_cast<void*>(in)), count);
        opts.setOutput(static_cast<W*>(out), count);
      });
      opts.setReduceFunction(reduction(dtype, op));
      opts.setTag(tag);
      opts.setTimeout(timeout_);
      gloo::allreduce(opts);
      if (op == ReduceOp::kAvg) finishAverage(out, count, dtype, size());
    });
  }

  Status allGather(const void* in, void* out, int64_t count, DType dtype) override {
    RAL_RETURN_IF_ERROR(checkDType(dtype));
    return collective(Kind::kAllGather, dtype, count, 0, [&](uint32_t tag) {
      gloo::AllgatherOptions opts(context_);
      withWidth(dtypeSize(dtype), [&](auto* w) {
        using W = std::remove_pointer_t<decltype(w)>;
        opts.setInput(static_cast<W*>(const_cast<void*>(in)), count);
        opts.setOutput(static_cast<W*>(out), count * size());
      });
      opts.setTag(tag);
      opts.setTimeout(timeout_);
      gloo::allgather(opts);
    });
  }

  Status reduceScatter(const void* in, void* out, int64_t count, DType dtype,
                       ReduceOp op) override {
    RAL_RETURN_IF_ERROR(checkDType(dtype));
    // Gloo's reduce-scatter needs equal blocks per rank in its own layout; an all-reduce of the
    // whole input then this rank's block is what PyTorch's Gloo group does too.
    const size_t bytes = static_cast<size_t>(count) * dtypeSize(dtype);
    return collective(Kind::kReduceScatter, dtype, count, static_cast<int32_t>(op),
                      [&](uint32_t tag) {
                        // Kept between calls (under mutex_): a fresh one would fault its pages
                        // in on every call.
                        std::vector<char>& all = reduce_scatter_whole_;
                        if (all.size() < bytes * size()) all.resize(bytes * size());
                        gloo::AllreduceOptions opts(context_);
                        withWidth(dtypeSize(dtype), [&](auto* w) {
                          using W = std::remove_pointer_t<decltype(w)>;
                          opts.setInput(static_cast<W*>(const_cast<void*>(in)), count * size());
                          opts.setOutput(reinterpret_cast<W*>(all.data()), count * size());
                        });
                        opts.setReduceFunction(reduction(dtype, op));
                        opts.setTag(tag);
                        opts.setTimeout(timeout_);
                        gloo::allreduce(opts);
                        std::memcpy(out, all.data() + bytes * rank(), bytes);
                        if (op == ReduceOp::kAvg) finishAverage(out, count, dtype, size());
                      });
  }

  Status broadcast(void* data, int64_t count, DType dtype, int root) override {
    RAL_RETURN_IF_ERROR(checkDType(dtype));
    if (root < 0 || root >= size())
      return invalidArgument("broadcast root ", root, " is not a rank of ", describe());
    return collective(Kind::kBroadcast, dtype, count, root, [&](uint32_t tag) {
      gloo::BroadcastOptions opts(context_);
      withWidth(dtypeSize(dtype), [&](auto* w) {
        using W = std::remove_pointer_t<decltype(w)>;
        opts.setOutput(static_cast<W*>(data), count);
      });
      opts.setRoot(root);
      opts.setTag(tag);
      opts.setTimeout(timeout_);
      gloo::broadcast(opts);
    });
  }

  Status allToAll(const void* in, void* out, int64_t count, DType dtype) override {
    RAL_RETURN_IF_ERROR(checkDType(dtype));
    return collective(Kind::kAllToAll, dtype, count, 0, [&](uint32_t tag) {
      gloo::AlltoallOptions opts(context_);
      withWidth(dtypeSize(dtype), [&](auto* w) {
        using W = std::remove_pointer_t<decltype(w)>;
        opts.setInput(static_cast<W*>(const_cast<void*>(in)), count * size());
        opts.setOutput(static_cast<W*>(out), count * size());
      });
      opts.setTag(tag);
      opts.setTimeout(timeout_);
      gloo::alltoall(opts);
    });
  }

  Status send(const void* data, int64_t count, DType dtype, int peer, int tag) override {
    RAL_RETURN_IF_ERROR(checkPeer(dtype, peer, tag));
    std::lock_guard<std::mutex> lock(mutex_);
    if (!broken_.ok()) return broken_;
    Call call(Kind::kSend, dtype, count, tag, 0, rank());
    SigpipeBlocked no_sigpipe;
    const size_t bytes = static_cast<size_t>(count) * dtypeSize(dtype);
    std::string failure;
    try {
      auto header = context_->createUnboundBuffer(&call, sizeof(call));
      header->send(peer, gloo::Slot::build(kPeerCheckSlot, static_cast<uint32_t>(tag)));
      std::unique_ptr<gloo::transport::UnboundBuffer> payload;
      if (bytes > 0) {
        payload = context_->createUnboundBuffer(const_cast<void*>(data), bytes);
        payload->send(peer, gloo::Slot::build(kPeerDataSlot, static_cast<uint32_t>(tag)));
      }
      header->waitSend(timeout_);
      if (payload) payload->waitSend(timeout_);
    } catch (const std::exception& e) {
      failure = e.what();
    }
    if (!failure.empty())
      return fail(unavailable(describe(), ": send of ", count, " ", dtypeName(dtype), " to rank ",
                              peer, " with tag ", tag, " failed: ", failure));
    return Status();
  }

  Status recv(void* data, int64_t count, DType dtype, int peer, int tag) override {
    RAL_RETURN_IF_ERROR(checkPeer(dtype, peer, tag));
    std::lock_guard<std::mutex> lock(mutex_);
    if (!broken_.ok()) return broken_;
    const Call expected(Kind::kSend, dtype, count, tag, 0, peer);
    Call got;
    SigpipeBlocked no_sigpipe;
    const size_t bytes = static_cast<size_t>(count) * dtypeSize(dtype);
    std::string failure;
    try {
      auto header = context_->createUnboundBuffer(&got, sizeof(got));
      header->recv(peer, gloo::Slot::build(kPeerCheckSlot, static_cast<uint32_t>(tag)));
      header->waitRecv(timeout_);
      if (!got.sameAs(expected)) {
        // The sender's data would wait for this rank forever; closing fails it at once.
        Status error =
            fail(invalidArgument(describe(), ": recv of ", describeCall(expected), " from rank ",
                                 peer, " met rank ", peer, "'s ", describeCall(got)));
        context_->closeConnections();
        return error;
      }
      if (bytes > 0) {
        auto payload = context_->createUnboundBuffer(data, bytes);
        payload->recv(peer, gloo::Slot::build(kPeerDataSlot, static_cast<uint32_t>(tag)));
        payload->waitRecv(timeout_);
      }
    } catch (const std::exception& e) {
      failure = e.what();
    }
    if (!failure.empty())
      return fail(unavailable(describe(), ": recv of ", count, " ", dtypeName(dtype), " from rank ",
                              peer, " with tag ", tag, " failed: ", failure));
    return Status();
  }

 private:
  static Status checkDType(DType dtype) {
    if (!isCollectiveDType(dtype))
      return unsupported("collectives carry f16, bf16, f32, f64, i32 and i64, not ",
                         dtypeName(dtype));
    return Status();
  }
  Status checkPeer(DType dtype, int peer, int tag) const {
    RAL_RETURN_IF_ERROR(checkDType(dtype));
    if (peer < 0 || peer >= size() || peer == rank())
      return invalidArgument("peer ", peer, " is not another rank of ", describe());
    if (tag < 0) return invalidArgument("tag ", tag, " is negative");
    return Status();
  }

  static gloo::AllreduceOptions::Func reduction(DType dtype, ReduceOp op) {
    const size_t width = dtypeSize(dtype);
    // Every op is commutative, so reducing into whichever operand the output is keeps the
    // result.
    return [dtype, op, width](void* c, const void* a, const void* b, size_t n) {
      const auto count = static_cast<int64_t>(n);
      if (c == a) return reduceInto(c, b, count, dtype, op);
      if (c == b) return reduceInto(c, a, count, dtype, op);
      std::memcpy(c, a, n * width);
      reduceInto(c, b, count, dtype, op);
    };
  }

  // Marks the communicator broken with `error` (the first error stays) and returns it.
  Status fail(Status error) {
    if (broken_.ok()) broken_ = std::move(error);
    return broken_;
  }

  // Runs one collective (`body`, given Gloo's tag) once the ring check passed.
  Status collective(Kind kind, DType dtype, int64_t count, int32_t arg,
                    const std::function<void(uint32_t)>& body) {
    if (count < 0) return invalidArgument("negative element count ", count);
    std::lock_guard<std::mutex> lock(mutex_);
    if (!broken_.ok()) return broken_;
    mine_ = Call(kind, dtype, count, arg, ++seq_, rank());
    SigpipeBlocked no_sigpipe;
    theirs_ = Call();
    if (size() == 1) {
      if (count > 0) body(static_cast<uint32_t>(mine_.seq));
      return Status();
    }
    const int left = (rank() + size() - 1) % size(), right = (rank() + 1) % size();
    // One slot for every check: a rank a call ahead or behind meets the check of another call
    // and is named, rather than waiting for a message that never comes.
    const uint64_t slot = gloo::Slot::build(kCheckSlot, 0);
    try {
      check_in_->recv(left, slot);
      check_out_->send(right, slot);
      check_in_->waitRecv(timeout_);
      check_out_->waitSend(timeout_);
    } catch (const std::exception& e) {
      return fail(unavailable(describe(), ": ", describeCall(mine_),
                              " failed before moving data: ", e.what(), timeoutHint()));
    }
    if (!theirs_.sameAs(mine_)) {
      // Ranks whose neighbours agreed with them would wait for the data of ranks that stopped
      // here; closing the connections fails them at once.
      Status error = fail(invalidArgument(describe(), ": the ranks disagree: rank ", left,
                                          " calls ", describeCall(theirs_), ", rank ", rank(),
                                          " calls ", describeCall(mine_)));
      context_->closeConnections();
      return error;
    }
    try {
      if (count > 0) body(static_cast<uint32_t>(mine_.seq & 0x7fffffffu));
    } catch (const std::exception& e) {
      return fail(
          unavailable(describe(), ": ", describeCall(mine_), " failed: ", e.what(), timeoutHint()));
    }
    return Status();
  }

  std::string timeoutHint() const {
    return internal::strCat(" (a rank gone, failed, or late beyond the timeout of ",
                            timeout_.count(), " ms, RAL_COLLECTIVE_TIMEOUT)");
  }

  // Destroyed last: other ranks may still read the store while this one finishes.
  std::unique_ptr<standalone::TcpStoreServer> server_;
  std::shared_ptr<gloo::Context> context_;
  const std::string where_;
  const std::chrono::milliseconds timeout_;

  std::mutex mutex_;
  uint64_t seq_ = 0;
  Status broken_;
  // The ring check's messages; they live as long as the communicator, so a send or receive
  // left pending by a failure never writes freed memory.
  Call mine_, theirs_;
  std::unique_ptr<gloo::transport::UnboundBuffer> check_out_, check_in_;
  std::vector<char> reduce_scatter_whole_;  // reduceScatter's whole reduced input
};

bool isLoopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

}  // namespace

bool glooAvailable() { return true; }

StatusOr<std::shared_ptr<Communicator>> createGlooCommunicator(const GlooOptions& o) {
  if (o.size < 1) return invalidArgument("world size ", o.size, " is not positive");
  if (o.rank < 0 || o.rank >= o.size)
    return invalidArgument("rank ", o.rank, " is not in [0, ", o.size, ")");
  if (o.timeout.count() <= 0)
    return invalidArgument("collective timeout of ", o.timeout.count(), " ms is not positive");

  std::unique_ptr<standalone::TcpStoreServer> server;
  std::unique_ptr<gloo::rendezvous::Store> store;
  std::string where;
  if (!o.store_dir.empty()) {
    struct stat st;
    if (::stat(o.store_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      return invalidArgument("rendezvous directory '", o.store_dir,
                             "' is not a directory (RAL_STORE_DIR)");
    store = std::make_unique<gloo::rendezvous::FileStore>(o.store_dir);
    where = "file store " + o.store_dir;
  } else {
    if (o.store_port <= 0 || o.store_port > 65535)
      return invalidArgument("rendezvous port ", o.store_port, " is not a TCP port");
    if (o.store_server) {
      RAL_ASSIGN_OR_RETURN(server, standalone::TcpStoreServer::start(o.store_host, o.store_port));
    }
    RAL_ASSIGN_OR_RETURN(store,
                         standalone::TcpStore::connect(o.store_host, o.store_port, o.timeout));
    where = internal::strCat("tcp ", o.store_host, ":", o.store_port);
  }

  gloo::transport::tcp::attr attr;
  if (!o.interface.empty()) {
    attr.iface = o.interface;
  } else if (o.store_dir.empty() && isLoopback(o.store_host)) {
    attr.hostname = "127.0.0.1";
  } else {
    char name[256] = {};
    if (::gethostname(name, sizeof(name) - 1) != 0) std::strcpy(name, "localhost");
    attr.hostname = name;
  }
  SigpipeBlocked no_sigpipe;  // here and in Gloo's event-loop thread, which starts here
  try {
    auto device = gloo::transport::tcp::CreateDevice(attr);
    gloo::rendezvous::PrefixStore prefixed(o.prefix, *store);
    auto context = std::make_shared<gloo::rendezvous::Context>(o.rank, o.size);
    context->setTimeout(o.timeout);
    context->connectFullMesh(prefixed, device);
    return std::shared_ptr<Communicator>(std::make_shared<GlooCommunicator>(
        std::move(server), std::move(context), where, o.timeout));
  } catch (const std::exception& e) {
    return unavailable("gloo rendezvous of rank ", o.rank, " of ", o.size, " through ", where,
                       " failed within ", o.timeout.count(),
                       " ms (RAL_COLLECTIVE_TIMEOUT): ", e.what());
  }
}

}  // namespace ral
