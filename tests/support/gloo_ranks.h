// Ranks of a job as threads of one test process: Gloo communicators meeting through a TCP store
// on a free loopback port, and the values each rank contributes (tests of the collective kernels
// on every device).
#ifndef RAL_TESTS_SUPPORT_GLOO_RANKS_H_
#define RAL_TESTS_SUPPORT_GLOO_RANKS_H_

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <thread>
#include <type_traits>
#include <vector>

#include "contexts/standalone/gloo/tcp_store.h"
#include "ral/communicator.h"
#include "ral/gloo_communicator.h"
#include "ral/half.h"

namespace ral::testing {

using Comms = std::vector<std::shared_ptr<Communicator>>;

// Runs body(rank) on `n` threads at once and waits for them.
inline void onRanks(int n, const std::function<void(int)>& body) {
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) threads.emplace_back(body, r);
  for (auto& t : threads) t.join();
}

inline GlooOptions optionsFor(int rank, int n, int port, std::chrono::milliseconds timeout) {
  GlooOptions o;
  o.rank = rank;
  o.size = n;
  o.store_host = "127.0.0.1";
  o.store_port = port;
  o.timeout = timeout;
  return o;
}

// `n` connected communicators (rank order), through a store on a free loopback port.
inline Comms connect(int n, std::chrono::milliseconds timeout = std::chrono::milliseconds(20000)) {
  auto server = standalone::TcpStoreServer::start("127.0.0.1", 0);
  EXPECT_TRUE(server.ok()) << server.status();
  if (!server.ok()) return {};
  Comms comms(n);
  std::vector<Status> errors(n);
  onRanks(n, [&](int r) {
    auto c = createGlooCommunicator(optionsFor(r, n, (*server)->port(), timeout));
    if (c.ok()) comms[r] = *c;
    errors[r] = c.status();
  });
  for (int r = 0; r < n; ++r) EXPECT_TRUE(errors[r].ok()) << "rank " << r << ": " << errors[r];
  return comms;
}

// Rank r's element i: small multiples of 1/2 (integers for integer dtypes), exact in every
// dtype, different on every rank.
inline double valueOf(int rank, int64_t i, bool integral) {
  const double v = static_cast<double>((i * 7 + rank * 3 + 1) % 11 - 5);
  return integral ? v : v * 0.5;
}

// How far a reduction of such values may be from float64 in dtype T.
template <typename T>
double tolerance() {
  if constexpr (std::is_same_v<T, float16>) return 2e-3;
  if constexpr (std::is_same_v<T, bfloat16>) return 2e-2;
  if constexpr (std::is_same_v<T, float>) return 1e-6;
  return 0;
}

}  // namespace ral::testing

#endif  // RAL_TESTS_SUPPORT_GLOO_RANKS_H_
