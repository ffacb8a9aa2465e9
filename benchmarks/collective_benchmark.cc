// All-reduce of 1 KiB ... 64 MiB of f32 on 2 ranks: RAL's ral_all_reduce kernel (through a Gloo
// communicator, as a compiled module calls it) against PyTorch's Gloo process group
// (c10d::ProcessGroupGloo::allreduce, what torch.distributed.all_reduce runs), in one run. The
// ranks are threads of this process talking over loopback TCP, each with its own RAL
// communicator and its own torch process group; the two are timed in alternating blocks so both
// see the same machine state. Prints per size the median time of each, their ratio and the bus
// bandwidth (2 (n - 1) / n bytes / time, as nccl-tests counts it).
//
//   collective_benchmark [--ranks=2] [--max-mib=64] [--seconds=0.3] [--blocks=40]
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <vector>

#include "contexts/standalone/gloo/tcp_store.h"
#include "ral/api_call.h"
#include "ral/context.h"
#include "ral/gloo_communicator.h"
#include "ral/memref.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  int ranks = 2;
  int max_mib = 64;
  double seconds = 0.3;
  // Timed blocks per size, RAL and torch alternating; each side reports its median block. Many
  // short blocks: on a small VM a block's time swings with where the ranks' threads land.
  int blocks = 40;
};

// Lines the ranks up before each timed block.
class Barrier {
 public:
  explicit Barrier(int n) : n_(n) {}
  void arriveAndWait() {
    std::unique_lock<std::mutex> lock(mu_);
    const int generation = generation_;
    if (++arrived_ == n_) {
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
      return;
    }
    cv_.wait(lock, [&] { return generation_ != generation; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  const int n_;
  int arrived_ = 0, generation_ = 0;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Rank r's share of the run: times both all-reduces at every size; rank 0 prints.
void rankMain(int rank, const Options& opt, int store_port,
              const c10::intrusive_ptr<c10d::Store>& torch_store, Barrier& sync) {
  ral::GlooOptions go;
  go.rank = rank;
  go.size = opt.ranks;
  go.store_port = store_port;
  auto comm = ral::createGlooCommunicator(go);
  if (!comm.ok()) {
    std::fprintf(stderr, "rank %d: %s\n", rank, comm.status().toString().c_str());
    std::exit(1);
  }
  ral::Context context;
  context.setCommunicator(*comm);
  auto pg_options = c10d::ProcessGroupGloo::Options::create();
  pg_options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
  auto pg = c10::make_intrusive<c10d::ProcessGroupGloo>(torch_store, rank, opt.ranks, pg_options);
  const std::string name = ral::apiNameFor<ral::MemRef<float, 1>, ral::MemRef<float, 1>, int32_t>(
      "ral_all_reduce", "cpu");

  if (rank == 0) {
    std::printf("all-reduce (sum) of f32 on %d ranks (threads, loopback TCP), median per call\n",
                opt.ranks);
    std::printf("%10s %12s %12s %10s %14s %14s\n", "bytes", "RAL us", "torch us", "RAL/torch",
                "RAL bus GB/s", "torch bus GB/s");
  }
  for (int64_t bytes = 1024; bytes <= (int64_t{opt.max_mib} << 20); bytes *= 4) {
    const int64_t n = bytes / 4;
    at::Tensor t = torch::ones({n}, torch::kFloat32);
    std::vector<at::Tensor> tensors = {t};
    ral::MemRef<float, 1> m{t.data_ptr<float>(), t.data_ptr<float>(), 0, {n}, {1}};
    int32_t op = 0;
    auto ralOnce = [&] {
      auto exec = context.acquireExecution();
      ral::callApi(exec->abi(), name.c_str(), m, m, op);
      if (!exec->status().ok()) {
        std::fprintf(stderr, "rank %d: %s\n", rank, exec->status().toString().c_str());
        std::exit(1);
      }
    };
    auto torchOnce = [&] { pg->allreduce(tensors)->wait(); };
    ralOnce();
    torchOnce();
    // Calls per block, agreed by every rank (rank 0's estimate, broadcast through the sums).
    auto t0 = Clock::now();
    ralOnce();
    const double once = std::chrono::duration<double>(Clock::now() - t0).count();
    t.fill_(rank == 0 ? std::max(1.0, opt.seconds / opt.blocks / std::max(once, 1e-6)) : 0.0);
    torchOnce();
    const int calls = std::min(1000, static_cast<int>(t[0].item<float>()));
    std::vector<double> ral_times, torch_times;
    for (int block = 0; block < opt.blocks; ++block) {
      sync.arriveAndWait();
      const bool ral_turn = block % 2 == 0;
      const auto start = Clock::now();
      for (int i = 0; i < calls; ++i) ral_turn ? ralOnce() : torchOnce();
      const double per = std::chrono::duration<double>(Clock::now() - start).count() / calls;
      (ral_turn ? ral_times : torch_times).push_back(per);
    }
    if (rank == 0) {
      const double r = median(ral_times), p = median(torch_times);
      const double bus = 2.0 * (opt.ranks - 1) / opt.ranks * static_cast<double>(bytes);
      std::printf("%10lld %12.1f %12.1f %9.2fx %14.3f %14.3f\n", static_cast<long long>(bytes),
                  r * 1e6, p * 1e6, r / p, bus / r / 1e9, bus / p / 1e9);
      std::fflush(stdout);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--ranks=", 0) == 0) {
      opt.ranks = std::atoi(a.c_str() + 8);
    } else if (a.rfind("--max-mib=", 0) == 0) {
      opt.max_mib = std::atoi(a.c_str() + 10);
    } else if (a.rfind("--seconds=", 0) == 0) {
      opt.seconds = std::atof(a.c_str() + 10);
    } else if (a.rfind("--blocks=", 0) == 0) {
      opt.blocks = std::atoi(a.c_str() + 9);
    } else {
      std::fprintf(stderr, "usage: %s [--ranks=2] [--max-mib=64] [--seconds=0.3] [--blocks=40]\n",
                   argv[0]);
      return 2;
    }
  }
  if (opt.ranks < 2 || opt.max_mib < 1 || opt.seconds <= 0 || opt.blocks < 2) {
    std::fprintf(stderr, "--ranks must be >= 2, --max-mib >= 1, --seconds > 0, --blocks >= 2\n");
    return 2;
  }
  auto server = ral::standalone::TcpStoreServer::start("127.0.0.1", 0);
  if (!server.ok()) {
    std::fprintf(stderr, "%s\n", server.status().toString().c_str());
    return 1;
  }
  auto torch_store = c10::make_intrusive<c10d::HashStore>();
  Barrier sync(opt.ranks);
  std::vector<std::thread> threads;
  for (int r = 0; r < opt.ranks; ++r)
    threads.emplace_back(rankMain, r, std::cref(opt), (*server)->port(), torch_store,
                         std::ref(sync));
  for (auto& t : threads) t.join();
  return 0;
}
