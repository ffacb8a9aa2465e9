#!/usr/bin/env bash
# GPU check: builds RAL with its GPU drivers and runs every GPU path on the real hardware, then
# prints one table of results (also written to <build dir>/gpu-check-summary.txt).
#
# The CI machines have no GPU, so there the CUDA and HSA drivers only run against the simulated
# runtimes (sim_cuda.*, sim_hsa.* in CTest) and their real-device tests skip. This script is the
# counterpart for a machine with an NVIDIA GPU (and/or an AMD GPU): nothing it runs may skip for
# lack of a device.
#
#   scripts/gpu-check.sh                       # detect GPUs, install, configure, build, run
#   scripts/gpu-check.sh --dry-run --assume-gpu=nvidia   # print what would run, run nothing
#
# A GPU machine that cannot build RAL (no Debian packages, no network) runs the same checks from
# a bundle built here: scripts/gpu-pack.sh, then <bundle>/run.sh there.
#
# Options:
#   --build-dir DIR      build directory (default: $RAL_GPU_BUILD_DIR or build-gpu)
#   --assume-gpu=KIND    nvidia, amd or both: skip GPU detection
#   --skip-deps          do not run scripts/install-deps.sh
#   --dry-run            print the steps (commands, ctest selections) without running them
#   -h, --help           this text
# Environment: RAL_JOBS (parallel build jobs, default nproc), CUDA_HOME (CUDA toolkit, default
# /usr/local/cuda), RAL_GPU_CHECK_BENCH_MIN_TIME (google-benchmark --benchmark_min_time, 0.05).
#
# Exit status: 0 every step that ran passed; 1 a step failed; 2 no GPU on this machine (nothing
# was built); 64 bad usage. Logs of every step: <build dir>/gpu-check-logs/<step>.log.
#
# The step functions are called through run_step, which shellcheck cannot follow:
# shellcheck disable=SC2317
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

BUILD_DIR=${RAL_GPU_BUILD_DIR:-build-gpu}
JOBS=${RAL_JOBS:-$(nproc)}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
BENCH_MIN_TIME=${RAL_GPU_CHECK_BENCH_MIN_TIME:-0.05}
DRY_RUN=0
SKIP_DEPS=0
ASSUME_GPU=""
HAVE_NVIDIA=0
HAVE_AMD=0

# ---- CTest selections (test names as registered by tests/cuda, tests/hsa, tests/torch) ---------
# The CUDA driver on the real libcuda.so.1: the same binaries also run on the simulated driver as
# sim_cuda.*, which these anchored names leave out. TimelineTest is ral_cuda_timeline_test.
CUDA_DRIVER_TESTS='^(CudaLibraryTest|CudaDriverTest|CudaDeviceTest|AllocatorTest|CudaTargetRankTest|TimelineTest)\.'
# Skips that are right on a GPU machine: tests of the no-driver errors, of the simulated device,
# and of the CUDA stub library (absent from some toolkits).
CUDA_DRIVER_OK_SKIPS='^(CudaDriverTest\.(ContextReportsUnavailableWithoutADriver|KernelCallWithoutADriverSignalsTheError)|CudaDeviceTest\.PtxOnTheSimulatedDeviceIsAnInvalidImage|CudaLibraryTest\.StubLibraryIsUnavailable)$'
# The kernel conformance suite (tests/kernel_cts) on one device: skips that are right on a GPU
# machine. ral_conv needs cuDNN (the note says when it was missing); HSA has no ral_conv.
CUDA_KERNEL_OK_SKIPS='^Devices/Conv\.MatchesCpu/cuda$'
HSA_KERNEL_OK_SKIPS='^$'
HSA_RUNTIME=${RAL_HSA_RUNTIME_PATH:-libhsa-runtime64.so.1}
CUDA_RAL_RUN_TEST='^ral_run_cuda_device$'
TORCH_TESTS='^ral_torch_pytest$'
VULKAN_CTS_TEST='^ral_driver_cts$'
# The HSA driver on the machine's runtime (libhsa-runtime64.so.1) and ral-run --device=hsa.
HSA_REAL_TESTS='^(HsaRealRuntime\.CreatesTheDriverOrSaysWhyNot|ral_run_hsa_device)$'

