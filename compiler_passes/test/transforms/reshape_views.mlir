// disc-ral-bufferize: a reshape to a shape the program computes (tensor.reshape of a
// tensor.from_elements, what the ONNX importer writes for two or more dynamic dims) becomes a
// view with those sizes, returned or not: no shape buffer, so a GPU module's host code touches
// no device memory for it. A view of an input is copied before it is returned (the host owns
// its inputs); a view of the function's own buffer is returned as it is.
// RUN: ral-opt %s -disc-ral-bufferize | FileCheck %s

// CHECK-LABEL: func.func @input_view
// CHECK-SAME: (%[[X:.*]]: memref<?x2x?x3xf32>, %[[A:.*]]: index, %[[B:.*]]: index) -> memref<?x?xf32>
// CHECK-NOT: memref.reshape
// CHECK: %[[V:.*]] = memref.reinterpret_cast %[[X]] to offset: [0], sizes: [%[[A]], %[[B]]], strides: [%{{.*}}, 1]
// CHECK: %[[C:.*]] = memref.cast %[[V]] : memref<?x?xf32, strided<[?, 1]>> to memref<?x?xf32>
// CHECK: %[[O:.*]] = memref.alloc
// CHECK: linalg.copy ins(%[[C]] : memref<?x?xf32>) outs(%[[O]] : memref<?x?xf32>)
// CHECK: return %[[O]]
func.func @input_view(%x: tensor<?x2x?x3xf32>, %a: index, %b: index) -> tensor<?x?xf32> {
  %shape = tensor.from_elements %a, %b : tensor<2xindex>
  %r = tensor.reshape %x(%shape) : (tensor<?x2x?x3xf32>, tensor<2xindex>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// CHECK-LABEL: func.func @own_view
// CHECK-NOT: memref.reshape
// CHECK: %[[Y:.*]] = memref.alloc
// CHECK: linalg.generic
// CHECK: %[[V:.*]] = memref.reinterpret_cast %[[Y]] to offset: [0]
// CHECK: %[[C:.*]] = memref.cast %[[V]]
// CHECK-NOT: linalg.copy
// CHECK: return %[[C]]
func.func @own_view(%x: tensor<?x2x?x3xf32>, %a: index, %b: index) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %d0 = tensor.dim %x, %c0 : tensor<?x2x?x3xf32>
  %d2 = tensor.dim %x, %c2 : tensor<?x2x?x3xf32>
  %e = tensor.empty(%d0, %d2) : tensor<?x2x?x3xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j, k, l) -> (i, j, k, l)>, affine_map<(i, j, k, l) -> (i, j, k, l)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<?x2x?x3xf32>) outs(%e : tensor<?x2x?x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<?x2x?x3xf32>
  %shape = tensor.from_elements %a, %b : tensor<2xindex>
  %r = tensor.reshape %y(%shape) : (tensor<?x2x?x3xf32>, tensor<2xindex>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}
