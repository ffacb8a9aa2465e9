// disc_ral.conv's channels-last layout (conv_layout.h) through a max pool: the pool's loops are
// reordered to run the channels innermost.
// RUN: ral-opt %s -disc-ral-bufferize | FileCheck %s --check-prefix=LAYOUT

// A max pool between two convolutions reads and writes channels-last, and its loops run the
// channels innermost, after the window: (n, oh, ow, kh, kw, c), one contiguous run of channels
// per window element in both buffers.
// LAYOUT-LABEL: func @pool
// LAYOUT: disc_ral.conv {{.*}}channels_last
// LAYOUT: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]
// LAYOUT-SAME: outs(%{{.*}} : memref<?x3x4x8xf32>)
// LAYOUT: arith.maximumf
// LAYOUT: disc_ral.conv {{.*}}channels_last
// LAYOUT-NOT: linalg.transpose ins(%{{.*}} : memref<?x3x4x8xf32>)
#in = affine_map<(n, c, h, w, kh, kw) -> (n, c, h * 2 + kh, w * 2 + kw)>
#win = affine_map<(n, c, h, w, kh, kw) -> (kh, kw)>
#out = affine_map<(n, c, h, w, kh, kw) -> (n, c, h, w)>
func.func @pool(%x: tensor<?x3x6x8xf32>) -> tensor<?x4x3x4xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x3x6x8xf32>
  %w1 = arith.constant dense<0.5> : tensor<8x3x1x1xf32>
  %w2 = arith.constant dense<0.25> : tensor<4x8x1x1xf32>
  %none = arith.constant dense<> : tensor<0xf32>
  %e1 = tensor.empty(%n) : tensor<?x8x6x8xf32>
  %y1 = disc_ral.conv ins(%x, %w1, %none : tensor<?x3x6x8xf32>, tensor<8x3x1x1xf32>, tensor<0xf32>)
      outs(%e1 : tensor<?x8x6x8xf32>) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>,
      pad_begin = array<i64: 0, 0>, pad_end = array<i64: 0, 0>, groups = 1 : i64} -> tensor<?x8x6x8xf32>
  %window = tensor.empty() : tensor<2x2xf32>
  %lowest = arith.constant 0xFF800000 : f32
  %e2 = tensor.empty(%n) : tensor<?x8x3x4xf32>
  %init = linalg.fill ins(%lowest : f32) outs(%e2 : tensor<?x8x3x4xf32>) -> tensor<?x8x3x4xf32>
  %p = linalg.generic {indexing_maps = [#in, #win, #out],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%y1, %window : tensor<?x8x6x8xf32>, tensor<2x2xf32>) outs(%init : tensor<?x8x3x4xf32>) {
  ^bb0(%a: f32, %unused: f32, %acc: f32):
    %m = arith.maximumf %acc, %a : f32
    linalg.yield %m : f32
  } -> tensor<?x8x3x4xf32>
  %e3 = tensor.empty(%n) : tensor<?x4x3x4xf32>
  %y2 = disc_ral.conv ins(%p, %w2, %none : tensor<?x8x3x4xf32>, tensor<4x8x1x1xf32>, tensor<0xf32>)
      outs(%e3 : tensor<?x4x3x4xf32>) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>,
      pad_begin = array<i64: 0, 0>, pad_end = array<i64: 0, 0>, groups = 1 : i64} -> tensor<?x4x3x4xf32>
  return %y2 : tensor<?x4x3x4xf32>
}
