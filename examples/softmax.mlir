// Softmax over the last dimension of a [rows, cols] tensor, both dynamic:
//   y[i, j] = exp(x[i, j] - max_j x[i, :]) / sum_j exp(x[i, j] - max_j x[i, :])
#rows = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

func.func @main(%x: memref<?x?xf32>) -> memref<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %neg_inf = arith.constant 0xFF800000 : f32
  %n = memref.dim %x, %c0 : memref<?x?xf32>
  %m = memref.dim %x, %c1 : memref<?x?xf32>

  // Row maxima, for numerical stability.
  %max = memref.alloc(%n) : memref<?xf32>
  linalg.fill ins(%neg_inf : f32) outs(%max : memref<?xf32>)
  linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x?xf32>) outs(%max : memref<?xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.maximumf %v, %acc : f32
    linalg.yield %r : f32
  }

  // y = exp(x - max), and the row sums of y.
  %y = memref.alloc(%n, %m) : memref<?x?xf32>
  linalg.generic {indexing_maps = [#rows, #row, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : memref<?x?xf32>, memref<?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%v: f32, %mx: f32, %out: f32):
    %d = arith.subf %v, %mx : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  }
  %sum = memref.alloc(%n) : memref<?xf32>
  linalg.fill ins(%zero : f32) outs(%sum : memref<?xf32>)
  linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%y : memref<?x?xf32>) outs(%sum : memref<?xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  }

  // y /= sum
  linalg.generic {indexing_maps = [#row, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%sum : memref<?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%s: f32, %v: f32):
    %q = arith.divf %v, %s : f32
    linalg.yield %q : f32
  }
  memref.dealloc %max : memref<?xf32>
  memref.dealloc %sum : memref<?xf32>
  return %y : memref<?x?xf32>
}
