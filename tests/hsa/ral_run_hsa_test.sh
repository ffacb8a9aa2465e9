#!/bin/sh
# ral-run --device=hsa with the machine's HSA runtime: without an AMD GPU it exits 2 with one
# line naming hsa and the cause (never "not built"); with one, the module runs.
set -u
RAL_RUN=$1
MODULE=$2
out=$("$RAL_RUN" "$MODULE" --input=3xf32=1,2,3 --input=3xf32=4,5,6 --device=hsa 2>&1)
rc=$?
case "$out" in
  *"is not available"*)
    [ "$rc" -eq 2 ] || { echo "expected exit code 2, got $rc: $out"; exit 1; }
    case "$out" in
      *"not built"*|*"no driver"*) echo "the hsa driver is not in this build: $out"; exit 1 ;;
      *"hsa: no GPU agent"*|*"hsa: cannot load the HSA runtime"*) ;;
      *) echo "the error does not name hsa and the cause: $out"; exit 1 ;;
    esac
    [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] || { echo "not one line: $out"; exit 1; }
    echo "no AMD GPU here; the error was clear: $out"
    ;;
  *"runs on"*)
    echo "an AMD GPU is present; the cpu module is refused by name: $out"
    ;;
  *)
    echo "unexpected: ($rc) $out"; exit 1
    ;;
esac
