// disc_ral.conv on cuda becomes a ral_conv dispatch on cuda (cuDNN, kernels/conv/conv_cuda.cc).
// Its config global is read by the kernel's host side, so it stays a host global: module
// constants, which a GPU device keeps in its own memory, leave it alone even at min-bytes=0.
// RUN: ral-opt %s -disc-ral-lower-to-library-calls=device=cuda | FileCheck %s
// RUN: ral-opt %s -disc-ral-lower-to-library-calls=device=cuda -disc-ral-module-constants=min-bytes=0 | FileCheck %s --check-prefix=CONST

// CHECK: memref.global "private" constant @ral_conv_config : memref<12xi64> = dense<[2, 1, 1, 0, 1, 1, 1, 1, 0, 0, 0, 0]> {disc_ral.host_constant}
// CHECK-LABEL: func.func @conv
// CHECK: %[[CFG:.*]] = memref.get_global @ral_conv_config
// CHECK: disc_ral.dispatch %{{.*}}, "ral_conv", "cuda" (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[CFG]], %{{.*}}, %{{.*}})

// CONST: memref.global "private" constant @ral_conv_config
// CONST: memref.get_global @ral_conv_config
// CONST-NOT: disc_ral.constant

func.func @conv(%ctx: !disc_ral.context, %x: memref<1x2x3x3xf32>, %w: memref<2x2x1x1xf32>, %b: memref<0xf32>, %y: memref<1x2x3x3xf32>) {
  disc_ral.conv ins(%x, %w, %b : memref<1x2x3x3xf32>, memref<2x2x1x1xf32>, memref<0xf32>) outs(%y : memref<1x2x3x3xf32>) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_begin = array<i64: 0, 0>, pad_end = array<i64: 0, 0>, groups = 1 : i64, activation = "relu"}
  return
}
