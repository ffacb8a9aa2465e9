// Depthwise-separable chains of disc_ral.conv become one ral_conv_block dispatch on the cpu
// (conv_block_chains.h, kernels/conv/conv_block.h): the intermediate buffers are dropped, an
// absent stage's filter and bias are empty constants, and a chain whose intermediate is read
// elsewhere stops there.
// RUN: ral-opt %s -disc-ral-bufferize -disc-ral-inject-execution-context=entry=block -disc-ral-lower-to-library-calls -split-input-file | FileCheck %s
// RUN: ral-opt %s -disc-ral-bufferize -disc-ral-inject-execution-context=entry=block -disc-ral-lower-to-library-calls=fuse-conv-blocks=false -split-input-file | FileCheck %s --check-prefix=OFF
// RUN: ral-opt %s -disc-ral-bufferize -disc-ral-inject-execution-context=entry=block -disc-ral-lower-to-library-calls=device=cuda -split-input-file | FileCheck %s --check-prefix=CUDA

// MobileNet-V2's inverted residual: expansion (clip), depthwise 3x3 (clip), projection with
// the residual add. config: flags (1 residual, 2/4/8 constant w1/w2/w3), the three
// activations, strides, pad_begin, pad_end; bounds: each stage's clip bounds.
// CHECK-DAG: memref.global "private" constant @ral_conv_block_config : memref<10xi64> = dense<[15, 2, 2, 0, 1, 1, 1, 1, 1, 1]>
// CHECK-DAG: memref.global "private" constant @ral_conv_block_bounds : memref<6xf32> = dense<[0.000000e+00, 6.000000e+00, 0.000000e+00, 6.000000e+00, 0.000000e+00, 0.000000e+00]>
// CHECK-LABEL: func @block
// CHECK-NOT: disc_ral.alloc {{.*}}x48xf32>
// CHECK: disc_ral.dispatch %{{.*}}, "ral_conv_block", "cpu" ({{.*}}) : (memref<?x10x12x8xf32>, memref<48x8x1x1xf32>, memref<48xf32>, memref<48x1x3x3xf32>, memref<48xf32>, memref<8x48x1x1xf32>, memref<8xf32>, memref<?x10x12x8xf32>, memref<10xi64>, memref<6xf32>) -> ()
// CHECK-NOT: "ral_conv"
// CHECK-NOT: disc_ral.conv
// OFF-LABEL: func @block
// OFF-COUNT-3: "ral_conv", "cpu"
// OFF-NOT: ral_conv_block
// CUDA-LABEL: func @block
// CUDA-COUNT-3: "ral_conv", "cuda"
// CUDA-NOT: ral_conv_block
func.func @block(%x: tensor<?x8x10x12xf32>) -> tensor<?x8x10x12xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x8x10x12xf32>
  %w1 = arith.constant dense<0.5> : tensor<48x8x1x1xf32>
  %b1 = arith.constant dense<0.25> : tensor<48xf32>
  %w2 = arith.constant dense<0.125> : tensor<48x1x3x3xf32>
  %b2 = arith.constant dense<0.5> : tensor<48xf32>
  %w3 = arith.constant dense<0.75> : tensor<8x48x1x1xf32>
  %b3 = arith.constant dense<1.5> : tensor<8xf32>
  %e1 = tensor.empty(%n) : tensor<?x48x10x12xf32>
  %y1 = disc_ral.conv ins(%x, %w1, %b1 : tensor<?x8x10x12xf32>, tensor<48x8x1x1xf32>, tensor<48xf32>)
      outs(%e1 : tensor<?x48x10x12xf32>) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>,
      pad_begin = array<i64: 0, 0>, pad_end = array<i64: 0, 0>, groups = 1 : i64,
      activation = "clip", alpha = 0.0 : f32, beta = 6.0 : f32} -> tensor<?x48x10x12xf32>
  %e2 = tensor.empty(%n) : tensor<?x48x10x12xf32>
  %y2 = disc_ral.conv ins(%y1, %w2, %b2 : tensor<?x48x10x12xf32>, tensor<48x1x3x3xf32>, tensor<48xf32>)
      outs(%e2 : tensor<?x48x10x12xf32>) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>,
      pad_begin = array<i64: 1, 1>, pad_end = array<i64: 1, 1>, groups = 48 : i64,
      activation = "clip", alpha = 0.0 : f32, beta = 6.0 : f32} -> tensor<?x48x10x12xf32>
  %y3 = disc_ral.conv ins(%y2, %w3, %b3 : tensor<?x48x10x12xf32>, tensor<8x48x1x1xf32>, tensor<8xf32>)
      outs(%x : tensor<?x8x10x12xf32>) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>,
      pad_begin = array<i64: 0, 0>, pad_end = array<i64: 0, 0>, groups = 1 : i64, residual}
      -> tensor<?x8x10x12xf32>
  return %y3 : tensor<?x8x10x12xf32>
}

// -----

