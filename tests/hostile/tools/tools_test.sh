#!/usr/bin/env bash
# Hostile inputs for the command-line tools: every file a tool reads replaced by a directory, a
# FIFO, /dev/zero, a missing path, a sparse file larger than the limits; huge declared sizes;
# resource limits that make allocations and threads fail. Each must end with a documented exit
# code and one error line, never std::terminate (134), a signal, a hang or a raw C++ message.
#   tools_test.sh <case> <ral-run> <ral-pack> <ral-inspect> <ral-compile or -> <module dir> <work dir>
set -uo pipefail
CASE=$1 RUN=$2 PACK=$3 INSPECT=$4 COMPILE=$5 M=$6 W=$7/$1
rm -rf "$W" && mkdir -p "$W" && cd "$W" || exit 1

fail() { echo "FAIL ($CASE): $*" >&2; exit 1; }

# expect <exit code> <text expected on stderr> <command...>: also a 30 s guard against hangs.
expect() {
  local code=$1 text=$2
  shift 2
  timeout 30 "$@" >out.txt 2>err.txt
  local rc=$?
  [ "$rc" -ne 124 ] || fail "hung: $*"
  [ "$rc" -eq "$code" ] || fail "exit $rc, wanted $code: $*; $(cat err.txt)"
  grep -qF -- "$text" err.txt || fail "no '$text' in the error of: $*; $(cat err.txt)"
  [ "$(wc -l <err.txt)" -eq 1 ] || fail "error is not one line: $*; $(cat err.txt)"
  grep -q "^ral-[a-z]*: error: " err.txt || fail "error line lacks the tool prefix: $(cat err.txt)"
  ! grep -qE "terminate called|basic_filebuf|std::|what\(\)" err.txt || fail "raw C++ error: $(cat err.txt)"
}

# The hostile files: a directory, a FIFO with no writer, a character device, a missing path, and
# sparse files beyond each reader's limit (no disk space used).
mkdir dir
mkfifo fifo
truncate -s 17G huge.npy         # beyond the 16 GiB any reader accepts
truncate -s 3G huge.ralm         # beyond the 2 GiB of a module file
# <name> <header>: a .npy (version 1.0) whose header declares a shape, with no data after it.
npy_header() {
  local len=$(( ${#2} + 1 ))
  { printf '\x93NUMPY\x01\x00'; printf "\\x$(printf %02x $((len & 255)))\\x$(printf %02x $((len >> 8)))";
    printf '%s\n' "$2"; } >"$1"
}
BAD_FILES=(dir fifo /dev/zero missing huge.npy)
reason() {
  case $1 in
    dir) echo "is a directory" ;;
    fifo) echo "is a FIFO" ;;
    /dev/zero) echo "is a character device" ;;
    missing) echo "No such file" ;;
    huge.npy) echo "more than the" ;;
  esac
}
ADD=(--input=2x2xf32=1,2,3,4 --input=2x2xf32=1,2,3,4)
# Under ASan/TSan (RAL_TEST_SANITIZED) an address-space limit stops the sanitizer itself.
limited() { [ -z "${RAL_TEST_SANITIZED:-}" ] || { echo "skipped under a sanitizer: ulimit -v"; return 1; }; }

case $CASE in
module_paths)
  for f in dir fifo /dev/zero missing; do
    expect 1 "" "$RUN" "$f" "${ADD[@]}"
    expect 1 "" "$INSPECT" "$f"
  done
  expect 1 "not a regular file" "$RUN" fifo "${ADD[@]}"
  expect 1 "not a regular file" "$INSPECT" dir
  expect 1 "cannot open the file" "$RUN" missing "${ADD[@]}"
  expect 1 "not a RAL module" "$INSPECT" huge.ralm
  ;;
