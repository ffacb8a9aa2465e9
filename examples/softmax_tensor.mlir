// The softmax of softmax.mlir, written on tensors with linalg.reduce and linalg.generic:
//   y[i, j] = exp(x[i, j] - max_j x[i, :]) / sum_j exp(x[i, j] - max_j x[i, :])
// x: [rows, cols], both dynamic.
#rows = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

func.func @main(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %neg_inf = arith.constant 0xFF800000 : f32
  %n = tensor.dim %x, %c0 : tensor<?x?xf32>
  %m = tensor.dim %x, %c1 : tensor<?x?xf32>

  // Row maxima, for numerical stability.
  %max0 = tensor.empty(%n) : tensor<?xf32>
  %max1 = linalg.fill ins(%neg_inf : f32) outs(%max0 : tensor<?xf32>) -> tensor<?xf32>
  %max = linalg.reduce ins(%x : tensor<?x?xf32>) outs(%max1 : tensor<?xf32>) dimensions = [1]
    (%v: f32, %acc: f32) {
      %r = arith.maximumf %v, %acc : f32
      linalg.yield %r : f32
    }

  // e = exp(x - max), and the row sums of e.
  %e0 = tensor.empty(%n, %m) : tensor<?x?xf32>
  %e = linalg.generic {indexing_maps = [#rows, #row, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : tensor<?x?xf32>, tensor<?xf32>) outs(%e0 : tensor<?x?xf32>) {
  ^bb0(%v: f32, %mx: f32, %out: f32):
    %d = arith.subf %v, %mx : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<?x?xf32>
  %sum0 = tensor.empty(%n) : tensor<?xf32>
  %sum1 = linalg.fill ins(%zero : f32) outs(%sum0 : tensor<?xf32>) -> tensor<?xf32>
  %sum = linalg.reduce ins(%e : tensor<?x?xf32>) outs(%sum1 : tensor<?xf32>) dimensions = [1]
    (%v: f32, %acc: f32) {
      %s = arith.addf %v, %acc : f32
      linalg.yield %s : f32
    }

  // y = e / sum, in place of e.
  %y = linalg.generic {indexing_maps = [#row, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%sum : tensor<?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%s: f32, %v: f32):
    %q = arith.divf %v, %s : f32
    linalg.yield %q : f32
  } -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}
