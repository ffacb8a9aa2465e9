#!/usr/bin/env bash
# Runs RAL's libFuzzer targets under ASan + UBSan, each for the given time:
#   module_load  Module::load on bytes (seeded with the test modules)
#   npy          the .npy and TYPE=VALUES readers of the tools (seeded with tests/fuzz/npy_seeds)
#   torch_load   ral_torch.load_bytes's native path (RalModule::fromBytes; where torch is found)
#   scripts/fuzz.sh [seconds per fuzzer=600] [build dir=build-fuzz] [fuzzer names...]
# Builds with clang-19 (libFuzzer from libclang-rt-19-dev) in its own build directory and fails on
# any crash, sanitizer report, leak or timeout. Corpora are kept in <build>/fuzz-corpus-<name>;
# inputs that once failed (tests/fuzz/regressions*) are replayed first, every time.
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_TO_RUN=${1:-600}
BUILD=${2:-build-fuzz}
shift $(( $# > 2 ? 2 : $# ))
FUZZERS=("$@")
[ ${#FUZZERS[@]} -gt 0 ] || FUZZERS=(module_load npy torch_load)
JOBS=${RAL_JOBS:-$(nproc)}

CC=clang-19 CXX=clang++-19 cmake -S . -B "$BUILD" -G Ninja -DRAL_WERROR=ON \
  -DRAL_BUILD_BENCHMARKS=OFF -DRAL_ENABLE_MLIR=OFF \
  -DRAL_SANITIZE=address,undefined,fuzzer-no-link >/dev/null

run_fuzzer() {  # <name> <binary> <seed files...>
  local name=$1 binary=$2
  shift 2
  local corpus="$BUILD/fuzz-corpus-$name"
  mkdir -p "$corpus"
  [ $# -eq 0 ] || cp "$@" "$corpus"/
  printf '\n---- fuzzer %s (%s s)\n' "$name" "$SECONDS_TO_RUN"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$binary" "$corpus" -max_total_time="$SECONDS_TO_RUN" -timeout=10 -rss_limit_mb=2048 \
    -malloc_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$BUILD/$name-"
}

for f in "${FUZZERS[@]}"; do
  case $f in
    module_load)
      cmake --build "$BUILD" -j "$JOBS" --target ral_module_load_fuzzer ral_test_modules
      run_fuzzer module_load "$BUILD/tests/fuzz/ral_module_load_fuzzer" \
        "$BUILD"/tests/modules/*.ralm tests/fuzz/regressions/*
      ;;
    npy)
      cmake --build "$BUILD" -j "$JOBS" --target ral_npy_fuzzer
      run_fuzzer npy "$BUILD/tests/fuzz/ral_npy_fuzzer" tests/fuzz/npy_seeds/* tests/fuzz/npy_regressions/*
      ;;
    torch_load)
      if ! grep -q '^RAL_ENABLE_TORCH:BOOL=ON' "$BUILD/CMakeCache.txt"; then
        echo "torch_load: skipped (no libtorch found for the torch host)"
        continue
      fi
      cmake --build "$BUILD" -j "$JOBS" --target ral_torch_load_bytes_fuzzer ral_test_modules
      run_fuzzer torch_load "$BUILD/tests/fuzz/ral_torch_load_bytes_fuzzer" \
        "$BUILD"/tests/modules/*.ralm
      ;;
    *) echo "unknown fuzzer '$f' (module_load, npy, torch_load)" >&2; exit 2 ;;
  esac
done
