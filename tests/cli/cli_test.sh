#!/usr/bin/env bash
# Command-line tests of ral-run and ral-inspect: cli_test.sh <case> <ral-run> <ral-inspect>
# <module dir> <work dir>. Each case checks exit codes, outputs and one-line errors.
set -uo pipefail
CASE=$1 RUN=$2 INSPECT=$3 M=$4 W=$5/$1
rm -rf "$W" && mkdir -p "$W" && cd "$W" || exit 1

fail() { echo "FAIL ($CASE): $*" >&2; exit 1; }

# expect <exit code> <text expected in stdout+stderr> <command...>
expect() {
  local code=$1 text=$2
  shift 2
  "$@" >out.txt 2>err.txt
  local rc=$?
  [ "$rc" -eq "$code" ] || fail "exit $rc, wanted $code: $*; $(cat out.txt err.txt)"
  grep -qF -- "$text" out.txt err.txt || fail "no '$text' in output of: $*; $(cat out.txt err.txt)"
  if [ "$code" -ne 0 ]; then
    [ "$(wc -l <err.txt)" -eq 1 ] || fail "error is not one line: $(cat err.txt)"
    grep -q "^ral-[a-z]*: error: " err.txt || fail "error line lacks the tool prefix: $(cat err.txt)"
  fi
}