# ---- helpers ------------------------------------------------------------------------------------

usage() { sed -n '2,/^# The step functions/p' "$0" | sed '$d' | sed '$d' | sed 's/^# \{0,1\}//'; }

die_usage() { echo "gpu-check: $*" >&2; echo "run with --help for usage" >&2; exit 64; }

parse_args() {
  while [ $# -gt 0 ]; do
    case "$1" in
      --build-dir) [ $# -ge 2 ] || die_usage "--build-dir needs a value"; BUILD_DIR=$2; shift ;;
      --build-dir=*) BUILD_DIR=${1#*=} ;;
      --assume-gpu=*) ASSUME_GPU=${1#*=} ;;
      --skip-deps) SKIP_DEPS=1 ;;
      --dry-run) DRY_RUN=1 ;;
      -h|--help) usage; exit 0 ;;
      *) die_usage "unknown argument '$1'" ;;
    esac
    shift
  done
  case "$ASSUME_GPU" in
    ""|nvidia|amd|both) ;;
    *) die_usage "--assume-gpu takes nvidia, amd or both, not '$ASSUME_GPU'" ;;
  esac
  case "$BUILD_DIR" in /*) ;; *) BUILD_DIR=$ROOT/$BUILD_DIR ;; esac
  LOG_DIR=$BUILD_DIR/gpu-check-logs
}

# The words of a command as a shell would read them back (single quotes where needed).
show_cmd() {
  local arg out=""
  for arg in "$@"; do
    if [[ $arg =~ ^[A-Za-z0-9_./=:,+@%-]+$ ]]; then out+=" $arg"
    else out+=" '${arg//\'/\'\\\'\'}'"; fi
  done
  printf '%s\n' "${out# }"
}

# Runs a command, or prints it in a dry run.
x() {
  if [ "$DRY_RUN" = 1 ]; then
    printf '    $ %s' "$(show_cmd "$@")"; printf '\n'
    return 0
  fi
  printf '+ %s\n' "$(show_cmd "$@")"
  "$@"
}

# A step's precondition does not hold: a SKIP with the reason (in a dry run: say so, and go on
# printing what the step runs where it holds).
NOTE=""
not_here() {
  NOTE=$1
  if [ "$DRY_RUN" = 1 ]; then
    echo "    (not run on this machine: $1; where it holds, the step runs:)"
    return 0
  fi
  return 1
}

# ctest_sel <regex> [ctest args...]: the build's tests whose names match, one at a time (the
# device tests include out-of-memory ones, which would starve tests running beside them).
ctest_sel() {
  local regex=$1; shift
  x ctest --test-dir "$BUILD_DIR" --output-on-failure --no-tests=error --timeout 600 -R "$regex" "$@"
}

# Copies stdin to the log file $1 and to stdout (stdout only in a dry run: nothing is written).
log_to() { if [ "$DRY_RUN" = 1 ]; then cat; else tee "$1"; fi; }

# Names of the tests ctest reported as skipped, one per line (from its "did not run" list).
skipped_tests() { grep -oE '[0-9]+ - [^ ]+ \(Skipped\)' "$1" | awk '{print $3}' || true; }

# Runs a ctest selection, logging to $2, and judges skips: any skip not matching the allowed
# regex $3 means the GPU path did not run. Sets NOTE.
ctest_gpu_step() {
  local regex=$1 log=$2 ok_skips=$3 rc=0
  ctest_sel "$regex" 2>&1 | log_to "$log" || rc=$?
  [ "$DRY_RUN" = 1 ] && return 0
  local total skipped bad
  total=$(grep -oE '[0-9]+ tests? failed out of [0-9]+' "$log" | awk '{print $NF}' | tail -1)
  skipped=$(skipped_tests "$log")
  bad=$(printf '%s\n' "$skipped" | grep -vE "$ok_skips" | grep -v '^$' || true)
  if [ -z "$total" ]; then
    NOTE="no test ran (none matched '$regex'?); see $(basename "$log")"
    return 1
  fi
  if [ "$rc" -ne 0 ]; then
    NOTE="$(grep -cE '\((Failed|Timeout|Subprocess|SEGFAULT|Child|Exception|Not Run)' "$log" \
      || true) of $total failed: $(grep -oE '[0-9]+ - [^ ]+ \((Failed|Timeout|Subprocess|SEGFAULT|Child|Exception|Not Run)' \
      "$log" | awk '{print $3}' | head -3 | paste -sd ' ' -) ...; see $(basename "$log")"
    return 1
  fi
  if [ -n "$bad" ]; then
    NOTE="$(printf '%s\n' "$bad" | grep -c .) of $total skipped (no GPU?): \
$(printf '%s\n' "$bad" | head -3 | paste -sd ' ' -) ...; see $(basename "$log")"
    return 1
  fi
  NOTE="$total tests"
  [ -n "$skipped" ] && NOTE="$NOTE, $(printf '%s\n' "$skipped" | grep -c .) expected skip(s): \
$(printf '%s' "$skipped" | tr '\n' ' ')"
  return 0
}

# ---- GPU detection ------------------------------------------------------------------------------

NVIDIA_WHY=""
AMD_WHY=""

detect_nvidia() {
  local out
  if command -v nvidia-smi >/dev/null 2>&1; then
    if out=$(nvidia-smi -L 2>&1) && printf '%s\n' "$out" | grep -q '^GPU [0-9]'; then
      HAVE_NVIDIA=1
      printf '%s\n' "$out" | sed 's/^/  nvidia: /'
      return
    fi
    NVIDIA_WHY="nvidia-smi -L lists no GPU: $(printf '%s' "$out" | head -1)"
  else
    NVIDIA_WHY="nvidia-smi not found (no NVIDIA driver installed)"
  fi
  # No usable nvidia-smi: a driver library with a device node still counts.
  if ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
    if [ -e /dev/nvidia0 ]; then
      HAVE_NVIDIA=1
      echo "  nvidia: libcuda.so.1 and /dev/nvidia0 present ($NVIDIA_WHY)"
      return
    fi
    NVIDIA_WHY="$NVIDIA_WHY; libcuda.so.1 is installed but there is no /dev/nvidia0"
  else
    NVIDIA_WHY="$NVIDIA_WHY; no libcuda.so.1 in the linker cache"
  fi
}

detect_amd() {
  if [ ! -e /dev/kfd ]; then
    AMD_WHY="no /dev/kfd (no amdgpu kernel driver or no AMD GPU)"
    return
  fi
  if command -v rocminfo >/dev/null 2>&1; then
    if rocminfo 2>/dev/null | grep -qE 'Device Type: +GPU'; then
      HAVE_AMD=1
      rocminfo | grep -E '^ +Name: +gfx' | sort -u | sed 's/^ */  amd: /'
      return
    fi
    AMD_WHY="/dev/kfd present but rocminfo lists no GPU agent"
    return
  fi
  # Without rocminfo: GPU nodes of the KFD topology have SIMDs.
  if grep -qsE '^simd_count [1-9]' /sys/class/kfd/kfd/topology/nodes/*/properties; then
    HAVE_AMD=1
    echo "  amd: a GPU node in /sys/class/kfd/kfd/topology (rocminfo not installed)"
    return
  fi
  AMD_WHY="/dev/kfd present but no GPU node in the KFD topology (and no rocminfo)"
}

detect_gpus() {
  case "$ASSUME_GPU" in
    nvidia) HAVE_NVIDIA=1; echo "GPUs: assumed nvidia (--assume-gpu)"; return ;;
    amd) HAVE_AMD=1; echo "GPUs: assumed amd (--assume-gpu)"; return ;;
    both) HAVE_NVIDIA=1; HAVE_AMD=1; echo "GPUs: assumed nvidia and amd (--assume-gpu)"; return ;;
  esac
  echo "GPUs:"
  detect_nvidia
  detect_amd
  if [ "$HAVE_NVIDIA" = 0 ] && [ "$HAVE_AMD" = 0 ]; then
    {
      echo "gpu-check: no GPU on this machine, nothing to check (nothing was built)."
      echo "  NVIDIA: $NVIDIA_WHY"
      echo "  AMD:    $AMD_WHY"
      echo "  (CI covers the CUDA and HSA drivers on the simulated runtimes: scripts/test.sh;"
      echo "   --dry-run --assume-gpu=nvidia prints what this script runs on a GPU machine)"
    } >&2
    exit 2
  fi
  [ "$HAVE_NVIDIA" = 1 ] || echo "  nvidia: none ($NVIDIA_WHY)"
  [ "$HAVE_AMD" = 1 ] || echo "  amd: none ($AMD_WHY)"
}

# ---- steps: each returns 0 (PASS), 1 (FAIL) or 77 (SKIP) and may set NOTE -----------------------

step_deps() {
  if [ "$SKIP_DEPS" = 1 ]; then NOTE="--skip-deps"; return 77; fi
  x bash scripts/install-deps.sh
  NOTE="scripts/install-deps.sh"
}

step_configure() {
  local args=(-S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DRAL_WERROR=OFF)
  if [ "$HAVE_NVIDIA" = 1 ]; then
    # The toolkit as the main build finds it: nvcc on PATH, else $CUDA_HOME.
    if ! command -v nvcc >/dev/null 2>&1; then export PATH=$CUDA_HOME/bin:$PATH; fi
    args+=(-DRAL_ENABLE_CUDA=ON "-DCUDAToolkit_ROOT=$CUDA_HOME")
    [ -n "${RAL_CUDA_ARCHS:-}" ] && args+=("-DRAL_CUDA_ARCHS=$RAL_CUDA_ARCHS")
  fi
  # HSA and Vulkan otherwise as the main build has them (ON when their headers are installed).
  [ "$HAVE_AMD" = 1 ] && args+=(-DRAL_ENABLE_HSA=ON)
  x cmake "${args[@]}" || { NOTE="cmake failed"; return 1; }
  [ "$DRY_RUN" = 1 ] && return 0
  local on
  on=$(grep -oE '^RAL_ENABLE_[A-Z]+:BOOL=ON' "$BUILD_DIR/CMakeCache.txt" \
       | sed 's/^RAL_ENABLE_//; s/:BOOL=ON//' | tr 'A-Z\n' 'a-z ')
  NOTE="Release, ccache $(command -v ccache >/dev/null && echo on || echo off); enabled: $on"
}

step_build() {
  x cmake --build "$BUILD_DIR" -j "$JOBS" || { NOTE="build failed"; return 1; }
  NOTE="-j $JOBS"
}

step_devices() {
  local out rc=0
  x "$BUILD_DIR/plugins/standalone/ral-run" --list-devices | log_to "$LOG_DIR/devices.txt" || rc=$?
  [ "$DRY_RUN" = 1 ] && return 0
  out=$(cat "$LOG_DIR/devices.txt")
  [ "$rc" -eq 0 ] || { NOTE="ral-run --list-devices exited $rc"; return 1; }
  if [ "$HAVE_NVIDIA" = 1 ] && ! printf '%s\n' "$out" | grep -q '^cuda:0'; then
    NOTE="RAL sees no CUDA device: $(printf '%s\n' "$out" | grep '^cuda' | cut -c1-150)"
    return 1
  fi
  if [ "$HAVE_AMD" = 1 ] && ! printf '%s\n' "$out" | grep -q '^hsa:0'; then
    NOTE="RAL sees no HSA device: $(printf '%s\n' "$out" | grep '^hsa' | cut -c1-150)"
    return 1
  fi
  NOTE=$(printf '%s\n' "$out" | grep -E '^(cuda|hsa|vulkan):[0-9]' | sed 's/  */ /g' \
         | cut -c1-60 | paste -sd ';' -)
}

