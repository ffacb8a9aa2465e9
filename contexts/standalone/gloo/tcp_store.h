// A key-value store over TCP for Gloo's rendezvous, in the role of PyTorch's TCPStore: one process
// (rank 0, at MASTER_ADDR:MASTER_PORT) runs a TcpStoreServer, every rank connects a TcpStore to it
// and hands that to gloo::rendezvous::Context::connectFullMesh(). Gloo itself ships only file and
// Redis stores. The wire protocol is our own (see tcp_store.cc) and is not compatible with torch.
//
// Ownership: the server owns its listening socket, its connections and their threads, and the
// stored values; destroying it closes every connection, so its clients' pending and later
// requests fail. A client owns its connections to the server; it does not own the server.
//
// Thread safety: every TcpStore method may be called from several threads at once. Each request
// runs on a connection of its own (an idle one is reused, a new one is opened when all are busy),
// so a get() blocked on a key does not hold up the set() of another thread that makes it. A
// TcpStoreServer has no methods to race on besides port(); it serves connections on its own
// threads.
#ifndef RAL_CONTEXTS_STANDALONE_GLOO_TCP_STORE_H_
#define RAL_CONTEXTS_STANDALONE_GLOO_TCP_STORE_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "gloo/rendezvous/store.h"
#include "ral/status.h"

namespace ral::standalone {

// Limits of one request. A peer that goes over them has its connection closed, so a hostile or
// confused peer cannot make a connection hold more than one value's bytes (and those only as they
// arrive). The server also refuses connections beyond 1024 at once.
inline constexpr size_t kTcpStoreMaxKeyBytes = 4096;
inline constexpr size_t kTcpStoreMaxValueBytes = size_t{64} << 20;
inline constexpr size_t kTcpStoreMaxKeysPerRequest = 4096;

// Serves any number of clients from a listening socket until destroyed.
class TcpStoreServer {
 public:
  // Listens on `host:port`: the first address of `host` that can be bound (an empty host: the
  // first wildcard address getaddrinfo lists, IPv4 or IPv6). Port 0 lets the kernel pick one;
  // port() tells which. Errors (address in use, unknown host, bad port) name host:port.
  static StatusOr<std::unique_ptr<TcpStoreServer>> start(const std::string& host, int port);

  TcpStoreServer(const TcpStoreServer&) = delete;
  TcpStoreServer& operator=(const TcpStoreServer&) = delete;
  // Stops accepting, closes every connection (waking requests blocked on keys) and joins the
  // threads. Does not wait for clients.
  ~TcpStoreServer();

  int port() const { return port_; }

 private:
  struct Connection {
    int fd = -1;
    std::thread thread;
    bool done = false;  // set by the thread as it ends, guarded by mu_
  };

  TcpStoreServer(int listen_fd, int wake_read_fd, int wake_write_fd, int port);
  void acceptLoop();
  void serve(Connection* connection);
  // Handles one request read from `fd`; false when the connection must be closed.
  bool handleRequest(int fd);
  // Waits until every key in `keys` is stored, the deadline passes, the server stops or the peer
  // on `fd` hangs up. Returns whether all keys are there; `lock` holds mu_.
  bool waitForKeys(std::unique_lock<std::mutex>& lock, const std::vector<std::string>& keys,
                   std::chrono::steady_clock::time_point deadline, int fd);
  // Joins and closes connections whose threads have ended.
  void reapFinished();

  const int listen_fd_;
  const int wake_read_fd_;  // readable once the destructor runs: ends the accept loop
  const int wake_write_fd_;
  const int port_;
  std::thread accept_thread_;

  std::mutex mu_;
  std::condition_variable stored_;  // notified on every set and on stop
  bool stopping_ = false;
  std::unordered_map<std::string, std::vector<char>> values_;
  std::list<Connection> connections_;  // std::list: a thread keeps a pointer to its entry
};

// A client of a TcpStoreServer, as a Gloo store. Failures of set/get/wait are thrown as
// gloo::IoException (what Gloo's rendezvous expects); arguments over the limits above as
// gloo::InvalidOperationException.
class TcpStore : public ::gloo::rendezvous::Store {
 public:
  // Connects to the server at `host:port`, retrying until `timeout` passes (the server may start
  // after its clients); then fails with a Status naming host:port and the time waited. `timeout`
  // is also the store's timeout: how long get() and wait(keys) wait for keys. Zero
  // (gloo::kNoTimeout) tries to connect once and lets get() and wait() wait without limit.
  static StatusOr<std::unique_ptr<TcpStore>> connect(const std::string& host, int port,
                                                     std::chrono::milliseconds timeout);

  TcpStore(const TcpStore&) = delete;
  TcpStore& operator=(const TcpStore&) = delete;
  ~TcpStore() override;

  void set(const std::string& key, const std::vector<char>& data) override;
  // Waits for the key up to the store's timeout.
  std::vector<char> get(const std::string& key) override;
  // Waits for every key up to the store's timeout.
  void wait(const std::vector<std::string>& keys) override;
  // Waits for every key up to `timeout` (zero: without limit).
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override;
  // Whether every key is stored, without waiting.
  bool check(const std::vector<std::string>& keys);

  // "host:port" of the server, as used in messages.
  const std::string& address() const { return address_; }
  std::chrono::milliseconds timeout() const { return timeout_; }

 private:
  class Request;

  TcpStore(std::string host, int port, std::chrono::milliseconds timeout, int fd);
  // An idle connection, or a new one when none is idle; throws once the server has closed one.
  int acquire(std::chrono::steady_clock::time_point deadline);
  // Returns a connection whose request ended cleanly to the idle list.
  void release(int fd);
  // Records that the server closed a connection; later requests fail at once.
  void markLost();

  const std::string host_;
  const int port_;
  const std::string address_;
  const std::chrono::milliseconds timeout_;

  std::mutex mu_;
  std::vector<int> idle_;  // guarded by mu_
  std::atomic<bool> lost_{false};
};

}  // namespace ral::standalone

#endif  // RAL_CONTEXTS_STANDALONE_GLOO_TCP_STORE_H_
