// An allocation with dynamic sizes checks them when it runs: a negative size, or more than 2^48
// elements or 2^56 bytes in all, fails the execution with an error naming the allocation, before
// ral_alloc could get a byte size that wrapped (a small buffer the code would write past).
// RUN: ral-opt %s -ral-compile-pipeline | FileCheck %s --check-prefix=LLVM
// RUN: ral-compile %s -o %t.ralm
// RUN: ral-run %t.ralm --input=1xf32=5 --input=2xi64=2,3 | FileCheck %s --check-prefix=OK
// RUN: ral-run %t.ralm --input=1xf32=5 --input=2xi64=0,3 | FileCheck %s --check-prefix=OK
// RUN: not ral-run %t.ralm --input=1xf32=5 --input=2xi64=-1,4 2>&1 | FileCheck %s --check-prefix=FAIL
// 2^62 * 4 elements wrap to 0 (and 0 bytes): the run used to "succeed", writing past the buffer.
// RUN: not ral-run %t.ralm --input=1xf32=5 --input=2xi64=4611686018427387904,4 2>&1 | FileCheck %s --check-prefix=FAIL
// RUN: not ral-run %t.ralm --input=1xf32=5 --input=2xi64=281474976710657,1 2>&1 | FileCheck %s --check-prefix=FAIL
// RUN: not ral-run %t.ralm --input=1xf32=5 --input=2xi64=-9223372036854775808,-1 2>&1 | FileCheck %s --check-prefix=FAIL
// At most 2^48 elements, the size goes to the allocator, which refuses what it cannot provide.
// RUN: not ral-run %t.ralm --input=1xf32=5 --input=2xi64=281474976710656,1 2>&1 | FileCheck %s --check-prefix=OOM
// The same at every optimisation level and by name.
// RUN: ral-compile %s -O0 -o %t.O0.ralm
// RUN: not ral-run %t.O0.ralm --input=1xf32=5 --input=2xi64=4611686018427387904,4 2>&1 | FileCheck %s --check-prefix=FAIL
// RUN: ral-compile %s --by-name -o %t.by_name.ralm
// RUN: not ral-run %t.by_name.ralm --input=1xf32=5 --input=2xi64=4611686018427387904,4 2>&1 | FileCheck %s --check-prefix=FAIL

// The check: each size unsigned <= max, and the running element count <= max / size.
// LLVM: llvm.mlir.global internal constant @[[MSG:__ral_message_[0-9]+]]("memref.alloc of memref<?x?xf32> at line {{[0-9]+}}, column 8: a size is negative
// LLVM-LABEL: llvm.func internal @main
// LLVM: %[[MAX:.*]] = llvm.mlir.constant(281474976710656 : i64) : i64
// LLVM: llvm.icmp "ule" %{{.*}}, %[[MAX]] : i64
// LLVM: llvm.intr.umax
// LLVM: llvm.udiv %[[MAX]], %{{.*}} : i64
// LLVM: llvm.cond_br %{{.*}} weights([1000, 1]), ^[[ALLOC:.*]], ^[[FAILED:.*]]
// LLVM: ^[[FAILED]]:
// LLVM: llvm.mlir.addressof @[[MSG]]
// LLVM: llvm.call
// LLVM: ^[[ALLOC]]:

// OK: output 0: 1xf32=5
// OOM: ral-run: error: OUT_OF_MEMORY: {{.*}}ral_alloc of 1125899906842624 bytes

func.func @main(%a: memref<?xf32>, %s: memref<2xi64>) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n0 = memref.load %s[%c0] : memref<2xi64>
  %n1 = memref.load %s[%c1] : memref<2xi64>
  %d0 = arith.index_cast %n0 : i64 to index
  %d1 = arith.index_cast %n1 : i64 to index
  // FAIL: ral-run: error: INVALID_ARGUMENT: module '{{.*}}': memref.alloc of memref<?x?xf32> at line [[@LINE+1]], column 8: a size is negative, or the buffer would have more than 2^48 elements or 2^56 bytes
  %t = memref.alloc(%d0, %d1) : memref<?x?xf32>
  %n = memref.dim %a, %c0 : memref<?xf32>
  %m = memref.alloc(%n) : memref<?xf32>
  memref.copy %a, %m : memref<?xf32> to memref<?xf32>
  memref.dealloc %t : memref<?x?xf32>
  return %m : memref<?xf32>
}
