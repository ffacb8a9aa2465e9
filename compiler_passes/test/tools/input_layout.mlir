// The layout contract end to end: the module records the layout each input was compiled for;
// ral-run binds an array that layout accepts as it is, copies any other into it (a Fortran-order
// array for a row-major input gives the right answer), and with --strict-zero-copy refuses it
// with an error naming the input and both layouts.
// RUN: %python -c "import numpy as np; x = np.arange(6, dtype=np.float32).reshape(2, 3); np.save('%t.c.npy', x); np.save('%t.f.npy', np.asfortranarray(x))"
// RUN: ral-compile %s -o %t.ralm
// RUN: ral-inspect %t.ralm | FileCheck %s --check-prefix=INSPECT
// RUN: ral-run %t.ralm --input=@%t.c.npy | FileCheck %s --check-prefix=RESULT
// RUN: ral-run %t.ralm --input=@%t.f.npy | FileCheck %s --check-prefix=RESULT
// RUN: ral-run %t.ralm --strict-zero-copy --input=@%t.c.npy | FileCheck %s --check-prefix=RESULT
// RUN: not ral-run %t.ralm --strict-zero-copy --input=@%t.f.npy 2>&1 | FileCheck %s --check-prefix=STRICT
//
// Any strides: the Fortran-order array is read in place, strict or not.
// RUN: ral-compile %S/../Inputs/any_layout.mlir -o %t.any.ralm
// RUN: ral-inspect %t.any.ralm | FileCheck %s --check-prefix=INSPECT-ANY
// RUN: ral-run %t.any.ralm --strict-zero-copy --input=@%t.f.npy | FileCheck %s --check-prefix=RESULT
//
// Dense rows, any row stride: Fortran order is copied, or refused when strict.
// RUN: ral-compile %S/../Inputs/rows_layout.mlir -o %t.rows.ralm
// RUN: ral-inspect %t.rows.ralm | FileCheck %s --check-prefix=INSPECT-ROWS
// RUN: ral-run %t.rows.ralm --input=@%t.f.npy | FileCheck %s --check-prefix=RESULT
// RUN: not ral-run %t.rows.ralm --strict-zero-copy --input=@%t.f.npy 2>&1 | FileCheck %s --check-prefix=STRICT-ROWS
//
// INSPECT: inputs (1):
// INSPECT-NEXT: 0: ?x?xf32  (row-major)
// INSPECT: outputs (1):
// INSPECT-NEXT: 0: ?x?xf32  (row-major)
// INSPECT-ANY: 0: ?x?xf32,strided<[?,?]>
// INSPECT-ROWS: 0: ?x?xf32,strided<[?,1]>
// RESULT: output 0: 2x3xf32=0,2,4,6,8,10
// STRICT: INVALID_ARGUMENT: input 0 (2x3xf32) has strides [1,2] but the module was compiled for layout row-major (?x?xf32); strict zero-copy is on
// STRICT-ROWS: has strides [1,2] but the module was compiled for layout strided<[?,1]>

func.func @main(%x: memref<?x?xf32>) -> memref<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?x?xf32>
  %m = memref.dim %x, %c1 : memref<?x?xf32>
  %y = memref.alloc(%n, %m) : memref<?x?xf32>
  linalg.add ins(%x, %x : memref<?x?xf32>, memref<?x?xf32>) outs(%y : memref<?x?xf32>)
  return %y : memref<?x?xf32>
}
