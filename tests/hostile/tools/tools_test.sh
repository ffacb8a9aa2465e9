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
  expect 2 "is a directory" "$PACK" --host-library="$M/add_r2.so" --name=x \
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
output_files)
  # Every tool's output (ral-compile for each --emit, ral-pack, ral-run --output, ral-inspect
  # --output) as a FIFO, a directory, a dangling link, a link to a FIFO, and as root a device
  # node with /dev/null's numbers and a link planted to another user's file, all made here (never
  # the machine's own): each refused before any work (exit 2) and left exactly as it was, with no
  # temporary file behind. A link to one's own regular file is written through, the link kept.
  printf '%s\n' 'func.func @main(%a: memref<4xf32>) -> memref<4xf32> {' \
    '  %m = memref.alloc() : memref<4xf32>' \
    '  memref.copy %a, %m : memref<4xf32> to memref<4xf32>' \
    '  return %m : memref<4xf32>' '}' >model.mlir
  head -c 64 /dev/urandom >k.bin
  "$PACK" --host-library="$M/add_r2.so" --name=k --input=?x?xf32 --input=?x?xf32 \
    --output=?x?xf32 --executable=k:spirv:@k.bin:main=1x1x1 -o k.ralm 2>err.txt || fail "pack: $(cat err.txt)"
  ln -s missing-target dangling
  ln -s fifo link-to-fifo
  OUTS=(fifo dir dangling link-to-fifo)
  declare -A WHY=([fifo]="is a FIFO" [dir]="is a directory" [dangling]="symbolic link to a missing file"
                  [link-to-fifo]="which is a FIFO" [null]="is a character device"
                  [planted]="belongs to user 65534")
  if [ "$(id -u)" -eq 0 ]; then
    read -r major minor < <(stat -c '%t %T' /dev/null)
    if mknod null c $((16#$major)) $((16#$minor)) 2>/dev/null; then OUTS+=(null)
    else echo "mknod refused here (no CAP_MKNOD): the device node case is skipped"; fi
    echo precious >theirs && chown 65534:65534 theirs && ln -s "$PWD/theirs" planted && OUTS+=(planted)
  else
    echo "not root: the device node and other-user cases are skipped (mknod and chown need root)"
  fi
  for o in "${OUTS[@]}"; do
    expect 2 "${WHY[$o]}" "$PACK" --host-library="$M/add_r2.so" --name=x --input=?x?xf32 \
      --input=?x?xf32 --output=?x?xf32 -o "$o"
    expect 2 "${WHY[$o]}" "$RUN" "$M/add_r2.ralm" "${ADD[@]}" --output=@"$o"
    expect 2 "${WHY[$o]}" "$INSPECT" k.ralm --extract k --output "$o"
    if [ "$COMPILE" != "-" ]; then
      for emit in ralm mlir llvm import; do
        expect 2 "${WHY[$o]}" "$COMPILE" model.mlir --emit=$emit -o "$o"
      done
    fi
  done
  [ -p fifo ] && [ -d dir ] && [ -L dangling ] && [ ! -e missing-target ] && [ -L link-to-fifo ] ||
    fail "a refused output was changed: $(ls -la)"
  if [ -e null ]; then
    [ -c null ] && [ "$(stat -c '%t %T' null)" = "$major $minor" ] || fail "the device node was replaced"
  fi
  if [ -e theirs ]; then
    [ "$(cat theirs)" = precious ] && [ "$(stat -c %u theirs)" = 65534 ] || fail "another user's file was written"
  fi
  ! ls -A | grep -q '\.tmp$\|\.partial$' || fail "a temporary file was left: $(ls -A)"
  # Written through a link to one's own file; a planted <out>.partial link is neither followed nor
  # in the way.
  echo old >mine && ln -s mine mylink
  echo intact >victim && ln -s victim x.ralm.partial
  ok() { timeout 120 "$@" >out.txt 2>err.txt || fail "exit $?: $*; $(cat err.txt)"; }
  ok "$PACK" --host-library="$M/add_r2.so" --name=x --input=?x?xf32 --input=?x?xf32 \
    --output=?x?xf32 -o x.ralm
  [ "$(cat victim)" = intact ] || fail "the write followed a planted .partial link"
  ok "$PACK" --host-library="$M/add_r2.so" --name=x --input=?x?xf32 --input=?x?xf32 \
    --output=?x?xf32 -o mylink
  [ -L mylink ] && cmp -s mine x.ralm || fail "ral-pack did not write through the link to mine"
  ok "$RUN" "$M/add_r2.ralm" "${ADD[@]}" --output=@mylink
  [ -L mylink ] && [ "$(head -c 6 mine | tail -c 5)" = NUMPY ] || fail "ral-run did not write through the link"
  ok "$INSPECT" k.ralm --extract k --output mylink
  [ -L mylink ] && cmp -s mine k.bin || fail "ral-inspect did not write through the link"
  if [ "$COMPILE" != "-" ]; then
    ok "$COMPILE" model.mlir --emit=import -o mylink
    [ -L mylink ] && grep -q "func.func @main" mine || fail "ral-compile did not write through the link"
    ok "$COMPILE" model.mlir -o mylink
    [ -L mylink ] && ok "$RUN" mine --input=4xf32=1,2,3,4
    grep -q "4xf32=1,2,3,4" out.txt || fail "the module written through the link does not run: $(cat out.txt)"
  fi
  ! ls -A | grep -q '\.tmp$' || fail "a temporary file was left: $(ls -A)"
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
  # ral-compile out of memory: 1.6 GB of one constant (LLVM materializes splats) under a 1.5 GB
  # address space, which used to end in LLVM's out-of-memory handler and abort (134).
  if [ "$COMPILE" != "-" ]; then
    printf '%s\n' 'memref.global "private" constant @w : memref<400000000xf32> = dense<2.0>' \
      'func.func @main(%a: memref<4xf32>) -> memref<4xf32> {' \
      '  %g = memref.get_global @w : memref<400000000xf32>' '  %c0 = arith.constant 0 : index' \
      '  %v = memref.load %g[%c0] : memref<400000000xf32>' '  %m = memref.alloc() : memref<4xf32>' \
      '  memref.copy %a, %m : memref<4xf32> to memref<4xf32>' \
      '  memref.store %v, %m[%c0] : memref<4xf32>' '  return %m : memref<4xf32>' '}' >splat.mlir
    ! limited || ( ulimit -v 1500000; expect 1 "out of memory" "$COMPILE" splat.mlir -o x.ralm ) || exit 1
    expect 1 "the module's constants take 1526 MiB, more than --max-memory (256 MiB)" \
      "$COMPILE" splat.mlir --max-memory=256M -o x.ralm
    [ ! -e x.ralm ] || fail "a failed compile left a module file"
  fi
  ;;
*) fail "unknown case" ;;
esac
echo "ok: $CASE"
