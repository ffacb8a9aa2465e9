// CudaDriver::targetRank's rule (drivers/cuda/cuda_target.h), without a GPU: which PTX and CUBIN
// variants a device of a given compute capability runs, and which it prefers.
#include "drivers/cuda/cuda_target.h"

#include <gtest/gtest.h>

namespace ral::cuda {
namespace {

TEST(CudaTargetRankTest, PtxRunsOnItsArchitectureAndNewer) {
  EXPECT_EQ(cudaTargetRank(ExecutableFormat::kPtx, "sm_80", 80), 80);
  EXPECT_EQ(cudaTargetRank(ExecutableFormat::kPtx, "sm_80", 90), 80);
  EXPECT_EQ(cudaTargetRank(ExecutableFormat::kPtx, "sm_75", 90), 75);
  EXPECT_LT(cudaTargetRank(ExecutableFormat::kPtx, "sm_75", 90),
            cudaTargetRank(ExecutableFormat::kPtx, "sm_90", 90));
  EXPECT_EQ(cudaTargetRank(ExecutableFormat::kPtx, "sm_90", 86), -1);
  EXPECT_EQ(cudaTargetRank(ExecutableFormat::kPtx, "sm_100", 90), -1);
  EXPECT_EQ(cudaTargetRank(ExecutableFormat::kPtx, "sm_100", 100), 100);
}

TEST(CudaTargetRankTest, ArchitectureSpecificAndCubinNeedAnExactMatch) {
  EXPECT_EQ(cudaTargetRank(ExecutableFormat::kPtx, "sm_90a", 90), 90);
  EXPECT_EQ(cudaTargetRank(ExecutableFormat::kPtx, "sm_90a", 100), -1);
  EXPECT_EQ(cudaTargetRank(ExecutableFormat::kCubin, "sm_80", 80), 80);
  EXPECT_EQ(cudaTargetRank(ExecutableFormat::kCubin, "sm_80", 86), -1);
}

TEST(CudaTargetRankTest, EmptyTargetRunsAnywhereAndOthersNowhere) {
  EXPECT_EQ(cudaTargetRank(ExecutableFormat::kPtx, "", 75), 0);
  EXPECT_EQ(cudaTargetRank(ExecutableFormat::kFatbin, "", 75), 0);
  EXPECT_EQ(cudaTargetRank(ExecutableFormat::kFatbin, "sm_75", 75), -1);
  for (const char* bad : {"gfx90a", "sm_", "sm_8x", "sm_80b", "compute_80", "sm_123456"})
    EXPECT_EQ(cudaTargetRank(ExecutableFormat::kPtx, bad, 90), -1) << bad;
}

}  // namespace
}  // namespace ral::cuda
