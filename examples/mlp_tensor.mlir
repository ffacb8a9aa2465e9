// The two-layer perceptron of mlp.mlir, written on tensors:
//   y = relu(x · w1 + b1) · w2 + b2
// x: [batch, 128], w1: [128, 256], b1: [256], w2: [256, 10], b2: [10] -> y: [batch, 10].
// ral-compile bufferizes it (one-shot, function boundaries included): the matmuls become RAL gemm
// calls, bias and relu compiled loops, and y is handed to the host without a copy.
#rows = affine_map<(d0, d1) -> (d0, d1)>
#cols = affine_map<(d0, d1) -> (d1)>

func.func @main(%x: tensor<?x128xf32>, %w1: tensor<128x256xf32>, %b1: tensor<256xf32>,
                %w2: tensor<256x10xf32>, %b2: tensor<10xf32>) -> tensor<?x10xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %batch = tensor.dim %x, %c0 : tensor<?x128xf32>

  // Layer 1: h = relu(x · w1 + b1)
  %h0 = tensor.empty(%batch) : tensor<?x256xf32>
  %h1 = linalg.fill ins(%zero : f32) outs(%h0 : tensor<?x256xf32>) -> tensor<?x256xf32>
  %h2 = linalg.matmul ins(%x, %w1 : tensor<?x128xf32>, tensor<128x256xf32>)
                      outs(%h1 : tensor<?x256xf32>) -> tensor<?x256xf32>
  %h = linalg.generic {indexing_maps = [#cols, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%b1 : tensor<256xf32>) outs(%h2 : tensor<?x256xf32>) {
  ^bb0(%b: f32, %v: f32):
    %s = arith.addf %v, %b : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<?x256xf32>

  // Layer 2: y = h · w2 + b2
  %y0 = tensor.empty(%batch) : tensor<?x10xf32>
  %y1 = linalg.fill ins(%zero : f32) outs(%y0 : tensor<?x10xf32>) -> tensor<?x10xf32>
  %y2 = linalg.matmul ins(%h, %w2 : tensor<?x256xf32>, tensor<256x10xf32>)
                      outs(%y1 : tensor<?x10xf32>) -> tensor<?x10xf32>
  %y = linalg.generic {indexing_maps = [#cols, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%b2 : tensor<10xf32>) outs(%y2 : tensor<?x10xf32>) {
  ^bb0(%b: f32, %v: f32):
    %s = arith.addf %v, %b : f32
    linalg.yield %s : f32
  } -> tensor<?x10xf32>
  return %y : tensor<?x10xf32>
}
