// The CUDA driver against raw CUDA, measured in one run (a GPU machine is needed; elsewhere the
// binary says why and exits 0):
//  - launch overhead of an empty kernel: CudaDriver::launch vs cuLaunchKernel (target <= 1.05x);
//  - ral_gemm (f32) vs the same cublasGemmEx call made directly, n = 1024 and 4096 (target: RAL
//    reaches >= 0.97x of cuBLAS's throughput);
//  - a host signal -> device wait -> device signal -> host wake round trip through the timeline
//    semaphores vs an event record + cuEventSynchronize on a raw stream (report only).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <memory>
#include <vector>

#include "drivers/cuda/cuda_driver.h"
#include "drivers/cuda/cuda_library.h"
#include "kernels/blas/cublas.h"
#include "ral/context.h"
#include "ral/memref.h"
#include "ral/name_encoding.h"
#include "ratio_report.h"

namespace ral::bench {
namespace {

using cuda::CudaDriver;

constexpr char kEmptyPtx[] = R"(
.version 7.0
.target sm_80
.address_size 64
.visible .entry empty() { ret; }
)";
constexpr int kSyncEvery = 512;  // launches between stream synchronizations (both variants)

struct Fixture {
  Context context;
  CudaDriver* driver = nullptr;
  const cuda::CudaLibrary* lib = nullptr;
  std::unique_ptr<Stream> stream;
  CUstream raw_stream = nullptr;
  Executable* empty = nullptr;
  CUfunction raw_empty = nullptr;
  CUmodule raw_module = nullptr;

