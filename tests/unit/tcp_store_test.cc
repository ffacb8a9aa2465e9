// TcpStoreServer and TcpStore: requests, timeouts, several clients and threads, a lost server,
// hostile peers, and a real Gloo rendezvous plus allreduce over the store. Every server listens on
// 127.0.0.1 with a port the kernel picks, so tests do not collide.
#include "contexts/standalone/gloo/tcp_store.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gloo/allreduce.h"
#include "gloo/common/error.h"
#include "gloo/math.h"
#include "gloo/rendezvous/context.h"
#include "gloo/rendezvous/prefix_store.h"
#include "gloo/transport/tcp/device.h"

namespace ral::standalone {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

constexpr milliseconds kLong{10000};  // for requests that must not time out
constexpr milliseconds kShort{300};   // for requests that must

std::vector<char> bytes(const std::string& s) { return std::vector<char>(s.begin(), s.end()); }

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::unique_ptr<TcpStoreServer> startServer() {
  auto server = TcpStoreServer::start("127.0.0.1", 0);
  EXPECT_TRUE(server.ok()) << server.status();
  return std::move(server).value();
}

std::unique_ptr<TcpStore> connectTo(const TcpStoreServer& server, milliseconds timeout = kLong) {
  auto store = TcpStore::connect("127.0.0.1", server.port(), timeout);
  EXPECT_TRUE(store.ok()) << store.status();
  return std::move(store).value();
}

// A socket bound to a free port of 127.0.0.1 that does not listen: connections to the port are
// refused, and no other process can take it while the socket is open.
class ReservedPort {
 public:
  ReservedPort() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    socklen_t len = sizeof(addr);
    EXPECT_EQ(::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    port_ = ntohs(addr.sin_port);
  }
  ~ReservedPort() { release(); }
  void release() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// A raw TCP connection to 127.0.0.1:port, for speaking the protocol by hand.
int rawConnect(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  return fd;
}

void rawSend(int fd, const std::string& data) {
  ASSERT_EQ(::send(fd, data.data(), data.size(), MSG_NOSIGNAL), static_cast<ssize_t>(data.size()));
}

// Reads until the peer closes the connection (true) or 5 s pass (false).
bool closedByPeer(int fd) {
  char buf[256];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 5000) <= 0) return false;
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n == 0 || (n < 0 && errno == ECONNRESET)) return true;
    if (n < 0) return false;
  }
}

template <typename F>
std::string thrownMessage(F&& f) {
  try {
    f();
  } catch (const gloo::IoException& e) {
    return e.what();
  }
  ADD_FAILURE() << "no gloo::IoException";
  return "";
}

TEST(TcpStoreTest, SetThenGet) {
  auto server = startServer();
  auto store = connectTo(*server);
  store->set("alpha", bytes("one"));
  store->set("beta", bytes("two"));
  EXPECT_EQ(store->get("alpha"), bytes("one"));
  EXPECT_EQ(store->get("beta"), bytes("two"));
  store->set("alpha", bytes("three"));  // a later set replaces the value
  EXPECT_EQ(store->get("alpha"), bytes("three"));
  EXPECT_TRUE(store->check({"alpha", "beta"}));
  EXPECT_FALSE(store->check({"alpha", "gamma"}));
  EXPECT_EQ(store->address(), "127.0.0.1:" + std::to_string(server->port()));
}

TEST(TcpStoreTest, GetWaitsForALaterSet) {
  auto server = startServer();
  auto reader = connectTo(*server);
  auto writer = connectTo(*server);
  std::thread later([&] {
    std::this_thread::sleep_for(milliseconds(100));
    writer->set("late", bytes("value"));
  });
  EXPECT_EQ(reader->get("late"), bytes("value"));
  later.join();
}

// A get blocked on one client does not hold up a set of another thread on the same client.
TEST(TcpStoreTest, OneClientServesABlockedGetAndASetAtOnce) {
  auto server = startServer();
  auto store = connectTo(*server);
  std::vector<char> got;
  std::thread reader([&] { got = store->get("shared"); });
  std::this_thread::sleep_for(milliseconds(50));
  store->set("shared", bytes("x"));
  reader.join();
  EXPECT_EQ(got, bytes("x"));
}

