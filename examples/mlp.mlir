// A two-layer perceptron with a dynamic batch:
//   y = relu(x · w1 + b1) · w2 + b2
// x: [batch, 128], w1: [128, 256], b1: [256], w2: [256, 10], b2: [10] -> y: [batch, 10].
// The matmuls become RAL gemm calls; bias and relu are compiled loops.
#rows = affine_map<(d0, d1) -> (d0, d1)>
#cols = affine_map<(d0, d1) -> (d1)>

func.func @main(%x: memref<?x128xf32>, %w1: memref<128x256xf32>, %b1: memref<256xf32>,
           %w2: memref<256x10xf32>, %b2: memref<10xf32>) -> memref<?x10xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %batch = memref.dim %x, %c0 : memref<?x128xf32>

  // Layer 1: h = relu(x · w1 + b1)
  %h = memref.alloc(%batch) : memref<?x256xf32>
  linalg.fill ins(%zero : f32) outs(%h : memref<?x256xf32>)
  linalg.matmul ins(%x, %w1 : memref<?x128xf32>, memref<128x256xf32>)
                outs(%h : memref<?x256xf32>)
  linalg.generic {indexing_maps = [#cols, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%b1 : memref<256xf32>) outs(%h : memref<?x256xf32>) {
  ^bb0(%b: f32, %v: f32):
    %s = arith.addf %v, %b : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  }

  // Layer 2: y = h · w2 + b2
  %y = memref.alloc(%batch) : memref<?x10xf32>
  linalg.fill ins(%zero : f32) outs(%y : memref<?x10xf32>)
  linalg.matmul ins(%h, %w2 : memref<?x256xf32>, memref<256x10xf32>)
                outs(%y : memref<?x10xf32>)
  linalg.generic {indexing_maps = [#cols, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%b2 : memref<10xf32>) outs(%y : memref<?x10xf32>) {
  ^bb0(%b: f32, %v: f32):
    %s = arith.addf %v, %b : f32
    linalg.yield %s : f32
  }
  memref.dealloc %h : memref<?x256xf32>
  return %y : memref<?x10xf32>
}