  static Fixture& get() {
    static Fixture* f = new Fixture();
    return *f;
  }
  Fixture() {
    driver = *context.driver<CudaDriver>();
    lib = *cuda::CudaLibrary::get();
    stream = std::move(*driver->createStream());
    ExecutableSpec spec;
    spec.name = "bench_empty";
    spec.format = ExecutableFormat::kPtx;
    spec.data = kEmptyPtx;
    spec.size = sizeof(kEmptyPtx) - 1;
    spec.entries = {{"empty", {0, 0, 0}}};
    empty = *driver->load(spec);
    (void)driver->makeCurrent();
    const auto& cu = lib->symbols();
    cu.cuStreamCreate(&raw_stream, CU_STREAM_NON_BLOCKING);
    cu.cuModuleLoadDataEx(&raw_module, kEmptyPtx, 0, nullptr, nullptr);
    cu.cuModuleGetFunction(&raw_empty, raw_module, "empty");
  }
};

void BM_RawLaunch(benchmark::State& state) {
  Fixture& f = Fixture::get();
  const auto& cu = f.lib->symbols();
  int i = 0;
  for (auto _ : state) {
    if (cu.cuLaunchKernel(f.raw_empty, 1, 1, 1, 1, 1, 1, 0, f.raw_stream, nullptr, nullptr) !=
        CUDA_SUCCESS)
      state.SkipWithError("cuLaunchKernel failed");
    if (++i % kSyncEvery == 0) cu.cuStreamSynchronize(f.raw_stream);
  }
  cu.cuStreamSynchronize(f.raw_stream);
}
BENCHMARK(BM_RawLaunch);

void BM_RalLaunch(benchmark::State& state) {
  Fixture& f = Fixture::get();
  LaunchConfig config;
  int i = 0;
  for (auto _ : state) {
    if (!f.driver->launch(f.empty, 0, config, KernelArgs{}, f.stream.get()).ok())
      state.SkipWithError("launch failed");
    if (++i % kSyncEvery == 0) (void)f.driver->synchronize(f.stream.get());
  }
  (void)f.driver->synchronize(f.stream.get());
}
BENCHMARK(BM_RalLaunch);

struct GemmBuffers {
  float* a;
  float* b;
  float* c;
};
GemmBuffers gemmBuffers(Fixture& f, int64_t n) {
  GemmBuffers g{};
  const size_t bytes = static_cast<size_t>(n * n) * sizeof(float);
  g.a = static_cast<float*>(*f.driver->allocate(bytes));
  g.b = static_cast<float*>(*f.driver->allocate(bytes));
  g.c = static_cast<float*>(*f.driver->allocate(bytes));
  const float one = 1.0f;
  (void)f.driver->fill(g.a, bytes, &one, 4);
  (void)f.driver->fill(g.b, bytes, &one, 4);
  (void)f.driver->synchronize();
  return g;
}

void BM_CublasDirect(benchmark::State& state) {
  Fixture& f = Fixture::get();
  const int64_t n = state.range(0);
  GemmBuffers g = gemmBuffers(f, n);
  auto handle = kernels::cuda::CublasHandle::create(*f.driver);
  if (!handle.ok()) {
    state.SkipWithError(handle.status().toString().c_str());
    return;
  }
  void* cs = *f.driver->streamHandle(f.stream.get());
  kernels::cuda::GemmDesc d;
  d.m = d.n = d.k = n;
  d.a = g.b, d.b = g.a, d.c = g.c;  // row-major C = A B is column-major C^T = B^T A^T
  d.lda = d.ldb = d.ldc = n;
  for (auto _ : state) {
    if (!kernels::cuda::cublasGemmNow((*handle)->library(), (*handle)->raw(), cs, d).ok())
      state.SkipWithError("cublasGemmEx failed");
    (void)f.driver->synchronize(f.stream.get());
  }
  state.SetItemsProcessed(state.iterations() * 2 * n * n * n);
  for (float* p : {g.a, g.b, g.c}) (void)f.driver->deallocate(p);
}
BENCHMARK(BM_CublasDirect)->Arg(1024)->Arg(4096)->Unit(benchmark::kMicrosecond);

void BM_RalGemm(benchmark::State& state) {
  Fixture& f = Fixture::get();
  const int64_t n = state.range(0);
  GemmBuffers g = gemmBuffers(f, n);
  using Gemm =
      void (*)(ExecutionContext*, MemRef<float, 2>, MemRef<float, 2>, MemRef<float, 2>, bool, bool);
  static const std::string name = encodeApiName("ral_gemm", "cuda", kSignatureOf<Gemm>.view());
  ral_import import{name.c_str(), nullptr};
  if (!f.context.resolveImports(&import, 1).ok()) {
    state.SkipWithError("ral_gemm for cuda is not registered");
    return;
  }
  ExecutionHandle exec = f.context.acquireExecution();
  exec->setStream(f.stream.get());
  void* ctx = exec->abi();
  auto ma = makeMemRef<float, 2>(g.a, {n, n});
  auto mb = makeMemRef<float, 2>(g.b, {n, n});
  auto mc = makeMemRef<float, 2>(g.c, {n, n});
  bool ta = false, tb = false;
  void* args[] = {&ctx, &ma, &mb, &mc, &ta, &tb};
  for (auto _ : state) {
    import.fn(ctx, args);
    (void)f.driver->synchronize(f.stream.get());
  }
  if (exec->failed()) state.SkipWithError(exec->status().toString().c_str());
  state.SetItemsProcessed(state.iterations() * 2 * n * n * n);
  for (float* p : {g.a, g.b, g.c}) (void)f.driver->deallocate(p);
}
BENCHMARK(BM_RalGemm)->Arg(1024)->Arg(4096)->Unit(benchmark::kMicrosecond);

void BM_SemaphoreRoundTrip(benchmark::State& state) {
  Fixture& f = Fixture::get();
  auto in = *f.driver->createSemaphore(0);
  auto out = *f.driver->createSemaphore(0);
  uint64_t v = 0;
  for (auto _ : state) {
    ++v;
    (void)f.driver->queueWait(f.stream.get(), in.get(), v);
    (void)f.driver->queueSignal(f.stream.get(), out.get(), v);
    (void)in->signal(v);
    if (!out->wait(v).ok()) state.SkipWithError("semaphore wait failed");
  }
  (void)f.driver->synchronize(f.stream.get());
}
BENCHMARK(BM_SemaphoreRoundTrip)->UseRealTime();

void BM_RawEventRoundTrip(benchmark::State& state) {
  Fixture& f = Fixture::get();
  const auto& cu = f.lib->symbols();
  CUevent event = nullptr;
  cu.cuEventCreate(&event, CU_EVENT_DISABLE_TIMING);
  for (auto _ : state) {
    cu.cuEventRecord(event, f.raw_stream);
    cu.cuEventSynchronize(event);
  }
  cu.cuEventDestroy_v2(event);
}
BENCHMARK(BM_RawEventRoundTrip)->UseRealTime();

}  // namespace
}  // namespace ral::bench

int main(int argc, char** argv) {
  auto driver = ral::cuda::CudaDriver::create();
  if (!driver.ok()) {
    std::printf("no CUDA device: %s\nnothing to measure; run this benchmark on a GPU machine\n",
                driver.status().toString().c_str());
    return 0;
  }
  std::printf("device: %s\n", (*driver)->deviceName().c_str());
  driver->reset();
  using ral::bench::Ratio;
  return ral::bench::runAndReport(
      argc, argv,
      {
          Ratio{"RAL launch / raw cuLaunchKernel (empty kernel)", "BM_RalLaunch", "BM_RawLaunch",
                1.05, true},
          Ratio{"ral_gemm throughput / cuBLAS, n=1024", "BM_CublasDirect/1024", "BM_RalGemm/1024",
                0.97, false},
          Ratio{"ral_gemm throughput / cuBLAS, n=4096", "BM_CublasDirect/4096", "BM_RalGemm/4096",
                0.97, false},
          Ratio{"semaphore round trip / raw event round trip", "BM_SemaphoreRoundTrip/real_time",
                "BM_RawEventRoundTrip/real_time", 0, true},
      });
}
