// The attention block of attention.mlir, written on tensors:
//   out = softmax(q · kᵀ / sqrt(64)) · v
// q: [batch, s, 64], k and v: [batch, t, 64] -> out: [batch, s, 64].
// linalg.transpose gives kᵀ; both products become RAL batch_gemm calls after bufferization.
#bst = affine_map<(b, i, j) -> (b, i, j)>
#bs = affine_map<(b, i, j) -> (b, i)>

func.func @main(%q: tensor<?x?x64xf32>, %k: tensor<?x?x64xf32>, %v: tensor<?x?x64xf32>)
    -> tensor<?x?x64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %neg_inf = arith.constant 0xFF800000 : f32
  %scale = arith.constant 0.125 : f32
  %batch = tensor.dim %q, %c0 : tensor<?x?x64xf32>
  %s = tensor.dim %q, %c1 : tensor<?x?x64xf32>
  %t = tensor.dim %k, %c1 : tensor<?x?x64xf32>

  // kt = transpose(k): [batch, 64, t]
  %kt0 = tensor.empty(%batch, %t) : tensor<?x64x?xf32>
  %kt = linalg.transpose ins(%k : tensor<?x?x64xf32>) outs(%kt0 : tensor<?x64x?xf32>)
      permutation = [0, 2, 1]

  // scores = q · kt: [batch, s, t]
  %sc0 = tensor.empty(%batch, %s, %t) : tensor<?x?x?xf32>
  %sc1 = linalg.fill ins(%zero : f32) outs(%sc0 : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %scores = linalg.batch_matmul ins(%q, %kt : tensor<?x?x64xf32>, tensor<?x64x?xf32>)
                                outs(%sc1 : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>

  // p = softmax(scores * scale) over t.
  %mx0 = tensor.empty(%batch, %s) : tensor<?x?xf32>
  %mx1 = linalg.fill ins(%neg_inf : f32) outs(%mx0 : tensor<?x?xf32>) -> tensor<?x?xf32>
  %max = linalg.reduce ins(%scores : tensor<?x?x?xf32>) outs(%mx1 : tensor<?x?xf32>)
      dimensions = [2]
    (%x: f32, %acc: f32) {
      %r = arith.maximumf %x, %acc : f32
      linalg.yield %r : f32
    }
  %e = linalg.generic {indexing_maps = [#bs, #bst], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%max : tensor<?x?xf32>) outs(%scores : tensor<?x?x?xf32>) {
  ^bb0(%m: f32, %x: f32):
    %d = arith.subf %x, %m : f32
    %ds = arith.mulf %d, %scale : f32
    %r = math.exp %ds : f32
    linalg.yield %r : f32
  } -> tensor<?x?x?xf32>
  %sm0 = tensor.empty(%batch, %s) : tensor<?x?xf32>
  %sm1 = linalg.fill ins(%zero : f32) outs(%sm0 : tensor<?x?xf32>) -> tensor<?x?xf32>
  %sum = linalg.reduce ins(%e : tensor<?x?x?xf32>) outs(%sm1 : tensor<?x?xf32>) dimensions = [2]
    (%x: f32, %acc: f32) {
      %r = arith.addf %x, %acc : f32
      linalg.yield %r : f32
    }
  %p = linalg.generic {indexing_maps = [#bs, #bst], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%sum : tensor<?x?xf32>) outs(%e : tensor<?x?x?xf32>) {
  ^bb0(%sm: f32, %x: f32):
    %r = arith.divf %x, %sm : f32
    linalg.yield %r : f32
  } -> tensor<?x?x?xf32>

  // out = p · v: [batch, s, 64]
  %o0 = tensor.empty(%batch, %s) : tensor<?x?x64xf32>
  %o1 = linalg.fill ins(%zero : f32) outs(%o0 : tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  %out = linalg.batch_matmul ins(%p, %v : tensor<?x?x?xf32>, tensor<?x?x64xf32>)
                             outs(%o1 : tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  return %out : tensor<?x?x64xf32>
}
