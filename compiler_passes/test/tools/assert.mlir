// cf.assert fails the execution with its message instead of aborting the host process.
// RUN: ral-opt %s -disc-ral-inject-execution-context -disc-ral-lower-to-library-calls | FileCheck %s --check-prefix=LIB
// RUN: ral-opt %s --ral-compile-pipeline | FileCheck %s --check-prefix=LLVM
// RUN: ral-compile %s -o %t.ralm
// RUN: ral-run %t.ralm --input=3xf32=1,2,3 --input=3xf32=10,20,30 | FileCheck %s --check-prefix=OK
// RUN: not ral-run %t.ralm --input=3xf32=1,2,3 --input=2xf32=10,20 2>&1 | FileCheck %s --check-prefix=FAIL
// RUN: ral-compile %s --by-name -o %t.by_name.ralm
// RUN: not ral-run %t.by_name.ralm --input=1xf32=1 --input=2xf32=10,20 2>&1 | FileCheck %s --check-prefix=FAIL

// LIB-LABEL: func.func @main(
// LIB-SAME: %[[CTX:.*]]: !disc_ral.context)
// Each input's layout is checked first, then the assertion.
// LIB: scf.if %{{.*}} {
// LIB-NEXT: disc_ral.signal_error %[[CTX]], "input #0 is a view
// LIB: scf.if %{{.*}} {
// LIB-NEXT: disc_ral.signal_error %[[CTX]], "input #1 is a view
// LIB: %[[SAME:.*]] = arith.cmpi eq, %dim, %dim{{.*}} : index
// LIB: %[[BAD:.*]] = arith.xori %[[SAME]], %{{.*}} : i1
// LIB-NEXT: scf.if %[[BAD]] {
// LIB-NEXT: disc_ral.signal_error %[[CTX]], "a and b must have the same length"
// LIB-NEXT: }
// LIB-NOT: cf.assert

// LLVM: disc_ral.imports = [{{.*}}"ral_signal_error___cpu___pvoid_i32_pi8___void"
// LLVM: llvm.mlir.global internal constant @[[MSG:__ral_message_[0-9]+]]("a and b must have the same length\00")
// LLVM-LABEL: llvm.func internal @main
// LLVM: %[[CODE:.*]] = llvm.mlir.constant(6 : i32) : i32
// LLVM-NEXT: %[[TEXT:.*]] = llvm.mlir.addressof @[[MSG]] : !llvm.ptr
// LLVM: llvm.store %[[CODE]]
// LLVM: llvm.store %[[TEXT]]
// LLVM: llvm.call
// LLVM-NEXT: llvm.load %{{.*}} : !llvm.ptr -> i32

// OK: output 0: 3xf32=11,22,33
// FAIL: a and b must have the same length

func.func @main(%a: memref<?xf32>, %b: memref<?xf32>) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  %m = memref.dim %b, %c0 : memref<?xf32>
  %same = arith.cmpi eq, %n, %m : index
  cf.assert %same, "a and b must have the same length"
  %out = memref.alloc(%n) : memref<?xf32>
  linalg.add ins(%a, %b : memref<?xf32>, memref<?xf32>) outs(%out : memref<?xf32>)
  return %out : memref<?xf32>
}
