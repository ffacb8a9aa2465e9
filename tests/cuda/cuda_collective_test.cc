// The collective kernels on the cuda device without a GPU: ranks are threads of this process,
// each with its own Context, CUDA driver (the simulated one, RAL_CUDA_DRIVER_PATH) and Gloo
// communicator, meeting through a TCP store on loopback. Each suite runs in its own environment
// (CMakeLists.txt):
//  - NcclSimTest: NCCL is the simulated one (RAL_NCCL_PATH=libral_sim_nccl.so). Every op and
//    dtype against float64 on 2 and 4 ranks, over dense, padded, column-major, in-place, empty
//    and host-memory operands (dense ones only in builds without the GPU library), with the NCCL
//    calls counted (so the data went through NCCL and not through host memory); the same with
//    RAL_CUDA_COLLECTIVES=host; ranks that disagree; a rank late beyond the timeout; a new
//    Context after a broken communicator.
//  - NcclMissingTest: no NCCL. auto stages through host memory; nccl is an error saying why.
//  - NcclSystemTest: the machine's own NCCL, which finds no GPU: a clean error on every rank.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "ral/api_call.h"
#include "ral/context.h"
#include "tests/support/gloo_ranks.h"
#include "tests/support/kernels_test_util.h"

namespace ral::testing {
namespace {

using std::chrono::milliseconds;

// Every suite runs on the simulated device, whatever this machine has (set before any Context
// loads the driver; the simulated NCCL finds the driver through it too), as an sm_86 GPU: no
// cubin of the GPU library matches, so its PTX loads and strided copies run its host stand-ins.
const bool kSimulated = [] {
  return setenv("RAL_CUDA_DRIVER_PATH", RAL_SIM_CUDA_LIBRARY, 1) == 0 &&
         setenv("RAL_SIM_CUDA_COMPUTE_CAPABILITY", "86", 1) == 0;
}();

// A strided layout where this build has the GPU library's strided copies (built with MLIR), dense
// memory otherwise.
#ifdef RAL_TEST_STRIDED_CUDA_OPERANDS
constexpr bool kStrided = true;
#else
constexpr bool kStrided = false;
#endif
constexpr Layout S(Layout layout) { return kStrided ? layout : Layout::kDense; }

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

// NCCL calls the simulated NCCL queued in this process so far (0 when it is not loaded).
uint64_t simNcclCalls() {
  const char* path = std::getenv("RAL_NCCL_PATH");
  void* handle = path != nullptr ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : nullptr;
  if (handle == nullptr) return 0;
  auto fn = reinterpret_cast<uint64_t (*)()>(dlsym(handle, "ral_sim_nccl_calls"));
  const uint64_t n = fn != nullptr ? fn() : 0;
  dlclose(handle);
  return n;
}

// A Buffer's storage mirrored in memory of the cuda device (or pinned host memory), with the
// same view over it.
template <typename T, int N>
struct DeviceBuffer {
  Buffer<T, N> host;
  Driver* driver;
  void* memory = nullptr;
  MemRef<T, N> view{};

