// The collective kernels (kernels/collective/) over Gloo communicators: 2 and 4 ranks, each a
// thread of this process with its own communicator and Context, meeting through a TCP store on
// loopback. Every op and dtype against a float64 reference, over dense, padded and column-major
// operands, empty and one-element ones, scalars, in place; then the failures: ranks that
// disagree, a rank that never calls, a rendezvous nobody joins, bad arguments, no communicator.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "contexts/standalone/gloo/tcp_store.h"
#include "ral/communicator.h"
#include "ral/gloo_communicator.h"
#include "tests/support/gloo_ranks.h"
#include "tests/support/kernels_test_util.h"

namespace ral::testing {
namespace {

using std::chrono::milliseconds;

// One Context per rank, each with its rank's communicator.
struct Ranks {
  Comms comms;
  std::vector<std::unique_ptr<Context>> contexts;
  explicit Ranks(Comms c) : comms(std::move(c)) {
    for (auto& comm : comms) {
      contexts.push_back(std::make_unique<Context>());
      contexts.back()->setCommunicator(comm);
    }
  }
  int size() const { return static_cast<int>(comms.size()); }
};

double reduce(ReduceOp op, const std::vector<double>& v) {
  double acc = v[0];
  for (size_t k = 1; k < v.size(); ++k) {
    switch (op) {
      case ReduceOp::kProd:
        acc *= v[k];
        break;
      case ReduceOp::kMin:
        acc = std::min(acc, v[k]);
        break;
      case ReduceOp::kMax:
        acc = std::max(acc, v[k]);
        break;
      default:
        acc += v[k];
    }
  }
  return op == ReduceOp::kAvg ? acc / static_cast<double>(v.size()) : acc;
}

template <typename T>
void expectNear(T got, double want, const std::string& where) {
  const double g = toDouble(got);
  ASSERT_NEAR(g, want, tolerance<T>() * std::max(1.0, std::abs(want))) << where;
}

constexpr Layout kLayouts[] = {Layout::kDense, Layout::kPadded, Layout::kColumnMajor};

template <typename T>
void checkAllReduce(Ranks& ranks) {
  const int n = ranks.size();
  const bool integral = std::is_integral_v<T>;
  std::vector<ReduceOp> ops = {ReduceOp::kSum, ReduceOp::kProd, ReduceOp::kMin, ReduceOp::kMax};
  if (!integral) ops.push_back(ReduceOp::kAvg);
  for (ReduceOp op : ops) {
    for (Layout layout : kLayouts) {
      for (std::array<int64_t, 2> shape : {std::array<int64_t, 2>{3, 5}, {0, 4}, {1, 1}}) {
        const std::string where = std::string(reduceOpName(op)) + " " + layoutName(layout) + " " +
                                  std::to_string(shape[0]) + "x" + std::to_string(shape[1]) + " " +
                                  dtypeName(DTypeOf<T>::value).data();
        onRanks(n, [&](int r) {
          Buffer<T, 2> in(shape, layout), out(shape, Layout::kDense);
          for (int64_t i = 0; i < in.numel(); ++i)
            in.at(i) = fromDouble<T>(valueOf(r, i, integral));
          const Status s = callCpu(*ranks.contexts[r], "ral_all_reduce", in.view, out.view,
                                   static_cast<int32_t>(op));
          ASSERT_TRUE(s.ok()) << where << ": " << s;
          for (int64_t i = 0; i < out.numel(); ++i) {
            std::vector<double> v;
            for (int k = 0; k < n; ++k) v.push_back(valueOf(k, i, integral));
            expectNear(out.at(i), reduce(op, v), where + " element " + std::to_string(i));
          }
        });
      }
    }
  }
  // In place over a strided view, and a scalar.
  onRanks(n, [&](int r) {
    Buffer<T, 2> x({4, 3}, Layout::kPadded);
    for (int64_t i = 0; i < x.numel(); ++i) x.at(i) = fromDouble<T>(valueOf(r, i, integral));
    ASSERT_TRUE(callCpu(*ranks.contexts[r], "ral_all_reduce", x.view, x.view, int32_t{0}).ok());
    for (int64_t i = 0; i < x.numel(); ++i) {
      std::vector<double> v;
      for (int k = 0; k < n; ++k) v.push_back(valueOf(k, i, integral));
      expectNear(x.at(i), reduce(ReduceOp::kSum, v), "in place");
    }
    T scalar = fromDouble<T>(r + 1);
    MemRef<T, 0> s{&scalar, &scalar, 0};
    ASSERT_TRUE(callCpu(*ranks.contexts[r], "ral_all_reduce", s, s, int32_t{3}).ok());
    expectNear(scalar, n, "scalar max");
  });
}

template <typename T>
void checkMovingOps(Ranks& ranks) {
  const int n = ranks.size();
  const bool integral = std::is_integral_v<T>;
  for (Layout layout : kLayouts) {
    const std::string where =
        std::string(layoutName(layout)) + " " + dtypeName(DTypeOf<T>::value).data();
    onRanks(n, [&](int r) {
      Context& ctx = *ranks.contexts[r];
      // all_gather: block k of out is rank k's in.
      Buffer<T, 2> in({2, 3}, layout), gathered({2 * n, 3}, Layout::kColumnMajor);
      for (int64_t i = 0; i < in.numel(); ++i) in.at(i) = fromDouble<T>(valueOf(r, i, integral));
      Status s = callCpu(ctx, "ral_all_gather", in.view, gathered.view);
      ASSERT_TRUE(s.ok()) << where << ": " << s;
      for (int64_t i = 0; i < gathered.numel(); ++i)
        expectNear(gathered.at(i), valueOf(static_cast<int>(i / 6), i % 6, integral),
                   "all_gather " + where);
      // reduce_scatter: out is block r of the sum over ranks.
      Buffer<T, 2> whole({2 * n, 3}, layout), part({2, 3}, Layout::kPadded);
      for (int64_t i = 0; i < whole.numel(); ++i)
        whole.at(i) = fromDouble<T>(valueOf(r, i, integral));
      s = callCpu(ctx, "ral_reduce_scatter", whole.view, part.view, int32_t{0});
      ASSERT_TRUE(s.ok()) << where << ": " << s;
      for (int64_t i = 0; i < part.numel(); ++i) {
        std::vector<double> v;
        for (int k = 0; k < n; ++k) v.push_back(valueOf(k, r * 6 + i, integral));
        expectNear(part.at(i), reduce(ReduceOp::kSum, v), "reduce_scatter " + where);
      }
      // broadcast from every root.
      for (int root = 0; root < n; ++root) {
        Buffer<T, 2> src({4, 2}, layout), dst({4, 2}, Layout::kDense);
        for (int64_t i = 0; i < src.numel(); ++i)
          src.at(i) = fromDouble<T>(valueOf(r, i, integral));
        s = callCpu(ctx, "ral_broadcast", src.view, dst.view, int32_t{root});
        ASSERT_TRUE(s.ok()) << where << ": " << s;
        for (int64_t i = 0; i < dst.numel(); ++i)
          expectNear(dst.at(i), valueOf(root, i, integral), "broadcast " + where);
      }
      // all_to_all: block k of out is block r of rank k's in.
      Buffer<T, 2> send({2 * n, 3}, layout), recv({2 * n, 3}, Layout::kPadded);
      for (int64_t i = 0; i < send.numel(); ++i)
        send.at(i) = fromDouble<T>(valueOf(r, i, integral));
      s = callCpu(ctx, "ral_all_to_all", send.view, recv.view);
      ASSERT_TRUE(s.ok()) << where << ": " << s;
      for (int64_t i = 0; i < recv.numel(); ++i) {
        const int from = static_cast<int>(i / 6);
        expectNear(recv.at(i), valueOf(from, r * 6 + i % 6, integral), "all_to_all " + where);
      }
      // send/recv around the ring; even ranks send first, so nobody waits on a sender.
      Buffer<T, 2> mine({3, 2}, layout), theirs({3, 2}, Layout::kColumnMajor);
      for (int64_t i = 0; i < mine.numel(); ++i)
        mine.at(i) = fromDouble<T>(valueOf(r, i, integral));
      const int32_t right = (r + 1) % n, left = (r + n - 1) % n;
      auto sendRight = [&] { return callCpu(ctx, "ral_send", mine.view, right, int32_t{7}); };
      auto recvLeft = [&] { return callCpu(ctx, "ral_recv", theirs.view, left, int32_t{7}); };
      if (r % 2 == 0) {
        ASSERT_TRUE(sendRight().ok());
        ASSERT_TRUE(recvLeft().ok());
      } else {
        ASSERT_TRUE(recvLeft().ok());
        ASSERT_TRUE(sendRight().ok());
      }
      for (int64_t i = 0; i < theirs.numel(); ++i)
        expectNear(theirs.at(i), valueOf(left, i, integral), "send/recv " + where);
    });
  }
  // Empty operands move nothing and still agree.
  onRanks(n, [&](int r) {
    Buffer<T, 2> in({0, 3}, Layout::kDense), out({0, 3}, Layout::kDense);
    EXPECT_TRUE(callCpu(*ranks.contexts[r], "ral_all_gather", in.view, out.view).ok());
    EXPECT_TRUE(callCpu(*ranks.contexts[r], "ral_all_to_all", in.view, out.view).ok());
  });
}

// ral_comm_rank / ral_comm_size through ral_api_call: the result comes back in the slot after
// the arguments.
StatusOr<int64_t> commQuery(Context& context, const char* target) {
  auto exec = context.acquireExecution();
  void* abi = exec->abi();
  int64_t result = -1;
  void* slots[] = {&abi, &result};
  const std::string name = std::string(target) + "___cpu___pvoid___i64";
  ral_api_call(abi, name.c_str(), slots);
  if (!exec->status().ok()) return exec->status();
  return result;
}

class CollectiveTest : public ::testing::TestWithParam<int> {};

TEST_P(CollectiveTest, RankAndSize) {
  Ranks ranks(connect(GetParam()));
  ASSERT_EQ(ranks.size(), GetParam());
  for (int r = 0; r < ranks.size(); ++r) {
    EXPECT_EQ(commQuery(*ranks.contexts[r], "ral_comm_rank").value(), r);
    EXPECT_EQ(commQuery(*ranks.contexts[r], "ral_comm_size").value(), GetParam());
  }
}

TEST_P(CollectiveTest, AllReduceEveryDTypeAndOp) {
  Ranks ranks(connect(GetParam()));
  ASSERT_EQ(ranks.size(), GetParam());
  checkAllReduce<float>(ranks);
  checkAllReduce<double>(ranks);
  checkAllReduce<float16>(ranks);
  checkAllReduce<bfloat16>(ranks);
  checkAllReduce<int32_t>(ranks);
  checkAllReduce<int64_t>(ranks);
}

TEST_P(CollectiveTest, GatherScatterBroadcastAllToAllSendRecv) {
  Ranks ranks(connect(GetParam()));
  ASSERT_EQ(ranks.size(), GetParam());
  checkMovingOps<float>(ranks);
  checkMovingOps<double>(ranks);
  checkMovingOps<float16>(ranks);
  checkMovingOps<bfloat16>(ranks);
  checkMovingOps<int32_t>(ranks);
  checkMovingOps<int64_t>(ranks);
}

INSTANTIATE_TEST_SUITE_P(Ranks, CollectiveTest, ::testing::Values(2, 4),
                         [](const auto& info) { return std::to_string(info.param) + "ranks"; });

TEST(CollectiveErrors, RanksThatDisagreeFailEveryRankNamingBoth) {
  // Different counts (a different batch on one rank), then different dtypes with equal bytes.
  for (int variant = 0; variant < 2; ++variant) {
    Ranks ranks(connect(3));
    ASSERT_EQ(ranks.size(), 3);
    std::vector<Status> got(3);
    onRanks(3, [&](int r) {
      if (variant == 0) {
        Buffer<float, 2> x({r == 1 ? 3 : 2, 4}, Layout::kDense);
        got[r] = callCpu(*ranks.contexts[r], "ral_all_reduce", x.view, x.view, int32_t{0});
      } else if (r == 2) {
        Buffer<int32_t, 1> x({8}, Layout::kDense);
        got[r] = callCpu(*ranks.contexts[r], "ral_all_reduce", x.view, x.view, int32_t{0});
      } else {
        Buffer<float, 1> x({8}, Layout::kDense);
        got[r] = callCpu(*ranks.contexts[r], "ral_all_reduce", x.view, x.view, int32_t{0});
      }
    });
    int named = 0;
    for (int r = 0; r < 3; ++r) {
      ASSERT_FALSE(got[r].ok()) << "rank " << r;
      const std::string m(got[r].message());
      if (m.find("disagree") != std::string::npos) {
        ++named;
        EXPECT_NE(m.find(variant == 0 ? "all_reduce of 12 f32" : "all_reduce of 8 i32"),
                  std::string::npos)
            << m;
      }
    }
    EXPECT_GE(named, 1);
    // Broken from now on: the next call fails at once with the first error.
    Buffer<float, 1> y({2}, Layout::kDense);
    const Status again = callCpu(*ranks.contexts[0], "ral_all_reduce", y.view, y.view, int32_t{0});
    EXPECT_FALSE(again.ok());
    EXPECT_EQ(again.message(), got[0].message().substr(got[0].message().find("gloo")));
  }
}

// Ranks that agreed go on to move data towards ranks that stopped and closed their connections:
// Gloo writes with writev, whose SIGPIPE would end this process. Large calls, so that writes
// meet the closed connections.
TEST(CollectiveErrors, WritesToRanksThatStoppedAreErrorsNotSignals) {
  for (int round = 0; round < 5; ++round) {
    Ranks ranks(connect(3));
    ASSERT_EQ(ranks.size(), 3);
    std::vector<Status> got(3);
    onRanks(3, [&](int r) {
      Buffer<float, 1> x({r == 1 ? (1 << 20) + 1 : (1 << 20)}, Layout::kDense);
      got[r] = callCpu(*ranks.contexts[r], "ral_all_reduce", x.view, x.view, int32_t{0});
    });
    for (int r = 0; r < 3; ++r) EXPECT_FALSE(got[r].ok()) << "round " << round << " rank " << r;
  }
}

TEST(CollectiveErrors, ARankThatNeverCallsIsATimeoutNamingTheVariable) {
  Comms comms = connect(2, milliseconds(500));
  ASSERT_EQ(comms.size(), 2u);
  Context ctx;
  ctx.setCommunicator(comms[0]);
  Buffer<float, 1> x({4}, Layout::kDense);
  // Returns (CTest's timeout would catch a hang) with the timeout named.
  const Status s = callCpu(ctx, "ral_all_reduce", x.view, x.view, int32_t{0});
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("RAL_COLLECTIVE_TIMEOUT"), std::string_view::npos) << s;
}

TEST(CollectiveErrors, ARendezvousNobodyJoinsTimesOut) {
  auto server = standalone::TcpStoreServer::start("127.0.0.1", 0);
  ASSERT_TRUE(server.ok()) << server.status();
  auto c = createGlooCommunicator(optionsFor(0, 2, (*server)->port(), milliseconds(300)));
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("rendezvous of rank 0 of 2"), std::string_view::npos)
      << c.status();
}

