// The wire protocol, all integers big-endian:
//
//   handshake   client -> "RTS1", server -> "RTS1" (so a stray peer is told apart from a store)
//   key         u32 length (<= kTcpStoreMaxKeyBytes), bytes
//   value       u32 length (<= kTcpStoreMaxValueBytes), bytes
//   SET         u8 1, key, value                           -> u8 kOk
//   GET         u8 2, key, u64 timeout_ms (0: none)        -> u8 kOk, value | u8 kTimedOut
//   WAIT        u8 3, u32 n, n keys, u64 timeout_ms        -> u8 kOk | u8 kTimedOut, u32 m,
//                                                             m missing keys
//   CHECK       u8 4, u32 n, n keys                        -> u8 kOk, n bytes (1: stored)
//
// The server enforces the timeouts of GET and WAIT and answers kTimedOut, so a connection stays
// in step and is reused. The client waits a grace period longer than that for the reply; a
// connection whose reply does not come by then is closed, never reused. A request breaking the
// limits or the format closes its connection.
#include "contexts/standalone/gloo/tcp_store.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <system_error>
#include <utility>

#include "gloo/common/error.h"

namespace ral::standalone {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr Clock::time_point kNoDeadline = Clock::time_point::max();
constexpr char kMagic[4] = {'R', 'T', 'S', '1'};
constexpr uint8_t kOpSet = 1;
constexpr uint8_t kOpGet = 2;
constexpr uint8_t kOpWait = 3;
constexpr uint8_t kOpCheck = 4;
constexpr uint8_t kOk = 0;
constexpr uint8_t kTimedOut = 1;

// How much longer than a request's own timeout the client waits for the server's answer.
constexpr milliseconds kReplyGrace{2000};
// The attempt of a connect() whose timeout is zero (a single try).
constexpr milliseconds kSingleAttempt{5000};
// Server-side waits wake this often to notice a client that gave up.
constexpr milliseconds kHangupPoll{100};
// Timeouts beyond this (about 30 years) mean "no limit": the deadline would overflow.
constexpr uint64_t kMaxTimeoutMs = uint64_t{1} << 40;
// A server refuses connections beyond this many (each has a thread).
constexpr size_t kMaxConnections = 1024;
// Values are read in pieces of this size, so the memory follows the bytes that really arrive.
constexpr size_t kReadChunk = size_t{1} << 20;

std::string formatAddress(const std::string& host, int port) {
  if (host.empty()) return "*:" + std::to_string(port);
  if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
  return host + ":" + std::to_string(port);
}

std::string errnoText(int error) { return std::system_category().message(error); }

Clock::time_point deadlineAfter(Clock::time_point start, milliseconds timeout) {
  if (timeout.count() <= 0 || static_cast<uint64_t>(timeout.count()) >= kMaxTimeoutMs) {
    return kNoDeadline;
  }
  return start + timeout;
}

// Keys in messages: quoted, bytes outside printable ASCII escaped, at most 16 of them.
std::string quoteKey(const std::string& key) {
  std::string out = "'";
  for (unsigned char c : key) {
    if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    }
  }
  return out + "'";
}

std::string quoteKeys(const std::vector<std::string>& keys) {
  constexpr size_t kShown = 16;
  std::string out;
  for (size_t i = 0; i < keys.size() && i < kShown; ++i) {
    if (i > 0) out += ", ";
    out += quoteKey(keys[i]);
  }
  if (keys.size() > kShown) out += " and " + std::to_string(keys.size() - kShown) + " more";
  return out;
}

void putU32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((v >> shift) & 0xff);
}
void putU64(std::string& out, uint64_t v) {
  for (int shift = 56; shift >= 0; shift -= 8) out += static_cast<char>((v >> shift) & 0xff);
}
void putKey(std::string& out, const std::string& key) {
  putU32(out, static_cast<uint32_t>(key.size()));
  out += key;
}
uint32_t getU32(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}
uint64_t getU64(const unsigned char* p) { return (uint64_t{getU32(p)} << 32) | getU32(p + 4); }

