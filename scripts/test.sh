#!/usr/bin/env bash
# The test command: installs what RAL needs, configures, builds and runs every test.
#   1. the full build (warnings as errors) and its CTest suite;
#   2. the core, drivers and kernels again under AddressSanitizer + UndefinedBehaviorSanitizer;
#   3. the concurrency tests under ThreadSanitizer;
#   4. the fuzzers (module loader, .npy readers, ral_torch.load_bytes, the ONNX importer) for 60 s
#      each (clang-19; scripts/fuzz.sh runs them longer).
# Any test failure or sanitizer report fails the script.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh

JOBS=${RAL_JOBS:-$(nproc)}
export CTEST_PARALLEL_LEVEL=$JOBS
# ccache keeps its default cache (~/.cache/ccache), shared by every checkout on the machine.
GEN=(-G Ninja)

step() { printf '\n==== %s\n' "$*"; }

step "build (warnings as errors)"
cmake -S . -B build "${GEN[@]}" -DRAL_WERROR=ON
cmake --build build -j "$JOBS"
step "tests"
ctest --test-dir build --output-on-failure -j "$JOBS"

# Sanitizer builds cover the core and the components tests can reach without heavy hosts.
# The MLIR compiler is left out: LLVM is not built with sanitizers, and it would double CI time.
SAN_OPTS=(-DRAL_WERROR=ON -DRAL_BUILD_BENCHMARKS=OFF -DCMAKE_BUILD_TYPE=Debug -DRAL_ENABLE_MLIR=OFF
          -DRAL_ENABLE_TORCH=OFF)
step "AddressSanitizer + UndefinedBehaviorSanitizer"
cmake -S . -B build-asan "${GEN[@]}" "${SAN_OPTS[@]}" -DRAL_SANITIZE=address,undefined
cmake --build build-asan -j "$JOBS"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j "$JOBS" -LE install

step "ThreadSanitizer (concurrency tests)"
cmake -S . -B build-tsan "${GEN[@]}" "${SAN_OPTS[@]}" -DRAL_SANITIZE=thread
TSAN_TARGETS=(ral_concurrency_test ral_core_test ral_cpu_driver_test ral_kernels_test
              ral_standalone_concurrency_test ral_driver_cts)
# The CUDA driver's semaphore machinery (fake event backend) when the CUDA toolkit is present,
# and submissions of a module on the simulated CUDA driver.
if grep -q '^RAL_ENABLE_CUDA:BOOL=ON' build-tsan/CMakeCache.txt; then
  TSAN_TARGETS+=(ral_cuda_timeline_test ral_cuda_module_test)
fi
# Submissions of a module on the simulated HSA runtime.
if grep -q '^RAL_ENABLE_HSA:BOOL=ON' build-tsan/CMakeCache.txt; then
  TSAN_TARGETS+=(ral_hsa_module_test)
fi
# Collectives between threads as ranks, over Gloo, and the TCP store of their rendezvous.
if grep -q '^RAL_ENABLE_GLOO:BOOL=ON' build-tsan/CMakeCache.txt; then
  TSAN_TARGETS+=(ral_collective_test)
  if grep -q '^RAL_ENABLE_CUDA:BOOL=ON' build-tsan/CMakeCache.txt; then
    TSAN_TARGETS+=(ral_cuda_collective_test ral_sim_cuda ral_sim_nccl)
  fi
fi
# The Vulkan semaphores and streams on lavapipe (races with lavapipe's own uninstrumented threads,
# the device side, are suppressed: see tests/tsan.supp).
if grep -q '^RAL_ENABLE_VULKAN:BOOL=ON' build-tsan/CMakeCache.txt; then
  TSAN_TARGETS+=(ral_vulkan_semaphore_test)
fi
cmake --build build-tsan -j "$JOBS" --target "${TSAN_TARGETS[@]}"
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/tests/tsan.supp \
  ctest --test-dir build-tsan --output-on-failure -j "$JOBS" -R 'Concurrency|Thread|Lazily|ResourceCache|SubmitTest|CudaModuleTest|HsaModuleTest|Collective|TcpStore|Nccl' \
  -E 'NcclSystemTest'  # the machine's libnccl is not built for TSan: its own threads' writes
# The conformance suite's multi-threaded tests (semaphores and streams), on every driver.
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/tests/tsan.supp RAL_VULKAN_PIPELINE_CACHE_DIR=off \
  build-tsan/tests/cts/ral_driver_cts --gtest_filter='*Concurrency*:*Thread*'

step "libFuzzer: module loader, .npy readers, ral_torch.load_bytes, ONNX importer (60 s each, clang-19, ASan + UBSan)"
bash scripts/fuzz.sh 60 build-fuzz

step "all tests passed"