TEST(TcpStoreTest, GetOfAMissingKeyTimesOutNamingTheKey) {
  auto server = startServer();
  auto store = connectTo(*server, kShort);
  std::string message = thrownMessage([&] { store->get("never-set"); });
  EXPECT_TRUE(contains(message, "'never-set'")) << message;
  EXPECT_TRUE(contains(message, "300 ms")) << message;
  EXPECT_TRUE(contains(message, store->address())) << message;
  // The client stays usable after a timeout.
  store->set("after", bytes("ok"));
  EXPECT_EQ(store->get("after"), bytes("ok"));
}

TEST(TcpStoreTest, WaitForSeveralKeys) {
  auto server = startServer();
  auto store = connectTo(*server);
  auto writer = connectTo(*server);
  store->set("k0", bytes("0"));
  std::thread later([&] {
    std::this_thread::sleep_for(milliseconds(50));
    writer->set("k1", bytes("1"));
    writer->set("k2", bytes("2"));
  });
  store->wait({"k0", "k1", "k2"});
  later.join();
  store->wait({"k0", "k1", "k2"}, milliseconds(1));
  store->wait({});
}

TEST(TcpStoreTest, WaitTimeoutNamesOnlyTheMissingKeys) {
  auto server = startServer();
  auto store = connectTo(*server);
  store->set("present", bytes("p"));
  std::string message = thrownMessage([&] {
    store->wait({"present", "absent-1", "absent-2"}, milliseconds(200));
  });
  EXPECT_TRUE(contains(message, "'absent-1'")) << message;
  EXPECT_TRUE(contains(message, "'absent-2'")) << message;
  EXPECT_FALSE(contains(message, "'present'")) << message;
  EXPECT_TRUE(contains(message, "200 ms")) << message;
  EXPECT_TRUE(contains(message, store->address())) << message;
  EXPECT_EQ(store->get("present"), bytes("p"));
}

