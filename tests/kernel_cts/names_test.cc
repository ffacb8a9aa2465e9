// Every device kernel has the CPU kernel's name and signature (so one module source serves every
// device), and every library kernel registered has a suite in this conformance suite.
#include <set>
#include <string>

#include "kernel_cts.h"
#include "ral/name_encoding.h"
#include "ral/registry.h"

namespace ral::kernel_cts {
namespace {

// Targets with a TEST_P suite here.
const std::set<std::string> kCovered = {
    "ral_gemm",   "ral_batch_gemm", "ral_rng_uniform",  "ral_rng_normal",    "ral_transpose",
    "ral_memcpy", "ral_memset",     "ral_read_element", "ral_write_element", "ral_topk",
    "ral_sort",   "ral_conv",       "ral_conv_block",   "ral_conv_scaled",   "ral_qconv",
};
// The runtime's own calls, not kernels: tested with the contexts (tests/unit) and compiled
// modules (tests/modules, tests/cts).
const std::set<std::string> kRuntimeCalls = {
    "ral_alloc",      "ral_dealloc",     "ral_constant",     "ral_kernel_launch",
    "ral_recv_input", "ral_send_output", "ral_signal_error",
};

// Collectives need several ranks: tested over real communicators by tests/unit/collective_test.cc
// (every op and dtype, 2 and 4 ranks) and tests/collective (compiled modules, processes).
const std::set<std::string> kCollectives = {
    "ral_all_reduce", "ral_all_gather", "ral_reduce_scatter", "ral_broadcast", "ral_all_to_all",
    "ral_send",       "ral_recv",       "ral_comm_rank",      "ral_comm_size",
};

TEST(KernelNames, EveryDeviceKernelMirrorsACpuKernel) {
  Context context;
  size_t device_kernels = 0;
  for (const std::string& name : Registry::global().names()) {
    auto parts = parseApiName(name);
    ASSERT_TRUE(parts.ok()) << parts.status();
    const std::string device(parts->device);
    if (device == "cpu") continue;
    ++device_kernels;
    std::string cpu = name;
    cpu.replace(cpu.find("___" + device + "___"), device.size() + 6, "___cpu___");
    EXPECT_TRUE(context.resolve(cpu).ok()) << name << " has no CPU twin " << cpu;
  }
#if defined(RAL_KERNEL_CTS_VULKAN) || defined(RAL_KERNEL_CTS_CUDA) || defined(RAL_KERNEL_CTS_HSA)
  EXPECT_GT(device_kernels, 0u);
#endif
}

TEST(KernelNames, EveryLibraryKernelHasAConformanceSuite) {
  for (const std::string& name : Registry::global().names()) {
    auto parts = parseApiName(name);
    ASSERT_TRUE(parts.ok()) << parts.status();
    const std::string target(parts->target);
    if (target.rfind("ral_", 0) != 0) continue;  // tests' and hosts' own registrations
    EXPECT_TRUE(kCovered.count(target) > 0 || kRuntimeCalls.count(target) > 0 ||
                kCollectives.count(target) > 0)
        << target << " (" << name << ") is registered but tests/kernel_cts has no suite for it";
  }
}

}  // namespace
}  // namespace ral::kernel_cts
