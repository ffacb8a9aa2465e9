// The gemm of a float matmul resolves to the exact name the CPU kernels register.
// RUN: ral-opt %s --ral-compile-pipeline | FileCheck %s
// CHECK: "ral_gemm___cpu___pvoid_m2df32_m2df32_m2df32_i1_i1___void\00"
// CHECK: "ral_batch_gemm___cpu___pvoid_m3df32_m3df32_m3df32_i1_i1___void\00"
// CHECK: "ral_gemm___cpu___pvoid_m2df64_m2df64_m2df64_i1_i1___void\00"
func.func @main(%a: memref<2x3xf32>, %b: memref<3x4xf32>, %x: memref<2x2x3xf32>, %y: memref<2x3x4xf32>,
           %p: memref<?x?xf64>, %q: memref<?x?xf64>)
    -> (memref<2x4xf32>, memref<2x2x4xf32>, memref<?x?xf64>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<2x4xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<2x4xf32>)
  linalg.matmul ins(%a, %b : memref<2x3xf32>, memref<3x4xf32>) outs(%c : memref<2x4xf32>)
  %z = memref.alloc() : memref<2x2x4xf32>
  linalg.fill ins(%zero : f32) outs(%z : memref<2x2x4xf32>)
  linalg.batch_matmul ins(%x, %y : memref<2x2x3xf32>, memref<2x3x4xf32>) outs(%z : memref<2x2x4xf32>)
  %i0 = arith.constant 0 : index
  %i1 = arith.constant 1 : index
  %m = memref.dim %p, %i0 : memref<?x?xf64>
  %n = memref.dim %q, %i1 : memref<?x?xf64>
  %zd = arith.constant 0.0 : f64
  %r = memref.alloc(%m, %n) : memref<?x?xf64>
  linalg.fill ins(%zd : f64) outs(%r : memref<?x?xf64>)
  linalg.matmul ins(%p, %q : memref<?x?xf64>, memref<?x?xf64>) outs(%r : memref<?x?xf64>)
  return %c, %z, %r : memref<2x4xf32>, memref<2x2x4xf32>, memref<?x?xf64>
}
