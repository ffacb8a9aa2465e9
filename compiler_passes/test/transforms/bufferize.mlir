// disc-ral-bufferize on the tensor-level examples: one-shot bufferization at the function
// boundary, temporaries freed, and each entry result handed to the host as the very buffer its
// producer wrote (a disc_ral.alloc, or a view of one), never a copy.
// RUN: ral-opt %S/../../../examples/mlp_tensor.mlir -disc-ral-bufferize -disc-ral-inject-execution-context -disc-ral-lower-to-library-calls | FileCheck %s --check-prefix=MLP
// RUN: ral-opt %S/../../../examples/softmax_tensor.mlir -disc-ral-bufferize -disc-ral-inject-execution-context -disc-ral-lower-to-library-calls | FileCheck %s --check-prefix=SOFTMAX
// RUN: ral-opt %S/../../../examples/attention_tensor.mlir -disc-ral-bufferize -disc-ral-inject-execution-context -disc-ral-lower-to-library-calls | FileCheck %s --check-prefix=ATTENTION
// RUN: ral-opt %S/../../../examples/mlp_tosa.mlir -disc-ral-bufferize -disc-ral-inject-execution-context -disc-ral-lower-to-library-calls | FileCheck %s --check-prefix=TOSA
// RUN: ral-opt %s -split-input-file -disc-ral-bufferize | FileCheck %s

// MLP-LABEL: func.func @main(
// MLP-SAME: %[[CTX:.*]]: !disc_ral.context)
// MLP-NOT: copy
// MLP-NOT: clone
// MLP-DAG: %[[X:.*]] = memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [%{{.*}}, 128], strides: [128, 1] : {{.*}} to memref<?x128xf32>
// MLP-DAG: %[[W1:.*]] = memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [128, 256], strides: [256, 1] : {{.*}} to memref<128x256xf32>
// MLP: %[[H:.*]] = disc_ral.alloc %[[CTX]](%{{.*}}) : memref<?x256xf32>
// MLP: disc_ral.dispatch %[[CTX]], "ral_gemm", "cpu" (%[[X]], %[[W1]], %[[H]], %{{.*}}, %{{.*}})
// MLP: %[[Y:.*]] = disc_ral.alloc %[[CTX]](%{{.*}}) : memref<?x10xf32>
// MLP: disc_ral.dispatch %[[CTX]], "ral_gemm", "cpu" (%[[H]], %{{.*}}, %[[Y]], %{{.*}}, %{{.*}})
// MLP: linalg.generic {{.*}} outs(%[[Y]] : memref<?x10xf32>)
// MLP: disc_ral.dealloc %[[CTX]], %[[H]]
// MLP-NOT: copy
// MLP-NOT: clone
// MLP-NOT: disc_ral.dealloc %[[CTX]], %[[Y]]
// MLP: disc_ral.send_output %[[CTX]], 0, %[[Y]] : memref<?x10xf32>

// SOFTMAX-LABEL: func.func @main(
// SOFTMAX-SAME: %[[CTX:.*]]: !disc_ral.context)
// SOFTMAX-NOT: copy
// SOFTMAX-NOT: clone
// SOFTMAX: %[[MAX:.*]] = disc_ral.alloc %[[CTX]](%{{.*}}) : memref<?xf32>
// SOFTMAX: %[[E:.*]] = disc_ral.alloc %[[CTX]](%{{.*}}, %{{.*}}) : memref<?x?xf32>
// SOFTMAX: %[[SUM:.*]] = disc_ral.alloc %[[CTX]](%{{.*}}) : memref<?xf32>
// The normalisation runs in place of e, which is the result.
// SOFTMAX: linalg.generic {{.*}} ins(%[[SUM]] : memref<?xf32>) outs(%[[E]] : memref<?x?xf32>)
// SOFTMAX-DAG: disc_ral.dealloc %[[CTX]], %[[MAX]]
// SOFTMAX-DAG: disc_ral.dealloc %[[CTX]], %[[SUM]]
// SOFTMAX-NOT: copy
// SOFTMAX: disc_ral.send_output %[[CTX]], 0, %[[E]] : memref<?x?xf32>

// ATTENTION-LABEL: func.func @main(
// ATTENTION-SAME: %[[CTX:.*]]: !disc_ral.context)
// ATTENTION-NOT: copy
// ATTENTION-NOT: clone
// ATTENTION: disc_ral.dispatch %[[CTX]], "ral_batch_gemm", "cpu"
// ATTENTION: %[[OUT:.*]] = disc_ral.alloc %[[CTX]](%{{.*}}, %{{.*}}) : memref<?x?x64xf32>
// ATTENTION: disc_ral.dispatch %[[CTX]], "ral_batch_gemm", "cpu" (%{{.*}}, %{{.*}}, %[[OUT]], %{{.*}}, %{{.*}})
// ATTENTION-NOT: copy
// ATTENTION-NOT: disc_ral.dealloc %[[CTX]], %[[OUT]]
// ATTENTION: disc_ral.send_output %[[CTX]], 0, %[[OUT]] : memref<?x?x64xf32>

