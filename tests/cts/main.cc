// The conformance suite's main(): points the CUDA and HSA drivers at the simulated libraries, and
// prints, after the run, one line per driver: how many tests passed, were skipped, failed as
// expected (xfail) or failed.
#include <cstdlib>

#include "cts.h"

int main(int argc, char** argv) {
#ifdef RAL_SIM_CUDA_LIBRARY
  // The cuda backend is the simulated device, whatever this machine has.
  setenv("RAL_CUDA_DRIVER_PATH", RAL_SIM_CUDA_LIBRARY, 1);
#endif
#ifdef RAL_SIM_HSA_LIBRARY
  // So is the hsa backend.
  setenv("RAL_HSA_RUNTIME_PATH", RAL_SIM_HSA_LIBRARY, 1);
#endif
  ::testing::InitGoogleTest(&argc, argv);
  ral::testing::installConformanceReport("Driver conformance", "driver");
  return RUN_ALL_TESTS();
}
