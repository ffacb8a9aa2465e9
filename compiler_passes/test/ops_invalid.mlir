// Verifier errors of the disc_ral ops.
// RUN: ral-opt %s -split-input-file -verify-diagnostics

func.func @recv_tensor(%ctx: !disc_ral.context) {
  // expected-error@+1 {{result must be a ranked memref}}
  %x = disc_ral.recv_input %ctx, 0 : memref<*xf32>
  return
}

// -----

func.func @recv_negative_index(%ctx: !disc_ral.context) {
  // expected-error@+1 {{attribute 'index' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  %x = disc_ral.recv_input %ctx, -1 : memref<?xf32>
  return
}

// -----

func.func @send_complex(%ctx: !disc_ral.context, %v: memref<4xcomplex<f32>>) {
  // expected-error@+1 {{sent value must be a ranked memref}}
  disc_ral.send_output %ctx, 0, %v : memref<4xcomplex<f32>>
  return
}

// -----

func.func @dispatch_separator(%ctx: !disc_ral.context) {
  // expected-error@+1 {{'call_target_name' must not contain "___"}}
  disc_ral.dispatch %ctx, "ral___gemm", "cpu" () : () -> ()
  return
}

// -----

func.func @dispatch_empty_device(%ctx: !disc_ral.context) {
  // expected-error@+1 {{requires a non-empty 'device'}}
  disc_ral.dispatch %ctx, "ral_gemm", "" () : () -> ()
  return
}

// -----

func.func @dispatch_tensor(%ctx: !disc_ral.context, %t: tensor<4xf32>) {
  // expected-error@+1 {{has no RAL encoding for type 'tensor<4xf32>'}}
  disc_ral.dispatch %ctx, "ral_sum", "cpu" (%t) : (tensor<4xf32>) -> ()
  return
}

// -----

func.func @dispatch_two_contexts(%ctx: !disc_ral.context) {
  // expected-error@+1 {{takes the context only as its first operand}}
  disc_ral.dispatch %ctx, "ral_f", "cpu" (%ctx) : (!disc_ral.context) -> ()
  return
}

// -----

func.func @alloc_sizes(%ctx: !disc_ral.context, %n: index) {
  // expected-error@+1 {{expects 2 dynamic sizes}}
  %m = disc_ral.alloc %ctx(%n) : memref<?x?xf32>
  return
}

// -----

// expected-error@+1 {{unknown  type `stream` in dialect `disc_ral`}}
func.func @bad_type(%s: !disc_ral.stream) {
  return
}