// TOSA-LABEL: func.func @main(
// TOSA-SAME: %[[CTX:.*]]: !disc_ral.context)
// TOSA-NOT: tosa.
// TOSA-NOT: copy
// TOSA: disc_ral.dispatch %[[CTX]], "ral_batch_gemm", "cpu"
// TOSA: disc_ral.dispatch %[[CTX]], "ral_batch_gemm", "cpu"
// TOSA: %[[Y:.*]] = disc_ral.alloc %[[CTX]](%{{.*}}) : memref<1x?x10xf32>
// The rank-2 result is a view of the buffer the last bias add wrote.
// TOSA: %[[FLAT:.*]] = memref.collapse_shape %[[Y]]
// TOSA: %[[OUT:.*]] = memref.expand_shape %[[FLAT]]
// TOSA-NOT: copy
// TOSA-NOT: disc_ral.dealloc %[[CTX]], %[[Y]]
// TOSA: disc_ral.send_output %[[CTX]], 0, %[[OUT]] : memref<?x10xf32>

// A module with no tensors is left as it is (its explicit deallocs included).
// CHECK-LABEL: func.func @buffers(%{{.*}}: memref<4xf32>) -> memref<4xf32>
// CHECK-NEXT: %[[A:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: %[[B:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: memref.dealloc %[[B]] : memref<4xf32>
// CHECK-NEXT: return %[[A]]
func.func @buffers(%x: memref<4xf32>) -> memref<4xf32> {
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  memref.dealloc %b : memref<4xf32>
  return %a : memref<4xf32>
}

// -----

// A result the function does not own (an input, a constant) is returned as a fresh copy, so the
// host owns every output; a computed result is returned as is.
// CHECK: memref.global "private" constant @[[CST:.*]] : memref<2xf32> = dense<[1.000000e+00, 2.000000e+00]>
// CHECK-LABEL: func.func @not_owned(
// CHECK-SAME: %[[X:.*]]: memref<4xf32>) -> (memref<4xf32>, memref<2xf32>, memref<4xf32>)
// CHECK-DAG: %[[G:.*]] = memref.get_global @[[CST]] : memref<2xf32>
// CHECK-DAG: %[[Y:.*]] = memref.alloc() {{.*}} : memref<4xf32>
// CHECK: linalg.add ins(%[[X]], %[[X]] : memref<4xf32>, memref<4xf32>) outs(%[[Y]] : memref<4xf32>)
// CHECK: %[[XC:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: memref.copy %[[X]], %[[XC]]
// CHECK: %[[GC:.*]] = memref.alloc() : memref<2xf32>
// CHECK-NEXT: memref.copy %[[G]], %[[GC]]
// CHECK: return %[[XC]], %[[GC]], %[[Y]]
func.func @not_owned(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<2xf32>, tensor<4xf32>) {
  %c = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.add ins(%x, %x : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %x, %c, %y : tensor<4xf32>, tensor<2xf32>, tensor<4xf32>
}

// -----

// A temporary that is not returned is freed; an insert_slice writes into its destination's buffer.
// CHECK-LABEL: func.func @pad_rows(
// CHECK-SAME: %[[X:.*]]: memref<?x4xf32>) -> memref<?x8xf32>
// CHECK: %[[OUT:.*]] = memref.alloc(%{{.*}}) {{.*}} : memref<?x8xf32>
// CHECK: linalg.fill {{.*}} outs(%[[OUT]] : memref<?x8xf32>)
// CHECK: %[[VIEW:.*]] = memref.subview %[[OUT]][0, 2] [%{{.*}}, 4] [1, 1]
// CHECK: linalg.copy ins(%[[X]] : memref<?x4xf32>) outs(%[[VIEW]] : memref<?x4xf32, strided<[8, 1], offset: 2>>)
// CHECK-NOT: memref.dealloc %[[OUT]]
// CHECK: return %[[OUT]]
func.func @pad_rows(%x: tensor<?x4xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x4xf32>
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?x8xf32>) -> tensor<?x8xf32>
  %r = tensor.insert_slice %x into %z[0, 2] [%n, 4] [1, 1] : tensor<?x4xf32> into tensor<?x8xf32>
  return %r : tensor<?x8xf32>
}
