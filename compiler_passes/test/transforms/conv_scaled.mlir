// A disc_ral.conv whose input is a fresh product of data and a per-image, per-channel scale,
// used nowhere else, becomes one ral_conv_scaled dispatch on the cpu (conv_input_scales.h,
// kernels/conv/conv_scaled.h): the multiply and the product's buffer go. A product read
// elsewhere, a per-pixel product, or a write to the scale in between leaves the multiply.
// RUN: ral-opt %s -disc-ral-lower-to-library-calls -split-input-file | FileCheck %s
// RUN: ral-opt %s -disc-ral-lower-to-library-calls=fuse-conv-scales=false -split-input-file | FileCheck %s --check-prefix=OFF
// RUN: ral-opt %s -disc-ral-lower-to-library-calls=device=cuda -split-input-file | FileCheck %s --check-prefix=CUDA

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#nc = affine_map<(d0, d1, d2, d3) -> (d0, 0, 0, d3)>

// EfficientNet's projection after its squeeze-and-excitation, the scale first in the multiply.
// CHECK-LABEL: func @projection
// CHECK-SAME: (%[[CTX:.*]]: !disc_ral.context, %[[D:.*]]: memref<?x5x7x40xf32>, %[[S:.*]]: memref<?x1x1x40xf32>, %[[Y:.*]]: memref<?x5x7x24xf32>, %[[N:.*]]: index)
// CHECK-NOT: linalg.generic
// CHECK-NOT: disc_ral.alloc {{.*}}x5x7x40xf32>
// CHECK: disc_ral.dispatch %[[CTX]], "ral_conv_scaled", "cpu" (%[[D]], %[[S]], %{{.*}}, %{{.*}}, %[[Y]], %{{.*}}, %{{.*}}, %{{.*}}) : (memref<?x5x7x40xf32>, memref<?x1x1x40xf32>, memref<24x40x1x1xf32>, memref<24xf32>, memref<?x5x7x24xf32>, memref<12xi64>, f32, f32) -> ()
// CHECK-NOT: disc_ral.dealloc {{.*}}x5x7x40xf32>
// CHECK-NOT: "ral_conv"
// OFF-LABEL: func @projection
// OFF: linalg.generic
// OFF: "ral_conv", "cpu"
// OFF-NOT: ral_conv_scaled
// CUDA-LABEL: func @projection
// CUDA: linalg.generic
// CUDA: "ral_conv", "cuda"
// CUDA-NOT: ral_conv_scaled
func.func @projection(%ctx: !disc_ral.context, %d: memref<?x5x7x40xf32>,
                      %s: memref<?x1x1x40xf32>, %y: memref<?x5x7x24xf32>, %n: index) {
  %w = memref.alloc() : memref<24x40x1x1xf32>
  %b = memref.alloc() : memref<24xf32>
  %p = memref.alloc(%n) : memref<?x5x7x40xf32>
  linalg.generic {indexing_maps = [#nc, #id, #id],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %d : memref<?x1x1x40xf32>, memref<?x5x7x40xf32>) outs(%p : memref<?x5x7x40xf32>) {
  ^bb0(%a: f32, %v: f32, %out: f32):
    %m = arith.mulf %a, %v : f32
    linalg.yield %m : f32
  }
  disc_ral.conv ins(%p, %w, %b : memref<?x5x7x40xf32>, memref<24x40x1x1xf32>, memref<24xf32>)
      outs(%y : memref<?x5x7x24xf32>) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>,
      pad_begin = array<i64: 0, 0>, pad_end = array<i64: 0, 0>, groups = 1 : i64,
      channels_last}
  memref.dealloc %p : memref<?x5x7x40xf32>
  memref.dealloc %w : memref<24x40x1x1xf32>
  memref.dealloc %b : memref<24xf32>
  return
}

// -----

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#nc = affine_map<(d0, d1, d2, d3) -> (d0, 0, 0, d3)>

// The product is also read by a loop, a per-pixel product is no channel scale, and the scale is
// written between the multiply and the convolution: three multiplies, three ral_conv.
// CHECK-LABEL: func @not_scales
// CHECK-NOT: ral_conv_scaled
// CHECK: linalg.generic
// CHECK: "ral_conv", "cpu"
// CHECK: linalg.generic
// CHECK: "ral_conv", "cpu"
// CHECK: linalg.generic
// CHECK: "ral_conv", "cpu"
// CHECK-NOT: ral_conv_scaled
func.func @not_scales(%ctx: !disc_ral.context, %d: memref<2x5x7x8xf32>,
                      %s: memref<2x1x1x8xf32>, %y: memref<2x5x7x8xf32>,
                      %other: memref<2x5x7x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %w = memref.alloc() : memref<8x8x1x1xf32>
  %b = memref.alloc() : memref<8xf32>
  %p = memref.alloc() : memref<2x5x7x8xf32>
  linalg.generic {indexing_maps = [#id, #nc, #id],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%d, %s : memref<2x5x7x8xf32>, memref<2x1x1x8xf32>) outs(%p : memref<2x5x7x8xf32>) {
  ^bb0(%v: f32, %a: f32, %out: f32):
    %m = arith.mulf %v, %a : f32
    linalg.yield %m : f32
  }
  disc_ral.conv ins(%p, %w, %b : memref<2x5x7x8xf32>, memref<8x8x1x1xf32>, memref<8xf32>)
      outs(%y : memref<2x5x7x8xf32>) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>,
      pad_begin = array<i64: 0, 0>, pad_end = array<i64: 0, 0>, groups = 1 : i64,
      channels_last}
  memref.copy %p, %other : memref<2x5x7x8xf32> to memref<2x5x7x8xf32>
  %q = memref.alloc() : memref<2x5x7x8xf32>
  linalg.generic {indexing_maps = [#id, #id, #id],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%d, %other : memref<2x5x7x8xf32>, memref<2x5x7x8xf32>) outs(%q : memref<2x5x7x8xf32>) {
  ^bb0(%v: f32, %a: f32, %out: f32):
    %m = arith.mulf %v, %a : f32
    linalg.yield %m : f32
  }
  disc_ral.conv ins(%q, %w, %b : memref<2x5x7x8xf32>, memref<8x8x1x1xf32>, memref<8xf32>)
      outs(%y : memref<2x5x7x8xf32>) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>,
      pad_begin = array<i64: 0, 0>, pad_end = array<i64: 0, 0>, groups = 1 : i64,
      channels_last}
  %r = memref.alloc() : memref<2x5x7x8xf32>
  linalg.generic {indexing_maps = [#id, #nc, #id],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%d, %s : memref<2x5x7x8xf32>, memref<2x1x1x8xf32>) outs(%r : memref<2x5x7x8xf32>) {
  ^bb0(%v: f32, %a: f32, %out: f32):
    %m = arith.mulf %v, %a : f32
    linalg.yield %m : f32
  }
  linalg.fill ins(%zero : f32) outs(%s : memref<2x1x1x8xf32>)
  disc_ral.conv ins(%r, %w, %b : memref<2x5x7x8xf32>, memref<8x8x1x1xf32>, memref<8xf32>)
      outs(%y : memref<2x5x7x8xf32>) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>,
      pad_begin = array<i64: 0, 0>, pad_end = array<i64: 0, 0>, groups = 1 : i64,
      channels_last}
  return
}
