// A quantized disc_ral.conv (with scales): bufferized like any conv, lowered to a ral_qconv
// dispatch whose config is ral_conv's followed by the zero points and the unsigned flags, and
// whose per-channel scales are a host constant (kernels/conv/qconv.h). Only the cpu has it.
// RUN: ral-opt %s -disc-ral-bufferize -disc-ral-inject-execution-context=entry=q -disc-ral-lower-to-library-calls | FileCheck %s
// RUN: ral-opt %s -disc-ral-bufferize -disc-ral-inject-execution-context=entry=q -disc-ral-lower-to-library-calls=device=cuda -verify-diagnostics

// config: spatial dims, groups, activation (1: relu), flags (2 constant filter, 4 channels-last),
// strides, dilations, pad_begin, pad_end, x zero point, y zero point, qflags (3: both uint8).
// CHECK-DAG: memref.global "private" constant @[[C:ral_qconv_config]] : memref<15xi64> = dense<[2, 1, 1, 6, 1, 1, 1, 1, 1, 1, 1, 1, 128, 3, 3]> {disc_ral.host_constant}
// CHECK-DAG: memref.global "private" constant @[[S:ral_qconv_scales]] : memref<4xf32> = dense<[{{.*}}]> {disc_ral.host_constant}
// CHECK-LABEL: func @q
// CHECK-DAG: memref.get_global @[[C]] : memref<15xi64>
// CHECK-DAG: memref.get_global @[[S]] : memref<4xf32>
// CHECK: disc_ral.dispatch %{{.*}}, "ral_qconv", "cpu" ({{.*}}) : (memref<?x5x5x3xi8>, memref<4x3x3x3xi8>, memref<4xf32>, memref<?x5x5x4xi8>, memref<15xi64>, memref<4xf32>, f32, f32) -> ()
// CHECK-NOT: disc_ral.conv
func.func @q(%x: tensor<?x3x5x5xi8>) -> tensor<?x4x5x5xi8> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x3x5x5xi8>
  %w = arith.constant dense<3> : tensor<4x3x3x3xi8>
  %b = arith.constant dense<0.5> : tensor<4xf32>
  %e = tensor.empty(%n) : tensor<?x4x5x5xi8>
  // expected-error@+1 {{is quantized: ral_qconv runs on the cpu only, not on 'cuda'}}
  %y = disc_ral.conv ins(%x, %w, %b : tensor<?x3x5x5xi8>, tensor<4x3x3x3xi8>, tensor<4xf32>)
      outs(%e : tensor<?x4x5x5xi8>) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>,
      pad_begin = array<i64: 1, 1>, pad_end = array<i64: 1, 1>, groups = 1 : i64,
      activation = "relu", scales = array<f32: 0.25, 0.5, 0.75, 1.0>, input_zero_point = 128,
      output_zero_point = 3, input_unsigned, output_unsigned} -> tensor<?x4x5x5xi8>
  return %y : tensor<?x4x5x5xi8>
}
