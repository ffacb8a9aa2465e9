// Tensor level: each row of x ([n, 4]) placed at columns 2..5 of a zero [n, 8] result, then the
// result's columns 0..3 doubled into a second output. Bufferization turns the insert_slice into a
// strided copy (linalg.copy into a subview) and the extract_slice into a strided read, so this
// checks views and non-contiguous copies end to end.
func.func @main(%x: tensor<?x4xf32>) -> (tensor<?x8xf32>, tensor<?x4xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x4xf32>
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?x8xf32>) -> tensor<?x8xf32>
  %padded = tensor.insert_slice %x into %z[0, 2] [%n, 4] [1, 1] : tensor<?x4xf32> into tensor<?x8xf32>
  %left = tensor.extract_slice %padded[0, 0] [%n, 4] [1, 1] : tensor<?x8xf32> to tensor<?x4xf32>
  %d0 = tensor.empty(%n) : tensor<?x4xf32>
  %doubled = linalg.add ins(%left, %left : tensor<?x4xf32>, tensor<?x4xf32>)
                        outs(%d0 : tensor<?x4xf32>) -> tensor<?x4xf32>
  return %padded, %doubled : tensor<?x8xf32>, tensor<?x4xf32>
}
