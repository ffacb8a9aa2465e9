// Cost of one execution through the standalone C++ API (acquire, bind 2 inputs, run, take and
// release 1 output) of a module that does no work, against the same module work done by calling
// its entry function directly on an execution context whose inputs are already bound.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>

#include "empty_inputs.h"
#include "ral/standalone_context.h"
#include "ratio_report.h"

namespace ral::bench {
namespace {

using standalone::DLTensorPtr;
using standalone::StandaloneContext;

std::shared_ptr<StandaloneContext> loadEmpty() {
  auto ctx = StandaloneContext::load(std::string(RAL_TEST_MODULE_DIR) + "/empty.ralm");
  if (!ctx.ok()) {
    std::fprintf(stderr, "%s\n", ctx.status().toString().c_str());
    std::abort();
  }
  return *ctx;
}

using Inputs = EmptyInputs;

void BM_StandaloneApi(benchmark::State& state) {
  auto ctx = loadEmpty();
  Inputs in;
  for (auto _ : state) {
    standalone::Execution exec = ctx->newExecution();
    Status s = exec.bindInput(0, in.da);
    if (s.ok()) s = exec.bindInput(1, in.db);
    if (s.ok()) s = exec.run();
    auto out = exec.takeOutput(0);
    if (!s.ok() || !out.ok()) {
      state.SkipWithError(s.ok() ? out.status().toString().c_str() : s.toString().c_str());
      break;
    }
    DLTensorPtr y(*out);
    benchmark::DoNotOptimize(y->dl_tensor.data);
  }
}
BENCHMARK(BM_StandaloneApi);

// The convenience call: a vector of inputs in, a vector of owned outputs back.
void BM_StandaloneRunVector(benchmark::State& state) {
  auto ctx = loadEmpty();
  Inputs in;
  for (auto _ : state) {
    auto out = ctx->run({&in.da, &in.db});
    if (!out.ok()) {
      state.SkipWithError(out.status().toString().c_str());
      break;
    }
    benchmark::DoNotOptimize((*out)[0]->dl_tensor.data);
  }
}
BENCHMARK(BM_StandaloneRunVector);

// Baseline: the entry called directly with pre-bound inputs; the output it allocates is
// released the cheapest way (no DLPack tensor is made).
void BM_DirectEntry(benchmark::State& state) {
  auto ctx = loadEmpty();
  Inputs in;
  standalone::Execution exec = ctx->newExecution();
  if (!exec.bindInput(0, in.da).ok() || !exec.bindInput(1, in.db).ok()) std::abort();
  const Module::EntryFn entry = ctx->module().entry();
  void* abi = exec.ctx()->abi();
  for (auto _ : state) {
    entry(abi);
    benchmark::DoNotOptimize(abi);
    exec.resetOutputs();
  }
}
BENCHMARK(BM_DirectEntry);

}  // namespace
}  // namespace ral::bench

int main(int argc, char** argv) {
  using ral::bench::Ratio;
  return ral::bench::runAndReport(
      argc, argv,
      {
          Ratio{"standalone API execution / direct entry call", "BM_StandaloneApi",
                "BM_DirectEntry"},
          Ratio{"run(vector) / direct entry call", "BM_StandaloneRunVector", "BM_DirectEntry"},
      },
      {{"standalone API, per execution (bind 2, run, fetch 1)", "BM_StandaloneApi", 1000.0},
       {"run(vector), per execution", "BM_StandaloneRunVector", 1000.0}});
}
