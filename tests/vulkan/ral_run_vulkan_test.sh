#!/bin/sh
# ral-run --device=vulkan runs a module whose ral_gemm is the Vulkan kernel; with no Vulkan driver
# (VK_ICD_FILENAMES pointing nowhere) it exits 2 with one clear line.
set -u
RAL_RUN=$1
MODULE=$2
out=$("$RAL_RUN" "$MODULE" --input=2x3xf32=1,2,3,4,5,6 --input=3x2xf32=1,0,0,1,1,1 \
      --expected_output=2x2xf32=4,5,10,11 --device=vulkan 2>&1)
rc=$?
[ "$rc" -eq 0 ] || { echo "ral-run --device=vulkan failed ($rc): $out"; exit 1; }
case "$out" in
  *"expected outputs: 1 matched"*) echo "$out" ;;
  *) echo "unexpected output: $out"; exit 1 ;;
esac
out=$(VK_ICD_FILENAMES=/nonexistent/icd.json VK_DRIVER_FILES=/nonexistent/icd.json \
      "$RAL_RUN" "$MODULE" --input=2x3xf32=1,2,3,4,5,6 --input=3x2xf32=1,0,0,1,1,1 \
      --device=vulkan 2>&1)
rc=$?
[ "$rc" -eq 2 ] || { echo "expected exit code 2 without a Vulkan driver, got $rc: $out"; exit 1; }
case "$out" in
  *"is not available"*"Vulkan"*) ;;
  *) echo "the error does not say what is missing: $out"; exit 1 ;;
esac
[ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] || { echo "not one line: $out"; exit 1; }
echo "without a Vulkan driver: $out"
