// Inputs are checked against the layout the module was compiled for: a row-major module given a
// column-major (Fortran-order) array fails with an error naming the input, instead of reading it
// as row-major; a module compiled for any strided layout reads the same array correctly.
// RUN: %python -c "import numpy as np; x = np.arange(6, dtype=np.float32).reshape(2, 3); np.save('%t.c.npy', x); np.save('%t.f.npy', np.asfortranarray(x))"
// RUN: ral-compile %s -o %t.ralm
// RUN: ral-run %t.ralm --input=@%t.c.npy | FileCheck %s --check-prefix=ROWMAJOR
// RUN: not ral-run %t.ralm --input=@%t.f.npy 2>&1 | FileCheck %s --check-prefix=MISMATCH
// RUN: ral-compile %S/Inputs/any_layout.mlir -o %t.any.ralm
// RUN: ral-run %t.any.ralm --input=@%t.f.npy | FileCheck %s --check-prefix=ROWMAJOR
// ROWMAJOR: output 0: 2x3xf32=0,2,4,6,8,10
// MISMATCH: INVALID_ARGUMENT: {{.*}}input #0 is a view whose strides differ from the layout the module was compiled for (memref<?x?xf32>)

func.func @main(%x: memref<?x?xf32>) -> memref<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?x?xf32>
  %m = memref.dim %x, %c1 : memref<?x?xf32>
  %y = memref.alloc(%n, %m) : memref<?x?xf32>
  linalg.add ins(%x, %x : memref<?x?xf32>, memref<?x?xf32>) outs(%y : memref<?x?xf32>)
  return %y : memref<?x?xf32>
}
