func.func private @my_helper(f32) -> f32

func.func @main(%a: memref<4xf32>) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %x = memref.load %a[%c0] : memref<4xf32>
  %y = call @my_helper(%x) : (f32) -> f32
  %m = memref.alloc() : memref<4xf32>
  memref.store %y, %m[%c0] : memref<4xf32>
  return %m : memref<4xf32>
}