TEST(CollectiveErrors, BadArgumentsAreErrorsAndTheCommunicatorStaysUsable) {
  Ranks ranks(connect(2));
  ASSERT_EQ(ranks.size(), 2);
  onRanks(2, [&](int r) {
    Context& ctx = *ranks.contexts[r];
    Buffer<float, 2> a({2, 3}, Layout::kDense), b({3, 3}, Layout::kDense);
    Buffer<int32_t, 1> i({4}, Layout::kDense);
    auto expectError = [](const Status& s, const char* what) {
      EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s;
      EXPECT_NE(s.message().find(what), std::string_view::npos) << s;
    };
    expectError(callCpu(ctx, "ral_all_reduce", a.view, b.view, int32_t{0}), "differ in shape");
    expectError(callCpu(ctx, "ral_all_reduce", a.view, a.view, int32_t{9}), "reduction 9");
    expectError(callCpu(ctx, "ral_all_reduce", i.view, i.view, int32_t{4}), "avg");
    expectError(callCpu(ctx, "ral_all_gather", a.view, b.view), "world size 2");
    expectError(callCpu(ctx, "ral_reduce_scatter", b.view, a.view, int32_t{0}), "world size 2");
    expectError(callCpu(ctx, "ral_all_to_all", b.view, b.view), "multiple of the world size");
    expectError(callCpu(ctx, "ral_broadcast", a.view, a.view, int32_t{5}), "root 5");
    expectError(callCpu(ctx, "ral_send", a.view, int32_t{r}, int32_t{0}), "not another rank");
    // An output overlapping its input without being the same view.
    MemRef<float, 2> shifted = a.view;
    shifted.offset = 1;
    shifted.sizes[0] = 1;
    MemRef<float, 2> head = a.view;
    head.sizes[0] = 1;
    expectError(callCpu(ctx, "ral_all_reduce", head, shifted, int32_t{0}), "overlap");
    // Every check above failed before any message: the ranks still agree.
    Buffer<float, 1> x({3}, Layout::kDense);
    for (int64_t k = 0; k < 3; ++k) x.at(k) = static_cast<float>(r + k);
    ASSERT_TRUE(callCpu(ctx, "ral_all_reduce", x.view, x.view, int32_t{0}).ok());
    for (int64_t k = 0; k < 3; ++k) EXPECT_EQ(x.at(k), 1.0f + 2 * k);
  });
}