  DeviceBuffer(Driver* d, const std::array<int64_t, N>& sizes, Layout layout,
               MemoryKind kind = MemoryKind::kDevice)
      : host(sizes, layout), driver(d) {
    auto p = driver->allocate(bytes(), 64, kind);
    EXPECT_TRUE(p.ok()) << p.status();
    memory = p.ok() ? *p : nullptr;
    view = host.view;
    view.allocated = view.aligned = static_cast<T*>(memory);
  }
  ~DeviceBuffer() {
    if (memory != nullptr) (void)driver->deallocate(memory);
  }
  size_t bytes() const { return host.storage.size() * sizeof(T); }
  void upload() {
    ASSERT_TRUE(driver->copy(memory, host.storage.data(), bytes(), CopyKind::kHostToDevice).ok());
    ASSERT_TRUE(driver->synchronize().ok());
  }
  void download() {
    ASSERT_TRUE(driver->copy(host.storage.data(), memory, bytes(), CopyKind::kDeviceToHost).ok());
    ASSERT_TRUE(driver->synchronize().ok());
  }
  T& at(int64_t i) { return host.at(i); }
};

template <typename... A>
Status callCuda(Context& context, const std::string& target, A... args) {
  auto exec = context.acquireExecution();
  const std::string name = apiNameFor<A...>(target, "cuda");
  callApi(exec->abi(), name.c_str(), args...);
  return exec->status();
}

double reduced(ReduceOp op, int n, int64_t i, bool integral) {
  double acc = valueOf(0, i, integral);
  for (int k = 1; k < n; ++k) {
    const double v = valueOf(k, i, integral);
    acc = op == ReduceOp::kProd  ? acc * v
          : op == ReduceOp::kMin ? std::min(acc, v)
          : op == ReduceOp::kMax ? std::max(acc, v)
                                 : acc + v;
  }
  return op == ReduceOp::kAvg ? acc / n : acc;
}

// Ranks with a Context each: the communicator given, the cuda driver from the environment.
struct CudaRanks {
  Comms comms;
  std::vector<std::unique_ptr<Context>> contexts;
  std::vector<Driver*> gpus;
  std::string unavailable;

