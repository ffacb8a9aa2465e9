// Test helpers for modules compiled from examples/softmax.mlir (any device): a run checked
// against a double reference, and a direct call of ral_kernel_launch on a fresh execution.
// Header-only, for gtest test files.
#ifndef RAL_TESTS_SUPPORT_COMPILED_SOFTMAX_H_
#define RAL_TESTS_SUPPORT_COMPILED_SOFTMAX_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "ral/standalone_context.h"

namespace ral::testing {

// Softmax of a rows x cols CPU view (row stride `ld` >= cols) against a double reference; the
// output must be a dense CPU tensor.
inline void expectSoftmaxWorks(standalone::StandaloneContext& ctx, int64_t rows, int64_t cols,
                               int64_t ld) {
  std::vector<float> x(static_cast<size_t>(std::max<int64_t>(rows * ld, 1)));
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * static_cast<float>(i)) * 3;
  const int64_t shape[] = {rows, cols};
  const int64_t strides[] = {ld, 1};
  standalone::TensorRef ref{x.data(), DType::kF32, 2, shape, strides, DeviceKind::kCpu};
  standalone::Execution e = ctx.newExecution();
  Status bound = e.bindInput(0, ref);
  ASSERT_TRUE(bound.ok()) << bound;
  Status run = e.run();
  ASSERT_TRUE(run.ok()) << run;
  auto out = e.takeOutput(0);
  ASSERT_TRUE(out.ok()) << out.status();
  const DLTensor& t = (*out)->dl_tensor;
  EXPECT_EQ(t.device.device_type, kDLCPU);
  ASSERT_EQ(t.shape[0], rows);
  ASSERT_EQ(t.shape[1], cols);
  const float* y = static_cast<const float*>(t.data);
  for (int64_t r = 0; r < rows; ++r) {
    double m = -INFINITY, s = 0;
    for (int64_t c = 0; c < cols; ++c) m = std::max(m, double{x[r * ld + c]});
    for (int64_t c = 0; c < cols; ++c) s += std::exp(x[r * ld + c] - m);
    for (int64_t c = 0; c < cols; ++c)
      ASSERT_NEAR(y[r * cols + c], std::exp(x[r * ld + c] - m) / s, 1e-6) << r << "," << c;
  }
  (*out)->deleter(*out);
}

// Calls the RAL function `launch` (a ral_kernel_launch of some device) on a fresh execution of
// `ctx` with a 1-D grid and block; returns the execution's status.
inline Status callKernelLaunch(standalone::StandaloneContext& ctx, const char* launch,
                               int64_t executable, int64_t entry, int64_t grid, int64_t block,
                               void** args, int64_t* sizes, int64_t count) {
  Status lookup;
  ral_fn fn = ctx.lookupApi(launch, &lookup);
  if (fn == nullptr) return lookup;
  ExecutionHandle h = ctx.acquireExecution();
  void* abi = h->abi();
  int64_t one = 1, shared = 0;
  void* slots[] = {&abi, &executable, &entry,  &grid, &one,   &one,  &block,
                   &one, &one,        &shared, &args, &sizes, &count};
  fn(abi, slots);
  return h->status();
}

}  // namespace ral::testing

#endif  // RAL_TESTS_SUPPORT_COMPILED_SOFTMAX_H_
