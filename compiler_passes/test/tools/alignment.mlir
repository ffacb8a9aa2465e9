// An allocation aligned beyond ral_alloc's 64 bytes: the data pointer is rounded up within an
// over-allocated buffer, and the host still takes it (the allocated pointer is RAL's).
// RUN: ral-compile %s -o %t.ralm
// RUN: ral-run %t.ralm --input=3xf32=1,2,3 | FileCheck %s
// RUN: ral-opt %s --ral-compile-pipeline | FileCheck %s --check-prefix=LLVM
// CHECK: output 0: 3xf32=1,2,3
// The aligned pointer's low 12 bits are zero.
// CHECK-NEXT: output 1: 1xi64=0
// LLVM: %[[EXTRA:.*]] = llvm.mlir.constant(4032 : i64) : i64
// LLVM: llvm.add %{{.*}}, %[[EXTRA]] : i64
// LLVM: llvm.mlir.constant(-4096 : i64) : i64
// LLVM: llvm.and
// LLVM: llvm.inttoptr
func.func @main(%x: memref<?xf32>) -> (memref<?xf32>, memref<1xi64>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %y = memref.alloc(%n) {alignment = 4096 : i64} : memref<?xf32>
  memref.copy %x, %y : memref<?xf32> to memref<?xf32>
  %p = memref.extract_aligned_pointer_as_index %y : memref<?xf32> -> index
  %mask = arith.constant 4095 : index
  %low = arith.andi %p, %mask : index
  %low64 = arith.index_cast %low : index to i64
  %r = memref.alloc() : memref<1xi64>
  memref.store %low64, %r[%c0] : memref<1xi64>
  return %y, %r : memref<?xf32>, memref<1xi64>
}