need_nvidia() { [ "$HAVE_NVIDIA" = 1 ] || not_here "no NVIDIA GPU"; }
need_amd() { [ "$HAVE_AMD" = 1 ] || not_here "no AMD GPU"; }

step_cuda_driver() {
  need_nvidia || return 77
  ctest_gpu_step "$CUDA_DRIVER_TESTS" "$LOG_DIR/cuda_driver.ctest.log" "$CUDA_DRIVER_OK_SKIPS"
}

# kernel_cts_step <device> <log> <allowed skips regex> [env assignments...]: the kernel
# conformance suite's tests of one device (and the name checks); a skip outside the allowed ones
# means the device did not run. Sets NOTE from the suite's summary row.
kernel_cts_step() {
  local device=$1 log=$2 ok_skips=$3 rc=0
  shift 3
  x env "$@" "$BUILD_DIR/tests/kernel_cts/ral_kernel_cts" "--gtest_filter=*/$device:KernelNames.*" \
    2>&1 | log_to "$log" || rc=$?
  [ "$DRY_RUN" = 1 ] && return 0
  local row skipped bad
  row=$(grep -E "^  $device +[0-9]" "$log" | awk '{print $2" pass, "$3" skip, "$4" xfail, "$5" fail"}')
  skipped=$(grep -oE "^\[  SKIPPED \] Devices/[^ ]+/$device$" "$log" | awk '{print $4}' | sort -u)
  bad=$(printf '%s\n' "$skipped" | grep -vE "$ok_skips" | grep -v '^$' || true)
  if [ "$rc" -ne 0 ] || [ -z "$row" ]; then
    NOTE="ral_kernel_cts exited $rc (${row:-no summary}); see $(basename "$log")"
    return 1
  fi
  if [ -n "$bad" ]; then
    NOTE="$row, unexpected skips (no GPU?): $(printf '%s\n' "$bad" | head -2 | paste -sd ' ' -)"
    return 1
  fi
  NOTE=$row
  if printf '%s\n' "$skipped" | grep -q 'Conv\.MatchesCpu'; then NOTE="$NOTE (no usable cuDNN: ral_conv not run)"; fi
}

