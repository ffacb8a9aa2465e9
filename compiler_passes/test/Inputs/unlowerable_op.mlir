func.func @main(%a: memref<4xf32>) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %t = bufferization.to_tensor %a : memref<4xf32>
  %v = tensor.extract %t[%c0] : tensor<4xf32>
  %m = memref.alloc() : memref<4xf32>
  memref.store %v, %m[%c0] : memref<4xf32>
  return %m : memref<4xf32>
}
