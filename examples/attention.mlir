// Single-head scaled dot-product attention with dynamic batch and sequence lengths:
//   out = softmax(q · kᵀ / sqrt(64)) · v
// q: [batch, s, 64], k and v: [batch, t, 64] -> out: [batch, s, 64].
// Both products become RAL batch_gemm calls; the transpose and the softmax are compiled loops.
#bst = affine_map<(b, i, j) -> (b, i, j)>
#btd = affine_map<(b, d, t) -> (b, t, d)>
#bs = affine_map<(b, i, j) -> (b, i)>

func.func @main(%q: memref<?x?x64xf32>, %k: memref<?x?x64xf32>, %v: memref<?x?x64xf32>)
    -> memref<?x?x64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %neg_inf = arith.constant 0xFF800000 : f32
  %scale = arith.constant 0.125 : f32
  %batch = memref.dim %q, %c0 : memref<?x?x64xf32>
  %s = memref.dim %q, %c1 : memref<?x?x64xf32>
  %t = memref.dim %k, %c1 : memref<?x?x64xf32>

  // kt = transpose(k): [batch, 64, t]
  %kt = memref.alloc(%batch, %t) : memref<?x64x?xf32>
  linalg.generic {indexing_maps = [#btd, #bst], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%k : memref<?x?x64xf32>) outs(%kt : memref<?x64x?xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }

  // scores = q · kt: [batch, s, t]
  %scores = memref.alloc(%batch, %s, %t) : memref<?x?x?xf32>
  linalg.fill ins(%zero : f32) outs(%scores : memref<?x?x?xf32>)
  linalg.batch_matmul ins(%q, %kt : memref<?x?x64xf32>, memref<?x64x?xf32>)
                      outs(%scores : memref<?x?x?xf32>)

  // p = softmax(scores * scale) over t.
  %max = memref.alloc(%batch, %s) : memref<?x?xf32>
  linalg.fill ins(%neg_inf : f32) outs(%max : memref<?x?xf32>)
  linalg.generic {indexing_maps = [#bst, #bs], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%scores : memref<?x?x?xf32>) outs(%max : memref<?x?xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.maximumf %x, %acc : f32
    linalg.yield %r : f32
  }
  %sum = memref.alloc(%batch, %s) : memref<?x?xf32>
  linalg.fill ins(%zero : f32) outs(%sum : memref<?x?xf32>)
  linalg.generic {indexing_maps = [#bs, #bst], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%max : memref<?x?xf32>) outs(%scores : memref<?x?x?xf32>) {
  ^bb0(%mx: f32, %x: f32):
    %d = arith.subf %x, %mx : f32
    %ds = arith.mulf %d, %scale : f32
    %e = math.exp %ds : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [#bst, #bs], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%scores : memref<?x?x?xf32>) outs(%sum : memref<?x?xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#bs, #bst], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%sum : memref<?x?xf32>) outs(%scores : memref<?x?x?xf32>) {
  ^bb0(%sm: f32, %x: f32):
    %r = arith.divf %x, %sm : f32
    linalg.yield %r : f32
  }

  // out = p · v: [batch, s, 64]
  %out = memref.alloc(%batch, %s) : memref<?x?x64xf32>
  linalg.fill ins(%zero : f32) outs(%out : memref<?x?x64xf32>)
  linalg.batch_matmul ins(%scores, %v : memref<?x?x?xf32>, memref<?x?x64xf32>)
                      outs(%out : memref<?x?x64xf32>)

  memref.dealloc %kt : memref<?x64x?xf32>
  memref.dealloc %scores : memref<?x?x?xf32>
  memref.dealloc %max : memref<?x?xf32>
  memref.dealloc %sum : memref<?x?xf32>
  return %out : memref<?x?x64xf32>
}
