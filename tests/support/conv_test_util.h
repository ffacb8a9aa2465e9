// ral_conv cases for the CUDA tests and the kernel conformance suite: operands in several layouts
// on the host, copies of them on a device's driver (a GPU, or the simulated CUDA one), the CPU
// kernel's result as the reference and the comparison with the device kernel's.
#ifndef RAL_TESTS_SUPPORT_CONV_TEST_UTIL_H_
#define RAL_TESTS_SUPPORT_CONV_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "ral/context.h"
#include "ral/driver.h"
#include "ral/memref.h"
#include "ral/name_encoding.h"
#include "tests/support/conv_cases.h"

namespace ral::cuda::testing {

using ::ral::testing::basicConv;
using ::ral::testing::ConvCase;
using ::ral::testing::convShapeCases;
using ::ral::testing::convTransposedCases;
using ::ral::testing::ConvShapes;
using ::ral::testing::HostTensor;
using ::ral::testing::Store;
using ::ral::testing::storeName;

template <int R>
using ConvFn = void (*)(ExecutionContext*, MemRef<float, R>, MemRef<float, R>, MemRef<float, 1>,
                        MemRef<float, R>, MemRef<int64_t, 1>, float, float);

template <int R>
std::string convName(const char* device) {
  return encodeApiName("ral_conv", device, kSignatureOf<ConvFn<R>>.view());
}

// Runs ral_conv of `device` on one execution of `context` and returns its status.
template <int R>
Status callConv(Context& context, const char* device, MemRef<float, R> x, MemRef<float, R> w,
                MemRef<float, 1> bias, MemRef<float, R> y, MemRef<int64_t, 1> config, float alpha,
                float beta, Stream* stream = nullptr) {
  ExecutionHandle exec = context.acquireExecution();
  exec->setStream(stream);
  void* ctx = exec->abi();
  auto fn = context.resolve(convName<R>(device));
  if (!fn.ok()) return fn.status();
  void* args[] = {&ctx, &x, &w, &bias, &y, &config, &alpha, &beta};
  (*fn)(ctx, args);
  return exec->status();
}

// A device copy of a host tensor's storage and the same view over it.
template <int R>
struct DeviceTensor {
  Driver* driver = nullptr;
  void* ptr = nullptr;
  MemRef<float, R> view{};

  DeviceTensor(Driver* d, const HostTensor<R>& host) : driver(d), view(host.view) {
    const size_t bytes = host.storage.size() * sizeof(float);
    auto p = driver->allocate(bytes);
    EXPECT_TRUE(p.ok()) << p.status();
    if (!p.ok()) return;
    ptr = *p;
    EXPECT_TRUE(driver->copy(ptr, host.storage.data(), bytes, CopyKind::kHostToDevice).ok());
    view.allocated = view.aligned = static_cast<float*>(ptr);
  }
  ~DeviceTensor() {
    if (ptr != nullptr) (void)driver->deallocate(ptr);
  }
  DeviceTensor(const DeviceTensor&) = delete;
  DeviceTensor& operator=(const DeviceTensor&) = delete;
  // The device storage, back on the host.
  std::vector<float> read(size_t elements) const {
    std::vector<float> out(elements);
    EXPECT_TRUE(driver->synchronize().ok());
    EXPECT_TRUE(
        driver->copy(out.data(), ptr, elements * sizeof(float), CopyKind::kDeviceToHost).ok());
    EXPECT_TRUE(driver->synchronize().ok());
    return out;
  }
};

// The operands of one case, in the layouts it asks for.
template <int R>
struct ConvOperands {
  ConvCase cs;
  HostTensor<R> x, w, y;
  HostTensor<1> bias;
  std::vector<int64_t> config;
  MemRef<int64_t, 1> config_view{};

  ConvOperands(const ConvCase& c, std::mt19937& rng)
      : cs(c),
        x(ConvShapes<R>::x(c), c.xs, ConvShapes<R>::channelDim(c)),
        w(ConvShapes<R>::weight(c), c.ws, 1),
        y(ConvShapes<R>::y(c), c.ys, ConvShapes<R>::channelDim(c)),
        bias({c.bias ? c.f : 0}, c.bs, 0) {
    x.fill(rng);
    w.fill(rng);
    bias.fill(rng);
    // The residual, or garbage the kernel must overwrite.
    if (c.residual()) {
      y.fill(rng);
    } else {
      y.fill(rng, 100, 200);
    }
    const int s = R - 2;
    config = {s, c.groups, c.act, c.flags};
    for (const auto* v : {&c.stride, &c.dil, &c.pb, &c.pe})
      for (int d = 0; d < s; ++d) config.push_back((*v)[d]);
    config_view.allocated = config_view.aligned = config.data();
    config_view.sizes[0] = static_cast<int64_t>(config.size());
    config_view.strides[0] = 1;
  }

