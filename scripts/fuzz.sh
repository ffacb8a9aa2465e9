#!/usr/bin/env bash
# Fuzzes the module loader (Module::load on bytes) with libFuzzer under ASan + UBSan.
#   scripts/fuzz.sh [seconds=600] [build dir=build-fuzz]
# Builds with clang-19 (libFuzzer from libclang-rt-19-dev) in its own build directory, seeds the
# corpus with the test modules and fails on any crash, sanitizer report, leak or timeout. The
# corpus is kept in <build>/fuzz-corpus.
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_TO_RUN=${1:-600}
BUILD=${2:-build-fuzz}
JOBS=${RAL_JOBS:-$(nproc)}

CC=clang-19 CXX=clang++-19 cmake -S . -B "$BUILD" -G Ninja -DRAL_WERROR=ON \
  -DRAL_BUILD_BENCHMARKS=OFF -DRAL_ENABLE_MLIR=OFF \
  -DRAL_SANITIZE=address,undefined,fuzzer-no-link >/dev/null
cmake --build "$BUILD" -j "$JOBS" --target ral_module_load_fuzzer ral_test_modules

CORPUS="$BUILD/fuzz-corpus"
mkdir -p "$CORPUS"
cp "$BUILD"/tests/modules/*.ralm "$CORPUS"/
# Inputs that once failed: libFuzzer runs the whole corpus first, so they are checked every time.
cp tests/fuzz/regressions/* "$CORPUS"/
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  "$BUILD/tests/fuzz/ral_module_load_fuzzer" "$CORPUS" \
  -max_total_time="$SECONDS_TO_RUN" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="$BUILD/"
