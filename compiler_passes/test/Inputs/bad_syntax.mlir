func.func @main(%a: memref<4xf32>) -> memref<4xf32> {
  %c = arith.constant 1.0 : f32
  %b = memref.alloc() : memref<4xf32
  return %b : memref<4xf32>
}
