#!/usr/bin/env bash
# Packs RAL's GPU checks into one folder that runs on a GPU machine without RAL's build
# dependencies (no apt, no network needed there): the CUDA test binaries and ral-run, stripped;
# the shared libraries they need beyond glibc; the examples compiled for CUDA with ral-compile,
# with their inputs and references (scripts/gpu_check_e2e.py --pack-dir); ONNX node tests
# compiled for CUDA (scripts/gpu_check_onnx.py); and run.sh, which runs everything on the GPU
# and prints one table. scripts/gpu-check.sh is the same check for a GPU
# machine that can build RAL itself.
#
#   scripts/gpu-pack.sh [--build-dir build] [--out build-gpu-pack]   # here, after a build
#   build-gpu-pack/run.sh                                            # there, on the GPU machine
#
# run.sh exits 0 when every step passed, 1 when one failed, 2 when the machine has no usable
# NVIDIA GPU; logs go to $OUT or build-gpu-pack/logs.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=build
OUT=build-gpu-pack
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) BUILD=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu-pack: unknown argument $1" >&2; exit 64 ;;
  esac
done
need() { [ -e "$BUILD/$1" ] || { echo "gpu-pack: $BUILD/$1 is missing (build RAL with CUDA first)" >&2; exit 1; }; }
need libral.so.0
need plugins/standalone/ral-run
need compiler_passes/ral-compile
need tests/cuda/ral_cuda_driver_test

rm -rf "$OUT"
mkdir -p "$OUT/bin" "$OUT/lib"
for b in plugins/standalone/ral-run tests/cuda/ral_cuda_driver_test tests/cuda/ral_cuda_timeline_test \
         tests/kernel_cts/ral_kernel_cts benchmarks/cuda_benchmark; do
  [ -e "$BUILD/$b" ] && strip -o "$OUT/bin/$(basename "$b")" "$BUILD/$b"
done
strip -o "$OUT/lib/libral.so.0" "$(readlink -f "$BUILD/libral.so.0")"
# Every shared library the binaries load from outside glibc and the GPU driver (the CUDA
# libraries RAL opens itself, libcuda, libcublas and libcudnn, come from the GPU machine).
for lib in $(ldd "$OUT"/bin/* "$OUT/lib/libral.so.0" 2>/dev/null | awk '/=> \// {print $3}' | sort -u); do
  case "$(basename "$lib")" in
    libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | librt.so.* | ld-linux* | libral.so*) ;;
    *) cp -L "$lib" "$OUT/lib/" ;;
  esac
done
/usr/bin/python3 scripts/gpu_check_e2e.py --device cuda --ral-compile "$BUILD/compiler_passes/ral-compile" \
  --pack-dir "$OUT/e2e"
# ONNX operators on the device (recurrent layers, sampling, quantized and unsigned integers): node
# tests compiled for CUDA, where libonnx-testdata and python3-onnx are installed.
if [ -d /usr/share/libonnx-testdata/data/node ] && /usr/bin/python3 -c "import onnx" 2> /dev/null; then
  /usr/bin/python3 scripts/gpu_check_onnx.py --device cuda \
    --ral-compile "$BUILD/compiler_passes/ral-compile" --pack-dir "$OUT/onnx" | tail -1
fi
# Torchvision CNNs compiled for CUDA with inputs and eager PyTorch's float64 outputs (every layer
# of a real model on the device; about 25 MB more in a .tar.xz).
if /usr/bin/python3 -c "import torch, torchvision, onnx" 2> /dev/null; then
  /usr/bin/python3 scripts/gpu_check_models.py --device cuda \
    --ral-compile "$BUILD/compiler_passes/ral-compile" --pack-dir "$OUT/models" | tail -1
fi

cat > "$OUT/run.sh" <<'RUN'
#!/usr/bin/env bash
# Runs the packed GPU checks (scripts/gpu-pack.sh made this folder) and prints one table.
cd "$(dirname "$0")"
HERE=$PWD
CUDA_LIBS=$(ls -d /usr/local/cuda*/lib64 /usr/local/cuda*/targets/x86_64-linux/lib 2>/dev/null | tr '\n' ':')
export LD_LIBRARY_PATH="$HERE/lib:$CUDA_LIBS${LD_LIBRARY_PATH:-}"
unset RAL_CUDA_DRIVER_PATH RAL_CUDNN_PATH
LOGS=${OUT:-$HERE/logs}
mkdir -p "$LOGS"
if ! command -v nvidia-smi > /dev/null || ! nvidia-smi -L > "$LOGS/gpus.txt" 2>&1; then
  echo "gpu-pack run: no NVIDIA GPU here (nvidia-smi missing or found no device); nothing to check"
  exit 2
fi
cat "$LOGS/gpus.txt"
RESULTS=()
step() {  # step NAME SECONDS_LIMIT COMMAND...: runs it, logs it, records PASS/FAIL
  local name=$1 limit=$2; shift 2
  local start=$SECONDS
  if timeout "$limit" "$@" > "$LOGS/$name.log" 2>&1; then
    RESULTS+=("$(printf '%-16s PASS %5ds  %s' "$name" $((SECONDS - start)) "$(note "$name")")")
  else
    RESULTS+=("$(printf '%-16s FAIL %5ds  %s' "$name" $((SECONDS - start)) "$(note "$name")")")
  fi
}
note() {  # what a step's log says in one line: gtest totals, e2e total, benchmark targets
  local log="$LOGS/$1.log"
  grep -hE "^\[  PASSED  \]|^\[  FAILED  \] [0-9]+|^\[  SKIPPED \] [0-9]+ tests|matched their references|^onnx on |^models on |^batch 1 on " \
    "$log" 2>/dev/null | sed 's/, listed below://' | tr '\n' ' ' | cut -c1-220
  if grep -qE " (met|MISSED)$" "$log" 2>/dev/null; then
    echo "targets: $(grep -cE " met$" "$log") met, $(grep -cE " MISSED$" "$log") missed"
  fi
}
step devices 60 bin/ral-run --list-devices
step cuda_driver 300 bin/ral_cuda_driver_test
step cuda_timeline 300 bin/ral_cuda_timeline_test
step cuda_kernels 300 bin/ral_kernel_cts '--gtest_filter=*/cuda:KernelNames.*'
step cuda_ptx_e2e 600 env RAL_RUN="$HERE/bin/ral-run" bash e2e/run.sh
[ -d onnx ] && step onnx_cuda 300 env RAL_RUN="$HERE/bin/ral-run" bash onnx/run.sh
[ -d models ] && step models_cuda 300 env RAL_RUN="$HERE/bin/ral-run" bash models/run.sh
[ -x bin/cuda_benchmark ] && step bench_cuda 300 bin/cuda_benchmark --benchmark_min_time=0.05
printf '%s\n' "step             result  time  note" "${RESULTS[@]}" | tee "$LOGS/summary.txt"
! grep -q " FAIL " "$LOGS/summary.txt"
RUN
chmod +x "$OUT/run.sh"
echo "gpu-pack: $(du -sh "$OUT" | cut -f1) in $OUT; on the GPU machine run $OUT/run.sh"
