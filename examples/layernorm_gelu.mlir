// A transformer block's tail: y = x + gelu(layernorm(x) * gamma + beta), over the last
// dimension of a [rows, cols] input, both dynamic; gelu(v) = v/2 * (1 + erf(v / sqrt(2))).
// Every step is a loop over rows: the compiler fuses them into one kernel that reads x from
// memory once per pass over a row, with the statistics in registers.
#rows = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>

func.func @main(%x: memref<?x?xf32>, %gamma: memref<?xf32>, %beta: memref<?xf32>)
    -> memref<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %half = arith.constant 0.5 : f32
  %eps = arith.constant 1.0e-5 : f32
  %rsqrt2 = arith.constant 0.70710678118654752 : f32
  %n = memref.dim %x, %c0 : memref<?x?xf32>
  %m = memref.dim %x, %c1 : memref<?x?xf32>
  %mf = arith.index_cast %m : index to i64
  %count = arith.sitofp %mf : i64 to f32

  // Row means.
  %mean = memref.alloc(%n) : memref<?xf32>
  linalg.fill ins(%zero : f32) outs(%mean : memref<?xf32>)
  linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x?xf32>) outs(%mean : memref<?xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  }
  // Row variances, from the centred values.
  %var = memref.alloc(%n) : memref<?xf32>
  linalg.fill ins(%zero : f32) outs(%var : memref<?xf32>)
  linalg.generic {indexing_maps = [#rows, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %mean : memref<?x?xf32>, memref<?xf32>) outs(%var : memref<?xf32>) {
  ^bb0(%v: f32, %s: f32, %acc: f32):
    %mu = arith.divf %s, %count : f32
    %d = arith.subf %v, %mu : f32
    %d2 = arith.mulf %d, %d : f32
    %r = arith.addf %d2, %acc : f32
    linalg.yield %r : f32
  }
  // Normalize, scale and shift, GELU, residual.
  %y = memref.alloc(%n, %m) : memref<?x?xf32>
  linalg.generic {indexing_maps = [#rows, #row, #row, #col, #col, #rows],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %mean, %var, %gamma, %beta
          : memref<?x?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>)
      outs(%y : memref<?x?xf32>) {
  ^bb0(%v: f32, %s: f32, %ss: f32, %g: f32, %b: f32, %out: f32):
    %mu = arith.divf %s, %count : f32
    %variance = arith.divf %ss, %count : f32
    %ve = arith.addf %variance, %eps : f32
    %inv = math.rsqrt %ve : f32
    %d = arith.subf %v, %mu : f32
    %norm = arith.mulf %d, %inv : f32
    %scaled = arith.mulf %norm, %g : f32
    %h = arith.addf %scaled, %b : f32
    %t = arith.mulf %h, %rsqrt2 : f32
    %e = math.erf %t : f32
    %e1 = arith.addf %e, %one : f32
    %hh = arith.mulf %h, %half : f32
    %gelu = arith.mulf %hh, %e1 : f32
    %res = arith.addf %gelu, %v : f32
    linalg.yield %res : f32
  }
  memref.dealloc %mean : memref<?xf32>
  memref.dealloc %var : memref<?xf32>
  return %y : memref<?x?xf32>
}
