// Cost of one RAL function call: (a) a direct C++ call, (b) through a resolved import slot,
// (c) ral_api_call by name (cache hit), (d) a std::unordered_map<std::string, std::function>
// lookup of the name on every call (the baseline a naive dispatcher would be).
#include <benchmark/benchmark.h>

#include <functional>
#include <string>
#include <unordered_map>

#include "api_call_functions.h"
#include "ral/context.h"
#include "ratio_report.h"

namespace ral::bench {
namespace {

struct Fixture {
  Context context;
  ExecutionHandle exec = context.acquireExecution();
  void* ctx = exec->abi();
  ral_import imports[1] = {{kAxpyName, nullptr}};
  Fixture() {
    if (!context.resolveImports(imports, 1).ok()) std::abort();
  }
};

void BM_Direct(benchmark::State& state) {
  Fixture f;
  float a = 2, x = 3, y = 1;
  for (auto _ : state) {
    benchmark::DoNotOptimize(x);
    float r = axpy(f.exec.get(), a, x, y);
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_Direct);

void BM_ImportSlot(benchmark::State& state) {
  Fixture f;
  float a = 2, x = 3, y = 1, r = 0;
  void* args[] = {&f.ctx, &a, &x, &y, &r};
  ral_import* imports = f.imports;
  benchmark::DoNotOptimize(imports);
  for (auto _ : state) {
    benchmark::DoNotOptimize(x);
    imports[0].fn(f.ctx, args);
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_ImportSlot);

void BM_ApiCallByName(benchmark::State& state) {
  Fixture f;
  float a = 2, x = 3, y = 1, r = 0;
  void* args[] = {&f.ctx, &a, &x, &y, &r};
  const char* name = kAxpyName;
  for (auto _ : state) {
    benchmark::DoNotOptimize(name);
    ral_api_call(f.ctx, name, args);
    benchmark::DoNotOptimize(r);
  }
  if (f.exec->failed()) state.SkipWithError(f.exec->status().toString().c_str());
}
BENCHMARK(BM_ApiCallByName);

void BM_StringMapBaseline(benchmark::State& state) {
  Fixture f;
  std::unordered_map<std::string, std::function<void(void**)>> table;
  table[kAxpyName] = [&](void** args) {
    *static_cast<float*>(args[4]) =
        axpy(f.exec.get(), *static_cast<float*>(args[1]), *static_cast<float*>(args[2]),
             *static_cast<float*>(args[3]));
  };
  float a = 2, x = 3, y = 1, r = 0;
  void* args[] = {&f.ctx, &a, &x, &y, &r};
  const char* name = kAxpyName;
  for (auto _ : state) {
    benchmark::DoNotOptimize(name);
    table.find(name)->second(args);
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_StringMapBaseline);

}  // namespace
}  // namespace ral::bench

int main(int argc, char** argv) {
  using ral::bench::Ratio;
  return ral::bench::runAndReport(
      argc, argv,
      {
          Ratio{"(b) import slot / (a) direct call", "BM_ImportSlot", "BM_Direct", 1.5, true},
          Ratio{"(c) ral_api_call by name / (a) direct call", "BM_ApiCallByName", "BM_Direct"},
          Ratio{"(d) string-map lookup / (b) import slot", "BM_StringMapBaseline", "BM_ImportSlot",
                10.0, false},
      },
      {{"(c) ral_api_call by name, per call", "BM_ApiCallByName", 10.0}});
}
