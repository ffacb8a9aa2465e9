// disc_ral.conv: bufferized in place (destination style), turned channels-last with the
// transposes between convolutions cancelled (conv_layout.h), and lowered to a ral_conv dispatch
// with its attributes in one constant i64 vector (kernels/conv/conv.h).
// RUN: ral-opt %s -disc-ral-bufferize -split-input-file | FileCheck %s --check-prefix=LAYOUT
// RUN: ral-opt %s -disc-ral-bufferize -disc-ral-inject-execution-context=entry=chain -disc-ral-lower-to-library-calls -split-input-file | FileCheck %s --check-prefix=CALL

// Two convolutions with a ReLU between them and a residual: one transpose in (the entry's
// NCHW input), one out (its NCHW result), none between; the pool-free ReLU reads and writes
// channels-last.
// LAYOUT-LABEL: func @chain
// LAYOUT: linalg.transpose ins(%{{.*}} : memref<?x8x10x12xf32>) outs(%{{.*}} : memref<?x10x12x8xf32>) permutation = [0, 2, 3, 1]
// LAYOUT: disc_ral.conv ins({{.*}} : memref<?x10x12x8xf32>, memref<16x8x3x3xf32>, memref<16xf32>) outs({{.*}} : memref<?x10x12x16xf32>) {{{.*}}channels_last
// LAYOUT: linalg.generic
// LAYOUT-SAME: outs(%{{.*}} : memref<?x10x12x16xf32>)
// LAYOUT: disc_ral.conv ins({{.*}} : memref<?x10x12x16xf32>, memref<16x16x1x1xf32>, memref<0xf32>) outs({{.*}} : memref<?x10x12x16xf32>) {{{.*}}channels_last{{.*}}residual
// LAYOUT: linalg.transpose ins(%{{.*}} : memref<?x10x12x16xf32>) outs(%{{.*}} : memref<?x16x10x12xf32>) permutation = [0, 3, 1, 2]
// LAYOUT-NOT: linalg.transpose
// config: spatial dims, groups, activation (1: relu), flags (1 residual, 2 constant filter,
// 4 channels-last), strides, dilations, pad_begin, pad_end.
// CALL-DAG: memref.global "private" constant @[[C1:ral_conv_config]] : memref<12xi64> = dense<[2, 1, 0, 6, 1, 1, 1, 1, 1, 1, 1, 1]>
// CALL-DAG: memref.global "private" constant @[[C2:ral_conv_config_0]] : memref<12xi64> = dense<[2, 1, 1, 7, 1, 1, 1, 1, 0, 0, 0, 0]>
// CALL-LABEL: func @chain
// CALL: memref.get_global @[[C1]] : memref<12xi64>
// CALL: disc_ral.dispatch %{{.*}}, "ral_conv", "cpu" ({{.*}}) : (memref<?x10x12x8xf32>, memref<16x8x3x3xf32>, memref<16xf32>, memref<?x10x12x16xf32>, memref<12xi64>, f32, f32) -> ()
// CALL: memref.get_global @[[C2]] : memref<12xi64>
// CALL: disc_ral.dispatch %{{.*}}, "ral_conv", "cpu" ({{.*}}) : (memref<?x10x12x16xf32>, memref<16x16x1x1xf32>, memref<0xf32>, memref<?x10x12x16xf32>, memref<12xi64>, f32, f32) -> ()
// CALL-NOT: disc_ral.conv
#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
func.func @chain(%x: tensor<?x8x10x12xf32>) -> tensor<?x16x10x12xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x8x10x12xf32>
  %w1 = arith.constant dense<0.5> : tensor<16x8x3x3xf32>
  %b1 = arith.constant dense<0.25> : tensor<16xf32>
  %w2 = arith.constant dense<0.125> : tensor<16x16x1x1xf32>
  %none = arith.constant dense<> : tensor<0xf32>
  %e1 = tensor.empty(%n) : tensor<?x16x10x12xf32>
  %y1 = disc_ral.conv ins(%x, %w1, %b1 : tensor<?x8x10x12xf32>, tensor<16x8x3x3xf32>, tensor<16xf32>)
      outs(%e1 : tensor<?x16x10x12xf32>) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>,
      pad_begin = array<i64: 1, 1>, pad_end = array<i64: 1, 1>, groups = 1 : i64} -> tensor<?x16x10x12xf32>
  %e2 = tensor.empty(%n) : tensor<?x16x10x12xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%y1 : tensor<?x16x10x12xf32>) outs(%e2 : tensor<?x16x10x12xf32>) {
  ^bb0(%a: f32, %o: f32):
    %zero = arith.constant 0.0 : f32
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<?x16x10x12xf32>
  %y2 = disc_ral.conv ins(%r, %w2, %none : tensor<?x16x10x12xf32>, tensor<16x16x1x1xf32>, tensor<0xf32>)
      outs(%y1 : tensor<?x16x10x12xf32>) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>,
      pad_begin = array<i64: 0, 0>, pad_end = array<i64: 0, 0>, groups = 1 : i64, activation = "relu",
      residual} -> tensor<?x16x10x12xf32>
  return %y2 : tensor<?x16x10x12xf32>
}

