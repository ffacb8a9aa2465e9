func.func @main(%a: memref<4xi32>) -> memref<4xi32> {
  %c0 = arith.constant 0 : index
  %x = memref.load %a[%c0] : memref<4xi32>
  %p = math.ipowi %x, %x : i32
  %m = memref.alloc() : memref<4xi32>
  memref.store %p, %m[%c0] : memref<4xi32>
  return %m : memref<4xi32>
}
