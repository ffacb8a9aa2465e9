#!/bin/sh
# ral-run --device=cuda: runs the module on a GPU machine; elsewhere exits 2 with one clear line
# naming the CUDA driver library it looked for.
set -u
RAL_RUN=$1
MODULE=$2
out=$("$RAL_RUN" "$MODULE" --input=3xf32=1,2,3 --input=3xf32=4,5,6 --device=cuda 2>&1)
rc=$?
case "$out" in
  *"is not available"*)
    [ "$rc" -eq 2 ] || { echo "expected exit code 2, got $rc: $out"; exit 1; }
    case "$out" in
      *libcuda.so.1*|*RAL_CUDA_DRIVER_PATH*|*cuInit*|*"no device"*) ;;
      *) echo "the error does not say what was looked for: $out"; exit 1 ;;
    esac
    [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] || { echo "not one line: $out"; exit 1; }
    echo "no CUDA device here; the error was clear: $out"
    ;;
  *)
    [ "$rc" -eq 0 ] || { echo "ral-run --device=cuda failed ($rc): $out"; exit 1; }
    case "$out" in
      *"3xf32=5,7,9"*) echo "$out" ;;
      *) echo "wrong output: $out"; exit 1 ;;
    esac
    ;;
esac
