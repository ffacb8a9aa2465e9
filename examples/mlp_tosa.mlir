// The two-layer perceptron of mlp.mlir, written in TOSA (as TOSA importers such as
// torch-mlir's or TensorFlow Lite's emit it):
//   y = relu(x · w1 + b1) · w2 + b2
// x: [batch, 128], w1: [128, 256], b1: [256], w2: [256, 10], b2: [10] -> y: [batch, 10].
// tosa.matmul is batched, so the operands are reshaped to rank 3 and the result back to rank 2;
// tosa-to-linalg lowers it, and ral-compile bufferizes it like any tensor-level program.
func.func @main(%x: tensor<?x128xf32>, %w1: tensor<128x256xf32>, %b1: tensor<256xf32>,
                %w2: tensor<256x10xf32>, %b2: tensor<10xf32>) -> tensor<?x10xf32> {
  // Layer 1: h = relu(x · w1 + b1)
  %x3 = tosa.reshape %x {new_shape = array<i64: 1, -1, 128>} : (tensor<?x128xf32>) -> tensor<1x?x128xf32>
  %w13 = tosa.reshape %w1 {new_shape = array<i64: 1, 128, 256>} : (tensor<128x256xf32>) -> tensor<1x128x256xf32>
  %h = tosa.matmul %x3, %w13 : (tensor<1x?x128xf32>, tensor<1x128x256xf32>) -> tensor<1x?x256xf32>
  %b13 = tosa.reshape %b1 {new_shape = array<i64: 1, 1, 256>} : (tensor<256xf32>) -> tensor<1x1x256xf32>
  %hb = tosa.add %h, %b13 : (tensor<1x?x256xf32>, tensor<1x1x256xf32>) -> tensor<1x?x256xf32>
  %r = tosa.clamp %hb {min_fp = 0.0 : f32, max_fp = 3.40282347E+38 : f32, min_int = 0 : i64, max_int = 9223372036854775807 : i64} : (tensor<1x?x256xf32>) -> tensor<1x?x256xf32>
  // Layer 2: y = h · w2 + b2
  %w23 = tosa.reshape %w2 {new_shape = array<i64: 1, 256, 10>} : (tensor<256x10xf32>) -> tensor<1x256x10xf32>
  %y = tosa.matmul %r, %w23 : (tensor<1x?x256xf32>, tensor<1x256x10xf32>) -> tensor<1x?x10xf32>
  %b23 = tosa.reshape %b2 {new_shape = array<i64: 1, 1, 10>} : (tensor<10xf32>) -> tensor<1x1x10xf32>
  %yb = tosa.add %y, %b23 : (tensor<1x?x10xf32>, tensor<1x1x10xf32>) -> tensor<1x?x10xf32>
  %out = tosa.reshape %yb {new_shape = array<i64: -1, 10>} : (tensor<1x?x10xf32>) -> tensor<?x10xf32>
  return %out : tensor<?x10xf32>
}
