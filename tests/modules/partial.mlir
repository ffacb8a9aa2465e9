// Partial execution (tests/unit/standalone_submit_test.cc): out0 = x + 1 needs only x, and
// out1 = 2 * y needs only y; their loops have unrelated trip counts, so they stay apart, and the
// compiler receives y only after out0 was sent (disc-ral-place-inputs-outputs).
func.func @main(%x: memref<?xf32>, %y: memref<?xf32>) -> (memref<?xf32>, memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %n = memref.dim %x, %c0 : memref<?xf32>
  %a = memref.alloc(%n) : memref<?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %x[%i] : memref<?xf32>
    %r = arith.addf %v, %one : f32
    memref.store %r, %a[%i] : memref<?xf32>
  }
  %m = memref.dim %y, %c0 : memref<?xf32>
  %b = memref.alloc(%m) : memref<?xf32>
  scf.parallel (%i) = (%c0) to (%m) step (%c1) {
    %v = memref.load %y[%i] : memref<?xf32>
    %r = arith.mulf %v, %two : f32
    memref.store %r, %b[%i] : memref<?xf32>
  }
  return %a, %b : memref<?xf32>, memref<?xf32>
}
