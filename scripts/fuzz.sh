#!/usr/bin/env bash
# Runs RAL's libFuzzer targets under ASan + UBSan, each for the given time:
#   module_load  Module::load on bytes (seeded with the test modules)
#   npy          the .npy and TYPE=VALUES readers of the tools (seeded with tests/fuzz/npy_seeds)
#   torch_load   ral_torch.load_bytes's native path (RalModule::fromBytes; where torch is found)
#   onnx_import  the ONNX importer on ModelProto bytes (where MLIR 19 and libonnx-dev are found)
#   onnx_structure  the same with a mutator of attributes, initializers and wiring
#   scripts/fuzz.sh [seconds per fuzzer=600] [build dir=build-fuzz] [fuzzer names...]
# Builds with clang-19 (libFuzzer from libclang-rt-19-dev) in its own build directory and fails on
# any crash, sanitizer report, leak or timeout. Corpora are kept in <build>/fuzz-corpus-<name>;
# inputs that once failed (tests/fuzz/regressions*) are replayed first, every time. The ONNX
# fuzzers build in <build>-onnx, which has MLIR on: just the importer and the two fuzzers. The
# other fuzzers' build keeps MLIR off, so ral-compile stays out of their test modules. Their
# findings are grouped and shrunk with tests/fuzz/onnx_reduce.py (triage, reduce).
set -euo pipefail
shopt -s nullglob  # an empty seed or regression folder is no error
cd "$(dirname "$0")/.."

SECONDS_TO_RUN=${1:-600}
BUILD=${2:-build-fuzz}
shift $(( $# > 2 ? 2 : $# ))
FUZZERS=("$@")
[ ${#FUZZERS[@]} -gt 0 ] || FUZZERS=(module_load npy torch_load onnx_import onnx_structure)
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

ONNX_BUILD="$BUILD-onnx"
ONNX_STATE=""
onnx_ready() {  # configures the ONNX fuzzers' build and writes their seeds, once per run
  if [ -z "$ONNX_STATE" ]; then
    ONNX_STATE=missing
    CC=clang-19 CXX=clang++-19 cmake -S . -B "$ONNX_BUILD" -G Ninja -DRAL_WERROR=ON \
      -DRAL_BUILD_BENCHMARKS=OFF -DRAL_ENABLE_TORCH=OFF \
      -DRAL_SANITIZE=address,undefined,fuzzer-no-link >/dev/null
    if grep -q '^RAL_ENABLE_ONNX:BOOL=ON' "$ONNX_BUILD/CMakeCache.txt"; then
      ONNX_STATE=ready
      # Seeds: small valid models of every operator family (generated), and the ONNX backend
      # test models (Debian's libonnx-testdata), which cover every operator.
      local seeds="$ONNX_BUILD/onnx-seeds"
      rm -rf "$seeds" && mkdir -p "$seeds"
      if /usr/bin/python3 -c 'import onnx' 2>/dev/null; then
        /usr/bin/python3 tests/fuzz/onnx_seeds.py "$seeds"
      else
        echo "onnx seeds: /usr/bin/python3 cannot import onnx (python3-onnx); not generated"
      fi
      local m
      for m in /usr/share/libonnx-testdata/data/node/*/model.onnx; do
        [ -f "$m" ] && cp "$m" "$seeds/$(basename "$(dirname "$m")").onnx"
      done
    fi
  fi
  if [ "$ONNX_STATE" != ready ]; then
    echo "$1: skipped (the ONNX importer needs MLIR 19 and libonnx-dev)"
    return 1
  fi
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
    onnx_import|onnx_structure)
      onnx_ready "$f" || continue
      cmake --build "$ONNX_BUILD" -j "$JOBS" --target "ral_${f}_fuzzer"
      run_fuzzer "$f" "$ONNX_BUILD/tests/fuzz/ral_${f}_fuzzer" "$ONNX_BUILD"/onnx-seeds/* \
        tests/fuzz/onnx_regressions/*
      ;;
    *)
      echo "unknown fuzzer '$f' (module_load, npy, torch_load, onnx_import, onnx_structure)" >&2
      exit 2
      ;;
  esac
done
