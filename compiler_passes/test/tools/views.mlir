// memref views compile to offset/stride arithmetic and give the right elements: reshape by a
// runtime shape, expand_shape/collapse_shape, reinterpret_cast, view over bytes, and copies
// between them.
// RUN: ral-compile %s -o %t.ralm
// RUN: ral-run %t.ralm --input=6xf32=0,1,2,3,4,5 --input=2xi64=3,2 | FileCheck %s
// RUN: ral-run %t.ralm --input=8xf32=9,8,7,6,5,4,3,2 --input=2xi64=4,2 | FileCheck %s --check-prefix=OTHER
// CHECK: output 0: 3x2xf32=0,1,2,3,4,5
// CHECK-NEXT: output 1: 3x2xf32=0,1,2,3,4,5
// CHECK-NEXT: output 2: 6xf32=0,1,2,3,4,5
// CHECK-NEXT: output 3: 2x2xf32=1,2,3,4
// CHECK-NEXT: output 4: 2x4xf32=7,7,7,7,7,7,7,7
// OTHER: output 0: 4x2xf32=9,8,7,6,5,4,3,2
// OTHER-NEXT: output 1: 4x2xf32=9,8,7,6,5,4,3,2
// OTHER-NEXT: output 2: 8xf32=9,8,7,6,5,4,3,2
// OTHER-NEXT: output 3: 2x2xf32=8,7,6,5

func.func @main(%x: memref<?xf32>, %shape64: memref<2xi64>) -> (memref<?x?xf32>, memref<?x2xf32>, memref<?xf32>, memref<2x2xf32>, memref<2x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  // reshape by a runtime shape
  %shape = memref.alloc() : memref<2xindex>
  %s0 = memref.load %shape64[%c0] : memref<2xi64>
  %s1 = memref.load %shape64[%c1] : memref<2xi64>
  %i0 = arith.index_cast %s0 : i64 to index
  %i1 = arith.index_cast %s1 : i64 to index
  memref.store %i0, %shape[%c0] : memref<2xindex>
  memref.store %i1, %shape[%c1] : memref<2xindex>
  %r = memref.reshape %x(%shape) : (memref<?xf32>, memref<2xindex>) -> memref<?x?xf32>
  %o0 = memref.alloc(%c2, %c2) : memref<?x?xf32>
  %d0 = memref.dim %r, %c0 : memref<?x?xf32>
  %d1 = memref.dim %r, %c1 : memref<?x?xf32>
  %o0b = memref.alloc(%d0, %d1) : memref<?x?xf32>
  memref.copy %r, %o0b : memref<?x?xf32> to memref<?x?xf32>
  memref.dealloc %o0 : memref<?x?xf32>
  // expand_shape, then a strided subview of it
  %h = arith.divui %n, %c2 : index
  %e = memref.expand_shape %x [[0, 1]] output_shape [%h, 2] : memref<?xf32> into memref<?x2xf32>
  %o1 = memref.alloc(%h) : memref<?x2xf32>
  memref.copy %e, %o1 : memref<?x2xf32> to memref<?x2xf32>
  %cs = memref.collapse_shape %o1 [[0, 1]] : memref<?x2xf32> into memref<?xf32>
  %o2 = memref.alloc(%n) : memref<?xf32>
  memref.copy %cs, %o2 : memref<?xf32> to memref<?xf32>
  // reinterpret_cast: the 2x2 block at offset 1 with row stride 2
  %rc = memref.reinterpret_cast %x to offset: [1], sizes: [2, 2], strides: [2, 1] : memref<?xf32> to memref<2x2xf32, strided<[2, 1], offset: 1>>
  %o3 = memref.alloc() : memref<2x2xf32>
  memref.copy %rc, %o3 : memref<2x2xf32, strided<[2, 1], offset: 1>> to memref<2x2xf32>
  // memref.view: f32 rows over a byte buffer, at a byte offset
  %bytes = memref.alloc() : memref<48xi8>
  %c16 = arith.constant 16 : index
  %v = memref.view %bytes[%c16][] : memref<48xi8> to memref<2x4xf32>
  %seven = arith.constant 7.0 : f32
  linalg.fill ins(%seven : f32) outs(%v : memref<2x4xf32>)
  %o4 = memref.alloc() : memref<2x4xf32>
  memref.copy %v, %o4 : memref<2x4xf32> to memref<2x4xf32>
  memref.dealloc %bytes : memref<48xi8>
  return %o0b, %o1, %o2, %o3, %o4 : memref<?x?xf32>, memref<?x2xf32>, memref<?xf32>, memref<2x2xf32>, memref<2x4xf32>
}
