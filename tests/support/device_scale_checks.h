// Test helpers for tests/modules/device_scale.c (y = 2x + 1 on a device whose runtime is
// simulated: hsa_scale, cuda_scale): runs over dense, strided and empty inputs, and chains of
// submissions from many threads. Header-only, for gtest test files.
#ifndef RAL_TESTS_SUPPORT_DEVICE_SCALE_CHECKS_H_
#define RAL_TESTS_SUPPORT_DEVICE_SCALE_CHECKS_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "ral/standalone_context.h"
#include "ral/submission.h"

namespace ral::testing {

// A 1-D f32 CPU tensor over `x` (`shape` receives its size), dense or with `strides`.
inline DLTensor floats(std::vector<float>& x, int64_t* shape, int64_t* strides = nullptr) {
  shape[0] = strides == nullptr ? static_cast<int64_t>(x.size()) : shape[0];
  DLTensor t{};
  t.data = x.data();
  t.device = {kDLCPU, 0};
  t.ndim = 1;
  t.dtype = {kDLFloat, 32, 1};
  t.shape = shape;
  t.strides = strides;
  return t;
}

// One run over n elements of a view with `stride`.
inline void expectScale(standalone::StandaloneContext& ctx, int64_t n, int64_t stride) {
  std::vector<float> storage(static_cast<size_t>(std::max<int64_t>(n * stride, 1)));
  for (size_t i = 0; i < storage.size(); ++i) storage[i] = static_cast<float>(i) * 0.25f - 3.0f;
  int64_t shape[1] = {n};
  int64_t strides[1] = {stride};
  DLTensor x = floats(storage, shape, strides);
  auto out = ctx.run({&x});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 1u);
  const DLTensor& y = (*out)[0]->dl_tensor;
  ASSERT_EQ(y.ndim, 1);
  ASSERT_EQ(y.shape[0], n);
  const float* v = static_cast<const float*>(y.data);
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(v[i], 2.0f * storage[static_cast<size_t>(i * stride)] + 1.0f) << "at " << i;
}

// Runs of the module on `device`: 16 groups of 64, a strided view, one element, an empty grid
// (which launches nothing), and again 16 groups (the next run is still correct).
inline void expectScaleRuns(standalone::StandaloneContext& ctx, DeviceKind device) {
  EXPECT_EQ(ctx.device(), device);
  for (auto [n, stride] :
       {std::pair<int64_t, int64_t>{1000, 1}, {37, 3}, {1, 1}, {0, 1}, {1000, 1}})
    expectScale(ctx, n, stride);
}

// From four threads, chains of three submissions linked by outputs and a semaphore each (three
// times y = 2x + 1: 8x + 7); then a chain whose middle submission waits on a semaphore that
// fails, which fails the rest of its chain, and a submission after it that is correct.
inline void expectChainsFromManyThreads(standalone::StandaloneContext& ctx) {
  using standalone::SubmitInput;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 5; ++round) {
        std::vector<float> x(64);
        for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(t * 100 + round) + i;
        int64_t shape[1];
        DLTensor dx = floats(x, shape);
        auto sem = ctx.createSemaphore(0);
        if (!sem.ok()) return (void)++wrong;
        auto a = ctx.submit({&dx}, {}, {{*sem, 1}});
        if (!a.ok()) return (void)++wrong;
        auto b = ctx.submit({SubmitInput(*a, 0)}, {{*sem, 1}}, {{*sem, 2}});
        if (!b.ok()) return (void)++wrong;
        auto c = ctx.submit({SubmitInput(*b, 0)}, {{*sem, 2}}, {{*sem, 3}});
        if (!c.ok() || !(*sem)->wait(3).ok()) return (void)++wrong;
        auto out = (*c)->outputs();
        if (!out.ok()) return (void)++wrong;
        const float* y = static_cast<const float*>((*out)[0]->dl_tensor.data);
        for (size_t i = 0; i < x.size(); ++i)
          if (y[i] != 8 * x[i] + 7) ++wrong;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);

  std::vector<float> x = {1, 2, 3};
  int64_t shape[1];
  DLTensor dx = floats(x, shape);
  auto gate = ctx.createSemaphore(0);
  ASSERT_TRUE(gate.ok());
  auto a = ctx.submit({&dx});
  auto b = ctx.submit({SubmitInput(*a, 0)}, {{*gate, 1}});
  auto c = ctx.submit({SubmitInput(*b, 0)});
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  (*gate)->fail(aborted("no input today"));
  Status end = (*c)->wait();
  EXPECT_EQ(end.code(), StatusCode::kAborted) << end;
  EXPECT_TRUE((*a)->wait().ok());
  auto again = ctx.submit({&dx});
  ASSERT_TRUE(again.ok());
  auto out = (*again)->outputs();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(static_cast<const float*>((*out)[0]->dl_tensor.data)[2], 7.0f);
}

}  // namespace ral::testing

#endif  // RAL_TESTS_SUPPORT_DEVICE_SCALE_CHECKS_H_