// ---- Socket I/O with a deadline. Both sides use these: the client's sockets are non-blocking,
// the server's are blocking but every call passes MSG_DONTWAIT and waits in poll(), which
// shutdown() wakes.

struct IoStatus {
  enum Kind { kOk, kTimeout, kClosed } kind = kOk;
  int error = 0;  // errno for a failed connection; 0 for an orderly close
  bool ok() const { return kind == kOk; }
};

// Waits until `fd` has one of `events` (or an error) or the deadline passes. A passed deadline
// still looks once, so what is already there (a refused connect, a reply) is not taken for a
// timeout.
IoStatus pollUntil(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    int wait_ms = -1;
    if (deadline != kNoDeadline) {
      auto left = std::chrono::ceil<milliseconds>(deadline - Clock::now()).count();
      wait_ms = static_cast<int>(std::clamp<int64_t>(left, 0, INT_MAX));
    }
    pollfd p{fd, events, 0};
    int r = ::poll(&p, 1, wait_ms);
    if (r > 0) return {};
    if (r < 0 && errno != EINTR) return {IoStatus::kClosed, errno};
    if (r == 0 && wait_ms == 0) return {IoStatus::kTimeout, 0};
  }
}

IoStatus sendAll(int fd, const void* data, size_t size, Clock::time_point deadline) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::send(fd, p, size, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      p += n;
      size -= static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      IoStatus s = pollUntil(fd, POLLOUT, deadline);
      if (!s.ok()) return s;
      continue;
    }
    return {IoStatus::kClosed, n < 0 ? errno : 0};
  }
  return {};
}

IoStatus recvAll(int fd, void* data, size_t size, Clock::time_point deadline) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    ssize_t n = ::recv(fd, p, size, MSG_DONTWAIT);
    if (n > 0) {
      p += n;
      size -= static_cast<size_t>(n);
      continue;
    }
    if (n == 0) return {IoStatus::kClosed, 0};
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      IoStatus s = pollUntil(fd, POLLIN, deadline);
      if (!s.ok()) return s;
      continue;
    }
    return {IoStatus::kClosed, errno};
  }
  return {};
}

void closeFd(int fd) {
  // Linux releases the descriptor even when close() reports EINTR, so it is never retried.
  if (fd >= 0) ::close(fd);
}

