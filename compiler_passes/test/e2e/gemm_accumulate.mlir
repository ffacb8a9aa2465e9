// d = c + a · b, where d is not zero-filled before the matmul: the library-call pass must keep
// linalg's accumulation (gemm into a temporary, then an add). Dynamic m, n, k.
#id = affine_map<(d0, d1) -> (d0, d1)>

func.func @main(%a: memref<?x?xf64>, %b: memref<?x?xf64>, %c: memref<?x?xf64>) -> memref<?x?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %c, %c0 : memref<?x?xf64>
  %n = memref.dim %c, %c1 : memref<?x?xf64>
  %d = memref.alloc(%m, %n) : memref<?x?xf64>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<?x?xf64>) outs(%d : memref<?x?xf64>) {
  ^bb0(%x: f64, %o: f64):
    linalg.yield %x : f64
  }
  linalg.matmul ins(%a, %b : memref<?x?xf64>, memref<?x?xf64>) outs(%d : memref<?x?xf64>)
  return %d : memref<?x?xf64>
}