  explicit CudaRanks(Comms c) : comms(std::move(c)) {
    if (!kSimulated) unavailable = "cannot point RAL_CUDA_DRIVER_PATH at the simulated driver";
    renew();
  }
  // Fresh Contexts over the same communicators (a new NCCL communicator on first use).
  void renew() {
    contexts.clear();
    gpus.clear();
    for (auto& comm : comms) {
      contexts.push_back(std::make_unique<Context>());
      contexts.back()->setCommunicator(comm);
      auto d = contexts.back()->driver(DeviceKind::kCuda);
      if (!d.ok()) unavailable = d.status().toString();
      gpus.push_back(d.ok() ? *d : nullptr);
    }
  }
  int size() const { return static_cast<int>(comms.size()); }
};

#define RAL_SKIP_WITHOUT_CUDA(ranks)                                       \
  do {                                                                     \
    if (!(ranks).unavailable.empty()) GTEST_SKIP() << (ranks).unavailable; \
  } while (false)

template <typename T>
void checkAllReduce(CudaRanks& ranks, ReduceOp op, Layout layout, std::array<int64_t, 2> shape,
                    bool in_place) {
  const int n = ranks.size();
  const bool integral = std::is_integral_v<T>;
  SCOPED_TRACE(::testing::Message()
               << reduceOpName(op) << " " << layoutName(layout) << " " << shape[0] << "x"
               << shape[1] << " " << dtypeName(DTypeOf<T>::value) << (in_place ? " in place" : ""));
  onRanks(n, [&](int r) {
    DeviceBuffer<T, 2> in(ranks.gpus[r], shape, layout), out(ranks.gpus[r], shape, Layout::kDense);
    for (int64_t i = 0; i < in.host.numel(); ++i) in.at(i) = fromDouble<T>(valueOf(r, i, integral));
    in.upload();
    DeviceBuffer<T, 2>& result = in_place ? in : out;
    const Status s = callCuda(*ranks.contexts[r], "ral_all_reduce", in.view, result.view,
                              static_cast<int32_t>(op));
    ASSERT_TRUE(s.ok()) << "rank " << r << ": " << s;
    result.download();
    for (int64_t i = 0; i < result.host.numel(); ++i) {
      const double want = reduced(op, n, i, integral);
      ASSERT_NEAR(toDouble(result.at(i)), want, tolerance<T>() * std::max(1.0, std::abs(want)))
          << "rank " << r << " element " << i;
    }
  });
}

// all_gather, reduce_scatter, broadcast, all_to_all and a ring of send/recv on f32, each over
// a strided operand.
void checkTheOthers(CudaRanks& ranks) {
  const int n = ranks.size();
  onRanks(n, [&](int r) {
    Context& ctx = *ranks.contexts[r];
    Driver* gpu = ranks.gpus[r];
    {  // all_gather: padded in, column-major out
      DeviceBuffer<float, 2> in(gpu, {2, 3}, S(Layout::kPadded)),
          out(gpu, {2 * n, 3}, S(Layout::kColumnMajor));
      for (int64_t i = 0; i < 6; ++i) in.at(i) = static_cast<float>(valueOf(r, i, false));
      in.upload();
      ASSERT_TRUE(callCuda(ctx, "ral_all_gather", in.view, out.view).ok());
      out.download();
      for (int k = 0; k < n; ++k)
        for (int64_t i = 0; i < 6; ++i)
          ASSERT_EQ(out.at(k * 6 + i), static_cast<float>(valueOf(k, i, false))) << r;
    }
    {  // reduce_scatter (max) of i64
      DeviceBuffer<int64_t, 2> in(gpu, {3 * n, 2}, Layout::kDense),
          out(gpu, {3, 2}, S(Layout::kPadded));
      for (int64_t i = 0; i < in.host.numel(); ++i)
        in.at(i) = static_cast<int64_t>(valueOf(r, i, true));
      in.upload();
      ASSERT_TRUE(callCuda(ctx, "ral_reduce_scatter", in.view, out.view,
                           static_cast<int32_t>(ReduceOp::kMax))
                      .ok());
      out.download();
      for (int64_t i = 0; i < 6; ++i)
        ASSERT_EQ(out.at(i), static_cast<int64_t>(reduced(ReduceOp::kMax, n, r * 6 + i, true)));
    }
    {  // broadcast from the last rank, column-major
      DeviceBuffer<double, 2> in(gpu, {3, 4}, S(Layout::kColumnMajor)),
          out(gpu, {3, 4}, Layout::kDense);
      for (int64_t i = 0; i < 12; ++i) in.at(i) = valueOf(r, i, false);
      in.upload();
      ASSERT_TRUE(callCuda(ctx, "ral_broadcast", in.view, out.view, int32_t{n - 1}).ok());
      out.download();
      for (int64_t i = 0; i < 12; ++i) ASSERT_EQ(out.at(i), valueOf(n - 1, i, false));
    }
    {  // all_to_all: block j of out is block r of rank j's in
      DeviceBuffer<float, 2> in(gpu, {2 * n, 2}, S(Layout::kPadded)),
          out(gpu, {2 * n, 2}, Layout::kDense);
      for (int64_t i = 0; i < in.host.numel(); ++i) in.at(i) = static_cast<float>(100 * r + i);
      in.upload();
      ASSERT_TRUE(callCuda(ctx, "ral_all_to_all", in.view, out.view).ok());
      out.download();
      for (int j = 0; j < n; ++j)
        for (int64_t e = 0; e < 4; ++e)
          ASSERT_EQ(out.at(j * 4 + e), static_cast<float>(100 * j + r * 4 + e));
    }
    {  // a ring: even ranks send first, odd ranks receive first
      DeviceBuffer<int32_t, 1> mine(gpu, {5}, S(Layout::kPadded)), got(gpu, {5}, Layout::kDense);
      for (int64_t i = 0; i < 5; ++i) mine.at(i) = 10 * r + static_cast<int32_t>(i);
      mine.upload();
      const int32_t next = (r + 1) % n, prev = (r + n - 1) % n, tag = 7;
      for (int step = 0; step < 2; ++step) {
        const bool send_now = (r % 2 == 0) == (step == 0);
        const Status s = send_now ? callCuda(ctx, "ral_send", mine.view, next, tag)
                                  : callCuda(ctx, "ral_recv", got.view, prev, tag);
        ASSERT_TRUE(s.ok()) << "rank " << r << ": " << s;
      }
      got.download();
      for (int64_t i = 0; i < 5; ++i) ASSERT_EQ(got.at(i), 10 * prev + static_cast<int32_t>(i));
    }
  });
}

void checkEverything(CudaRanks& ranks) {
  for (ReduceOp op :
       {ReduceOp::kSum, ReduceOp::kProd, ReduceOp::kMin, ReduceOp::kMax, ReduceOp::kAvg})
    for (Layout layout : {Layout::kDense, S(Layout::kPadded), S(Layout::kColumnMajor)})
      checkAllReduce<float>(ranks, op, layout, {3, 5}, false);
  checkAllReduce<float>(ranks, ReduceOp::kSum, S(Layout::kPadded), {2, 3}, true);
  checkAllReduce<float>(ranks, ReduceOp::kSum, Layout::kDense, {0, 4}, false);
  checkAllReduce<float>(ranks, ReduceOp::kMax, Layout::kDense, {1, 1}, false);
  checkAllReduce<double>(ranks, ReduceOp::kAvg, S(Layout::kPadded), {2, 3}, false);
  checkAllReduce<float16>(ranks, ReduceOp::kSum, Layout::kDense, {4, 3}, false);
  checkAllReduce<bfloat16>(ranks, ReduceOp::kMin, S(Layout::kColumnMajor), {4, 3}, false);
  checkAllReduce<int32_t>(ranks, ReduceOp::kProd, Layout::kDense, {2, 2}, true);
  checkAllReduce<int64_t>(ranks, ReduceOp::kSum, S(Layout::kPadded), {3, 2}, false);
  checkTheOthers(ranks);
}

class NcclSimTest : public ::testing::TestWithParam<int> {
 protected:
  void TearDown() override { unsetenv("RAL_CUDA_COLLECTIVES"); }
};

TEST_P(NcclSimTest, EveryCollectiveAndDtypeGoesThroughNccl) {
  CudaRanks ranks(connect(GetParam()));
  RAL_SKIP_WITHOUT_CUDA(ranks);
  const uint64_t before = simNcclCalls();
  checkEverything(ranks);
  // Every non-empty call went to NCCL (the all_to_all is one group).
  EXPECT_GE(simNcclCalls() - before, static_cast<uint64_t>(GetParam()) * 20);
}

TEST_P(NcclSimTest, HostStagingGivesTheSameResults) {
  setenv("RAL_CUDA_COLLECTIVES", "host", 1);
  CudaRanks ranks(connect(GetParam()));
  RAL_SKIP_WITHOUT_CUDA(ranks);
  const uint64_t before = simNcclCalls();
  checkEverything(ranks);
  EXPECT_EQ(simNcclCalls(), before);
}

INSTANTIATE_TEST_SUITE_P(Ranks, NcclSimTest, ::testing::Values(2, 4));

// An operand in pinned host memory goes through a device copy; NCCL sees device memory only.
TEST(NcclSimOperandTest, PinnedHostOperandsAreCopiedForNccl) {
  if (!kStrided) GTEST_SKIP() << "the device copy is the GPU library's (built with MLIR)";
  CudaRanks ranks(connect(2));
  RAL_SKIP_WITHOUT_CUDA(ranks);
  onRanks(2, [&](int r) {
    DeviceBuffer<float, 1> in(ranks.gpus[r], {6}, Layout::kDense, MemoryKind::kHostVisible);
    DeviceBuffer<float, 1> out(ranks.gpus[r], {6}, Layout::kDense);
    for (int64_t i = 0; i < 6; ++i) in.at(i) = static_cast<float>(valueOf(r, i, false));
    in.upload();
    ASSERT_TRUE(callCuda(*ranks.contexts[r], "ral_all_reduce", in.view, out.view, int32_t{0}).ok());
    out.download();
    for (int64_t i = 0; i < 6; ++i)
      ASSERT_EQ(out.at(i), static_cast<float>(reduced(ReduceOp::kSum, 2, i, false)));
  });
}

// Ranks calling with different counts, or a send and a receive with different tags, fail on
// every rank naming both calls, before NCCL sees anything; the communicator stays usable.
TEST(NcclSimFailureTest, RanksThatDisagreeFailNamingBothAndGoOn) {
  CudaRanks ranks(connect(2));
  RAL_SKIP_WITHOUT_CUDA(ranks);
  const uint64_t before = simNcclCalls();
  onRanks(2, [&](int r) {
    Context& ctx = *ranks.contexts[r];
    DeviceBuffer<float, 1> a(ranks.gpus[r], {r == 0 ? 6 : 5}, Layout::kDense);
    a.upload();
    Status s = callCuda(ctx, "ral_all_reduce", a.view, a.view, int32_t{0});
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s;
    EXPECT_TRUE(contains(s.message(), "the ranks disagree")) << s;
    EXPECT_TRUE(contains(s.message(), "rank 0 calls all_reduce of 6 f32 (sum)")) << s;
    EXPECT_TRUE(contains(s.message(), "rank 1 calls all_reduce of 5 f32 (sum)")) << s;

    DeviceBuffer<float, 1> b(ranks.gpus[r], {4}, Layout::kDense);
    s = r == 0 ? callCuda(ctx, "ral_send", b.view, int32_t{1}, int32_t{3})
               : callCuda(ctx, "ral_recv", b.view, int32_t{0}, int32_t{4});
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s;
    EXPECT_TRUE(contains(s.message(), "(tag 3)") && contains(s.message(), "(tag 4)")) << s;

    DeviceBuffer<float, 1> c(ranks.gpus[r], {4}, Layout::kDense);
    for (int64_t i = 0; i < 4; ++i) c.at(i) = 1.0f + static_cast<float>(r);
    c.upload();
    s = callCuda(ctx, "ral_all_reduce", c.view, c.view, int32_t{0});
    ASSERT_TRUE(s.ok()) << s;
    c.download();
    for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(c.at(i), 3.0f);
  });
  EXPECT_EQ(simNcclCalls() - before, 2u);  // the last all_reduce, on each rank
}

// Rank 1's stream is held behind a semaphore while rank 0's all_reduce is in NCCL: rank 0 gives
// up after the communicator's timeout, aborting NCCL. Rank 1, released later, finds its peer
// gone. Both NCCL communicators refuse further calls at once; new Contexts make new ones that
// work.
TEST(NcclSimFailureTest, ARankLateBeyondTheTimeoutFailsEveryRankAndANewContextWorks) {
  CudaRanks ranks(connect(2, milliseconds(1500)));
  RAL_SKIP_WITHOUT_CUDA(ranks);
  auto gate = ranks.gpus[1]->createSemaphore(0);
  ASSERT_TRUE(gate.ok()) << gate.status();
  // The first collective makes the NCCL communicators.
  onRanks(2, [&](int r) {
    DeviceBuffer<float, 1> x(ranks.gpus[r], {3}, Layout::kDense);
    x.upload();
    ASSERT_TRUE(callCuda(*ranks.contexts[r], "ral_all_reduce", x.view, x.view, int32_t{0}).ok());
  });
  std::vector<Status> first(2), later(2);
  onRanks(2, [&](int r) {
    DeviceBuffer<float, 1> x(ranks.gpus[r], {3}, Layout::kDense);
    x.upload();
    if (r == 1) {
      ASSERT_TRUE(ranks.gpus[1]->queueWait(nullptr, gate->get(), 1).ok());
    }
    const auto start = std::chrono::steady_clock::now();
    if (r == 1) {
      // Released once rank 0 has given up.
      std::thread release([&] {
        std::this_thread::sleep_for(milliseconds(2500));
        (void)(*gate)->signal(1);
      });
      first[r] = callCuda(*ranks.contexts[r], "ral_all_reduce", x.view, x.view, int32_t{0});
      release.join();
    } else {
      first[r] = callCuda(*ranks.contexts[r], "ral_all_reduce", x.view, x.view, int32_t{0});
      EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(2400));
    }
    later[r] = callCuda(*ranks.contexts[r], "ral_all_reduce", x.view, x.view, int32_t{0});
  });
  EXPECT_EQ(first[0].code(), StatusCode::kDeadlineExceeded) << first[0];
  EXPECT_TRUE(contains(first[0].message(), "RAL_COLLECTIVE_TIMEOUT")) << first[0];
  EXPECT_FALSE(first[1].ok());
  for (int r = 0; r < 2; ++r) {
    EXPECT_FALSE(later[r].ok());
    EXPECT_TRUE(contains(later[r].message(), "unusable after an earlier failure")) << later[r];
  }
  ranks.renew();
  checkAllReduce<float>(ranks, ReduceOp::kSum, S(Layout::kPadded), {2, 3}, false);
}

TEST(NcclMissingTest, AutoStagesThroughHostMemoryAndNcclSaysWhy) {
  CudaRanks ranks(connect(2));
  RAL_SKIP_WITHOUT_CUDA(ranks);
  checkAllReduce<float>(ranks, ReduceOp::kAvg, S(Layout::kPadded), {3, 4}, false);
  setenv("RAL_CUDA_COLLECTIVES", "nccl", 1);
  ranks.renew();
  onRanks(2, [&](int r) {
    DeviceBuffer<float, 1> x(ranks.gpus[r], {3}, Layout::kDense);
    const Status s = callCuda(*ranks.contexts[r], "ral_all_reduce", x.view, x.view, int32_t{0});
    EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s;
    EXPECT_TRUE(contains(s.message(), "cannot load NCCL")) << s;
    EXPECT_TRUE(contains(s.message(), "RAL_NCCL_PATH")) << s;
  });
  setenv("RAL_CUDA_COLLECTIVES", "sideways", 1);
  ranks.renew();
  onRanks(2, [&](int r) {
    DeviceBuffer<float, 1> x(ranks.gpus[r], {3}, Layout::kDense);
    const Status s = callCuda(*ranks.contexts[r], "ral_all_reduce", x.view, x.view, int32_t{0});
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s;
    EXPECT_TRUE(contains(s.message(), "RAL_CUDA_COLLECTIVES='sideways'")) << s;
  });
  unsetenv("RAL_CUDA_COLLECTIVES");
  ranks.renew();
  checkAllReduce<float>(ranks, ReduceOp::kSum, Layout::kDense, {2, 2}, false);
}

// The machine's NCCL (where there is one) cannot reach a GPU through the simulated driver: every
// rank gets an error naming NCCL, none hangs, and host staging still works afterwards.
TEST(NcclSystemTest, NcclWithoutAGpuIsACleanErrorOnEveryRank) {
  if (dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL) == nullptr)
    GTEST_SKIP() << "no libnccl.so.2 on this machine";
  setenv("RAL_CUDA_COLLECTIVES", "nccl", 1);
  CudaRanks ranks(connect(2, milliseconds(10000)));
  RAL_SKIP_WITHOUT_CUDA(ranks);
  onRanks(2, [&](int r) {
    DeviceBuffer<float, 1> x(ranks.gpus[r], {3}, Layout::kDense);
    const Status s = callCuda(*ranks.contexts[r], "ral_all_reduce", x.view, x.view, int32_t{0});
    EXPECT_FALSE(s.ok());
    EXPECT_TRUE(contains(s.message(), "NCCL") || contains(s.message(), "nccl")) << s;
  });
  setenv("RAL_CUDA_COLLECTIVES", "host", 1);
  ranks.renew();
  checkAllReduce<float>(ranks, ReduceOp::kSum, Layout::kDense, {2, 2}, false);
  unsetenv("RAL_CUDA_COLLECTIVES");
}

}  // namespace
}  // namespace ral::testing