void setNoDelay(int fd) {
  int one = 1;
  // Best effort: without it requests are only slower.
  (void)::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

// Whether the peer of `fd` has closed or reset the connection.
bool peerHungUp(int fd) {
  pollfd p{fd, POLLIN | POLLRDHUP, 0};
  int r = ::poll(&p, 1, 0);
  if (r <= 0) return false;
  if (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) return true;
  char c;
  ssize_t n = ::recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
  return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

// ---- Server-side reads: blocking until the bytes come or the connection ends.

bool readExact(int fd, void* data, size_t size) {
  return recvAll(fd, data, size, kNoDeadline).ok();
}
bool readU32(int fd, uint32_t* v) {
  unsigned char b[4];
  if (!readExact(fd, b, 4)) return false;
  *v = getU32(b);
  return true;
}
bool readU64(int fd, uint64_t* v) {
  unsigned char b[8];
  if (!readExact(fd, b, 8)) return false;
  *v = getU64(b);
  return true;
}
bool readKey(int fd, std::string* key) {
  uint32_t size;
  if (!readU32(fd, &size) || size > kTcpStoreMaxKeyBytes) return false;
  key->resize(size);
  return readExact(fd, key->data(), size);
}
bool readKeys(int fd, std::vector<std::string>* keys) {
  uint32_t count;
  if (!readU32(fd, &count) || count > kTcpStoreMaxKeysPerRequest) return false;
  keys->resize(count);
  for (auto& key : *keys) {
    if (!readKey(fd, &key)) return false;
  }
  return true;
}
bool readValue(int fd, std::vector<char>* value) {
  uint32_t size;
  if (!readU32(fd, &size) || size > kTcpStoreMaxValueBytes) return false;
  value->clear();
  while (value->size() < size) {
    size_t offset = value->size();
    size_t piece = std::min<size_t>(size - offset, kReadChunk);
    value->resize(offset + piece);
    if (!readExact(fd, value->data() + offset, piece)) return false;
  }
  return true;
}
bool writeAll(int fd, const void* data, size_t size) {
  return sendAll(fd, data, size, kNoDeadline).ok();
}

Clock::time_point serverDeadline(uint64_t timeout_ms) {
  if (timeout_ms == 0 || timeout_ms >= kMaxTimeoutMs) return kNoDeadline;
  return Clock::now() + milliseconds(timeout_ms);
}

// ---- Client connection setup.

// One attempt at every address of host:port, with the handshake. Returns the descriptor, or -1
// with `error` set; `fatal` when the peer answered but is not a store server.
int connectOnce(const std::string& host, int port, Clock::time_point deadline, std::string* error,
                bool* fatal) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* addrs = nullptr;
  int gai = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &addrs);
  if (gai != 0) {
    *error = std::string("cannot resolve host: ") +
             (gai == EAI_SYSTEM ? errnoText(errno) : ::gai_strerror(gai));
    return -1;
  }
  int result = -1;
  for (addrinfo* ai = addrs; ai != nullptr && result < 0; ai = ai->ai_next) {
    int fd =
        ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      *error = "socket: " + errnoText(errno);
      continue;
    }
    // A non-blocking connect that is interrupted still goes on, like EINPROGRESS.
    if (::connect(fd, ai->ai_addr, ai->ai_addrlen) < 0 && errno != EINPROGRESS && errno != EINTR) {
      *error = "connect: " + errnoText(errno);
      closeFd(fd);
      continue;
    }
    IoStatus s = pollUntil(fd, POLLOUT, deadline);
    int so_error = 0;
    socklen_t len = sizeof(so_error);
    if (s.ok() && ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &so_error, &len) < 0) so_error = errno;
    if (!s.ok() || so_error != 0) {
      *error =
          "connect: " + (s.kind == IoStatus::kTimeout ? std::string("timed out")
                                                      : errnoText(so_error ? so_error : s.error));
      closeFd(fd);
      continue;
    }
    setNoDelay(fd);
    char reply[sizeof(kMagic)];
    s = sendAll(fd, kMagic, sizeof(kMagic), deadline);
    if (s.ok()) s = recvAll(fd, reply, sizeof(reply), deadline);
    if (!s.ok()) {
      *error = s.kind == IoStatus::kTimeout ? "no handshake from the server in time"
                                            : "the connection closed during the handshake";
      closeFd(fd);
      continue;
    }
    if (std::memcmp(reply, kMagic, sizeof(kMagic)) != 0) {
      *error = "the peer is not a store server (unexpected handshake)";
      *fatal = true;
      closeFd(fd);
      break;
    }
    result = fd;
  }
  ::freeaddrinfo(addrs);
  return result;
}

// Connects, retrying with a growing pause until `deadline` (kNoDeadline: for ever); a zero
// `timeout` makes a single attempt.
StatusOr<int> connectUntil(const std::string& host, int port, const std::string& address,
                           Clock::time_point deadline, milliseconds timeout) {
  const bool single = timeout.count() == 0;
  milliseconds pause{10};
  std::string error;
  for (;;) {
    bool fatal = false;
    Clock::time_point attempt_deadline = single ? Clock::now() + kSingleAttempt : deadline;
    int fd = connectOnce(host, port, attempt_deadline, &error, &fatal);
    if (fd >= 0) return fd;
    if (fatal) return failedPrecondition("cannot use the store server at ", address, ": ", error);
    if (single) {
      return unavailable("cannot connect to the store server at ", address, ": ", error);
    }
    Clock::time_point now = Clock::now();
    if (now >= deadline) {
      return deadlineExceeded("cannot connect to the store server at ", address, " after ",
                              timeout.count(), " ms: ", error);
    }
    // Sleep no further than the deadline, so the last attempt happens right at it.
    auto left = deadline - now;
    std::this_thread::sleep_for(left < pause ? left : Clock::duration(pause));
    pause = std::min(pause * 2, milliseconds(200));
  }
}