// The depthwise output is also returned: the expansion and the depthwise stage fuse (SiLU, a
// 5x5 window, stride 2), the projection stays a ral_conv.
// CHECK-DAG: memref.global "private" constant @ral_conv_block_config : memref<10xi64> = dense<[6, 4, 4, 0, 2, 2, 2, 2, 2, 2]>
// CHECK-DAG: memref.global "private" constant @ral_conv_block_none : memref<0x48x1x1xf32> = dense<>
// CHECK-LABEL: func @block
// CHECK: disc_ral.dispatch %{{.*}}, "ral_conv_block", "cpu" ({{.*}}) : (memref<?x10x12x8xf32>, memref<48x8x1x1xf32>, memref<48xf32>, memref<48x1x5x5xf32>, memref<48xf32>, memref<0x48x1x1xf32>, memref<0xf32>, memref<?x5x6x48xf32>, memref<10xi64>, memref<6xf32>) -> ()
// CHECK: disc_ral.dispatch %{{.*}}, "ral_conv", "cpu"
// CHECK-NOT: ral_conv_block
func.func @block(%x: tensor<?x8x10x12xf32>) -> (tensor<?x48x5x6xf32>, tensor<?x8x5x6xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x8x10x12xf32>
  %w1 = arith.constant dense<0.5> : tensor<48x8x1x1xf32>
  %b1 = arith.constant dense<0.25> : tensor<48xf32>
  %w2 = arith.constant dense<0.125> : tensor<48x1x5x5xf32>
  %b2 = arith.constant dense<0.5> : tensor<48xf32>
  %w3 = arith.constant dense<0.75> : tensor<8x48x1x1xf32>
  %none = arith.constant dense<> : tensor<0xf32>
  %e1 = tensor.empty(%n) : tensor<?x48x10x12xf32>
  %y1 = disc_ral.conv ins(%x, %w1, %b1 : tensor<?x8x10x12xf32>, tensor<48x8x1x1xf32>, tensor<48xf32>)
      outs(%e1 : tensor<?x48x10x12xf32>) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>,
      pad_begin = array<i64: 0, 0>, pad_end = array<i64: 0, 0>, groups = 1 : i64,
      activation = "silu"} -> tensor<?x48x10x12xf32>
  %e2 = tensor.empty(%n) : tensor<?x48x5x6xf32>
  %y2 = disc_ral.conv ins(%y1, %w2, %b2 : tensor<?x48x10x12xf32>, tensor<48x1x5x5xf32>, tensor<48xf32>)
      outs(%e2 : tensor<?x48x5x6xf32>) {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>,
      pad_begin = array<i64: 2, 2>, pad_end = array<i64: 2, 2>, groups = 48 : i64,
      activation = "silu"} -> tensor<?x48x5x6xf32>
  %e3 = tensor.empty(%n) : tensor<?x8x5x6xf32>
  %y3 = disc_ral.conv ins(%y2, %w3, %none : tensor<?x48x5x6xf32>, tensor<8x48x1x1xf32>, tensor<0xf32>)
      outs(%e3 : tensor<?x8x5x6xf32>) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>,
      pad_begin = array<i64: 0, 0>, pad_end = array<i64: 0, 0>, groups = 1 : i64}
      -> tensor<?x8x5x6xf32>
  return %y2, %y3 : tensor<?x48x5x6xf32>, tensor<?x8x5x6xf32>
}

// -----

// A dilated depthwise convolution and a GELU expansion are not the kernel's: three ral_conv.
// CHECK-LABEL: func @block
// CHECK-COUNT-3: "ral_conv", "cpu"
// CHECK-NOT: ral_conv_block
func.func @block(%x: tensor<?x8x10x12xf32>) -> tensor<?x8x10x12xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x8x10x12xf32>
  %w1 = arith.constant dense<0.5> : tensor<48x8x1x1xf32>
  %w2 = arith.constant dense<0.125> : tensor<48x1x3x3xf32>
  %w3 = arith.constant dense<0.75> : tensor<8x48x1x1xf32>
  %none = arith.constant dense<> : tensor<0xf32>
  %e1 = tensor.empty(%n) : tensor<?x48x10x12xf32>
  %y1 = disc_ral.conv ins(%x, %w1, %none : tensor<?x8x10x12xf32>, tensor<48x8x1x1xf32>, tensor<0xf32>)
      outs(%e1 : tensor<?x48x10x12xf32>) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>,
      pad_begin = array<i64: 0, 0>, pad_end = array<i64: 0, 0>, groups = 1 : i64,
      activation = "gelu_erf"} -> tensor<?x48x10x12xf32>
  %e2 = tensor.empty(%n) : tensor<?x48x10x12xf32>
  %y2 = disc_ral.conv ins(%y1, %w2, %none : tensor<?x48x10x12xf32>, tensor<48x1x3x3xf32>, tensor<0xf32>)
      outs(%e2 : tensor<?x48x10x12xf32>) {strides = array<i64: 1, 1>, dilations = array<i64: 2, 2>,
      pad_begin = array<i64: 2, 2>, pad_end = array<i64: 2, 2>, groups = 48 : i64} -> tensor<?x48x10x12xf32>
  %e3 = tensor.empty(%n) : tensor<?x8x10x12xf32>
  %y3 = disc_ral.conv ins(%y2, %w3, %none : tensor<?x48x10x12xf32>, tensor<8x48x1x1xf32>, tensor<0xf32>)
      outs(%e3 : tensor<?x8x10x12xf32>) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>,
      pad_begin = array<i64: 0, 0>, pad_end = array<i64: 0, 0>, groups = 1 : i64}
      -> tensor<?x8x10x12xf32>
  return %y3 : tensor<?x8x10x12xf32>
}
