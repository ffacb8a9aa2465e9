// disc_ral.topk's verifier, and its lowering on a device without ral_topk.
// RUN: ral-opt %s -split-input-file -verify-diagnostics

func.func @f16(%x: memref<4x8xf16>, %k: i64, %v: memref<4x2xf16>, %i: memref<4x2xi64>) {
  // expected-error@+1 {{takes f32, f64, i32 or i64 elements, got 'f16'}}
  disc_ral.topk ins(%x, %k : memref<4x8xf16>) outs(%v, %i : memref<4x2xf16>, memref<4x2xi64>)
  return
}

// -----

func.func @rank5(%x: memref<1x1x1x4x8xf32>, %k: i64, %v: memref<1x1x1x4x2xf32>, %i: memref<1x1x1x4x2xi64>) {
  // expected-error@+1 {{input must have rank 1 to 4, got 5}}
  disc_ral.topk ins(%x, %k : memref<1x1x1x4x8xf32>) outs(%v, %i : memref<1x1x1x4x2xf32>, memref<1x1x1x4x2xi64>)
  return
}

// -----

func.func @rows(%x: memref<4x8xf32>, %k: i64, %v: memref<3x2xf32>, %i: memref<3x2xi64>) {
  // expected-error@+1 {{dim 0 of the outputs must equal the input's (4), got 3}}
  disc_ral.topk ins(%x, %k : memref<4x8xf32>) outs(%v, %i : memref<3x2xf32>, memref<3x2xi64>)
  return
}

// -----

func.func @indices(%x: memref<4x8xf32>, %k: i64, %v: memref<4x2xf32>, %i: memref<4x2xi32>) {
  // expected-error@+1 {{indices must be i64}}
  disc_ral.topk ins(%x, %k : memref<4x8xf32>) outs(%v, %i : memref<4x2xf32>, memref<4x2xi32>)
  return
}

// -----

func.func @k(%x: memref<4x8xf32>, %k: i64, %v: memref<4x2xf32>, %i: memref<4x3xi64>) {
  // expected-error@+1 {{values and indices must have the same last dim (k)}}
  disc_ral.topk ins(%x, %k : memref<4x8xf32>) outs(%v, %i : memref<4x2xf32>, memref<4x3xi64>)
  return
}

// -----

func.func @mixed(%x: tensor<4x8xf32>, %k: i64, %v: memref<4x2xf32>, %i: memref<4x2xi64>) {
  // expected-error@+1 {{operands must be all tensors or all memrefs}}
  disc_ral.topk ins(%x, %k : tensor<4x8xf32>) outs(%v, %i : memref<4x2xf32>, memref<4x2xi64>)
  return
}