TEST(CollectiveErrors, NoCommunicatorNamesHowToGetOne) {
  Context ctx;
  Buffer<float, 1> x({2}, Layout::kDense);
  const Status s = callCpu(ctx, "ral_all_reduce", x.view, x.view, int32_t{0});
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("RAL_WORLD_SIZE"), std::string_view::npos) << s;
  // A factory's failure is returned, and the next collective asks the factory again.
  int made = 0;
  ctx.setCommunicatorFactory([&]() -> StatusOr<std::shared_ptr<Communicator>> {
    ++made;
    return unavailable("no store");
  });
  EXPECT_FALSE(callCpu(ctx, "ral_all_reduce", x.view, x.view, int32_t{0}).ok());
  EXPECT_FALSE(commQuery(ctx, "ral_comm_size").ok());
  EXPECT_EQ(made, 2);
}

TEST(CollectiveTest, OneRankCopies) {
  Context ctx;
  ctx.setCommunicator(singleRankCommunicator());
  Buffer<double, 2> in({2, 3}, Layout::kPadded), out({2, 3}, Layout::kColumnMajor);
  for (int64_t i = 0; i < in.numel(); ++i) in.at(i) = 0.25 * i;
  ASSERT_TRUE(callCpu(ctx, "ral_all_reduce", in.view, out.view, int32_t{4}).ok());
  for (int64_t i = 0; i < out.numel(); ++i) EXPECT_EQ(out.at(i), 0.25 * i);
  ASSERT_TRUE(callCpu(ctx, "ral_all_gather", in.view, out.view).ok());
  EXPECT_FALSE(callCpu(ctx, "ral_send", in.view, int32_t{0}, int32_t{0}).ok());
}

