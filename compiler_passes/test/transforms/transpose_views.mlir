// On the cpu, a linalg.transpose whose fresh output only products and elementwise ops read
// becomes a strided view of its input, and one whose input only a product wrote becomes a view
// the product writes (transpose_views.h): attention's head split and merge copy nothing. A
// transpose whose input is written before the last reader, or whose output is read elsewhere,
// stays; so does every transpose on other devices.
// RUN: ral-opt %s -disc-ral-lower-to-library-calls -split-input-file | FileCheck %s
// RUN: ral-opt %s -disc-ral-lower-to-library-calls=device=vulkan -split-input-file | FileCheck %s --check-prefix=VULKAN

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// Q scaled, K transposed twice over, V as it is; the heads' outputs merged back.
// CHECK-LABEL: func @attention
// CHECK-SAME: (%[[CTX:.*]]: !disc_ral.context, %[[Q:.*]]: memref<128x?x64xf32>, %[[K:.*]]: memref<128x?x64xf32>, %[[V:.*]]: memref<128x?x64xf32>, %[[N:.*]]: index)
// CHECK-NOT: linalg.transpose
// CHECK: %[[QB:.*]], %[[QO:.*]], %[[QS:.*]]:3, %[[QT:.*]]:3 = memref.extract_strided_metadata %[[Q]]
// CHECK: %[[QV:.*]] = memref.reinterpret_cast %[[QB]] to offset: [0], sizes: [%[[QS]]#1, 128, 64], strides: [64, %[[QT]]#0, 1] : memref<f32> to memref<?x128x64xf32, strided<[64, ?, 1]>>
// CHECK: linalg.generic {{.*}} ins(%[[QV]] : memref<?x128x64xf32, strided<[64, ?, 1]>>)
// CHECK: %[[KB:.*]], %[[KO:.*]], %[[KS:.*]]:3, %[[KT:.*]]:3 = memref.extract_strided_metadata %[[K]]
// CHECK: %[[KV:.*]] = memref.reinterpret_cast %[[KB]] to offset: [0], sizes: [%[[KS]]#1, 64, 128], strides: [64, 1, %[[KT]]#0] : memref<f32> to memref<?x64x128xf32, strided<[64, 1, ?]>>
// CHECK: disc_ral.dispatch %[[CTX]], "ral_batch_gemm", "cpu" (%{{.*}}, %[[KV]], %{{.*}}, %false, %false) : (memref<?x128x64xf32>, memref<?x64x128xf32, strided<[64, 1, ?]>>, memref<?x128x128xf32>, i1, i1) -> ()
// CHECK: memref.extract_strided_metadata %[[V]]
// CHECK: %[[VV:.*]] = memref.reinterpret_cast {{.*}} : memref<f32> to memref<?x128x64xf32, strided<[64, ?, 1]>>
// CHECK: %[[OUT:.*]] = disc_ral.alloc %[[CTX]](%[[N]]) : memref<128x?x64xf32>
// CHECK: memref.extract_strided_metadata %[[OUT]]
// CHECK: %[[OV:.*]] = memref.reinterpret_cast {{.*}} : memref<f32> to memref<?x128x64xf32, strided<[64, ?, 1]>>
// CHECK: disc_ral.dispatch %[[CTX]], "ral_batch_gemm", "cpu" (%{{.*}}, %[[VV]], %[[OV]], %{{.*}}, %{{.*}})
// CHECK: return %[[OUT]]
// VULKAN-LABEL: func @attention
// VULKAN-COUNT-4: linalg.transpose
func.func @attention(%ctx: !disc_ral.context, %q: memref<128x?x64xf32>, %k: memref<128x?x64xf32>,
                     %v: memref<128x?x64xf32>, %n: index) -> memref<128x?x64xf32> {
  %zero = arith.constant 0.0 : f32
  %eight = arith.constant 8.0 : f32
  %qt = memref.alloc(%n) : memref<?x128x64xf32>
  linalg.transpose ins(%q : memref<128x?x64xf32>) outs(%qt : memref<?x128x64xf32>) permutation = [1, 0, 2]
  %qs = memref.alloc(%n) : memref<?x128x64xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%qt : memref<?x128x64xf32>) outs(%qs : memref<?x128x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.divf %in, %eight : f32
    linalg.yield %d : f32
  }
  %kt = memref.alloc(%n) : memref<?x64x128xf32>
  linalg.transpose ins(%k : memref<128x?x64xf32>) outs(%kt : memref<?x64x128xf32>) permutation = [1, 2, 0]
  %s = memref.alloc(%n) : memref<?x128x128xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<?x128x128xf32>)
  linalg.batch_matmul ins(%qs, %kt : memref<?x128x64xf32>, memref<?x64x128xf32>) outs(%s : memref<?x128x128xf32>)
  %vt = memref.alloc(%n) : memref<?x128x64xf32>
  linalg.transpose ins(%v : memref<128x?x64xf32>) outs(%vt : memref<?x128x64xf32>) permutation = [1, 0, 2]
  %o = memref.alloc(%n) : memref<?x128x64xf32>
  linalg.fill ins(%zero : f32) outs(%o : memref<?x128x64xf32>)
  linalg.batch_matmul ins(%s, %vt : memref<?x128x128xf32>, memref<?x128x64xf32>) outs(%o : memref<?x128x64xf32>)
  %out = memref.alloc(%n) : memref<128x?x64xf32>
  linalg.transpose ins(%o : memref<?x128x64xf32>) outs(%out : memref<128x?x64xf32>) permutation = [1, 0, 2]
  memref.dealloc %qt : memref<?x128x64xf32>
  memref.dealloc %qs : memref<?x128x64xf32>
  memref.dealloc %kt : memref<?x64x128xf32>
  memref.dealloc %s : memref<?x128x128xf32>
  memref.dealloc %vt : memref<?x128x64xf32>
  memref.dealloc %o : memref<?x128x64xf32>
  return %out : memref<128x?x64xf32>
}

