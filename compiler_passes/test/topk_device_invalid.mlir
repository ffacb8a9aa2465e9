// ral_topk runs on the cpu and cuda: a disc_ral.topk compiled for another device is an error naming it.
// RUN: ral-opt %s -disc-ral-lower-to-library-calls=device=vulkan -verify-diagnostics

func.func @top(%ctx: !disc_ral.context, %x: memref<4x8xf32>, %k: i64, %v: memref<4x2xf32>, %i: memref<4x2xi64>) {
  // expected-error@+1 {{has no kernel on device 'vulkan' (ral_topk runs on the cpu and cuda)}}
  disc_ral.topk ins(%x, %k : memref<4x8xf32>) outs(%v, %i : memref<4x2xf32>, memref<4x2xi64>)
  return
}