step_cuda_kernels() {
  need_nvidia || return 77
  kernel_cts_step cuda "$LOG_DIR/cuda_kernels.log" "$CUDA_KERNEL_OK_SKIPS"
}

step_hsa_kernels() {
  need_amd || return 77
  kernel_cts_step hsa "$LOG_DIR/hsa_kernels.log" "$HSA_KERNEL_OK_SKIPS" \
    "RAL_HSA_RUNTIME_PATH=$HSA_RUNTIME"
}

# ral-run --device=cuda on a test module; the test passes without a GPU too, so its output must
# show the module ran.
step_cuda_ral_run() {
  need_nvidia || return 77
  local log=$LOG_DIR/cuda_ral_run.ctest.log
  ctest_sel "$CUDA_RAL_RUN_TEST" -V 2>&1 | log_to "$log" || { NOTE="ctest failed"; return 1; }
  [ "$DRY_RUN" = 1 ] && return 0
  if grep -q 'no CUDA device here' "$log"; then
    NOTE="ral-run found no CUDA device: $(grep -o 'is not available.*' "$log" | head -1 | cut -c1-120)"
    return 1
  fi
  NOTE="add_r1.ralm on cuda: 3xf32=5,7,9"
}

# Every example compiled to PTX (ral-compile --device=cuda), run by ral-run on the GPU and compared
# with the numpy references of compiler_passes/test/e2e/run_example.py.
gpu_e2e() {
  local device=$1 compile=$BUILD_DIR/compiler_passes/ral-compile
  if [ "$DRY_RUN" = 0 ] && [ ! -x "$compile" ]; then
    NOTE="ral-compile not built (RAL_ENABLE_MLIR is OFF: MLIR 19 missing?)"
    return 1
  fi
  x /usr/bin/python3 scripts/gpu_check_e2e.py --device "$device" \
    --ral-compile "$compile" --ral-run "$BUILD_DIR/plugins/standalone/ral-run" \
    --work-dir "$BUILD_DIR/gpu-check-e2e/$device" || { NOTE="an example failed; see the log"; return 1; }
  [ "$DRY_RUN" = 1 ] || NOTE=$(tail -1 "$CURRENT_LOG")
}

