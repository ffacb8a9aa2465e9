func.func @main(%x: memref<?x?xf32, strided<[?, 1], offset: ?>>) -> memref<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?x?xf32, strided<[?, 1], offset: ?>>
  %m = memref.dim %x, %c1 : memref<?x?xf32, strided<[?, 1], offset: ?>>
  %y = memref.alloc(%n, %m) : memref<?x?xf32>
  linalg.add ins(%x, %x : memref<?x?xf32, strided<[?, 1], offset: ?>>, memref<?x?xf32, strided<[?, 1], offset: ?>>) outs(%y : memref<?x?xf32>)
  return %y : memref<?x?xf32>
}
