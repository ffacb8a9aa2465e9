// The kernel conformance suite: every library kernel (ral_gemm, ral_rng_uniform, ral_transpose,
// ral_memcpy/ral_memset, ral_topk/ral_sort, ral_conv, ...) as one parameterised GoogleTest
// suite run on every device this build has, the way tests/cts runs the drivers.
//  - KernelBackend: one per device kind (cpu; vulkan on whatever the loader offers; cuda on a
//    real GPU only, since the simulated CUDA device runs no PTX; hsa on the simulated runtime,
//    which runs this binary's host stand-ins for the real code objects, hsa_sim_kernels.cc, or
//    on the runtime RAL_HSA_RUNTIME_PATH names);
//  - KernelTest: the fixture of every TEST_P: one Context per test, the backend's driver from
//    it, device copies of host vectors, typed calls by RAL name on the backend's device or the
//    CPU; skipped (with the reason) where the device is unavailable, and run as an expected
//    failure where expectations.cc lists the (op, device) pair as missing on that device.
// References: GEMM against float64 computed here; copies, fills and transposes against index
// arithmetic here; the RNG bit for bit and TopK/sort exactly against the CPU kernel (the CPU
// kernels are checked against known answers and float64 in tests/unit), convolutions against
// the CPU kernel (itself checked against float64 in tests/unit/kernels_conv_test.cc).
// A new device adds a backend in backends.cc and its gaps in expectations.cc; a new kernel adds
// one <op>_test.cc.
#ifndef RAL_TESTS_KERNEL_CTS_KERNEL_CTS_H_
#define RAL_TESTS_KERNEL_CTS_KERNEL_CTS_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "ral/api_call.h"
#include "ral/context.h"
#include "ral/driver.h"
#include "ral/half.h"
#include "ral/memref.h"
#include "tests/support/conformance.h"

namespace ral::kernel_cts {

struct KernelBackend {
  const char* name;    // the test parameter: "cpu", "vulkan", "cuda", "hsa"
  const char* device;  // the device part of the kernels' RAL names
  DeviceKind kind;
  // Why the backend cannot run in `context` here, or empty.
  std::string (*unavailable)(Context& context);
};

// Every backend built into this binary (cpu first).
const std::vector<const KernelBackend*>& backends();
std::string backendName(const ::testing::TestParamInfo<const KernelBackend*>& info);

// expectations.cc: which device does not (yet) have which kernel, and why.
extern const ::ral::testing::ExpectedFailureEntry kExpectedFailures[];

class KernelTest : public ::testing::TestWithParam<const KernelBackend*> {
 protected:
  void SetUp() override;
  void TearDown() override;

  const KernelBackend& backend() const { return *GetParam(); }
  bool onCpu() const { return backend().kind == DeviceKind::kCpu; }

  // `target` on this backend's device / on the CPU, with `args` after the context; the
  // execution's status (a missing kernel is NotFound).
  template <typename... A>
  Status call(const char* target, A... args) {
    return callOn(backend().device, target, args...);
  }
  template <typename... A>
  Status callCpu(const char* target, A... args) {
    return callOn("cpu", target, args...);
  }
  // `target` returning an R on this backend's device: its result in *result.
  template <typename R, typename... A>
  Status callReturning(const char* target, R* result, A... args) {
    const std::string name = encodeApiName(
        target, backend().device, kSignatureOf<R (*)(ExecutionContext*, A...)>.view());
    if (auto fn = context.resolve(name); !fn.ok()) return fn.status();
    ExecutionHandle exec = context.acquireExecution();
    void* ctx = exec->abi();
    void* slots[] = {&ctx, static_cast<void*>(&args)..., result};
    ral_api_call(ctx, name.c_str(), slots);
    return exec->status();
  }

  Context context;
  Driver* driver = nullptr;
  std::mt19937 rng{1234};

 public:
  // Raw device memory of this test (freed in TearDown) and copies to and from it.
  void* allocate(size_t bytes);
  void copyIn(void* device, const void* host, size_t bytes);
  void copyOut(void* host, const void* device, size_t bytes);

 private:
  template <typename... A>
  Status callOn(const char* device, const char* target, A&... args) {
    const std::string name = apiNameFor<A...>(target, device);
    if (auto fn = context.resolve(name); !fn.ok()) return fn.status();
    ExecutionHandle exec = context.acquireExecution();
    callApi(exec->abi(), name.c_str(), args...);
    return exec->status();
  }
  std::vector<void*> buffers_;
  ::ral::testing::ExpectedFailureScope xfail_;
};

}  // namespace ral::kernel_cts

// Instantiates a KernelTest-derived suite over every backend.
#define RAL_KERNEL_CTS_INSTANTIATE(suite)                                                       \
  INSTANTIATE_TEST_SUITE_P(Devices, suite, ::testing::ValuesIn(::ral::kernel_cts::backends()), \
                           ::ral::kernel_cts::backendName)

#endif  // RAL_TESTS_KERNEL_CTS_KERNEL_CTS_H_