// -----

// The transposed input is overwritten before the product reads it; the product's output is read
// by a loop as well as by the transpose; the transposed output is read before the transpose
// writes it. All three copies stay.
// CHECK-LABEL: func @copies_needed
// CHECK-COUNT-3: linalg.transpose
// CHECK-NOT: memref.reinterpret_cast
func.func @copies_needed(%ctx: !disc_ral.context, %a: memref<4x8xf32>, %x: memref<8x6xf32>,
                         %seen: memref<4x6xf32>, %early: memref<6x4xf32>) -> memref<6x4xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  // 1: x is written between the transpose and the product.
  %xt = memref.alloc() : memref<6x8xf32>
  linalg.transpose ins(%x : memref<8x6xf32>) outs(%xt : memref<6x8xf32>) permutation = [1, 0]
  linalg.fill ins(%one : f32) outs(%x : memref<8x6xf32>)
  %p = memref.alloc() : memref<6x8xf32>
  linalg.fill ins(%zero : f32) outs(%p : memref<6x8xf32>)
  %a8 = memref.alloc() : memref<8x8xf32>
  linalg.fill ins(%one : f32) outs(%a8 : memref<8x8xf32>)
  linalg.matmul ins(%xt, %a8 : memref<6x8xf32>, memref<8x8xf32>) outs(%p : memref<6x8xf32>)
  // 2: the product's output is also copied out.
  %c = memref.alloc() : memref<4x6xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<4x6xf32>)
  linalg.matmul ins(%a, %x : memref<4x8xf32>, memref<8x6xf32>) outs(%c : memref<4x6xf32>)
  memref.copy %c, %seen : memref<4x6xf32> to memref<4x6xf32>
  %ct = memref.alloc() : memref<6x4xf32>
  linalg.transpose ins(%c : memref<4x6xf32>) outs(%ct : memref<6x4xf32>) permutation = [1, 0]
  // 3: the transpose's output is read before the transpose.
  %d = memref.alloc() : memref<4x6xf32>
  linalg.fill ins(%zero : f32) outs(%d : memref<4x6xf32>)
  linalg.matmul ins(%a, %x : memref<4x8xf32>, memref<8x6xf32>) outs(%d : memref<4x6xf32>)
  %dt = memref.alloc() : memref<6x4xf32>
  memref.copy %dt, %early : memref<6x4xf32> to memref<6x4xf32>
  linalg.transpose ins(%d : memref<4x6xf32>) outs(%dt : memref<6x4xf32>) permutation = [1, 0]
  memref.dealloc %xt : memref<6x8xf32>
  memref.dealloc %p : memref<6x8xf32>
  memref.dealloc %a8 : memref<8x8xf32>
  memref.dealloc %c : memref<4x6xf32>
  memref.dealloc %d : memref<4x6xf32>
  memref.dealloc %dt : memref<6x4xf32>
  return %ct : memref<6x4xf32>
}
