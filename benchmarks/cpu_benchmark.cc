// The CPU driver and kernels against their baselines, in one run:
//  - ral_gemm f32 (called through its import slot, the way compiled modules call it) vs
//    cblas_sgemm on the same buffers from the same OpenBLAS, n = 256 ... 2048; GFLOP/s printed;
//  - the caching allocator's allocate + deallocate (through the Driver interface) vs malloc/free,
//    64 B ... 1 MiB, one size at a time and cycling through all of them; plus, for scale, a bare
//    pointer stack behind the same interface (stack_driver.h), the floor of any such allocator;
//  - a semaphore signal -> wake ping-pong between two threads vs the same with a
//    std::condition_variable.
#include <benchmark/benchmark.h>

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "drivers/cpu/cpu_driver.h"
#include "drivers/cpu/host_semaphore.h"
#include "kernels/blas/openblas.h"
#include "ral/context.h"
#include "ral/memref.h"
#include "ratio_report.h"
#include "stack_driver.h"

namespace ral::bench {
namespace {

const int64_t kGemmSizes[] = {256, 512, 1024, 2048};
const size_t kAllocSizes[] = {64, 1024, 65536, size_t{1} << 20};

// ---- gemm ------------------------------------------------------------------------------------

struct GemmBuffers {
  int64_t n;
  std::vector<float> a, b, c;
  explicit GemmBuffers(int64_t size) : n(size), a(n * n), b(n * n), c(n * n) {
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> d(-1, 1);
    for (auto& x : a) x = d(rng);
    for (auto& x : b) x = d(rng);
  }
};

void setGflops(benchmark::State& state, int64_t n) {
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * n * n * n * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}

void BM_RalGemm(benchmark::State& state) {
  const int64_t n = state.range(0);
  GemmBuffers buf(n);
  Context context;
  auto exec = context.acquireExecution();
  void* ctx = exec->abi();
  ral_import imports[] = {{"ral_gemm___cpu___pvoid_m2df32_m2df32_m2df32_i1_i1___void", nullptr}};
  if (!context.resolveImports(imports, 1).ok()) return state.SkipWithError("ral_gemm missing");
  MemRef<float, 2> a = makeMemRef<float, 2>(buf.a.data(), {n, n});
  MemRef<float, 2> b = makeMemRef<float, 2>(buf.b.data(), {n, n});
  MemRef<float, 2> c = makeMemRef<float, 2>(buf.c.data(), {n, n});
  bool ta = false, tb = false;
  void* args[] = {&ctx, &a, &b, &c, &ta, &tb};
  imports[0].fn(ctx, args);  // loads OpenBLAS, sets its threads
  for (auto _ : state) {
    imports[0].fn(ctx, args);
    benchmark::DoNotOptimize(buf.c.data());
  }
  if (exec->failed()) state.SkipWithError(exec->status().toString().c_str());
  setGflops(state, n);
}

void BM_CblasSgemm(benchmark::State& state) {
  const int64_t n = state.range(0);
  GemmBuffers buf(n);
  Context context;  // the same thread count as BM_RalGemm's driver
  auto driver = context.driver<cpu::CpuDriver>();
  auto blas = kernels::cpu::openBlas();
  if (!driver.ok() || !blas.ok()) return state.SkipWithError("no OpenBLAS");
  if (!kernels::cpu::setOpenBlasThreads((*driver)->threadCount()).ok()) return;
  const int ni = static_cast<int>(n);
  for (auto _ : state) {
    (*blas)->sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, ni, ni, ni, 1.0f, buf.a.data(), ni,
                   buf.b.data(), ni, 0.0f, buf.c.data(), ni);
    benchmark::DoNotOptimize(buf.c.data());
  }
  setGflops(state, n);
}

// Interleaved so both see the same machine conditions.
void registerGemm() {
  for (int64_t n : kGemmSizes) {
    benchmark::RegisterBenchmark("BM_CblasSgemm", BM_CblasSgemm)
        ->Arg(n)
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark("BM_RalGemm", BM_RalGemm)
        ->Arg(n)
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
  }
}

// ---- allocator -------------------------------------------------------------------------------

void BM_CachingAlloc(benchmark::State& state) {
  auto driver = std::move(cpu::CpuDriver::create()).value();
  Driver* d = driver.get();  // through the virtual interface, as kernels call it
  const size_t bytes = static_cast<size_t>(state.range(0));
  for (auto _ : state) {
    void* p = *d->allocate(bytes);
    benchmark::DoNotOptimize(p);
    (void)d->deallocate(p);
  }
}

void BM_StackDriverAlloc(benchmark::State& state) {
  std::unique_ptr<Driver> driver = makeStackDriver();
  Driver* d = driver.get();
  const size_t bytes = static_cast<size_t>(state.range(0));
  for (auto _ : state) {
    void* p = *d->allocate(bytes);
    benchmark::DoNotOptimize(p);
    (void)d->deallocate(p);
  }
}

void BM_Malloc(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(state.range(0));
  for (auto _ : state) {
    void* p = std::malloc(bytes);
    benchmark::DoNotOptimize(p);
    std::free(p);
  }
}

std::vector<size_t> mixedSizes() {
  std::vector<size_t> sizes;
  for (size_t s = 64; s <= (size_t{1} << 20); s *= 2) sizes.push_back(s);
  return sizes;
}

void BM_CachingAllocMixed(benchmark::State& state) {
  auto driver = std::move(cpu::CpuDriver::create()).value();
  Driver* d = driver.get();
  const std::vector<size_t> sizes = mixedSizes();
  size_t i = 0;
  for (auto _ : state) {
    void* p = *d->allocate(sizes[i]);
    benchmark::DoNotOptimize(p);
    (void)d->deallocate(p);
    if (++i == sizes.size()) i = 0;
  }
}

void BM_MallocMixed(benchmark::State& state) {
  const std::vector<size_t> sizes = mixedSizes();
  size_t i = 0;
  for (auto _ : state) {
    void* p = std::malloc(sizes[i]);
    benchmark::DoNotOptimize(p);
    std::free(p);
    if (++i == sizes.size()) i = 0;
  }
}

// ---- semaphore ping-pong ---------------------------------------------------------------------

void BM_SemaphorePingPong(benchmark::State& state) {
  cpu::HostSemaphore sem(0);
  const int64_t rounds = static_cast<int64_t>(state.max_iterations);
  std::thread partner([&] {
    for (int64_t j = 0; j < rounds; ++j) {
      (void)sem.wait(2 * j + 1);
      (void)sem.signal(2 * j + 2);
    }
  });
  int64_t i = 0;
  for (auto _ : state) {
    (void)sem.signal(2 * i + 1);
    (void)sem.wait(2 * i + 2);
    ++i;
  }
  partner.join();
}

void BM_CondVarPingPong(benchmark::State& state) {
  std::mutex mutex;
  std::condition_variable cv;
  int64_t value = 0;
  const int64_t rounds = static_cast<int64_t>(state.max_iterations);
  std::thread partner([&] {
    for (int64_t j = 0; j < rounds; ++j) {
      std::unique_lock<std::mutex> lock(mutex);
      cv.wait(lock, [&] { return value >= 2 * j + 1; });
      value = 2 * j + 2;
      cv.notify_one();
    }
  });
  int64_t i = 0;
  for (auto _ : state) {
    std::unique_lock<std::mutex> lock(mutex);
    value = 2 * i + 1;
    cv.notify_one();
    cv.wait(lock, [&] { return value >= 2 * i + 2; });
    ++i;
  }
  partner.join();
}

void registerOthers() {
  for (size_t bytes : kAllocSizes) {
    benchmark::RegisterBenchmark("BM_Malloc", BM_Malloc)->Arg(static_cast<int64_t>(bytes));
    benchmark::RegisterBenchmark("BM_CachingAlloc", BM_CachingAlloc)
        ->Arg(static_cast<int64_t>(bytes));
  }
  benchmark::RegisterBenchmark("BM_StackDriverAlloc", BM_StackDriverAlloc)->Arg(64);
  benchmark::RegisterBenchmark("BM_MallocMixed", BM_MallocMixed);
  benchmark::RegisterBenchmark("BM_CachingAllocMixed", BM_CachingAllocMixed);
  benchmark::RegisterBenchmark("BM_CondVarPingPong", BM_CondVarPingPong)->UseRealTime();
  benchmark::RegisterBenchmark("BM_SemaphorePingPong", BM_SemaphorePingPong)->UseRealTime();
}

}  // namespace
}  // namespace ral::bench