void checkKey(const std::string& key) {
  if (key.size() > kTcpStoreMaxKeyBytes) {
    GLOO_THROW_INVALID_OPERATION_EXCEPTION("store key of ", key.size(), " bytes (the limit is ",
                                           kTcpStoreMaxKeyBytes, ")");
  }
}

void checkKeys(const std::vector<std::string>& keys) {
  if (keys.size() > kTcpStoreMaxKeysPerRequest) {
    GLOO_THROW_INVALID_OPERATION_EXCEPTION("store request for ", keys.size(),
                                           " keys (the limit is ", kTcpStoreMaxKeysPerRequest, ")");
  }
  for (const auto& key : keys) checkKey(key);
}

void putKeys(std::string& out, const std::vector<std::string>& keys) {
  putU32(out, static_cast<uint32_t>(keys.size()));
  for (const auto& key : keys) putKey(out, key);
}

// The timeout a request sends to the server: what is left until `deadline`, at least 1 ms (0
// means none on the wire).
uint64_t wireTimeout(Clock::time_point deadline) {
  if (deadline == kNoDeadline) return 0;
  auto left = std::chrono::ceil<milliseconds>(deadline - Clock::now()).count();
  return static_cast<uint64_t>(std::max<int64_t>(left, 1));
}

Clock::time_point withGrace(Clock::time_point deadline) {
  return deadline == kNoDeadline ? kNoDeadline : deadline + kReplyGrace;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// TcpStoreServer

StatusOr<std::unique_ptr<TcpStoreServer>> TcpStoreServer::start(const std::string& host, int port) {
  const std::string address = formatAddress(host, port);
  if (port < 0 || port > 65535) {
    return invalidArgument("cannot listen on ", address, ": the port is out of range");
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* addrs = nullptr;
  int gai = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), std::to_string(port).c_str(),
                          &hints, &addrs);
  if (gai != 0) {
    return invalidArgument("cannot listen on ", address, ": cannot resolve the host: ",
                           gai == EAI_SYSTEM ? errnoText(errno) : ::gai_strerror(gai));
  }
  int listen_fd = -1;
  std::string error = "no address";
  for (addrinfo* ai = addrs; ai != nullptr && listen_fd < 0; ai = ai->ai_next) {
    int fd =
        ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      error = "socket: " + errnoText(errno);
      continue;
    }
    // Lets a restarted server take its port while connections of the old one are in TIME_WAIT.
    int one = 1;
    (void)::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (::bind(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
      error = "bind: " + errnoText(errno);
      closeFd(fd);
      continue;
    }
    if (::listen(fd, SOMAXCONN) < 0) {
      error = "listen: " + errnoText(errno);
      closeFd(fd);
      continue;
    }
    listen_fd = fd;
  }
  ::freeaddrinfo(addrs);
  if (listen_fd < 0) return unavailable("cannot listen on ", address, ": ", error);

  sockaddr_storage bound{};
  socklen_t len = sizeof(bound);
  if (::getsockname(listen_fd, reinterpret_cast<sockaddr*>(&bound), &len) < 0) {
    Status status =
        internalError("cannot listen on ", address, ": getsockname: ", errnoText(errno));
    closeFd(listen_fd);
    return status;
  }
  int bound_port = bound.ss_family == AF_INET6
                       ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                       : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  int wake[2];
  if (::pipe2(wake, O_CLOEXEC) < 0) {
    Status status = internalError("cannot listen on ", address, ": pipe: ", errnoText(errno));
    closeFd(listen_fd);
    return status;
  }
  std::unique_ptr<TcpStoreServer> server(
      new TcpStoreServer(listen_fd, wake[0], wake[1], bound_port));
  try {
    server->accept_thread_ = std::thread(&TcpStoreServer::acceptLoop, server.get());
  } catch (const std::system_error& e) {
    return internalError("cannot start the store server at ", address, ": ", e.what());
  }
  return server;
}