TEST(TcpStoreTest, FourClientsFromFourThreads) {
  constexpr int kClients = 4;
  auto server = startServer();
  std::vector<std::thread> threads;
  std::atomic<int> matched{0};
  for (int i = 0; i < kClients; ++i) {
    threads.emplace_back([&, i] {
      auto store = connectTo(*server);
      store->set("rank/" + std::to_string(i), bytes("value of " + std::to_string(i)));
      for (int j = 0; j < kClients; ++j) {
        if (store->get("rank/" + std::to_string(j)) == bytes("value of " + std::to_string(j))) {
          ++matched;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(matched.load(), kClients * kClients);
}

TEST(TcpStoreTest, ConnectToAPortNobodyListensOnFails) {
  ReservedPort port;
  auto store = TcpStore::connect("127.0.0.1", port.port(), kShort);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kDeadlineExceeded);
  std::string message(store.status().message());
  EXPECT_TRUE(contains(message, "127.0.0.1:" + std::to_string(port.port()))) << message;
  EXPECT_TRUE(contains(message, "300 ms")) << message;
}

TEST(TcpStoreTest, ConnectRetriesUntilTheServerStarts) {
  ReservedPort port;
  std::unique_ptr<TcpStoreServer> server;
  std::thread starter([&] {
    std::this_thread::sleep_for(milliseconds(200));
    port.release();
    auto started = TcpStoreServer::start("127.0.0.1", port.port());
    ASSERT_TRUE(started.ok()) << started.status();
    server = std::move(started).value();
  });
  auto store = TcpStore::connect("127.0.0.1", port.port(), kLong);
  starter.join();
  ASSERT_TRUE(store.ok()) << store.status();
  (*store)->set("k", bytes("v"));
  EXPECT_EQ((*store)->get("k"), bytes("v"));
}

TEST(TcpStoreTest, BadArgumentsFailWithAStatus) {
  EXPECT_EQ(TcpStore::connect("127.0.0.1", 0, kShort).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(TcpStore::connect("127.0.0.1", 70000, kShort).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(TcpStoreServer::start("127.0.0.1", -1).status().code(), StatusCode::kInvalidArgument);
  auto bad_host = TcpStoreServer::start("no-such-host.invalid", 0);
  ASSERT_FALSE(bad_host.ok());
  EXPECT_TRUE(contains(std::string(bad_host.status().message()), "no-such-host.invalid:0"))
      << bad_host.status();
}

TEST(TcpStoreTest, ASecondServerOnAPortInUseFails) {
  auto server = startServer();
  auto second = TcpStoreServer::start("127.0.0.1", server->port());
  ASSERT_FALSE(second.ok());
  std::string message(second.status().message());
  EXPECT_TRUE(contains(message, "127.0.0.1:" + std::to_string(server->port()))) << message;
  // The first server is unharmed.
  auto store = connectTo(*server);
  store->set("k", bytes("v"));
  EXPECT_EQ(store->get("k"), bytes("v"));
}

TEST(TcpStoreTest, AClientWhoseServerIsDestroyedFailsCleanly) {
  auto server = startServer();
  auto store = connectTo(*server);
  auto blocked = connectTo(*server);
  store->set("k", bytes("v"));
  std::string blocked_message;
  std::thread waiter([&] { blocked_message = thrownMessage([&] { blocked->get("never"); }); });
  std::this_thread::sleep_for(milliseconds(50));
  server.reset();  // must wake the blocked get, not wait for it
  waiter.join();
  EXPECT_TRUE(contains(blocked_message, "closed the connection")) << blocked_message;
  std::string message = thrownMessage([&] { store->get("k"); });
  EXPECT_TRUE(contains(message, "closed the connection")) << message;
  EXPECT_TRUE(contains(message, store->address())) << message;
  // Later requests fail at once the same way.
  message = thrownMessage([&] { store->set("k", bytes("v")); });
  EXPECT_TRUE(contains(message, "closed the connection")) << message;
}

TEST(TcpStoreTest, BinaryEmptyAndLargeValuesRoundTrip) {
  auto server = startServer();
  auto store = connectTo(*server);
  std::vector<char> binary = {'a', '\0', 'b', '\0', '\0', '\xff'};
  store->set("binary", binary);
  store->set("empty", {});
  std::string key_with_zero("k\0ey", 4);
  store->set(key_with_zero, bytes("z"));
  std::vector<char> large(8 << 20);
  for (size_t i = 0; i < large.size(); ++i) large[i] = static_cast<char>(i * 7 + 3);
  store->set("large", large);
  EXPECT_EQ(store->get("binary"), binary);
  EXPECT_EQ(store->get("empty"), std::vector<char>());
  EXPECT_EQ(store->get(key_with_zero), bytes("z"));
  EXPECT_EQ(store->get("large"), large);
}

TEST(TcpStoreTest, RequestsOverTheLimitsAreRefusedByTheClient) {
  auto server = startServer();
  auto store = connectTo(*server);
  EXPECT_THROW(store->set(std::string(kTcpStoreMaxKeyBytes + 1, 'k'), {}),
               gloo::InvalidOperationException);
  EXPECT_THROW(store->wait({"a"}, milliseconds(-1)), gloo::InvalidOperationException);
  store->set(std::string(kTcpStoreMaxKeyBytes, 'k'), bytes("max"));
  EXPECT_EQ(store->get(std::string(kTcpStoreMaxKeyBytes, 'k')), bytes("max"));
}

// Absurd lengths and foreign handshakes close the connection without allocating; the server
// keeps serving its other clients.
TEST(TcpStoreTest, HostilePeersAreDisconnected) {
  auto server = startServer();
  auto store = connectTo(*server);
  const std::string hello = "RTS1";
  const std::string huge = "\xff\xff\xff\xff";
  {
    int fd = rawConnect(server->port());
    rawSend(fd, "GET / HTTP/1.0\r\n\r\n");
    EXPECT_TRUE(closedByPeer(fd));
    ::close(fd);
  }
  {
    int fd = rawConnect(server->port());
    rawSend(fd, hello + "\x01" + huge);  // SET with a 4 GiB key
    EXPECT_TRUE(closedByPeer(fd));
    ::close(fd);
  }
  {
    int fd = rawConnect(server->port());
    rawSend(fd, hello + std::string("\x01\0\0\0\x01k", 6) + huge);  // SET with a 4 GiB value
    EXPECT_TRUE(closedByPeer(fd));
    ::close(fd);
  }
  {
    int fd = rawConnect(server->port());
    rawSend(fd, hello + "\x03" + huge);  // WAIT for 4 billion keys
    EXPECT_TRUE(closedByPeer(fd));
    ::close(fd);
  }
  {
    int fd = rawConnect(server->port());
    rawSend(fd, hello + "\x7f");  // no such request
    EXPECT_TRUE(closedByPeer(fd));
    ::close(fd);
  }
  store->set("still", bytes("served"));
  EXPECT_EQ(store->get("still"), bytes("served"));
}

// A peer that completes the handshake and then never answers: the client gives up a grace
// period after its timeout and drops that connection (a late reply must not be read as the
// answer to a later request).
TEST(TcpStoreTest, AServerThatNeverAnswersTimesOutOnTheClient) {
  int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::listen(listener, 8), 0);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  int port = ntohs(addr.sin_port);
  std::atomic<int> accepted_fd{-1};
  std::thread mute([&] {
    int fd = ::accept(listener, nullptr, nullptr);
    char hello[4];
    if (fd >= 0 && ::recv(fd, hello, 4, MSG_WAITALL) == 4) {
      ::send(fd, "RTS1", 4, MSG_NOSIGNAL);
    }
    accepted_fd = fd;
  });
  auto store = TcpStore::connect("127.0.0.1", port, milliseconds(100));
  ASSERT_TRUE(store.ok()) << store.status();
  std::string message = thrownMessage([&] { (*store)->get("k"); });
  EXPECT_TRUE(contains(message, "connection was dropped")) << message;
  mute.join();
  ::close(accepted_fd);
  ::close(listener);
}

// Runs one rank: a store client of its own, Gloo's rendezvous over it, then an allreduce (sum)
// of a small vector. Returns "" or the failure.
std::string runRank(int port, int rank, int size, std::vector<float>* result) {
  try {
    auto client = TcpStore::connect("127.0.0.1", port, kLong);
    if (!client.ok()) return client.status().toString();
    // A prefix keeps rendezvous of different groups apart on one server.
    gloo::rendezvous::PrefixStore store("group" + std::to_string(size), **client);
    gloo::transport::tcp::attr attr;
    attr.hostname = "127.0.0.1";
    auto device = gloo::transport::tcp::CreateDevice(attr);
    auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
    context->setTimeout(kLong);
    context->connectFullMesh(store, device);

    constexpr size_t kCount = 16;
    std::vector<float> input(kCount);
    for (size_t i = 0; i < kCount; ++i) input[i] = static_cast<float>(rank * 100 + i);
    result->assign(kCount, 0.0f);
    gloo::AllreduceOptions opts(context);
    opts.setInput(input.data(), kCount);
    opts.setOutput(result->data(), kCount);
    opts.setReduceFunction(
        static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<float>));
    gloo::allreduce(opts);
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}

void rendezvousAndAllreduce(int size) {
  auto server = startServer();
  std::vector<std::vector<float>> results(size);
  std::vector<std::string> errors(size);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < size; ++rank) {
    threads.emplace_back(
        [&, rank] { errors[rank] = runRank(server->port(), rank, size, &results[rank]); });
  }
  for (auto& t : threads) t.join();
  for (int rank = 0; rank < size; ++rank) {
    ASSERT_EQ(errors[rank], "") << "rank " << rank;
    ASSERT_EQ(results[rank].size(), 16u);
    for (size_t i = 0; i < results[rank].size(); ++i) {
      // sum over ranks r of (100 r + i)
      float expected = static_cast<float>(100 * size * (size - 1) / 2 + size * i);
      EXPECT_EQ(results[rank][i], expected) << "rank " << rank << " element " << i;
    }
  }
}

TEST(TcpStoreTest, GlooRendezvousAndAllreduceWithTwoRanks) { rendezvousAndAllreduce(2); }

TEST(TcpStoreTest, GlooRendezvousAndAllreduceWithFourRanks) { rendezvousAndAllreduce(4); }

}  // namespace
}  // namespace ral::standalone
