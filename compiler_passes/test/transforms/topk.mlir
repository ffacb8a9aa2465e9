// disc_ral.topk: bufferized into its inits (destination style, never copied in: the kernel only
// writes them) and lowered to a ral_topk dispatch with `largest` as an i1, on every device.
// RUN: ral-opt %s -disc-ral-bufferize -disc-ral-inject-execution-context=entry=top -disc-ral-lower-to-library-calls -split-input-file | FileCheck %s
// RUN: ral-opt %s -disc-ral-bufferize -disc-ral-inject-execution-context=entry=top -disc-ral-lower-to-library-calls=device=cuda -split-input-file | FileCheck %s --check-prefix=CUDA
// RUN: ral-opt %s -disc-ral-bufferize -disc-ral-inject-execution-context=entry=top -disc-ral-lower-to-library-calls=device=vulkan -split-input-file | FileCheck %s --check-prefix=VULKAN
// RUN: ral-opt %s -disc-ral-bufferize -disc-ral-inject-execution-context=entry=top -disc-ral-lower-to-library-calls=device=hsa -split-input-file | FileCheck %s --check-prefix=HSA

// CHECK-LABEL: func @top
// CHECK-SAME: (%[[CTX:.*]]: !disc_ral.context
// CHECK: %[[X:.*]] = memref.reinterpret_cast %{{.*}} : memref<?x8xf32, strided<[?, ?], offset: ?>> to memref<?x8xf32>
// CHECK: %[[KV:.*]] = memref.load %{{.*}}[] : memref<i64>
// CHECK: %[[V:.*]] = disc_ral.alloc %[[CTX]](%{{.*}}, %{{.*}}) : memref<?x?xf32>
// CHECK: %[[I:.*]] = disc_ral.alloc %[[CTX]](%{{.*}}, %{{.*}}) : memref<?x?xi64>
// CHECK-NOT: linalg.copy
// CHECK: %[[FALSE:.*]] = arith.constant false
// CHECK: disc_ral.dispatch %[[CTX]], "ral_topk", "cpu" (%[[X]], %[[V]], %[[I]], %[[KV]], %[[FALSE]]) : (memref<?x8xf32>, memref<?x?xf32>, memref<?x?xi64>, i64, i1) -> ()
// CHECK: disc_ral.send_output %[[CTX]], 0, %[[V]]
// CHECK: disc_ral.send_output %[[CTX]], 1, %[[I]]
// CHECK-NOT: disc_ral.topk
// CUDA: disc_ral.dispatch %{{.*}}, "ral_topk", "cuda" ({{.*}}) : (memref<?x8xf32>, memref<?x?xf32>, memref<?x?xi64>, i64, i1) -> ()
// VULKAN: disc_ral.dispatch %{{.*}}, "ral_topk", "vulkan" ({{.*}}) : (memref<?x8xf32>, memref<?x?xf32>, memref<?x?xi64>, i64, i1) -> ()
// HSA: disc_ral.dispatch %{{.*}}, "ral_topk", "hsa" ({{.*}}) : (memref<?x8xf32>, memref<?x?xf32>, memref<?x?xi64>, i64, i1) -> ()
func.func @top(%x: tensor<?x8xf32>, %kt: tensor<i64>) -> (tensor<?x?xf32>, tensor<?x?xi64>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %k = tensor.extract %kt[] : tensor<i64>
  %ki = arith.index_cast %k : i64 to index
  %v0 = tensor.empty(%n, %ki) : tensor<?x?xf32>
  %i0 = tensor.empty(%n, %ki) : tensor<?x?xi64>
  %v, %i = disc_ral.topk ins(%x, %k : tensor<?x8xf32>) outs(%v0, %i0 : tensor<?x?xf32>, tensor<?x?xi64>) {smallest} -> tensor<?x?xf32>, tensor<?x?xi64>
  return %v, %i : tensor<?x?xf32>, tensor<?x?xi64>
}