TcpStoreServer::TcpStoreServer(int listen_fd, int wake_read_fd, int wake_write_fd, int port)
    : listen_fd_(listen_fd),
      wake_read_fd_(wake_read_fd),
      wake_write_fd_(wake_write_fd),
      port_(port) {}

TcpStoreServer::~TcpStoreServer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    // Wakes threads blocked reading or writing their connection; the descriptors stay open
    // (and so are not reused under them) until the threads are joined.
    for (auto& c : connections_) ::shutdown(c.fd, SHUT_RDWR);
  }
  stored_.notify_all();
  char byte = 0;
  while (::write(wake_write_fd_, &byte, 1) < 0 && errno == EINTR) {
  }
  if (accept_thread_.joinable()) accept_thread_.join();
  // The accept loop adds no connection once stopping_ is set, so the list is final.
  for (auto& c : connections_) {
    if (c.thread.joinable()) c.thread.join();
    closeFd(c.fd);
  }
  closeFd(listen_fd_);
  closeFd(wake_read_fd_);
  closeFd(wake_write_fd_);
}

void TcpStoreServer::acceptLoop() {
  for (;;) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_read_fd_, POLLIN, 0}};
    int r = ::poll(fds, 2, -1);
    if (r < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0) return;
    if ((fds[0].revents & POLLIN) == 0) continue;
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      // Out of descriptors or memory: the pending connection stays queued, so pause rather
      // than spin on it.
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        std::this_thread::sleep_for(milliseconds(50));
      }
      continue;
    }
    setNoDelay(fd);
    reapFinished();
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ || connections_.size() >= kMaxConnections) {
      closeFd(fd);
      continue;
    }
    connections_.emplace_back();
    Connection* c = &connections_.back();
    c->fd = fd;
    try {
      c->thread = std::thread(&TcpStoreServer::serve, this, c);
    } catch (const std::system_error&) {
      connections_.pop_back();
      closeFd(fd);
    }
  }
}

void TcpStoreServer::reapFinished() {
  std::list<Connection> finished;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = connections_.begin(); it != connections_.end();) {
      auto next = std::next(it);
      if (it->done) finished.splice(finished.end(), connections_, it);
      it = next;
    }
  }
  for (auto& c : finished) {
    c.thread.join();
    closeFd(c.fd);
  }
}

void TcpStoreServer::serve(Connection* connection) {
  const int fd = connection->fd;
  char hello[sizeof(kMagic)];
  if (readExact(fd, hello, sizeof(hello)) && std::memcmp(hello, kMagic, sizeof(kMagic)) == 0 &&
      writeAll(fd, kMagic, sizeof(kMagic))) {
    while (handleRequest(fd)) {
    }
  }
  // The peer sees the end at once; the descriptor is closed when the thread is joined.
  ::shutdown(fd, SHUT_RDWR);
  std::lock_guard<std::mutex> lock(mu_);
  connection->done = true;
}

bool TcpStoreServer::waitForKeys(std::unique_lock<std::mutex>& lock,
                                 const std::vector<std::string>& keys, Clock::time_point deadline,
                                 int fd) {
  auto all_stored = [&] {
    return std::all_of(keys.begin(), keys.end(),
                       [&](const std::string& k) { return values_.count(k) != 0; });
  };
  Clock::time_point next_check = Clock::now() + kHangupPoll;
  for (;;) {
    if (stopping_) return false;
    if (all_stored()) return true;
    Clock::time_point now = Clock::now();
    if (now >= deadline) return false;
    if (now >= next_check) {
      // A client that gave up (its own deadline, or it went away) has closed the connection;
      // stop waiting for it rather than keep the thread until the key comes.
      lock.unlock();
      bool gone = peerHungUp(fd);
      lock.lock();
      if (gone) return false;
      next_check = now + kHangupPoll;
      continue;
    }
    stored_.wait_until(lock, std::min(deadline, next_check));
  }
}

