// Asynchronous submission (StandaloneContext::submit) against synchronous run():
//   - per-submission cost on the CPU: 64 executions of a module that does no work, and of a small
//     compiled softmax, submitted back to back and waited for, against 64 run() calls;
//   - a chain of 16 executions of a small compiled softmax (each taking the one before's output),
//     submitted at once with semaphores between them, against 16 run() calls one after another,
//     on the CPU and on Vulkan (skipped without a device).
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "empty_inputs.h"
#include "ral/standalone_context.h"
#include "ral/submission.h"
#include "ratio_report.h"

namespace ral::bench {
namespace {

using standalone::SemaphoreValue;
using standalone::StandaloneContext;
using standalone::SubmitInput;

constexpr int kBatch = 64;
constexpr int kChain = 16;

std::string modulePath(const char* name) {
  return std::string(RAL_TEST_MODULE_DIR) + "/" + name + ".ralm";
}

std::shared_ptr<StandaloneContext> load(const char* name, benchmark::State& state) {
  if (!std::ifstream(modulePath(name)).good()) {
    state.SkipWithError("module not built (needs the MLIR compiler)");
    return nullptr;
  }
  auto ctx = StandaloneContext::load(modulePath(name));
  if (!ctx.ok()) {
    state.SkipWithError(ctx.status().toString().c_str());
    return nullptr;
  }
  return *ctx;
}

// EmptyInputs with the argument lists of run() and submit().
struct EmptyModuleInputs : EmptyInputs {
  std::vector<const DLTensor*> list() const { return {&da, &db}; }
  std::vector<SubmitInput> submitList() const { return {&da, &db}; }
};

struct SoftmaxInput {
  std::vector<float> x = std::vector<float>(4 * 64);
  int64_t shape[2] = {4, 64};
  DLTensor dl{};
  SoftmaxInput() {
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.1f * static_cast<float>(i));
    dl.data = x.data();
    dl.device = {kDLCPU, 0};
    dl.dtype = {kDLFloat, 32, 1};
    dl.ndim = 2;
    dl.shape = shape;
  }
  std::vector<const DLTensor*> list() const { return {&dl}; }
  std::vector<SubmitInput> submitList() const { return {&dl}; }
};

template <typename Inputs>
void runBatch(benchmark::State& state, const char* module) {
  auto ctx = load(module, state);
  if (!ctx) return;
  Inputs in;
  for (auto _ : state) {
    for (int i = 0; i < kBatch; ++i) {
      auto out = ctx->run(in.list());
      if (!out.ok()) return state.SkipWithError(out.status().toString().c_str());
      benchmark::DoNotOptimize((*out)[0]->dl_tensor.data);
    }
  }
}

template <typename Inputs>
void submitBatch(benchmark::State& state, const char* module) {
  auto ctx = load(module, state);
  if (!ctx) return;
  Inputs in;
  std::vector<std::shared_ptr<standalone::Submission>> subs(kBatch);
  for (auto _ : state) {
    for (int i = 0; i < kBatch; ++i) {
      auto sub = ctx->submit(in.submitList());
      if (!sub.ok()) return state.SkipWithError(sub.status().toString().c_str());
      subs[i] = std::move(*sub);
    }
    for (auto& s : subs) {
      Status st = s->wait();
      if (!st.ok()) return state.SkipWithError(st.toString().c_str());
    }
  }
}

void BM_RunBatchEmpty(benchmark::State& s) { runBatch<EmptyModuleInputs>(s, "empty"); }
void BM_SubmitBatchEmpty(benchmark::State& s) { submitBatch<EmptyModuleInputs>(s, "empty"); }
void BM_RunBatchSoftmax(benchmark::State& s) { runBatch<SoftmaxInput>(s, "compiled_softmax"); }
void BM_SubmitBatchSoftmax(benchmark::State& s) {
  submitBatch<SoftmaxInput>(s, "compiled_softmax");
}
BENCHMARK(BM_RunBatchEmpty)->UseRealTime();
BENCHMARK(BM_SubmitBatchEmpty)->UseRealTime();
BENCHMARK(BM_RunBatchSoftmax)->UseRealTime();
BENCHMARK(BM_SubmitBatchSoftmax)->UseRealTime();

void chainRun(benchmark::State& state, const char* module) {
  auto ctx = load(module, state);
  if (!ctx) return;
  SoftmaxInput in;
  for (auto _ : state) {
    auto out = ctx->run({&in.dl});
    for (int i = 1; i < kChain && out.ok(); ++i) out = ctx->run({&(*out)[0]->dl_tensor});
    if (!out.ok()) return state.SkipWithError(out.status().toString().c_str());
  }
}

void chainSubmit(benchmark::State& state, const char* module) {
  auto ctx = load(module, state);
  if (!ctx) return;
  SoftmaxInput in;
  auto sem = ctx->createSemaphore(0);
  if (!sem.ok()) return state.SkipWithError(sem.status().toString().c_str());
  uint64_t value = 0;
  for (auto _ : state) {
    auto sub = ctx->submit({&in.dl}, {}, {{*sem, ++value}});
    for (int i = 1; i < kChain && sub.ok(); ++i) {
      const uint64_t prev = value;
      sub = ctx->submit({SubmitInput(*sub, 0)}, {{*sem, prev}}, {{*sem, ++value}});
    }
    if (!sub.ok()) return state.SkipWithError(sub.status().toString().c_str());
    Status st = (*sem)->wait(value);
    if (!st.ok()) return state.SkipWithError(st.toString().c_str());
  }
}

void BM_ChainRunCpu(benchmark::State& s) { chainRun(s, "compiled_softmax"); }
void BM_ChainSubmitCpu(benchmark::State& s) { chainSubmit(s, "compiled_softmax"); }
void BM_ChainRunVulkan(benchmark::State& s) { chainRun(s, "compiled_softmax_vulkan"); }
void BM_ChainSubmitVulkan(benchmark::State& s) { chainSubmit(s, "compiled_softmax_vulkan"); }
BENCHMARK(BM_ChainRunCpu)->UseRealTime();
BENCHMARK(BM_ChainSubmitCpu)->UseRealTime();
BENCHMARK(BM_ChainRunVulkan)->UseRealTime();
BENCHMARK(BM_ChainSubmitVulkan)->UseRealTime();

}  // namespace
}  // namespace ral::bench

int main(int argc, char** argv) {
  using ral::bench::Ratio;
  return ral::bench::runAndReport(
      argc, argv,
      {
          Ratio{"64 submissions + wait / 64 run() (CPU, a module that does nothing)",
                "BM_SubmitBatchEmpty/real_time", "BM_RunBatchEmpty/real_time", 1.5},
          Ratio{"64 submissions + wait / 64 run() (CPU, 4x64 softmax)",
                "BM_SubmitBatchSoftmax/real_time", "BM_RunBatchSoftmax/real_time", 1.5},
          Ratio{"chain of 16 softmaxes: run() one after another / submitted (CPU)",
                "BM_ChainRunCpu/real_time", "BM_ChainSubmitCpu/real_time", 0, false},
          Ratio{"chain of 16 softmaxes: run() one after another / submitted (Vulkan)",
                "BM_ChainRunVulkan/real_time", "BM_ChainSubmitVulkan/real_time", 2.0, false},
      });
}