  // The CPU kernel's y storage (y's storage is left as it was).
  std::vector<float> cpuResult(Context& context) {
    const std::vector<float> before = y.storage;
    const Status s = callConv<R>(context, "cpu", x.view, w.view, bias.view, y.view, config_view,
                                 cs.alpha, cs.beta);
    EXPECT_TRUE(s.ok()) << "cpu: " << s << " for " << cs.describe();
    std::vector<float> out = y.storage;
    y.storage = before;
    return out;
  }

  // Runs the cuda kernel on device copies of the operands; *out gets y's storage after it.
  Status cudaCall(Context& context, Driver* gpu, std::vector<float>* out,
                  Stream* stream = nullptr) {
    return deviceCall(context, gpu, "cuda", out, stream);
  }
  // The same with the kernel of `device` (whose driver is `gpu`).
  Status deviceCall(Context& context, Driver* gpu, const char* device, std::vector<float>* out,
                    Stream* stream = nullptr) {
    DeviceTensor<R> dx(gpu, x), dw(gpu, w), dy(gpu, y);
    DeviceTensor<1> db(gpu, bias);
    // The copies above are on the default stream.
    EXPECT_TRUE(gpu->synchronize().ok());
    const Status s = callConv<R>(context, device, dx.view, dw.view, db.view, dy.view, config_view,
                                 cs.alpha, cs.beta, stream);
    EXPECT_TRUE(gpu->synchronize(stream).ok());
    if (out != nullptr) *out = dy.read(y.storage.size());
    return s;
  }
};

// Every element of y's view in `got` is within float tolerance of `want`, and nothing outside
// the view changed.
template <int R>
void expectSameY(const ConvOperands<R>& ops, const std::vector<float>& got,
                 const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_NEAR(got[i], want[i], 2e-4 * std::max(1.0f, std::abs(want[i])))
        << ops.cs.describe() << " at storage element " << i << " (y has " << ops.y.numel()
        << " elements)";
}

// The kernel of `device` (driver `gpu`) gives the CPU kernel's y for case `cs` (1-, 2- or 3-D).
template <int R>
void expectDeviceMatchesCpuR(Context& context, Driver* gpu, const char* device, const ConvCase& cs,
                             std::mt19937& rng) {
  ConvOperands<R> ops(cs, rng);
  const std::vector<float> want = ops.cpuResult(context);
  std::vector<float> got;
  const Status s = ops.deviceCall(context, gpu, device, &got);
  ASSERT_TRUE(s.ok()) << s << " for " << cs.describe();
  expectSameY(ops, got, want);
}

inline void expectDeviceMatchesCpu(Context& context, Driver* gpu, const char* device,
                                   const ConvCase& cs, std::mt19937& rng) {
  switch (cs.spatial()) {
    case 1:
      return expectDeviceMatchesCpuR<3>(context, gpu, device, cs, rng);
    case 2:
      return expectDeviceMatchesCpuR<4>(context, gpu, device, cs, rng);
    case 3:
      return expectDeviceMatchesCpuR<5>(context, gpu, device, cs, rng);
  }
  FAIL() << "bad case " << cs.describe();
}

inline Status cudaConvStatus(Context& context, Driver* gpu, const ConvCase& cs, std::mt19937& rng);

inline void expectCudaMatchesCpu(Context& context, Driver* gpu, const ConvCase& cs,
                                 std::mt19937& rng) {
  expectDeviceMatchesCpu(context, gpu, "cuda", cs, rng);
}

// The status of the kernel of `device` for case `cs`.
inline Status deviceConvStatus(Context& context, Driver* gpu, const char* device,
                               const ConvCase& cs, std::mt19937& rng) {
  switch (cs.spatial()) {
    case 1:
      return ConvOperands<3>(cs, rng).deviceCall(context, gpu, device, nullptr);
    case 2:
      return ConvOperands<4>(cs, rng).deviceCall(context, gpu, device, nullptr);
    default:
      return ConvOperands<5>(cs, rng).deviceCall(context, gpu, device, nullptr);
  }
}

inline Status cudaConvStatus(Context& context, Driver* gpu, const ConvCase& cs, std::mt19937& rng) {
  return deviceConvStatus(context, gpu, "cuda", cs, rng);
}

}  // namespace ral::cuda::testing

#endif  // RAL_TESTS_SUPPORT_CONV_TEST_UTIL_H_