// Sets environment variables for one test and restores them.
class ScopedEnv {
 public:
  ScopedEnv(std::initializer_list<std::pair<const char*, const char*>> vars) {
    for (const char* name : kNames) {
      const char* v = std::getenv(name);
      saved_.emplace_back(name, v ? std::optional<std::string>(v) : std::nullopt);
      unsetenv(name);
    }
    for (auto& [k, v] : vars) setenv(k, v, 1);
  }
  ~ScopedEnv() {
    for (auto& [k, v] : saved_) {
      if (v) {
        setenv(k, v->c_str(), 1);
      } else {
        unsetenv(k);
      }
    }
  }

 private:
  static constexpr const char* kNames[] = {"RAL_RANK",           "RANK",
                                           "RAL_WORLD_SIZE",     "WORLD_SIZE",
                                           "RAL_MASTER_ADDR",    "MASTER_ADDR",
                                           "RAL_MASTER_PORT",    "MASTER_PORT",
                                           "RAL_STORE_DIR",      "RAL_COLLECTIVE_TIMEOUT",
                                           "GLOO_SOCKET_IFNAME", "TORCHELASTIC_RUN_ID"};
  std::vector<std::pair<const char*, std::optional<std::string>>> saved_;
};

TEST(CollectiveEnvironment, TorchrunAndRalVariables) {
  {
    ScopedEnv env({{"RANK", "2"},
                   {"WORLD_SIZE", "4"},
                   {"MASTER_ADDR", "10.0.0.7"},
                   {"MASTER_PORT", "1234"},
                   {"TORCHELASTIC_RUN_ID", "job7"}});
    auto o = glooOptionsFromEnvironment();
    ASSERT_TRUE(o.ok()) << o.status();
    EXPECT_EQ(o->rank, 2);
    EXPECT_EQ(o->size, 4);
    EXPECT_EQ(o->store_host, "10.0.0.7");
    EXPECT_EQ(o->store_port, 1234);
    EXPECT_FALSE(o->store_server);
    EXPECT_EQ(o->prefix, "ral/job7");
  }
  {
    // RAL_ names win over torchrun's.
    ScopedEnv env({{"RAL_RANK", "0"},
                   {"RANK", "3"},
                   {"RAL_WORLD_SIZE", "2"},
                   {"WORLD_SIZE", "8"},
                   {"RAL_COLLECTIVE_TIMEOUT", "7"},
                   {"RAL_STORE_DIR", "/tmp"}});
    auto o = glooOptionsFromEnvironment();
    ASSERT_TRUE(o.ok()) << o.status();
    EXPECT_EQ(o->rank, 0);
    EXPECT_EQ(o->size, 2);
    EXPECT_TRUE(o->store_server);
    EXPECT_EQ(o->store_dir, "/tmp");
    EXPECT_EQ(o->timeout, std::chrono::seconds(7));
  }
  for (auto [name, value, what] : std::vector<std::tuple<const char*, const char*, const char*>>{
           {"RAL_RANK", "2", "RAL_RANK='2'"},
           {"RAL_RANK", "x", "RAL_RANK='x'"},
           {"RAL_MASTER_PORT", "70000", "RAL_MASTER_PORT"},
           {"RAL_COLLECTIVE_TIMEOUT", "0", "RAL_COLLECTIVE_TIMEOUT"}}) {
    ScopedEnv env({{"RAL_WORLD_SIZE", "2"}, {"RAL_RANK", "1"}, {name, value}});
    auto o = glooOptionsFromEnvironment();
    ASSERT_FALSE(o.ok()) << name;
    EXPECT_NE(o.status().message().find(what), std::string_view::npos) << o.status();
  }
  {
    ScopedEnv env({});
    auto o = glooOptionsFromEnvironment();
    EXPECT_EQ(o.status().code(), StatusCode::kNotFound);
    ScopedEnv one({{"RAL_WORLD_SIZE", "1"}});
    auto c = communicatorFromEnvironment();
    ASSERT_TRUE(c.ok()) << c.status();
    EXPECT_EQ((*c)->size(), 1);
  }
}

}  // namespace
}  // namespace ral::testing
