// A private function returning an unranked memref (as MLIR's own unranked_memref.mlir runner test
// does): MLIR lowers the return to a malloc'd copy the caller frees, libc calls a module may make.
func.func private @scaled(%x: memref<?xf32>, %s: f32) -> memref<*xf32> {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %y = memref.alloc(%n) : memref<?xf32>
  linalg.map ins(%x : memref<?xf32>) outs(%y : memref<?xf32>)
    (%v: f32) {
      %t = arith.mulf %v, %s : f32
      linalg.yield %t : f32
    }
  %u = memref.cast %y : memref<?xf32> to memref<*xf32>
  return %u : memref<*xf32>
}

func.func @main(%x: memref<?xf32>) -> memref<?xf32> {
  %two = arith.constant 2.0 : f32
  %u = func.call @scaled(%x, %two) : (memref<?xf32>, f32) -> memref<*xf32>
  %r = memref.cast %u : memref<*xf32> to memref<?xf32>
  return %r : memref<?xf32>
}