int main(int argc, char** argv) {
  using ral::bench::Absolute;
  using ral::bench::Ratio;
  std::printf("%s\n", ral::kernels::cpu::openBlasDescription().c_str());
  ral::bench::registerGemm();
  ral::bench::registerOthers();
  std::vector<Ratio> ratios;
  for (int64_t n : ral::bench::kGemmSizes) {
    const std::string s = std::to_string(n);
    ratios.push_back(Ratio{"ral_gemm f32 throughput / cblas_sgemm, n=" + s,
                           "BM_CblasSgemm/" + s + "/real_time", "BM_RalGemm/" + s + "/real_time",
                           0.97, false});
  }
  std::vector<Absolute> absolutes;
  for (size_t bytes : ral::bench::kAllocSizes) {
    const std::string s = std::to_string(bytes);
    ratios.push_back(Ratio{"malloc+free / caching alloc+free, " + s + " B", "BM_Malloc/" + s,
                           "BM_CachingAlloc/" + s, 2.0, false});
    absolutes.push_back(Absolute{"caching alloc+free, " + s + " B", "BM_CachingAlloc/" + s, 20.0});
  }
  ratios.push_back(Ratio{"malloc+free / bare stack via Driver, 64 B (floor)", "BM_Malloc/64",
                         "BM_StackDriverAlloc/64"});
  ratios.push_back(Ratio{"malloc+free / caching alloc+free, 64 B..1 MiB cycle", "BM_MallocMixed",
                         "BM_CachingAllocMixed", 2.0, false});
  absolutes.push_back(
      Absolute{"caching alloc+free, 64 B..1 MiB cycle", "BM_CachingAllocMixed", 20.0});
  ratios.push_back(Ratio{"semaphore ping-pong / condition_variable ping-pong",
                         "BM_SemaphorePingPong/real_time", "BM_CondVarPingPong/real_time", 1.2,
                         true});
  return ral::bench::runAndReport(argc, argv, ratios, absolutes);
}
