func.func @main(%a: tensor<4xf32>) -> memref<4xf32> {
  %m = memref.alloc() : memref<4xf32>
  return %m : memref<4xf32>
}