input_files)
  for f in "${BAD_FILES[@]}"; do
    expect 2 "$(reason "$f")" "$RUN" "$M/add_r2.ralm" --input=@"$f" --input=2x2xf32=1,2,3,4
    expect 2 "$(reason "$f")" "$RUN" "$M/add_r2.ralm" "${ADD[@]}" --expected_output=@"$f"
  done
  # Declared sizes far beyond the data: refused before anything of that size is allocated.
  npy_header big.npy "{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776, 1099511627776), }"
  expect 2 "too many elements" "$RUN" "$M/add_r2.ralm" --input=@big.npy --input=2x2xf32=1,2,3,4
  npy_header tall.npy "{'descr': '<f4', 'fortran_order': False, 'shape': (268435456, 4), }"
  expect 2 "needs 4294967296 data bytes, the file has 0" \
    "$RUN" "$M/add_r2.ralm" --input=@tall.npy --input=2x2xf32=1,2,3,4
  # A file that fits the limit but not the memory: an allocation failure is an error, not an abort.
  truncate -s 3G sparse.npy
  ! limited || ( ulimit -v 1500000; expect 2 "cannot allocate" "$RUN" "$M/add_r2.ralm" --input=@sparse.npy \
      --input=2x2xf32=1,2,3,4 ) || exit 1
  ;;
pack_files)
  for f in "${BAD_FILES[@]}"; do
    expect 2 "$(reason "$f")" "$PACK" --host-library="$f" --name=x -o x.ralm
    expect 2 "$(reason "$f")" "$PACK" --host-library="$M/add_r2.so" --name=x \
      --constant=c=@"$f" -o x.ralm
    expect 2 "$(reason "$f")" "$PACK" --host-library="$M/add_r2.so" --name=x \
      --executable=k:spirv:@"$f" -o x.ralm
  done
  # An entry that is data, or that the library does not define, is refused at pack time.
  expect 2 "is not a function" "$PACK" --host-library="$M/add_r2.so" --name=x --entry=ral_imports \
    --input=?x?xf32 --input=?x?xf32 --output=?x?xf32 -o x.ralm
  expect 2 "is not defined" "$PACK" --host-library="$M/add_r2.so" --name=x --entry=nope \
    --input=?x?xf32 --input=?x?xf32 --output=?x?xf32 -o x.ralm
  [ ! -e x.ralm ] || fail "a refused pack left a module file"
  expect 1 "cannot rename" "$PACK" --host-library="$M/add_r2.so" --name=x \
    --input=?x?xf32 --input=?x?xf32 --output=?x?xf32 -o dir
  ;;
compile_files)
  [ "$COMPILE" != "-" ] || { echo "ral-compile not built: skipped"; exit 0; }
  for f in dir fifo /dev/zero missing; do
    expect 2 "" "$COMPILE" "$f" -o x.ralm
  done
  expect 2 "is a directory" "$COMPILE" dir -o x.ralm
  expect 2 "is a character device" "$COMPILE" /dev/zero -o x.ralm
  ;;
limits)
  # Benchmarks of any length keep bounded memory; threads the system refuses end cleanly.
  ! limited || ( ulimit -v 600000; expect 1 "cannot start benchmark thread" "$RUN" "$M/add_r2.ralm" "${ADD[@]}" \
      --benchmark=1000 --threads=1000 ) || exit 1
  ! limited || ( ulimit -v 600000; timeout 3 "$RUN" "$M/add_r2.ralm" "${ADD[@]}" --benchmark=2147483647 \
      >out.txt 2>err.txt; rc=$?
    [ "$rc" -eq 124 ] || { echo "FAIL (limits): a 2^31-run benchmark ended early ($rc): $(cat err.txt)" >&2; exit 1; } ) || exit 1
  expect 2 "--threads must be in 1..1024" "$RUN" "$M/add_r2.ralm" "${ADD[@]}" --benchmark=1 --threads=5000
  expect 2 "--benchmark must be >= 0" "$RUN" "$M/add_r2.ralm" "${ADD[@]}" --benchmark=-1
  expect 2 "see --help" "$RUN" "$M/add_r2.ralm" "${ADD[@]}" --benchmark=99999999999999999999
  ;;
*) fail "unknown case" ;;
esac
echo "ok: $CASE"
