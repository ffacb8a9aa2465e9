// The two-layer perceptron of mlp.mlir, split across the ranks of a job (tensor parallel):
//   y = relu(x · w1 + b1) · w2 + b2
// Each rank holds a slice of the hidden dimension: columns of w1 and entries of b1
// (column-parallel), the matching rows of w2 (row-parallel). Its partial product h_r · w2_r is
// summed over ranks by one all-reduce, then b2 is added once.
// x: [batch, 128], w1: [128, H/N], b1: [H/N], w2: [H/N, 10], b2: [10] -> y: [batch, 10].
// Run it with `ral-run --world-size=N` (or one process per rank under torchrun-style variables),
// giving each rank its slices (--input=@w1.{rank}.npy).
#rows = affine_map<(d0, d1) -> (d0, d1)>
#cols = affine_map<(d0, d1) -> (d1)>

// ral_all_reduce(in, out, op): op 0 is a sum (kernels/collective/collective.h).
func.func private @all_reduce(memref<?x10xf32>, memref<?x10xf32>, i32)
    attributes {disc_ral.custom_call = "ral_all_reduce"}

func.func @main(%x: memref<?x128xf32>, %w1: memref<128x?xf32>, %b1: memref<?xf32>,
                %w2: memref<?x10xf32>, %b2: memref<10xf32>) -> memref<?x10xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %sum = arith.constant 0 : i32
  %batch = memref.dim %x, %c0 : memref<?x128xf32>
  %hidden = memref.dim %w1, %c1 : memref<128x?xf32>

  // This rank's slice of layer 1: h = relu(x · w1 + b1).
  %h = memref.alloc(%batch, %hidden) : memref<?x?xf32>
  linalg.fill ins(%zero : f32) outs(%h : memref<?x?xf32>)
  linalg.matmul ins(%x, %w1 : memref<?x128xf32>, memref<128x?xf32>)
                outs(%h : memref<?x?xf32>)
  linalg.generic {indexing_maps = [#cols, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%b1 : memref<?xf32>) outs(%h : memref<?x?xf32>) {
  ^bb0(%b: f32, %v: f32):
    %s = arith.addf %v, %b : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  }

  // Its share of layer 2, summed over the ranks in place.
  %y = memref.alloc(%batch) : memref<?x10xf32>
  linalg.fill ins(%zero : f32) outs(%y : memref<?x10xf32>)
  linalg.matmul ins(%h, %w2 : memref<?x?xf32>, memref<?x10xf32>)
                outs(%y : memref<?x10xf32>)
  memref.dealloc %h : memref<?x?xf32>
  call @all_reduce(%y, %y, %sum) : (memref<?x10xf32>, memref<?x10xf32>, i32) -> ()

  // The bias once, after the sum.
  linalg.generic {indexing_maps = [#cols, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%b2 : memref<10xf32>) outs(%y : memref<?x10xf32>) {
  ^bb0(%b: f32, %v: f32):
    %s = arith.addf %v, %b : f32
    linalg.yield %s : f32
  }
  return %y : memref<?x10xf32>
}
