// disc_ral.conv's verifier, and its lowering on a device without ral_conv.
// RUN: ral-opt %s -split-input-file -verify-diagnostics

func.func @bad_activation(%x: memref<1x2x3x3xf32>, %w: memref<2x2x1x1xf32>, %b: memref<0xf32>, %y: memref<1x2x3x3xf32>) {
  // expected-error@+1 {{unknown activation 'tanh'}}
  disc_ral.conv ins(%x, %w, %b : memref<1x2x3x3xf32>, memref<2x2x1x1xf32>, memref<0xf32>) outs(%y : memref<1x2x3x3xf32>) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_begin = array<i64: 0, 0>, pad_end = array<i64: 0, 0>, groups = 1 : i64, activation = "tanh"}
  return
}

// -----

func.func @short_strides(%x: memref<1x2x3x3xf32>, %w: memref<2x2x1x1xf32>, %b: memref<0xf32>, %y: memref<1x2x3x3xf32>) {
  // expected-error@+1 {{'strides' must have 2 values, got 1}}
  disc_ral.conv ins(%x, %w, %b : memref<1x2x3x3xf32>, memref<2x2x1x1xf32>, memref<0xf32>) outs(%y : memref<1x2x3x3xf32>) {strides = array<i64: 1>, dilations = array<i64: 1, 1>, pad_begin = array<i64: 0, 0>, pad_end = array<i64: 0, 0>, groups = 1 : i64}
  return
}

// -----

func.func @zero_stride(%x: memref<1x2x3x3xf32>, %w: memref<2x2x1x1xf32>, %b: memref<0xf32>, %y: memref<1x2x3x3xf32>) {
  // expected-error@+1 {{'strides' values must be >= 1}}
  disc_ral.conv ins(%x, %w, %b : memref<1x2x3x3xf32>, memref<2x2x1x1xf32>, memref<0xf32>) outs(%y : memref<1x2x3x3xf32>) {strides = array<i64: 0, 1>, dilations = array<i64: 1, 1>, pad_begin = array<i64: 0, 0>, pad_end = array<i64: 0, 0>, groups = 1 : i64}
  return
}

// -----

func.func @mixed(%x: tensor<1x2x3x3xf32>, %w: memref<2x2x1x1xf32>, %b: memref<0xf32>, %y: memref<1x2x3x3xf32>) {
  // expected-error@+1 {{operands must be all tensors or all memrefs}}
  disc_ral.conv ins(%x, %w, %b : tensor<1x2x3x3xf32>, memref<2x2x1x1xf32>, memref<0xf32>) outs(%y : memref<1x2x3x3xf32>) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_begin = array<i64: 0, 0>, pad_end = array<i64: 0, 0>, groups = 1 : i64}
  return
}

// -----

func.func @rank2(%x: memref<2x3xf32>, %w: memref<2x3xf32>, %b: memref<0xf32>, %y: memref<2x3xf32>) {
  // expected-error@+1 {{input must have rank 3 to 5, got 2}}
  disc_ral.conv ins(%x, %w, %b : memref<2x3xf32>, memref<2x3xf32>, memref<0xf32>) outs(%y : memref<2x3xf32>) {strides = array<i64>, dilations = array<i64>, pad_begin = array<i64>, pad_end = array<i64>, groups = 1 : i64}
  return
}

// -----

func.func @quantized_f32_input(%x: memref<1x2x3x3xf32>, %w: memref<2x2x1x1xi8>, %b: memref<0xf32>, %y: memref<1x2x3x3xi8>) {
  // expected-error@+1 {{a quantized conv takes i8 input and filter}}
  disc_ral.conv ins(%x, %w, %b : memref<1x2x3x3xf32>, memref<2x2x1x1xi8>, memref<0xf32>) outs(%y : memref<1x2x3x3xi8>) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_begin = array<i64: 0, 0>, pad_end = array<i64: 0, 0>, groups = 1 : i64, scales = array<f32: 1.0>}
  return
}

// -----

func.func @quantized_scales_per_channel(%x: memref<1x2x3x3xi8>, %w: memref<2x2x1x1xi8>, %b: memref<0xf32>, %y: memref<1x2x3x3xi8>) {
  // expected-error@+1 {{'scales' must have one value or one per output channel}}
  disc_ral.conv ins(%x, %w, %b : memref<1x2x3x3xi8>, memref<2x2x1x1xi8>, memref<0xf32>) outs(%y : memref<1x2x3x3xi8>) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_begin = array<i64: 0, 0>, pad_end = array<i64: 0, 0>, groups = 1 : i64, scales = array<f32: 1.0, 2.0, 3.0>}
  return
}

// -----

func.func @quantized_zero_point_range(%x: memref<1x2x3x3xi8>, %w: memref<2x2x1x1xi8>, %b: memref<0xf32>, %y: memref<1x2x3x3xi8>) {
  // expected-error@+1 {{input_zero_point 200 is out of the input's range}}
  disc_ral.conv ins(%x, %w, %b : memref<1x2x3x3xi8>, memref<2x2x1x1xi8>, memref<0xf32>) outs(%y : memref<1x2x3x3xi8>) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_begin = array<i64: 0, 0>, pad_end = array<i64: 0, 0>, groups = 1 : i64, scales = array<f32: 1.0>, input_zero_point = 200}
  return
}

// -----

func.func @quantized_residual(%x: memref<1x2x3x3xi8>, %w: memref<2x2x1x1xi8>, %b: memref<0xf32>, %y: memref<1x2x3x3xf32>) {
  // expected-error@+1 {{a quantized conv has no residual and is not transposed}}
  disc_ral.conv ins(%x, %w, %b : memref<1x2x3x3xi8>, memref<2x2x1x1xi8>, memref<0xf32>) outs(%y : memref<1x2x3x3xf32>) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_begin = array<i64: 0, 0>, pad_end = array<i64: 0, 0>, groups = 1 : i64, scales = array<f32: 1.0>, residual}
  return
}

// -----

func.func @zero_point_without_scales(%x: memref<1x2x3x3xf32>, %w: memref<2x2x1x1xf32>, %b: memref<0xf32>, %y: memref<1x2x3x3xf32>) {
  // expected-error@+1 {{zero points and unsigned operands need 'scales' (a quantized conv)}}
  disc_ral.conv ins(%x, %w, %b : memref<1x2x3x3xf32>, memref<2x2x1x1xf32>, memref<0xf32>) outs(%y : memref<1x2x3x3xf32>) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_begin = array<i64: 0, 0>, pad_end = array<i64: 0, 0>, groups = 1 : i64, input_zero_point = 3}
  return
}
