// ral_conv runs on the cpu and cuda: a disc_ral.conv compiled for another device is an error naming it.
// RUN: ral-opt %s -disc-ral-lower-to-library-calls=device=vulkan -verify-diagnostics

func.func @conv(%ctx: !disc_ral.context, %x: memref<1x2x3x3xf32>, %w: memref<2x2x1x1xf32>, %b: memref<0xf32>, %y: memref<1x2x3x3xf32>) {
  // expected-error@+1 {{has no kernel on device 'vulkan'}}
  disc_ral.conv ins(%x, %w, %b : memref<1x2x3x3xf32>, memref<2x2x1x1xf32>, memref<0xf32>) outs(%y : memref<1x2x3x3xf32>) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_begin = array<i64: 0, 0>, pad_end = array<i64: 0, 0>, groups = 1 : i64}
  return
}
