// The embedded HSA library on a GPU it has no code object for (a ctest of its own runs this with
// RAL_SIM_HSA_ISA naming gfx1030): the kernels fail with an error naming the processors the
// library has and the one the GPU is.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "kernels/hsa/hsa_env.h"
#include "ral/api_call.h"
#include "ral/context.h"
#include "tests/sim_hsa/sim_hsa_kernel.h"

namespace ral::kernel_cts {
namespace {

TEST(HsaLibrary, ALibraryWithoutTheGpusProcessorIsAClearError) {
  const char* isa = std::getenv(RAL_SIM_HSA_ISA_ENV);
  if (isa == nullptr || std::string(isa).find("gfx1030") == std::string::npos)
    GTEST_SKIP() << "runs with " << RAL_SIM_HSA_ISA_ENV << "=amdgcn-amd-amdhsa--gfx1030";
  Context context;
  auto driver = context.driver(DeviceKind::kHsa);
  ASSERT_TRUE(driver.ok()) << driver.status();
  auto p = (*driver)->allocate(8 * sizeof(float));
  ASSERT_TRUE(p.ok()) << p.status();
  auto a = makeMemRef<float, 2>(static_cast<float*>(*p), {2, 2});
  auto c = makeMemRef<float, 2>(static_cast<float*>(*p) + 4, {2, 2});
  bool f = false;
  ExecutionHandle exec = context.acquireExecution();
  const std::string name = apiNameFor<MemRef<float, 2>, MemRef<float, 2>, MemRef<float, 2>, bool,
                                      bool>("ral_gemm", "hsa");
  callApi(exec->abi(), name.c_str(), a, a, c, f, f);
  const Status s = exec->status();
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s;
  for (const auto& v : kernels::hsa::kernelLibrary().variants())
    EXPECT_NE(s.message().find(v.target), std::string::npos) << s;
  EXPECT_NE(s.message().find("gfx1030"), std::string::npos) << s;
  EXPECT_TRUE((*driver)->deallocate(*p).ok());
}

}  // namespace
}  // namespace ral::kernel_cts