bool TcpStoreServer::handleRequest(int fd) {
  uint8_t op;
  if (!readExact(fd, &op, 1)) return false;
  std::string reply;
  switch (op) {
    case kOpSet: {
      std::string key;
      std::vector<char> value;
      if (!readKey(fd, &key) || !readValue(fd, &value)) return false;
      {
        std::lock_guard<std::mutex> lock(mu_);
        values_[key] = std::move(value);
      }
      stored_.notify_all();
      reply += static_cast<char>(kOk);
      return writeAll(fd, reply.data(), reply.size());
    }
    case kOpGet: {
      std::string key;
      uint64_t timeout_ms;
      if (!readKey(fd, &key) || !readU64(fd, &timeout_ms)) return false;
      std::vector<std::string> keys{key};
      std::unique_lock<std::mutex> lock(mu_);
      if (!waitForKeys(lock, keys, serverDeadline(timeout_ms), fd)) {
        bool stopping = stopping_;
        lock.unlock();
        if (stopping || peerHungUp(fd)) return false;
        reply += static_cast<char>(kTimedOut);
        return writeAll(fd, reply.data(), reply.size());
      }
      // A copy, so the lock is not held while sending.
      std::vector<char> value = values_.at(key);
      lock.unlock();
      reply += static_cast<char>(kOk);
      putU32(reply, static_cast<uint32_t>(value.size()));
      return writeAll(fd, reply.data(), reply.size()) && writeAll(fd, value.data(), value.size());
    }
    case kOpWait: {
      std::vector<std::string> keys;
      uint64_t timeout_ms;
      if (!readKeys(fd, &keys) || !readU64(fd, &timeout_ms)) return false;
      std::unique_lock<std::mutex> lock(mu_);
      if (waitForKeys(lock, keys, serverDeadline(timeout_ms), fd)) {
        lock.unlock();
        reply += static_cast<char>(kOk);
        return writeAll(fd, reply.data(), reply.size());
      }
      if (stopping_) return false;
      std::vector<std::string> missing;
      for (const auto& key : keys) {
        if (values_.count(key) == 0) missing.push_back(key);
      }
      lock.unlock();
      if (peerHungUp(fd)) return false;
      reply += static_cast<char>(kTimedOut);
      putKeys(reply, missing);
      return writeAll(fd, reply.data(), reply.size());
    }
    case kOpCheck: {
      std::vector<std::string> keys;
      if (!readKeys(fd, &keys)) return false;
      reply += static_cast<char>(kOk);
      {
        std::lock_guard<std::mutex> lock(mu_);
        for (const auto& key : keys) reply += static_cast<char>(values_.count(key) != 0);
      }
      return writeAll(fd, reply.data(), reply.size());
    }
    default:
      return false;
  }
}

// ---------------------------------------------------------------------------------------------
// TcpStore

// One request on a connection of its own: taken from the store's idle ones (or opened) at
// construction, given back when the request ended cleanly (finish()), closed otherwise. The
// I/O methods throw gloo::IoException, naming `what` the request was.
class TcpStore::Request {
 public:
  Request(TcpStore& store, Clock::time_point deadline, std::string what)
      : store_(store),
        io_deadline_(withGrace(deadline)),
        start_(Clock::now()),
        what_(std::move(what)),
        fd_(store.acquire(deadline)) {}
  ~Request() {
    if (fd_ < 0) return;
    if (finished_) {
      store_.release(fd_);
    } else {
      closeFd(fd_);
    }
  }
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;

