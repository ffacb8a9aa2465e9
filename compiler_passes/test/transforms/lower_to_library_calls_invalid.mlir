// RUN: ral-opt %s -disc-ral-lower-to-library-calls -split-input-file -verify-diagnostics

func.func @no_context(%n: index) {
  // expected-error@+1 {{'memref.alloc' needs the RAL execution context, but @no_context has none}}
  %a = memref.alloc(%n) : memref<?xf32>
  return
}

// -----

func.func @layout(%ctx: !disc_ral.context) {
  // expected-error@+1 {{RAL allocates only memrefs with the identity layout}}
  %a = memref.alloc() : memref<4x4xf32, affine_map<(d0, d1) -> (d1, d0)>>
  return
}

// -----

func.func @alignment(%ctx: !disc_ral.context) {
  // expected-error@+1 {{alignment must be a power of two, got 96}}
  %a = memref.alloc() {alignment = 96} : memref<4xf32>
  return
}

// -----

func.func private @sum(tensor<4xf32>) -> f32 attributes {disc_ral.custom_call = "ral_sum"}
func.func @custom_tensor(%ctx: !disc_ral.context, %t: tensor<4xf32>) {
  // expected-error@+1 {{custom call @sum ("ral_sum") has an operand or result of type 'tensor<4xf32>', which has no RAL encoding}}
  %s = call @sum(%t) : (tensor<4xf32>) -> f32
  return
}

// -----

func.func @matmul_no_context(%a: memref<2x2xf32>, %b: memref<2x2xf32>, %c: memref<2x2xf32>) {
  // expected-error@+1 {{'linalg.matmul' needs the RAL execution context}}
  linalg.matmul ins(%a, %b : memref<2x2xf32>, memref<2x2xf32>) outs(%c : memref<2x2xf32>)
  return
}
