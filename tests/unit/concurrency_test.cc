// 8 threads x 100,000 calls through one shared Context, by name and through resolved imports.
// Also built with -fsanitize=thread by scripts/test.sh.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "ral/api.h"
#include "ral/context.h"

namespace ral {
namespace {

constexpr int kThreads = 8;
constexpr int kCalls = 100000;

int64_t mulAdd(ExecutionContext*, int64_t x, int64_t m, int64_t a) { return x * m + a; }
RAL_API("conc_mul_add", "cpu", mulAdd);
double half(ExecutionContext*, double x) { return x / 2; }
RAL_API("conc_half", "cpu", half);
MemRef<int32_t, 1> shift(ExecutionContext*, MemRef<int32_t, 1> m, int64_t by) {
  m.offset += by;
  return m;
}
RAL_API("conc_shift", "cpu", shift);

const char* const kMulAdd = "conc_mul_add___cpu___pvoid_i64_i64_i64___i64";
const char* const kHalf = "conc_half___cpu___pvoid_f64___f64";
const char* const kShift = "conc_shift___cpu___pvoid_m1di32_i64___m1di32";

// Runs one thread's calls; returns the number of wrong results.
int64_t runCalls(Context& context, int t, bool by_name, ral_import* imports) {
  auto exec = context.acquireExecution();
  void* ctx = exec->abi();
  int64_t wrong = 0;
  int32_t buf[1];
  for (int i = 0; i < kCalls; ++i) {
    int64_t x = i, m = t + 1, a = 7, r = 0;
    void* args[] = {&ctx, &x, &m, &a, &r};
    double d = i, h = 0;
    void* hargs[] = {&ctx, &d, &h};
    MemRef<int32_t, 1> in = makeMemRef<int32_t, 1>(buf, {1}), out{};
    int64_t by = t;
    void* sargs[] = {&ctx, &in, &by, &out};
    if (by_name) {
      ral_api_call(ctx, kMulAdd, args);
      if (i % 4 == 0) ral_api_call(ctx, kHalf, hargs);
      if (i % 4 == 1) ral_api_call(ctx, kShift, sargs);
    } else {
      imports[0].fn(ctx, args);
      if (i % 4 == 0) imports[1].fn(ctx, hargs);
      if (i % 4 == 1) imports[2].fn(ctx, sargs);
    }
    wrong += r != x * (t + 1) + 7;
    if (i % 4 == 0) wrong += h != d / 2;
    if (i % 4 == 1) wrong += out.offset != t || out.aligned != buf;
  }
  wrong += exec->failed();
  return wrong;
}

void runAll(bool by_name) {
  Context context;  // fresh: the name cache is filled while the threads race
  ral_import imports[] = {{kMulAdd, nullptr}, {kHalf, nullptr}, {kShift, nullptr}};
  ASSERT_TRUE(context.resolveImports(imports, 3).ok());
  std::atomic<int64_t> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] { wrong += runCalls(context, t, by_name, imports); });
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(ConcurrencyTest, ByNameThroughOneSharedContext) { runAll(true); }
TEST(ConcurrencyTest, ThroughResolvedImports) { runAll(false); }

}  // namespace
}  // namespace ral