  void send(const void* data, size_t size) { check(sendAll(fd_, data, size, io_deadline_)); }
  void recv(void* data, size_t size) { check(recvAll(fd_, data, size, io_deadline_)); }
  uint8_t recvU8() {
    uint8_t v;
    recv(&v, 1);
    return v;
  }
  uint32_t recvU32() {
    unsigned char b[4];
    recv(b, 4);
    return getU32(b);
  }
  // A length announced by the server, refused when over `limit`.
  uint32_t recvLength(size_t limit) {
    uint32_t v = recvU32();
    if (v > limit) malformed();
    return v;
  }
  std::string recvKey() {
    std::string key(recvLength(kTcpStoreMaxKeyBytes), '\0');
    recv(key.data(), key.size());
    return key;
  }
  [[noreturn]] void malformed() {
    GLOO_THROW_IO_EXCEPTION("the store server at ", store_.address_, " sent a malformed reply to ",
                            what_);
  }
  // The request ended in step with the server: the connection may serve the next one.
  void finish() { finished_ = true; }

 private:
  void check(const IoStatus& s) {
    if (s.ok()) return;
    if (s.kind == IoStatus::kTimeout) {
      auto waited = std::chrono::duration_cast<milliseconds>(Clock::now() - start_).count();
      GLOO_THROW_IO_EXCEPTION("timed out after ", waited, " ms waiting for the store server at ",
                              store_.address_, " to answer ", what_,
                              "; the connection was dropped");
    }
    store_.markLost();
    GLOO_THROW_IO_EXCEPTION("the store server at ", store_.address_, " closed the connection",
                            s.error != 0 ? " (" + errnoText(s.error) + ")" : std::string(),
                            " during ", what_);
  }

  TcpStore& store_;
  const Clock::time_point io_deadline_;
  const Clock::time_point start_;
  const std::string what_;
  const int fd_;
  bool finished_ = false;
};

StatusOr<std::unique_ptr<TcpStore>> TcpStore::connect(const std::string& host, int port,
                                                      milliseconds timeout) {
  const std::string address = formatAddress(host, port);
  if (port <= 0 || port > 65535) {
    return invalidArgument("cannot connect to the store server at ", address,
                           ": the port is out of range");
  }
  if (timeout.count() < 0) {
    return invalidArgument("cannot connect to the store server at ", address, ": negative timeout ",
                           timeout.count(), " ms");
  }
  RAL_ASSIGN_OR_RETURN(
      int fd, connectUntil(host, port, address, deadlineAfter(Clock::now(), timeout), timeout));
  return std::unique_ptr<TcpStore>(new TcpStore(host, port, timeout, fd));
}

TcpStore::TcpStore(std::string host, int port, milliseconds timeout, int fd)
    : host_(std::move(host)),
      port_(port),
      address_(formatAddress(host_, port_)),
      timeout_(timeout),
      idle_{fd} {}

TcpStore::~TcpStore() {
  for (int fd : idle_) closeFd(fd);
}

int TcpStore::acquire(Clock::time_point deadline) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (lost_) {
      GLOO_THROW_IO_EXCEPTION("the store server at ", address_, " closed the connection");
    }
    if (!idle_.empty()) {
      int fd = idle_.back();
      idle_.pop_back();
      return fd;
    }
  }
  // Every connection is busy with another thread's request (or the last one timed out).
  milliseconds budget =
      deadline == kNoDeadline
          ? milliseconds(0)
          : std::max(milliseconds(1), std::chrono::ceil<milliseconds>(deadline - Clock::now()));
  StatusOr<int> fd = connectUntil(host_, port_, address_, deadline, budget);
  if (!fd.ok()) GLOO_THROW_IO_EXCEPTION(fd.status().toString());
  return *fd;
}

void TcpStore::release(int fd) {
  std::lock_guard<std::mutex> lock(mu_);
  if (lost_) {
    closeFd(fd);
  } else {
    idle_.push_back(fd);
  }
}