step_cuda_ptx_e2e() { need_nvidia || return 77; gpu_e2e cuda; }

# ONNX node tests (recurrent layers, sampling, quantized and unsigned operators) compiled with
# --device=cuda and run by ral-run on the GPU against ONNX's reference outputs.
step_onnx_cuda() {
  need_nvidia || return 77
  local dir=$BUILD_DIR/gpu-check-onnx
  x /usr/bin/python3 scripts/gpu_check_onnx.py --device cuda \
    --ral-compile "$BUILD_DIR/compiler_passes/ral-compile" --pack-dir "$dir" || { NOTE="packing failed"; return 1; }
  local run=$BUILD_DIR/plugins/standalone/ral-run
  case $run in /*) ;; *) run=$ROOT/$run ;; esac
  x env RAL_RUN="$run" bash "$dir/run.sh" ||
    { NOTE="a model failed; see the log"; return 1; }
  [ "$DRY_RUN" = 1 ] || NOTE=$(tail -1 "$CURRENT_LOG")
}

# Torchvision CNNs compiled with --device=cuda, run by ral-run on the GPU against eager PyTorch
# in float64, then timed at batch 1: every layer of a real model on the device.
gpu_models() {
  local device=$1 dir=$BUILD_DIR/gpu-check-models/$1
  x /usr/bin/python3 scripts/gpu_check_models.py --device "$device" \
    --ral-compile "$BUILD_DIR/compiler_passes/ral-compile" --pack-dir "$dir" ||
    { NOTE="packing failed (python3-torchvision and python3-onnx installed?)"; return 1; }
  local run=$BUILD_DIR/plugins/standalone/ral-run
  case $run in /*) ;; *) run=$ROOT/$run ;; esac
  x env RAL_RUN="$run" bash "$dir/run.sh" || { NOTE="a model failed; see the log"; return 1; }
  [ "$DRY_RUN" = 1 ] || NOTE="$(tail -1 "$CURRENT_LOG"); $(tail -2 "$CURRENT_LOG" | head -1)"
}

step_models_cuda() { need_nvidia || return 77; gpu_models cuda; }
step_models_hsa() { need_amd || return 77; gpu_models hsa; }

# Why /usr/bin/python3's torch cannot run CUDA here, or nothing when it can.
torch_cuda_missing() {
  /usr/bin/python3 - <<'EOF' 2>/dev/null || echo "/usr/bin/python3 cannot import torch"
import torch
if not torch.cuda.is_available():
    print("torch %s: torch.cuda.is_available() is False (Debian's torch is CPU-only)"
          % torch.__version__)
EOF
}

step_torch_cuda() {
  need_nvidia || return 77
  local why
  why=$(torch_cuda_missing)
  if [ -n "$why" ]; then not_here "$why" || return 77; fi
  if [ "$DRY_RUN" = 0 ] && ! grep -q '^RAL_ENABLE_TORCH:BOOL=ON' "$BUILD_DIR/CMakeCache.txt"; then
    NOTE="RAL_ENABLE_TORCH is OFF in $BUILD_DIR (Torch's CMake package not found)"
    return 1
  fi
  local log=$LOG_DIR/torch_cuda.ctest.log
  # -rs: pytest lists each skip's reason, so a CUDA test that skipped shows.
  x env PYTEST_ADDOPTS=-rs ctest --test-dir "$BUILD_DIR" --output-on-failure --no-tests=error \
    -R "$TORCH_TESTS" -V 2>&1 | log_to "$log" || { NOTE="pytest failed"; return 1; }
  [ "$DRY_RUN" = 1 ] && return 0
  if grep -q 'torch has no CUDA device' "$log"; then
    NOTE="the CUDA tests skipped: $(grep -m1 -oE 'SKIPPED.*' "$log" | cut -c1-120)"
    return 1
  fi
  NOTE=$(grep -oE '[0-9]+ passed.*in [0-9.]+s' "$log" | tail -1)
}

# A google-benchmark binary, briefly; its output stays in the step's log.
run_bench() {
  local bin=$1
  if [ "$DRY_RUN" = 0 ] && [ ! -x "$bin" ]; then NOTE="$(basename "$bin") not built"; return 1; fi
  x "$bin" "--benchmark_min_time=$BENCH_MIN_TIME" || { NOTE="exited non-zero"; return 1; }
  [ "$DRY_RUN" = 1 ] && return 0
  if grep -q '^no CUDA device' "$CURRENT_LOG"; then
    NOTE=$(grep -m1 '^no CUDA device' "$CURRENT_LOG" | cut -c1-120)
    return 1
  fi
  local missed
  missed=$(grep -c 'MISSED' "$CURRENT_LOG" || true)
  NOTE="$(grep -m1 '^device:' "$CURRENT_LOG" || true); ratios missed (brief run): $missed; \
output: gpu-check-logs/$(basename "$CURRENT_LOG")"
}

step_bench_cuda() {
  need_nvidia || return 77
  run_bench "$BUILD_DIR/benchmarks/cuda_benchmark"
}

# Vulkan on the GPU: where the Vulkan loader offers a GPU (the NVIDIA or AMD Vulkan driver), the
# Vulkan driver picks it over Mesa's CPU device: the conformance suite and the benchmark run there.
vulkan_gpu_missing() {
  [ -f "$LOG_DIR/devices.txt" ] || { echo "decided by the devices step's Vulkan devices"; return; }
  grep -E '^vulkan:[0-9]' "$LOG_DIR/devices.txt" | grep -viqE 'llvmpipe|lavapipe|swiftshader' \
    || echo "the Vulkan loader offers no GPU (only a CPU device, or no Vulkan driver)"
}

step_vulkan_gpu_cts() {
  local why
  why=$(vulkan_gpu_missing)
  if [ -n "$why" ]; then not_here "$why" || return 77; fi
  ctest_gpu_step "$VULKAN_CTS_TEST" "$LOG_DIR/vulkan_gpu_cts.ctest.log" '^$'
}

step_bench_vulkan() {
  local why
  why=$(vulkan_gpu_missing)
  if [ -n "$why" ]; then not_here "$why" || return 77; fi
  run_bench "$BUILD_DIR/benchmarks/vulkan_benchmark"
}

step_hsa_runtime() {
  need_amd || return 77
  local log=$LOG_DIR/hsa_runtime.ctest.log
  ctest_sel "$HSA_REAL_TESTS" -V 2>&1 | log_to "$log" || { NOTE="ctest failed"; return 1; }
  [ "$DRY_RUN" = 1 ] && return 0
  if grep -qE 'no AMD GPU here|no GPU agent|\(Skipped\)' "$log"; then
    NOTE="the HSA runtime found no GPU agent (see hsa_runtime.ctest.log)"
    return 1
  fi
  NOTE="HsaRealRuntime created the driver; ral-run --device=hsa reached the GPU"
}

step_hsa_e2e() { need_amd || return 77; gpu_e2e hsa; }

step_bench_hsa() {
  need_amd || return 77
  NOTE="no HSA benchmark binary in benchmarks/"
  return 77
}

# ---- running and the summary table --------------------------------------------------------------

NAMES=()
RESULTS=()
SECONDS_TAKEN=()
NOTES=()
FAILED=0
CURRENT_LOG=/dev/null

# run_step <name> <function> <description>
run_step() {
  local name=$1 fn=$2 desc=$3 rc start
  printf '\n==== %s: %s\n' "$name" "$desc"
  NOTE=""
  if [ "$DRY_RUN" = 1 ]; then
    set +e; "$fn"; rc=$?; set -e
    [ "$rc" -eq 77 ] && echo "    SKIP: $NOTE"
    return 0
  fi
  CURRENT_LOG=$LOG_DIR/$name.log
  echo "     (log: $CURRENT_LOG)"
  start=$(date +%s.%N)
  set +e
  "$fn" >"$CURRENT_LOG" 2>&1
  rc=$?
  set -e
  local secs result
  secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  case "$rc" in
    0) result=PASS ;;
    77) result=SKIP ;;
    *) result=FAIL; FAILED=1
       [ -n "$NOTE" ] || NOTE="exit $rc"
       echo "---- last lines of $CURRENT_LOG:"; tail -n 25 "$CURRENT_LOG" ;;
  esac
  NOTE=$(printf '%s' "$NOTE" | tr '\n\t' '  ')
  printf '%s (%ss) %s\n' "$result" "$secs" "$NOTE"
  NAMES+=("$name"); RESULTS+=("$result"); SECONDS_TAKEN+=("$secs"); NOTES+=("$NOTE")
}

summary() {
  local i
  {
    printf '%-18s %-6s %8s  %s\n' step result seconds note
    printf '%-18s %-6s %8s  %s\n' ------------------ ------ -------- ----
    for i in "${!NAMES[@]}"; do
      printf '%-18s %-6s %8s  %s\n' "${NAMES[$i]}" "${RESULTS[$i]}" "${SECONDS_TAKEN[$i]}" \
        "${NOTES[$i]}"
    done
  } >"$BUILD_DIR/gpu-check-summary.txt"
  printf '\n==== GPU check summary (%s; logs in %s)\n' "$(date -u '+%Y-%m-%d %H:%M UTC')" "$LOG_DIR"
  cat "$BUILD_DIR/gpu-check-summary.txt"
}

main() {
  parse_args "$@"
  detect_gpus
  # The real drivers: never a library path left over from runs on the simulated ones.
  if [ -n "${RAL_CUDA_DRIVER_PATH:-}${RAL_HSA_RUNTIME_PATH:-}" ]; then
    echo "unsetting RAL_CUDA_DRIVER_PATH and RAL_HSA_RUNTIME_PATH (the real drivers are tested)"
  fi
  unset RAL_CUDA_DRIVER_PATH RAL_HSA_RUNTIME_PATH
  if [ "$DRY_RUN" = 1 ]; then
    echo "dry run: the steps and commands below are printed, not run (build dir $BUILD_DIR)"
  else
    mkdir -p "$LOG_DIR"
  fi
  run_step deps step_deps "install the Debian packages (as scripts/test.sh does)"
  run_step configure step_configure "CMake + Ninja, Release, GPU drivers on, -Werror off"
  # Without a build there is nothing to test.
  if [ "$DRY_RUN" = 0 ] && [ "${RESULTS[-1]}" = FAIL ]; then summary; exit 1; fi
  run_step build step_build "build everything"
  if [ "$DRY_RUN" = 0 ] && [ "${RESULTS[-1]}" = FAIL ]; then summary; exit 1; fi
  run_step devices step_devices "the devices RAL's drivers see"
  run_step cuda_driver step_cuda_driver "CUDA driver tests on the real libcuda.so.1"
  run_step cuda_kernels step_cuda_kernels "kernel conformance suite on the CUDA device"
  run_step cuda_ral_run step_cuda_ral_run "ral-run --device=cuda on a test module"
  run_step cuda_ptx_e2e step_cuda_ptx_e2e "examples: ral-compile --device=cuda, ral-run on the GPU"
  run_step onnx_cuda step_onnx_cuda "ONNX model tests on cuda"
  run_step models_cuda step_models_cuda "torchvision CNNs: ral-compile --device=cuda, ral-run on the GPU"
  run_step torch_cuda step_torch_cuda "ral_torch with CUDA tensors (pytest)"
  run_step bench_cuda step_bench_cuda "cuda_benchmark (launch, ral_gemm vs cuBLAS, semaphores)"
  run_step vulkan_gpu_cts step_vulkan_gpu_cts "driver conformance suite, Vulkan on the GPU"
  run_step bench_vulkan step_bench_vulkan "vulkan_benchmark on the GPU"
  run_step hsa_runtime step_hsa_runtime "HSA driver on the real runtime, ral-run --device=hsa"
  run_step hsa_kernels step_hsa_kernels "kernel conformance suite on the HSA device"
  run_step hsa_e2e step_hsa_e2e "examples: ral-compile --device=hsa, ral-run on the GPU"
  run_step models_hsa step_models_hsa "torchvision CNNs: ral-compile --device=hsa, ral-run on the GPU"
  run_step bench_hsa step_bench_hsa "HSA benchmarks"
  if [ "$DRY_RUN" = 1 ]; then exit 0; fi
  summary
  exit "$FAILED"
}

main "$@"