# A .npy file from header text and raw data bytes given as printf escapes (version 1.0).
npy() {
  local file=$1 header=$2 data=$3
  local len=$(( ${#header} + 1 ))
  { printf '\x93NUMPY\x01\x00'; printf "\\x$(printf %02x $((len & 255)))\\x$(printf %02x $((len >> 8)))";
    printf '%s\n' "$header"; printf "$data"; } >"$file"
}
F1='\x00\x00\x80\x3f' F2='\x00\x00\x00\x40' F3='\x00\x00\x40\x40'  # 1.0f 2.0f 3.0f

case $CASE in
help)
  expect 0 "--benchmark" "$RUN" --help
  expect 0 "--expected_output" "$RUN" --help
  expect 0 "module file" "$INSPECT" --help
  ;;
inspect)
  expect 0 "abi version: 1" "$INSPECT" "$M/identity.ralm"
  for t in "entry: ral_entry" "0: 2x3xf32,strided<[?,?]>  x" "ral_send_output___cpu___pvoid_i64_m2df32___void" \
           "kernels: ptx, 221 bytes, entries: add_kernel (256x1x1)" "scale: 4xf32, 16 bytes" \
           "offsets: 2x2xi64, 32 bytes"; do
    grep -qF -- "$t" out.txt || fail "inspect lacks '$t'"
  done
  for f in "$M"/*.ralm; do
    expect 0 "module: $(basename "$f" .ralm)" "$INSPECT" "$f"
  done
  expect 0 "ral_no_such_function___cpu___pvoid___void  [not registered]" \
    "$INSPECT" "$M/missing_import.ralm"
  expect 1 "cannot open the file" "$INSPECT" nope.ralm
  head -c 1000 "$M/identity.ralm" >cut.ralm
  expect 1 "the file is truncated" "$INSPECT" cut.ralm
  expect 2 "module is required" "$INSPECT"
  ;;
run)
  expect 0 "output 0: 2x3xf32=11,22,33,44,55,66" "$RUN" "$M/add_r2.ralm" \
    --input=2x3xf32=1,2,3,4,5,6 --input=2x3xf32=10,20,30,40,50,60
  expect 0 "expected outputs: 1 matched" "$RUN" "$M/add_r0.ralm" --input=f32=1.5 --input=f32=2 \
    --expected_output=f32=3.5
  expect 0 "output 1: 2xf32=1,3" "$RUN" "$M/alias.ralm" --input=3xf32=1,2,3
  expect 0 "output 0: 3xf32=2,4,-6" "$RUN" "$M/by_name.ralm" --input=3xf32=1,2,-3
  expect 0 "output 0: i64=8" "$RUN" "$M/error.ralm" --input=i64=7 --device=cpu
  expect 0 "output 0: 0xf32=" "$RUN" "$M/add_r1.ralm" --input=0xf32= --input=0xf32=
  ;;
npy)
  expect 0 "output 0: 3xf32 -> x.npy" "$RUN" "$M/add_r1.ralm" --input=3xf32=1,2,3 \
    --input=3xf32=0,0,0 --output=@x.npy
  expect 0 "output 0: 3xf32=2,4,6" "$RUN" "$M/add_r1.ralm" --input=@x.npy --input=@x.npy \
    --expected_output=@x.npy --rtol=0 --atol=3.5
  # Fortran order: the 2x3 matrix [[1,2,3],[1,2,3]] stored column by column.
  npy f.npy "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }" \
    "$F1$F1$F2$F2$F3$F3"
  expect 0 "output 0: 2x3xf32=1,2,3,1,2,3" "$RUN" "$M/identity.ralm" --input=@f.npy
  # A module compiled for row-major input 0: the Fortran-order file is copied into row-major
  # order, or refused with --strict-zero-copy; input 1 (dense rows) takes a C-order file as is.
  npy c.npy "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" \
    "$F1$F1$F1$F2$F2$F2"
  expect 0 "output 0: 2x3xf32=2,3,4,3,4,5" "$RUN" "$M/add_r2_rowmajor.ralm" --input=@f.npy \
    --input=@c.npy
  expect 0 "output 0: 2x3xf32=2,3,4,3,4,5" "$RUN" "$M/add_r2_rowmajor.ralm" --input=@c.npy \
    --input=@f.npy
  expect 1 "input 0 (2x3xf32) has strides [1,2] but the module was compiled for layout row-major" \
    "$RUN" "$M/add_r2_rowmajor.ralm" --strict-zero-copy --input=@f.npy --input=@c.npy
  expect 1 "input 1 (2x3xf32) has strides [1,2] but the module was compiled for layout strided<[?,1]>" \
    "$RUN" "$M/add_r2_rowmajor.ralm" --strict-zero-copy --input=@c.npy --input=@f.npy
  expect 0 "output 0: 2x3xf32=2,2,2,4,4,4" "$RUN" "$M/add_r2_rowmajor.ralm" --strict-zero-copy \
    --input=@c.npy --input=@c.npy
  if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then  # agree with NumPy itself
    /usr/bin/python3 -c "import numpy as n; assert (n.load('x.npy') == [1, 2, 3]).all()" ||
      fail "numpy reads a different x.npy"
    /usr/bin/python3 -c "import numpy as n; n.save('t.npy', n.asfortranarray(n.arange(6, dtype=n.float32).reshape(2, 3)))"
    expect 0 "output 0: 2x3xf32=0,1,2,3,4,5" "$RUN" "$M/identity.ralm" --input=@t.npy
  fi
  ;;
mismatch)
  expect 3 "output 0 differs from the expected output: 1 of 6 elements differ; first at flat index 5: got 6, expected 7" \
    "$RUN" "$M/identity.ralm" --input=2x3xf32=1,2,3,4,5,6 --expected_output=2x3xf32=1,2,3,4,5,7
  expect 3 "got 2x3xf32, expected 3x2xf32" "$RUN" "$M/identity.ralm" \
    --input=2x3xf32=1,2,3,4,5,6 --expected_output=3x2xf32=1,2,3,4,5,6
  ;;
bad_literals)
  A="$M/add_r1.ralm"
  expect 2 "3xf32 needs 3 value(s), got 2" "$RUN" "$A" --input=3xf32=1,2 --input=3xf32=1,2,3
  expect 2 "'x' is not a number" "$RUN" "$A" --input=3xf32=1,x,3 --input=3xf32=1,2,3
  expect 2 "unknown element type 'f99'" "$RUN" "$A" --input=3xf99=1,2,3 --input=3xf32=1,2,3
  expect 2 "expected TYPE=VALUES" "$RUN" "$A" --input=3xf32 --input=3xf32=1,2,3
  expect 2 "a value needs concrete sizes" "$RUN" "$A" --input=?xf32=1 --input=3xf32=1,2,3
  expect 2 "'300' is out of range for i8" "$RUN" "$M/add_r1.ralm" --input=1xi8=300 --input=1xf32=1
  expect 2 "takes 2 input(s), 1 given" "$RUN" "$A" --input=3xf32=1,2,3
  expect 2 "bad --output" "$RUN" "$A" --input=1xf32=1 --input=1xf32=1 --output=y.npy
  # A device this build has no driver for (tests/cuda covers --device=cuda with and without a GPU).
  expect 2 "device 'hsa' is not available" "$RUN" "$A" --device=hsa
  expect 2 "unknown device 'tpu'" "$RUN" "$A" --device=tpu
  # Device URIs: one grammar for every driver; no match lists the devices there are.
  expect 2 "bad device 'cpu:zz'" "$RUN" "$A" --device=cpu:zz
  expect 2 "no cpu device matches 'cpu:4'; the devices are:" "$RUN" "$A" --device=cpu:4
  expect 2 "no cpu device matches 'cpu://GPU-0e12865a3bf5b7ab'" "$RUN" "$A" \
    --device=cpu://GPU-0e12865a3bf5b7ab
  expect 0 "output 0: 3xf32=2,4,6" "$RUN" "$A" --device=cpu:0 --input=3xf32=1,2,3 \
    --input=3xf32=1,2,3
  expect 0 "cpu:0  host CPU" "$RUN" --list-devices
  expect 2 "no module file given" "$RUN"
  expect 2 "--threads must be in 1..1024" "$RUN" "$A" --threads=0
  expect 2 "The following argument was not expected: --nope" "$RUN" "$A" --nope
  ;;
bad_npy)
  A="$M/add_r1.ralm"
  printf 'not a numpy file' >magic.npy
  expect 2 "does not start with the NumPy magic string" "$RUN" "$A" --input=@magic.npy --input=1xf32=1
  printf '\x93NUMPY\x01\x00\x40\x00{' >short.npy
  expect 2 "truncated header" "$RUN" "$A" --input=@short.npy --input=1xf32=1
  npy size.npy "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }" "$F1$F2"
  expect 2 "shape 3xf32 needs 12 data bytes, the file has 8" "$RUN" "$A" --input=@size.npy --input=1xf32=1
  npy dict.npy "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (1,), }" "$F1"
  expect 2 "fortran_order is not True or False" "$RUN" "$A" --input=@dict.npy --input=1xf32=1
  npy big.npy "{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }" "$F1"
  expect 2 "is big-endian" "$RUN" "$A" --input=@big.npy --input=1xf32=1
  npy c64.npy "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }" "$F1$F1"
  expect 2 "'<c8' has no RAL element type" "$RUN" "$A" --input=@c64.npy --input=1xf32=1
  npy shape.npy "{'descr': '<f4', 'fortran_order': False, 'shape': (1, x), }" "$F1"
  expect 2 "shape holds something other than sizes" "$RUN" "$A" --input=@shape.npy --input=1xf32=1
  expect 2 "cannot open 'missing.npy'" "$RUN" "$A" --input=@missing.npy --input=1xf32=1
  # A bool byte other than 0 or 1 (found by the .npy fuzzer): refused, not read as a bool.
  npy bool.npy "{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }" '\x01\x20'
  expect 2 "bool element 1 is the byte 32, not 0 or 1" "$RUN" "$A" --input=@bool.npy --input=1xf32=1
  # A literal whose element count overflows int64 (found by the fuzzer): refused by name.
  expect 2 "too many elements for a literal" "$RUN" "$A" --input=4294967296x4294967296xf32= \
    --input=1xf32=1
  ;;
run_errors)
  # Execution errors: exit 1, one line, naming the problem.
  expect 1 "input 0: expected element type f32 (?xf32), got i32 (3xi32)" "$RUN" \
    "$M/add_r1.ralm" --input=3xi32=1,2,3 --input=3xf32=1,2,3
  expect 1 "input 1: expected rank 1 (?xf32), got rank 2 (1x3xf32)" "$RUN" \
    "$M/add_r1.ralm" --input=3xf32=1,2,3 --input=1x3xf32=1,2,3
  expect 1 "input 0: dimension 0 must be 2 (2x3xf32), got 3 (3x2xf32)" "$RUN" \
    "$M/identity.ralm" --input=3x2xf32=1,2,3,4,5,6
  expect 1 "add: the inputs have different shapes" "$RUN" "$M/add_r1.ralm" \
    --input=3xf32=1,2,3 --input=2xf32=1,2
  expect 1 "module 'error': error module: the input is negative" "$RUN" "$M/error.ralm" --input=i64=-1
  expect 1 "2 of 3 imports could not be resolved" "$RUN" "$M/missing_import.ralm" --input=1xf32=1
  expect 1 "NOT_FOUND: loading module 'nope.ralm': cannot open the file" "$RUN" nope.ralm
  head -c 5000 "$M/add_r1.ralm" >cut.ralm
  expect 1 "the file is truncated" "$RUN" cut.ralm
  cp "$M/add_r1.ralm" id.ralm && printf 'XXXX' | dd of=id.ralm bs=1 seek=8 conv=notrunc 2>/dev/null
  expect 1 "not a RAL module: the file identifier is 'XXXX'" "$RUN" id.ralm
  ;;
benchmark)
  expect 0 "latency (us): min" "$RUN" "$M/add_r1.ralm" --input=4xf32=1,2,3,4 \
    --input=4xf32=1,1,1,1 --benchmark=200 --threads=3
  for t in "3 thread(s) x 200 execution(s)" "p50" "p90" "p99" "throughput:" "output 0: 4xf32=2,3,4,5"; do
    grep -qF -- "$t" out.txt || fail "benchmark output lacks '$t'"
  done
  expect 1 "error module: the input is negative" "$RUN" "$M/error.ralm" --input=i64=-5 --benchmark=10
  ;;
*)
  fail "unknown case"
  ;;
esac
echo "ok ($CASE)"