void TcpStore::markLost() {
  std::lock_guard<std::mutex> lock(mu_);
  lost_ = true;
  // The server is gone for them too; a restarted one would not have the keys.
  for (int fd : idle_) closeFd(fd);
  idle_.clear();
}

void TcpStore::set(const std::string& key, const std::vector<char>& data) {
  checkKey(key);
  if (data.size() > kTcpStoreMaxValueBytes) {
    GLOO_THROW_INVALID_OPERATION_EXCEPTION("store value of ", data.size(), " bytes (the limit is ",
                                           kTcpStoreMaxValueBytes, ")");
  }
  Request request(*this, deadlineAfter(Clock::now(), timeout_), "set " + quoteKey(key));
  std::string header;
  header += static_cast<char>(kOpSet);
  putKey(header, key);
  putU32(header, static_cast<uint32_t>(data.size()));
  request.send(header.data(), header.size());
  request.send(data.data(), data.size());
  if (request.recvU8() != kOk) request.malformed();
  request.finish();
}

std::vector<char> TcpStore::get(const std::string& key) {
  checkKey(key);
  Clock::time_point deadline = deadlineAfter(Clock::now(), timeout_);
  Request request(*this, deadline, "get " + quoteKey(key));
  std::string header;
  header += static_cast<char>(kOpGet);
  putKey(header, key);
  putU64(header, wireTimeout(deadline));
  request.send(header.data(), header.size());
  uint8_t status = request.recvU8();
  if (status == kTimedOut) {
    request.finish();
    GLOO_THROW_IO_EXCEPTION("timed out after ", timeout_.count(), " ms waiting for key ",
                            quoteKey(key), " at the store server ", address_);
  }
  if (status != kOk) request.malformed();
  std::vector<char> value(request.recvLength(kTcpStoreMaxValueBytes));
  request.recv(value.data(), value.size());
  request.finish();
  return value;
}

void TcpStore::wait(const std::vector<std::string>& keys) { wait(keys, timeout_); }

void TcpStore::wait(const std::vector<std::string>& keys, const milliseconds& timeout) {
  checkKeys(keys);
  if (timeout.count() < 0) {
    GLOO_THROW_INVALID_OPERATION_EXCEPTION("store wait with a negative timeout (", timeout.count(),
                                           " ms)");
  }
  if (keys.empty()) return;
  Clock::time_point deadline = deadlineAfter(Clock::now(), timeout);
  Request request(*this, deadline, "wait for " + quoteKeys(keys));
  std::string header;
  header += static_cast<char>(kOpWait);
  putKeys(header, keys);
  putU64(header, wireTimeout(deadline));
  request.send(header.data(), header.size());
  uint8_t status = request.recvU8();
  if (status == kOk) {
    request.finish();
    return;
  }
  if (status != kTimedOut) request.malformed();
  uint32_t count = request.recvLength(keys.size());
  std::vector<std::string> missing(count);
  for (auto& key : missing) key = request.recvKey();
  request.finish();
  GLOO_THROW_IO_EXCEPTION("timed out after ", timeout.count(), " ms waiting for ",
                          missing.size() == 1 ? "key " : "keys ", quoteKeys(missing), " (",
                          missing.size(), " of ", keys.size(), ") at the store server ", address_);
}

bool TcpStore::check(const std::vector<std::string>& keys) {
  checkKeys(keys);
  if (keys.empty()) return true;
  Request request(*this, deadlineAfter(Clock::now(), timeout_), "check " + quoteKeys(keys));
  std::string header;
  header += static_cast<char>(kOpCheck);
  putKeys(header, keys);
  request.send(header.data(), header.size());
  if (request.recvU8() != kOk) request.malformed();
  std::string present(keys.size(), '\0');
  request.recv(present.data(), present.size());
  request.finish();
  return std::all_of(present.begin(), present.end(), [](char c) { return c == 1; });
}

}  // namespace ral::standalone
